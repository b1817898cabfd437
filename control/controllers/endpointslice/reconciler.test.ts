/** planSlices() and the endpoint helpers, without a server. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Endpoint, EndpointPort, EndpointSlice, Pod, Service } from '../../../api/types.js';
import { endpointPorts, newEndpointSlice, podToEndpoint, portMapKey } from './endpoint.js';
import { addDesired, planSlices } from './reconciler.js';
import type { DesiredPortSet } from './reconciler.js';

const svc: Service = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'default', uid: 'svc-uid', labels: { app: 'web' } },
  spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
};
const ports: EndpointPort[] = [{ name: 'http', port: 8080, protocol: 'TCP' }];

function ep(i: number, ready = true): Endpoint {
  return {
    addresses: [`10.0.${i >> 8}.${i & 255}`],
    conditions: { ready, serving: ready, terminating: false },
    nodeName: 'node-a',
    targetRef: { kind: 'Pod', namespace: 'default', name: `p-${i}`, uid: `uid-${i}` },
  };
}

function desired(...eps: Endpoint[]): Map<string, DesiredPortSet> {
  const m = new Map<string, DesiredPortSet>();
  for (const e of eps) addDesired(m, ports, e);
  return m;
}

let seq = 0;
/** A slice as the cache would hold it (named, with a uid). */
function existing(eps: Endpoint[], over: Partial<EndpointSlice['metadata']> = {}, p = ports): EndpointSlice {
  const s = newEndpointSlice(svc, p);
  const n = ++seq;
  s.metadata = { ...s.metadata, name: `web-s${n}`, uid: `slice-${n}`, resourceVersion: '1', ...over };
  s.endpoints = eps;
  return s;
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => ep(from + i));
const sizes = (slices: EndpointSlice[]) => slices.map((s) => s.endpoints.length).sort((a, b) => b - a);

describe('planSlices', () => {
  const cases: {
    name: string;
    desired: Map<string, DesiredPortSet>;
    existing: EndpointSlice[];
    expect: { create: number[]; update: number[]; delete: number };
  }[] = [
    {
      name: 'new Service: one slice',
      desired: desired(...range(0, 3)),
      existing: [],
      expect: { create: [3], update: [], delete: 0 },
    },
    {
      name: '250 endpoints: slices of 100',
      desired: desired(...range(0, 250)),
      existing: [],
      expect: { create: [100, 100, 50], update: [], delete: 0 },
    },
    {
      name: 'nothing changed: no writes',
      desired: desired(...range(0, 3)),
      existing: [existing(range(0, 3))],
      expect: { create: [], update: [], delete: 0 },
    },
    {
      name: 'a condition changed: updated in place',
      desired: desired(ep(0), ep(1, false), ep(2)),
      existing: [existing(range(0, 3))],
      expect: { create: [], update: [3], delete: 0 },
    },
    {
      name: 'an endpoint gone and one added: the same slice',
      desired: desired(ep(0), ep(1), ep(7)),
      existing: [existing(range(0, 3))],
      expect: { create: [], update: [3], delete: 0 },
    },
    {
      name: 'new endpoints fill an untouched slice with room',
      desired: desired(...range(0, 105)),
      existing: [existing(range(0, 100)), existing([])],
      expect: { create: [], update: [5], delete: 0 },
    },
    {
      name: 'no endpoints left: the slice becomes the placeholder',
      desired: desired(),
      existing: [existing(range(0, 3))],
      expect: { create: [], update: [0], delete: 0 },
    },
    {
      name: 'the placeholder stays as it is',
      desired: desired(),
      existing: [existing([], {}, [])],
      expect: { create: [], update: [], delete: 0 },
    },
    {
      name: 'a slice of an older Service of the same name is replaced',
      desired: desired(ep(0)),
      existing: [
        existing([ep(0)], {
          ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'old', controller: true }],
        }),
      ],
      expect: { create: [1], update: [], delete: 1 },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const plan = planSlices(svc, c.desired, c.existing, 100);
      assert.deepEqual(
        { create: sizes(plan.create), update: sizes(plan.update), delete: plan.delete.length },
        c.expect,
      );
      for (const s of [...plan.create, ...plan.update]) assert.ok(s.endpoints.length <= 100);
    });
  }

  it('updates a slice whose Service labels changed', () => {
    const old = existing(range(0, 2));
    const relabelled: Service = { ...svc, metadata: { ...svc.metadata, labels: { app: 'web', tier: 'x' } } };
    const plan = planSlices(relabelled, desired(...range(0, 2)), [old], 100);
    assert.equal(plan.update.length, 1);
    assert.equal(plan.update[0]!.metadata.labels?.tier, 'x');
    assert.equal(plan.update[0]!.metadata.name, old.metadata.name);
  });

  it('never modifies its inputs', () => {
    const old = existing(range(0, 3));
    const copy = structuredClone(old);
    planSlices(svc, desired(ep(0), ep(9)), [old], 100);
    assert.deepEqual(old, copy);
  });
});

describe('podToEndpoint conditions', () => {
  const pod = (ready: boolean, deleting: boolean): Pod => ({
    metadata: {
      name: 'p',
      namespace: 'default',
      uid: 'u',
      ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: { nodeName: 'n', containers: [{ name: 'c', ports: [{ name: 'http', containerPort: 8080 }] }] },
    status: {
      phase: 'Running',
      podIP: '10.1.2.3',
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    },
  });
  const cases: [string, boolean, boolean, boolean, Endpoint['conditions']][] = [
    ['ready', true, false, false, { ready: true, serving: true, terminating: false }],
    ['not ready', false, false, false, { ready: false, serving: false, terminating: false }],
    ['terminating, still ready', true, true, false, { ready: false, serving: true, terminating: true }],
    [
      'not ready, publishNotReadyAddresses',
      false,
      false,
      true,
      { ready: true, serving: false, terminating: false },
    ],
    [
      'terminating, publishNotReadyAddresses',
      true,
      true,
      true,
      { ready: true, serving: true, terminating: true },
    ],
  ];
  for (const [name, ready, deleting, publish, want] of cases) {
    it(name, () => {
      const s: Service = { ...svc, spec: { ...svc.spec, publishNotReadyAddresses: publish } };
      assert.deepEqual(podToEndpoint(pod(ready, deleting), undefined, s)?.conditions, want);
    });
  }

  it('resolves named ports and leaves out ports the pod lacks', () => {
    const s: Service = {
      ...svc,
      spec: {
        ...svc.spec,
        ports: [
          { name: 'a', port: 80, targetPort: 'http' },
          { name: 'b', port: 81, targetPort: 'grpc' },
          { name: 'c', port: 82 },
        ],
      },
    };
    assert.deepEqual(endpointPorts(s, pod(true, false)), [
      { name: 'a', port: 8080, protocol: 'TCP' },
      { name: 'c', port: 82, protocol: 'TCP' },
    ]);
  });

  it('keys port sets regardless of order', () => {
    const a: EndpointPort = { name: 'a', port: 1, protocol: 'TCP' };
    const b: EndpointPort = { name: 'b', port: 2, protocol: 'UDP' };
    assert.equal(portMapKey([a, b]), portMapKey([b, a]));
    assert.notEqual(portMapKey([a]), portMapKey([a, b]));
  });
});
