import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
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

const S = 'v1/services';

const svc = (spec: Json = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'spring', namespace: 'default' },
  spec: { selector: { app: 'backend-app' }, ports: [{ port: 80, targetPort: 8080 }], ...spec },
});

/** `kubectl get svc -o yaml` of that Service, before the allocator assigns clusterIP(s). */
const EXPECTED = parse(`
apiVersion: v1
kind: Service
metadata:
  name: spring
  namespace: default
spec:
  internalTrafficPolicy: Cluster
  ipFamilies:
  - IPv4
  ipFamilyPolicy: SingleStack
  ports:
  - port: 80
    protocol: TCP
    targetPort: 8080
  selector:
    app: backend-app
  sessionAffinity: None
  type: ClusterIP
status:
  loadBalancer: {}
`) as KubeObject;

describe('services: defaults', () => {
  it('defaults a ClusterIP service as a real cluster shows it (clusterIP left to the allocator)', () => {
    const { obj, errs } = create(S, svc());
    assert.deepEqual(errs, []);
    assert.deepEqual(obj, EXPECTED);
  });

  it('defaults NodePort: targetPort = port, externalTrafficPolicy Cluster', () => {
    const obj = created(S, svc({ type: 'NodePort', ports: [{ port: 8080, nodePort: 30080 }] })) as Json;
    assert.deepEqual(obj.spec.ports, [{ port: 8080, nodePort: 30080, protocol: 'TCP', targetPort: 8080 }]);
    assert.equal(obj.spec.externalTrafficPolicy, 'Cluster');
  });

  it('defaults LoadBalancer and ClientIP affinity', () => {
    const obj = created(S, svc({ type: 'LoadBalancer', sessionAffinity: 'ClientIP' })) as Json;
    assert.equal(obj.spec.allocateLoadBalancerNodePorts, true);
    assert.deepEqual(obj.spec.sessionAffinityConfig, { clientIP: { timeoutSeconds: 10800 } });
  });

  it('fills clusterIPs from clusterIP and headless selectorless families', () => {
    const headless = created(
      S,
      modified(svc({ clusterIP: 'None' }), (s) => delete s.spec.selector),
    ) as Json;
    assert.deepEqual(headless.spec.clusterIPs, ['None']);
    assert.equal(headless.spec.ipFamilyPolicy, 'PreferDualStack');
    const v6 = created(S, svc({ clusterIP: 'fd00::10' })) as Json;
    assert.deepEqual(v6.spec.ipFamilies, ['IPv6']);
  });

  it('sets no family fields on ExternalName services', () => {
    const obj = created(S, { ...svc({ type: 'ExternalName', externalName: 'db.example.com' }) }) as Json;
    assert.equal(obj.spec.ipFamilies, undefined);
    assert.equal(obj.spec.internalTrafficPolicy, undefined);
  });
});

const BAD: [string, Json, [string, string][]][] = [
  ['no ports', { ports: [] }, [['spec.ports', 'Required']]],
  [
    'port 0 and port 70000',
    { ports: [{ port: 0 }, { port: 70000, name: 'b' }] },
    // targetPort defaults to port (SetDefaults_Service), so it is out of range too; with
    // two ports, each needs a name.
    [
      ['spec.ports[0].name', 'Required'],
      ['spec.ports[0].port', 'Invalid'],
      ['spec.ports[0].targetPort', 'Invalid'],
      ['spec.ports[1].port', 'Invalid'],
      ['spec.ports[1].targetPort', 'Invalid'],
    ],
  ],
  [
    'unnamed port among several',
    { ports: [{ port: 80 }, { port: 81, name: 'b' }] },
    [['spec.ports[0].name', 'Required']],
  ],
  [
    'duplicate port names',
    {
      ports: [
        { port: 80, name: 'web' },
        { port: 81, name: 'web' },
      ],
    },
    [['spec.ports[1].name', 'Duplicate']],
  ],
  ['bad port name', { ports: [{ port: 80, name: 'Web_Port' }] }, [['spec.ports[0].name', 'Invalid']]],
  [
    'duplicate port and protocol',
    {
      ports: [
        { port: 80, name: 'a' },
        { port: 80, name: 'b' },
      ],
    },
    [['spec.ports[1]', 'Duplicate']],
  ],
  ['bad protocol', { ports: [{ port: 80, protocol: 'HTTP' }] }, [['spec.ports[0].protocol', 'NotSupported']]],
  [
    'bad targetPort name',
    { ports: [{ port: 80, targetPort: 'no_good' }] },
    [['spec.ports[0].targetPort', 'Invalid']],
  ],
  [
    'nodePort on ClusterIP',
    { ports: [{ port: 80, nodePort: 30000 }] },
    [['spec.ports[0].nodePort', 'Forbidden']],
  ],
  ['bad type', { type: 'Ingress' }, [['spec.type', 'NotSupported']]],
  ['bad sessionAffinity', { sessionAffinity: 'Sticky' }, [['spec.sessionAffinity', 'NotSupported']]],
  [
    'ClientIP timeout too long',
    { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 100000 } } },
    [['spec.sessionAffinityConfig.clientIP.timeoutSeconds', 'Invalid']],
  ],
  ['bad selector value', { selector: { app: 'a b' } }, [['spec.selector', 'Invalid']]],
  ['bad clusterIP', { clusterIP: '10.0.0.300' }, [['spec.clusterIPs[0]', 'Invalid']]],
  [
    'clusterIP not matching clusterIPs',
    { clusterIP: '10.0.0.1', clusterIPs: ['10.0.0.2'] },
    [['spec.clusterIPs', 'Invalid']],
  ],
  ['headless NodePort', { type: 'NodePort', clusterIP: 'None' }, [['spec.clusterIPs[0]', 'Invalid']]],
  [
    'ExternalName without externalName',
    { type: 'ExternalName', ports: [] },
    [['spec.externalName', 'Required']],
  ],
  [
    'externalTrafficPolicy on ClusterIP',
    { externalTrafficPolicy: 'Local' },
    [['spec.externalTrafficPolicy', 'Invalid']],
  ],
  [
    'bad internalTrafficPolicy',
    { internalTrafficPolicy: 'Node' },
    [['spec.internalTrafficPolicy', 'NotSupported']],
  ],
  ['bad ipFamilies', { ipFamilies: ['IPv5'] }, [['spec.ipFamilies[0]', 'NotSupported']]],
  [
    'loadBalancerClass on ClusterIP',
    { loadBalancerClass: 'example.com/lb' },
    [['spec.loadBalancerClass', 'Forbidden']],
  ],
  [
    'kubelet port on a LoadBalancer',
    { type: 'LoadBalancer', ports: [{ port: 10250 }] },
    [['spec.ports[0]', 'Invalid']],
  ],
];

describe('services: validation', () => {
  for (const [name, spec, expected] of BAD) {
    it(`rejects: ${name}`, () => {
      const { errs } = create(S, svc(spec));
      assert.ok(errs.length > 0, 'expected errors');
      assertErrors(errs, expected);
    });
  }

  it('accepts a headless service without ports', () => {
    assert.deepEqual(create(S, svc({ clusterIP: 'None', ports: [] })).errs, []);
  });
});

describe('services: update and status', () => {
  const allocated = (): KubeObject =>
    modified(created(S, svc({ type: 'NodePort', ports: [{ port: 80, name: 'web' }] })), (s) => {
      s.spec.clusterIP = '10.96.0.10';
      s.spec.clusterIPs = ['10.96.0.10'];
      s.spec.ports[0].nodePort = 31000;
    });

  it('keeps allocated values an apply omits (clusterIP, nodePort)', () => {
    const old = allocated();
    const { obj, errs } = update(
      S,
      old,
      svc({ type: 'NodePort', ports: [{ port: 80, name: 'web' }], selector: { app: 'v2' } }),
    );
    assert.deepEqual(errs, []);
    const o = obj as Json;
    assert.equal(o.spec.clusterIP, '10.96.0.10');
    assert.deepEqual(o.spec.clusterIPs, ['10.96.0.10']);
    assert.equal(o.spec.ports[0].nodePort, 31000);
    assert.deepEqual(o.status, { loadBalancer: {} });
  });

  it('drops what only the old type needed when the type changes (NodePort → ClusterIP)', () => {
    const old = allocated();
    const next = modified(old, (s) => (s.spec.type = 'ClusterIP'));
    const { obj, errs } = update(S, old, next);
    assert.deepEqual(errs, []);
    const o = obj as Json;
    assert.equal(o.spec.ports[0].nodePort, undefined);
    assert.equal(o.spec.externalTrafficPolicy, undefined);
    assert.equal(o.spec.clusterIP, '10.96.0.10');
  });

  it('keeps a nodePort the client changed, so validation reports it', () => {
    const old = allocated();
    const next = modified(old, (s) => {
      s.spec.type = 'ClusterIP';
      s.spec.ports[0].nodePort = 31001;
    });
    assertErrors(update(S, old, next).errs, [['spec.ports[0].nodePort', 'Forbidden']]);
  });

  it('forbids changing an assigned clusterIP', () => {
    const old = allocated();
    const { errs } = update(
      S,
      old,
      modified(old, (s) => (s.spec.clusterIP = s.spec.clusterIPs[0] = '10.96.0.11')),
    );
    assertErrors(errs, [['spec.clusterIPs[0]', 'Invalid']]);
    assert.equal(errs[0]!.message, 'may not change once set');
  });

  it('validates load balancer status, defaulting ipMode', () => {
    const old = created(S, svc({ type: 'LoadBalancer' }));
    const ok = updateStatus(
      S,
      old,
      modified(old, (s) => (s.status.loadBalancer.ingress = [{ ip: '192.0.2.1' }])),
    );
    assert.deepEqual(ok.errs, []);
    assert.deepEqual((ok.obj as Json).status.loadBalancer.ingress, [{ ip: '192.0.2.1', ipMode: 'VIP' }]);
    const bad = updateStatus(
      S,
      old,
      modified(old, (s) => (s.status.loadBalancer.ingress = [{ hostname: '192.0.2.1' }])),
    );
    assertErrors(bad.errs, [['status.loadBalancer.ingress[0].hostname', 'Invalid']]);
  });

  it('selects by spec.clusterIP and spec.type', () => {
    assert.deepEqual(strategy(S).selectableFields(allocated()), {
      'metadata.name': 'spring',
      'metadata.namespace': 'default',
      'spec.clusterIP': '10.96.0.10',
      'spec.type': 'NodePort',
    });
  });
});
