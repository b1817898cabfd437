/**
 * The smaller kinds: Namespace, Node, ConfigMap, Secret, ServiceAccount, Endpoints,
 * EndpointSlice, Lease and both Events, table-driven: defaults, then bad objects with the
 * field and type of each error, then update and status rules.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../api/object.js';
import {
  assertErrors,
  create,
  created,
  modified,
  strategy,
  update,
  updateStatus,
  type Json,
} from './testing.js';

const ns = (name = 'team-a'): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const node = (): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'node-1', labels: { 'kubernetes.io/hostname': 'node-1' } },
  spec: {},
  status: { capacity: { cpu: '4', memory: '16384256Ki', pods: '110' } },
});
const cm = (data: Json = { 'app.properties': 'a=1' }): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'cfg', namespace: 'default' },
  data,
});
const secret = (extra: Json = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'creds', namespace: 'default' },
  data: { password: Buffer.from('hunter2').toString('base64') },
  ...extra,
});
const endpoints = (subsets: Json): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { name: 'spring', namespace: 'default' },
  subsets,
});
const slice = (extra: Json = {}): KubeObject => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: {
    name: 'spring-abc12',
    namespace: 'default',
    labels: { 'kubernetes.io/service-name': 'spring' },
  },
  addressType: 'IPv4',
  endpoints: [{ addresses: ['10.1.0.5'], conditions: { ready: true }, nodeName: 'node-1' }],
  ports: [{ name: 'http', port: 8080 }],
  ...extra,
});
const lease = (spec: Json = {}): KubeObject => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name: 'node-1', namespace: 'kube-node-lease' },
  spec: {
    holderIdentity: 'node-1',
    leaseDurationSeconds: 40,
    renewTime: '2026-11-30T10:00:00.000000Z',
    ...spec,
  },
});
const coreEvent = (extra: Json = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name: 'web.17a8', namespace: 'default' },
  involvedObject: { kind: 'Pod', namespace: 'default', name: 'web', uid: 'u1', apiVersion: 'v1' },
  reason: 'Scheduled',
  message: 'Successfully assigned default/web to node-1',
  source: { component: 'default-scheduler' },
  type: 'Normal',
  count: 1,
  ...extra,
});
const newEvent = (extra: Json = {}): KubeObject => ({
  apiVersion: 'events.k8s.io/v1',
  kind: 'Event',
  metadata: { name: 'web.17a9', namespace: 'default' },
  eventTime: '2026-11-30T10:00:00.000000Z',
  regarding: { kind: 'Pod', namespace: 'default', name: 'web' },
  reason: 'Pulled',
  note: 'Container image pulled',
  type: 'Normal',
  action: 'Pull',
  reportingController: 'k8ts.io/kubelet',
  reportingInstance: 'kubelet-node-1',
  ...extra,
});

describe('defaults', () => {
  it('namespace: kubernetes finalizer, Active, name label', () => {
    assert.deepEqual(created('v1/namespaces', ns()), {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team-a', labels: { 'kubernetes.io/metadata.name': 'team-a' } },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    });
  });

  it('node: allocatable from capacity, status kept on create', () => {
    const obj = created('v1/nodes', node()) as Json;
    assert.deepEqual(obj.status.allocatable, { cpu: '4', memory: '16384256Ki', pods: '110' });
  });

  it('secret: type Opaque, stringData merged into data', () => {
    const obj = created(
      'v1/secrets',
      secret({ stringData: { user: 'admin', password: 'swordfish' } }),
    ) as Json;
    assert.equal(obj.type, 'Opaque');
    assert.equal(obj.stringData, undefined);
    assert.deepEqual(obj.data, {
      password: Buffer.from('swordfish').toString('base64'),
      user: Buffer.from('admin').toString('base64'),
    });
  });

  it('endpoints and endpointslices: protocol TCP; slices: port name "" and conditions {}', () => {
    const ep = created(
      'v1/endpoints',
      endpoints([{ addresses: [{ ip: '10.1.0.5' }], ports: [{ port: 8080 }] }]),
    ) as Json;
    assert.equal(ep.subsets[0].ports[0].protocol, 'TCP');
    const s = created(
      'discovery.k8s.io/v1/endpointslices',
      slice({ endpoints: [{ addresses: ['10.1.0.6'] }], ports: [{ port: 80 }] }),
    ) as Json;
    assert.deepEqual(s.ports, [{ port: 80, name: '', protocol: 'TCP' }]);
    assert.deepEqual(s.endpoints[0].conditions, {});
  });

  it('events: always-serialized fields', () => {
    const e = created('v1/events', coreEvent()) as Json;
    assert.equal(e.reportingComponent, '');
    assert.equal(e.reportingInstance, '');
    const n = created('events.k8s.io/v1/events', newEvent()) as Json;
    assert.deepEqual(n.deprecatedSource, {});
  });

  it('valid objects of every small kind pass', () => {
    created('v1/configmaps', cm());
    created('v1/serviceaccounts', {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'builder', namespace: 'default' },
    });
    created('coordination.k8s.io/v1/leases', lease());
    created('v1/events', coreEvent({ involvedObject: { kind: 'Node', name: 'node-1' } }));
  });
});

const BAD: [string, string, KubeObject, [string, string][]][] = [
  [
    'namespace finalizer not qualified',
    'v1/namespaces',
    modified(ns(), (n) => (n.spec = { finalizers: ['cleanup'] })),
    [['spec.finalizers', 'Invalid']],
  ],
  [
    'node taints: bad effect, duplicate key+effect',
    'v1/nodes',
    modified(
      node(),
      (n) =>
        (n.spec.taints = [
          { key: 'k', effect: 'NoRun' },
          { key: 'a', effect: 'NoSchedule' },
          { key: 'a', value: 'x', effect: 'NoSchedule' },
        ]),
    ),
    [
      ['spec.taints[0].effect', 'NotSupported'],
      ['spec.taints[2]', 'Duplicate'],
    ],
  ],
  [
    'node podCIDR',
    'v1/nodes',
    modified(node(), (n) => (n.spec.podCIDR = '10.244.1.0/33')),
    [['spec.podCIDRs[0]', 'Invalid']],
  ],
  [
    'node negative capacity',
    'v1/nodes',
    modified(node(), (n) => (n.status.capacity.cpu = '-1')),
    // allocatable defaults to capacity (SetDefaults_NodeStatus), and is validated too.
    [
      ['status.capacity.cpu', 'Invalid'],
      ['status.allocatable.cpu', 'Invalid'],
    ],
  ],
  ['configmap bad key', 'v1/configmaps', cm({ 'bad key': 'x' }), [['data[bad key]', 'Invalid']]],
  [
    'configmap key in data and binaryData',
    'v1/configmaps',
    { ...cm({ k: 'x' }), binaryData: { k: 'eA==' } },
    [['data[k]', 'Invalid']],
  ],
  ['configmap non-string value', 'v1/configmaps', cm({ port: 8080 }), [['data[port]', 'Invalid']]],
  ['configmap over 1 MiB', 'v1/configmaps', cm({ big: 'x'.repeat(1024 * 1024 + 1) }), [['data', 'TooLong']]],
  [
    'secret bad key and bad base64',
    'v1/secrets',
    secret({ data: { '..': 'aGk=', ok: 'not base64!' } }),
    [
      ['data[..]', 'Invalid'],
      ['data[ok]', 'Invalid'],
    ],
  ],
  [
    'secret over 1 MiB',
    'v1/secrets',
    secret({ data: { big: Buffer.alloc(1024 * 1024 + 1).toString('base64') } }),
    [['data', 'TooLong']],
  ],
  [
    'tls secret without key',
    'v1/secrets',
    secret({ type: 'kubernetes.io/tls', data: { 'tls.crt': 'eA==' } }),
    [['data[tls.key]', 'Required']],
  ],
  [
    'service account token without its annotation',
    'v1/secrets',
    secret({ type: 'kubernetes.io/service-account-token' }),
    [['metadata.annotations[kubernetes.io/service-account.name]', 'Required']],
  ],
  [
    'dockerconfigjson that is not JSON',
    'v1/secrets',
    secret({
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': Buffer.from('{').toString('base64') },
    }),
    [['data[.dockerconfigjson]', 'Invalid']],
  ],
  [
    'serviceaccount bad label',
    'v1/serviceaccounts',
    { metadata: { name: 'sa', namespace: 'default', labels: { app: '-' } } },
    [['metadata.labels', 'Invalid']],
  ],
  [
    'endpoints subset without addresses',
    'v1/endpoints',
    endpoints([{ ports: [{ port: 80 }] }]),
    [['subsets[0]', 'Required']],
  ],
  [
    'endpoints loopback address, bad port, unnamed port among two',
    'v1/endpoints',
    endpoints([{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port: 0, name: 'a' }, { port: 81 }] }]),
    [
      ['subsets[0].addresses[0].ip', 'Invalid'],
      ['subsets[0].ports[0].port', 'Invalid'],
      ['subsets[0].ports[1].name', 'Required'],
    ],
  ],
  [
    'endpointslice bad addressType',
    'discovery.k8s.io/v1/endpointslices',
    slice({ addressType: 'IPv5' }),
    [['addressType', 'NotSupported']],
  ],
  [
    'endpointslice endpoint without addresses, wrong family',
    'discovery.k8s.io/v1/endpointslices',
    slice({ endpoints: [{ addresses: [] }, { addresses: ['fd00::1'] }] }),
    [
      ['endpoints[0].addresses', 'Required'],
      ['endpoints[1].addresses[0]', 'Invalid'],
    ],
  ],
  [
    'endpointslice duplicate port names, bad protocol',
    'discovery.k8s.io/v1/endpointslices',
    slice({
      ports: [
        { name: 'a', port: 1 },
        { name: 'a', port: 2, protocol: 'ICMP' },
      ],
    }),
    [
      ['ports[1].name', 'Duplicate'],
      ['ports[1].protocol', 'NotSupported'],
    ],
  ],
  [
    'lease duration 0',
    'coordination.k8s.io/v1/leases',
    lease({ leaseDurationSeconds: 0 }),
    [['spec.leaseDurationSeconds', 'Invalid']],
  ],
  [
    'lease negative transitions',
    'coordination.k8s.io/v1/leases',
    lease({ leaseTransitions: -1 }),
    [['spec.leaseTransitions', 'Invalid']],
  ],
  [
    'lease preferredHolder without strategy',
    'coordination.k8s.io/v1/leases',
    lease({ preferredHolder: 'x' }),
    [['spec.preferredHolder', 'Forbidden']],
  ],
  [
    'lease unknown strategy',
    'coordination.k8s.io/v1/leases',
    lease({ strategy: 'Newest' }),
    [['spec.strategy', 'NotSupported']],
  ],
  [
    'lease bad renewTime',
    'coordination.k8s.io/v1/leases',
    lease({ renewTime: 'yesterday' }),
    [['spec.renewTime', 'Invalid']],
  ],
  [
    'core event in another namespace than its object',
    'v1/events',
    coreEvent({ involvedObject: { kind: 'Pod', namespace: 'other', name: 'web' } }),
    [['involvedObject.namespace', 'Invalid']],
  ],
  [
    'new-style core event without reporting fields',
    'v1/events',
    coreEvent({ eventTime: '2026-11-30T10:00:00.000000Z', reason: '' }),
    // legacyValidateEvent: Required, and then ValidateQualifiedName of the empty
    // reportingController (the name part is empty and does not match the pattern).
    [
      ['reportingComponent', 'Required'],
      ['reportingComponent', 'Invalid'],
      ['reportingComponent', 'Invalid'],
      ['reportingInstance', 'Required'],
      ['action', 'Required'],
      ['reason', 'Required'],
    ],
  ],
  [
    'events.k8s.io event with deprecated fields set, bad type, short series',
    'events.k8s.io/v1/events',
    newEvent({
      type: 'Info',
      deprecatedCount: 3,
      deprecatedSource: { component: 'x' },
      series: { count: 1 },
    }),
    [
      ['type', 'Invalid'],
      ['count', 'Invalid'],
      ['source', 'Invalid'],
      ['series.count', 'Invalid'],
      ['series.lastObservedTime', 'Required'],
    ],
  ],
  [
    'events.k8s.io event without eventTime',
    'events.k8s.io/v1/events',
    newEvent({ eventTime: undefined }),
    [['eventTime', 'Required']],
  ],
];

describe('validation', () => {
  for (const [name, gvr, obj, expected] of BAD) {
    it(`rejects: ${name}`, () => {
      const { errs } = create(gvr, obj);
      assert.ok(errs.length > 0, 'expected errors');
      assertErrors(errs, expected);
    });
  }
});

describe('updates', () => {
  it('namespace: spec.finalizers and status only change through their subresources', () => {
    const old = created('v1/namespaces', ns());
    const { obj } = update(
      'v1/namespaces',
      old,
      modified(old, (n) => {
        n.spec.finalizers = [];
        n.status.phase = 'Terminating';
      }),
    );
    assert.deepEqual(obj.spec, { finalizers: ['kubernetes'] });
    assert.deepEqual(obj.status, { phase: 'Active' });
  });

  it('namespace status: Terminating only once deletion started', () => {
    const old = created('v1/namespaces', ns());
    const bad = updateStatus(
      'v1/namespaces',
      old,
      modified(old, (n) => (n.status.phase = 'Terminating')),
    );
    assertErrors(bad.errs, [['status.phase', 'Invalid']]);
    const deleting = modified(old, (n) => (n.metadata.deletionTimestamp = '2026-11-30T10:00:00Z'));
    assert.deepEqual(
      updateStatus(
        'v1/namespaces',
        deleting,
        modified(deleting, (n) => (n.status.phase = 'Terminating')),
      ).errs,
      [],
    );
  });

  it('node: podCIDRs set once; status kept on main updates and defaulted on status writes', () => {
    const old = modified(created('v1/nodes', node()), (n) => (n.spec.podCIDRs = ['10.244.1.0/24']));
    const moved = update(
      'v1/nodes',
      old,
      modified(old, (n) => (n.spec.podCIDRs = ['10.244.2.0/24'])),
    );
    assertErrors(moved.errs, [['spec.podCIDRs', 'Forbidden']]);
    const { obj } = update(
      'v1/nodes',
      old,
      modified(old, (n) => (n.status = {})),
    );
    assert.deepEqual(obj.status, old.status);
    const status = updateStatus(
      'v1/nodes',
      old,
      modified(old, (n) => (n.status = { capacity: { cpu: '8' } })),
    );
    assert.deepEqual(status.errs, []);
    assert.deepEqual((status.obj as Json).status.allocatable, { cpu: '8' });
    assert.deepEqual((status.obj as Json).spec.podCIDRs, ['10.244.1.0/24']);
  });

  it('configmap and secret: immutable: true freezes data', () => {
    const oldCm = created('v1/configmaps', { ...cm(), immutable: true });
    const cmErrs = update(
      'v1/configmaps',
      oldCm,
      modified(oldCm, (c) => (c.data['app.properties'] = 'a=2')),
    ).errs;
    assertErrors(cmErrs, [['data', 'Forbidden']]);
    const unfrozen = update(
      'v1/configmaps',
      oldCm,
      modified(oldCm, (c) => delete c.immutable),
    ).errs;
    assertErrors(unfrozen, [['immutable', 'Forbidden']]);
    const oldSecret = created('v1/secrets', secret({ immutable: true }));
    assertErrors(
      update(
        'v1/secrets',
        oldSecret,
        modified(oldSecret, (s) => (s.data = {})),
      ).errs,
      [['data', 'Forbidden']],
    );
  });

  it('secret: type is immutable', () => {
    const old = created('v1/secrets', secret());
    const { errs } = update(
      'v1/secrets',
      old,
      modified(old, (s) => (s.type = 'example.com/other')),
    );
    assertErrors(errs, [['type', 'Invalid']]);
  });

  it('endpointslice: addressType is immutable', () => {
    const old = created('discovery.k8s.io/v1/endpointslices', slice());
    const { errs } = update(
      'discovery.k8s.io/v1/endpointslices',
      old,
      modified(old, (s) => (s.addressType = 'FQDN')),
    );
    assertErrors(errs, [['addressType', 'Invalid']]);
  });

  it('events.k8s.io: everything but series is immutable; core events stay permissive', () => {
    const old = created('events.k8s.io/v1/events', newEvent());
    const { errs } = update(
      'events.k8s.io/v1/events',
      old,
      modified(old, (e) => (e.note = 'changed')),
    );
    assertErrors(errs, [['message', 'Invalid']]);
    const series = modified(
      old,
      (e) => (e.series = { count: 2, lastObservedTime: '2026-11-30T10:01:00.000000Z' }),
    );
    assert.deepEqual(update('events.k8s.io/v1/events', old, series).errs, []);
    const oldCore = created('v1/events', coreEvent());
    assert.deepEqual(
      update(
        'v1/events',
        oldCore,
        modified(oldCore, (e) => (e.count = 2)),
      ).errs,
      [],
    );
  });

  it('lease: renewals validate', () => {
    const old = created('coordination.k8s.io/v1/leases', lease());
    const renewed = modified(old, (l) => (l.spec.renewTime = '2026-11-30T10:00:10.123456Z'));
    assert.deepEqual(update('coordination.k8s.io/v1/leases', old, renewed).errs, []);
  });
});

describe('field selectors', () => {
  const CASES: [string, KubeObject, Record<string, string>][] = [
    ['v1/namespaces', ns(), { 'metadata.name': 'team-a', 'status.phase': 'Active' }],
    [
      'v1/nodes',
      modified(node(), (n) => (n.spec.unschedulable = true)),
      { 'metadata.name': 'node-1', 'spec.unschedulable': 'true' },
    ],
    ['v1/secrets', secret(), { 'metadata.name': 'creds', 'metadata.namespace': 'default', type: 'Opaque' }],
    ['v1/configmaps', cm(), { 'metadata.name': 'cfg', 'metadata.namespace': 'default' }],
    [
      'v1/events',
      coreEvent(),
      {
        'metadata.name': 'web.17a8',
        'metadata.namespace': 'default',
        'involvedObject.kind': 'Pod',
        'involvedObject.namespace': 'default',
        'involvedObject.name': 'web',
        'involvedObject.uid': 'u1',
        'involvedObject.apiVersion': 'v1',
        'involvedObject.resourceVersion': '',
        'involvedObject.fieldPath': '',
        reason: 'Scheduled',
        reportingComponent: '',
        source: 'default-scheduler',
        type: 'Normal',
      },
    ],
    [
      'events.k8s.io/v1/events',
      newEvent(),
      {
        'metadata.name': 'web.17a9',
        'metadata.namespace': 'default',
        'regarding.kind': 'Pod',
        'regarding.namespace': 'default',
        'regarding.name': 'web',
        'regarding.uid': '',
        'regarding.apiVersion': '',
        'regarding.resourceVersion': '',
        'regarding.fieldPath': '',
        reason: 'Pulled',
        reportingController: 'k8ts.io/kubelet',
        source: 'k8ts.io/kubelet',
        type: 'Normal',
      },
    ],
  ];
  for (const [gvr, input, expected] of CASES) {
    it(`${gvr}: ${
      Object.keys(expected)
        .filter((k) => !k.startsWith('metadata.'))
        .join(', ') || 'metadata only'
    }`, () => {
      assert.deepEqual(strategy(gvr).selectableFields(created(gvr, input)), expected);
    });
  }

  it('replicasets: status.replicas', () => {
    const rs = { metadata: { name: 'r', namespace: 'default' }, status: { replicas: 3 } };
    assert.equal(strategy('apps/v1/replicasets').selectableFields(rs)['status.replicas'], '3');
  });
});
