/** desiredSubsets(), subsetsEqual() and truncateSubsets(), without a server. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EndpointSubset, Pod, Service } from '../../../api/types.js';
import { countAddresses, desiredSubsets, subsetsEqual, truncateSubsets } from './subsets.js';

function pod(
  name: string,
  opts: {
    ready?: boolean;
    ip?: string;
    deleting?: boolean;
    phase?: 'Running' | 'Succeeded';
    ports?: { name: string; containerPort: number }[];
  } = {},
): Pod {
  return {
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      ...(opts.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: {
      nodeName: 'node-a',
      containers: [{ name: 'c', ports: opts.ports ?? [{ name: 'http', containerPort: 8080 }] }],
    },
    status: {
      phase: opts.phase ?? 'Running',
      ...(opts.ip === ''
        ? {}
        : { podIP: opts.ip ?? `10.0.0.${name.length}${name.charCodeAt(name.length - 1) % 10}` }),
      conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }],
    },
  };
}

const svc = (spec: Partial<Service['spec']> = {}): Service => ({
  metadata: { name: 'web', namespace: 'default' },
  spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }], ...spec },
});

const names = (subsets: EndpointSubset[], which: 'addresses' | 'notReadyAddresses') =>
  subsets.flatMap((s) => (s[which] ?? []).map((a) => a.targetRef!.name)).sort();

describe('desiredSubsets', () => {
  const cases: { name: string; svc: Service; pods: Pod[]; ready: string[]; notReady: string[] }[] = [
    {
      name: 'ready and not-ready pods',
      svc: svc(),
      pods: [pod('a'), pod('b', { ready: false })],
      ready: ['a'],
      notReady: ['b'],
    },
    {
      name: 'terminating pods are left out',
      svc: svc(),
      pods: [pod('a'), pod('b', { deleting: true })],
      ready: ['a'],
      notReady: [],
    },
    {
      name: 'terminal pods are left out',
      svc: svc(),
      pods: [pod('a', { phase: 'Succeeded' })],
      ready: [],
      notReady: [],
    },
    {
      name: 'pods without IP are left out',
      svc: svc(),
      pods: [pod('a', { ip: '' })],
      ready: [],
      notReady: [],
    },
    {
      name: 'publishNotReadyAddresses lists not-ready and terminating pods as ready',
      svc: svc({ publishNotReadyAddresses: true }),
      pods: [pod('a', { ready: false }), pod('b', { deleting: true })],
      ready: ['a', 'b'],
      notReady: [],
    },
    {
      name: 'a pod lacking the named port is left out',
      svc: svc(),
      pods: [pod('a', { ports: [] })],
      ready: [],
      notReady: [],
    },
    {
      name: 'a headless Service without ports lists addresses alone',
      svc: svc({ clusterIP: 'None', ports: [] }),
      pods: [pod('a')],
      ready: ['a'],
      notReady: [],
    },
    {
      name: 'a non-headless Service without ports lists nothing',
      svc: svc({ ports: [] }),
      pods: [pod('a')],
      ready: [],
      notReady: [],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const subsets = desiredSubsets(c.svc, c.pods);
      assert.deepEqual(names(subsets, 'addresses'), c.ready);
      assert.deepEqual(names(subsets, 'notReadyAddresses'), c.notReady);
    });
  }

  it('groups pods with the same ports into one subset, whatever their order', () => {
    const pods = [
      pod('a'),
      pod('bb', { ready: false }),
      pod('ccc', { ports: [{ name: 'http', containerPort: 9090 }] }),
    ];
    const one = desiredSubsets(svc(), pods);
    assert.deepEqual(one, desiredSubsets(svc(), [...pods].reverse()));
    assert.equal(one.length, 2);
    assert.deepEqual(
      one.map((s) => s.ports!.map((p) => p.port)),
      [[8080], [9090]],
    );
  });
});

describe('subsetsEqual', () => {
  const base: EndpointSubset[] = [
    {
      addresses: [{ ip: '10.0.0.1', targetRef: { kind: 'Pod', name: 'a', uid: 'u', resourceVersion: '1' } }],
      ports: [{ port: 80, protocol: 'TCP' }],
    },
  ];
  it('ignores resourceVersions, defaulted protocols and empty lists', () => {
    const other: EndpointSubset[] = [
      {
        addresses: [{ ip: '10.0.0.1', targetRef: { kind: 'Pod', name: 'a', uid: 'u' } }],
        notReadyAddresses: [],
        ports: [{ port: 80 }],
      },
    ];
    assert.ok(subsetsEqual(base, other));
    assert.ok(subsetsEqual(undefined, []));
  });
  it('sees a changed address', () => {
    assert.ok(!subsetsEqual(base, [{ ...base[0]!, notReadyAddresses: base[0]!.addresses, addresses: [] }]));
  });
});

describe('truncateSubsets', () => {
  const addrs = (n: number, prefix: string) =>
    Array.from({ length: n }, (_, i) => ({ ip: `10.${prefix}.0.${i}` }));
  it('keeps subsets within capacity as they are', () => {
    const s = [{ addresses: addrs(3, '1') }];
    assert.deepEqual(truncateSubsets(s, 5), { subsets: s, truncated: false });
  });
  it('drops not-ready addresses first', () => {
    const { subsets, truncated } = truncateSubsets(
      [{ addresses: addrs(4, '1'), notReadyAddresses: addrs(4, '2') }],
      5,
    );
    assert.ok(truncated);
    assert.equal(subsets[0]!.addresses!.length, 4);
    assert.equal(subsets[0]!.notReadyAddresses!.length, 1);
  });
  it('shares the capacity between subsets when ready addresses alone are too many', () => {
    const { subsets } = truncateSubsets(
      [{ addresses: addrs(6, '1'), notReadyAddresses: addrs(2, '3') }, { addresses: addrs(6, '2') }],
      6,
    );
    assert.equal(countAddresses(subsets), 6);
    assert.deepEqual(
      subsets.map((s) => [s.addresses?.length, s.notReadyAddresses]),
      [
        [3, undefined],
        [3, undefined],
      ],
    );
  });
});
