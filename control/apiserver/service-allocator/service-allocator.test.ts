/**
 * Service clusterIP / nodePort allocation through the real API server: the table of
 * create cases, release on delete and on update, rejected requests changing nothing, and
 * two API servers over one store (memory, and a real etcd) racing for a small range.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiStatusError } from '../../../api/client/errors.js';
import { resources } from '../../../api/client/resource.js';
import { RestClient } from '../../../api/client/rest.js';
import { silentLogger } from '../../../api/log.js';
import type { Service } from '../../../api/types.js';
import { startEtcd, type EtcdMember } from '../../../test/support/etcd.js';
import { startTestApi, type TestApi } from '../../../test/support/api.js';
import { EtcdStore } from '../../storage/etcd.js';
import { MemoryStore } from '../../storage/memory.js';
import type { Store } from '../../storage/store.js';
import {
  ipv4ToNumber,
  parseIPv4CIDR,
  parsePortRange,
  SERVICE_IPS_PREFIX,
  SERVICE_NODE_PORTS_PREFIX,
  ServiceAllocator,
} from './index.js';
import { ApiServer } from '../server.js';
import { nameValidatorFor, strategyFor } from '../strategies/index.js';

let seq = 0;
const svc = (spec: Service['spec'], name = `s${++seq}`): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'default' },
  spec: { selector: { app: 'x' }, ports: [{ port: 80 }], ...spec },
});

async function failure(p: Promise<unknown>): Promise<ApiStatusError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiStatusError) return err;
    throw err;
  }
  assert.fail('expected the request to fail');
}

const inRange = (ip: string | undefined, from: string, to: string): boolean => {
  const n = ipv4ToNumber(ip ?? '');
  return n !== undefined && n >= ipv4ToNumber(from)! && n <= ipv4ToNumber(to)!;
};

describe('service allocation: parsing', () => {
  it('parses CIDRs and port ranges, refusing what does not fit', () => {
    assert.deepEqual(parseIPv4CIDR('10.43.7.9/16'), {
      base: ipv4ToNumber('10.43.0.0'),
      prefixLength: 16,
      text: '10.43.0.0/16',
    });
    for (const bad of ['10.43.0.0', 'fd00::/108', '10.43.0.0/31', '300.1.1.1/8']) {
      assert.throws(() => parseIPv4CIDR(bad), /expected an IPv4 CIDR/, bad);
    }
    assert.deepEqual(parsePortRange('30000-32767'), { first: 30000, last: 32767 });
    assert.deepEqual(parsePortRange('31000'), { first: 31000, last: 31000 });
    for (const bad of ['32767-30000', '0-10', '30000-70000', 'a-b']) {
      assert.throws(() => parsePortRange(bad), /expected <first>-<last>/, bad);
    }
  });
});

describe('service allocation: create (default ranges)', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
    await api.client.create(resources.services, svc({ clusterIP: '10.43.0.50' }, 'holds-ip'));
    await api.client.create(
      resources.services,
      svc({ type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }, 'holds-port'),
    );
  });
  after(() => api.stop());

  type Case = { name: string; spec: Service['spec']; check?: (s: Service) => void; error?: [number, string] };
  const CASES: Case[] = [
    {
      name: 'a dynamic clusterIP comes from the upper band of 10.43.0.0/16',
      spec: {},
      check: (s) => {
        assert.ok(inRange(s.spec.clusterIP, '10.43.1.1', '10.43.255.254'), s.spec.clusterIP);
        assert.deepEqual(s.spec.clusterIPs, [s.spec.clusterIP]);
        assert.equal(s.spec.ports?.[0]?.nodePort, undefined);
      },
    },
    {
      name: 'a requested free clusterIP is given',
      spec: { clusterIP: '10.43.0.10' },
      check: (s) => assert.deepEqual(s.spec.clusterIPs, ['10.43.0.10']),
    },
    {
      name: 'a taken clusterIP is refused',
      spec: { clusterIP: '10.43.0.50' },
      error: [
        422,
        'spec.clusterIPs: Invalid value: ["10.43.0.50"]: failed to allocate IP 10.43.0.50: provided IP is already allocated',
      ],
    },
    {
      name: 'a clusterIP out of range is refused',
      spec: { clusterIP: '10.96.0.10' },
      error: [
        422,
        'failed to allocate IP 10.96.0.10: the provided IP (10.96.0.10) is not in the valid range. The range of valid IPs is 10.43.0.0/16',
      ],
    },
    {
      name: 'a headless service gets no clusterIP',
      spec: { clusterIP: 'None' },
      check: (s) => assert.deepEqual(s.spec.clusterIPs, ['None']),
    },
    {
      name: 'an ExternalName service gets nothing',
      spec: { type: 'ExternalName', externalName: 'db.example.com', selector: {} },
      check: (s) => assert.equal(s.spec.clusterIP, undefined),
    },
    {
      name: 'a NodePort service gets a nodePort from the upper band of 30000-32767',
      spec: {
        type: 'NodePort',
        ports: [
          { port: 80, name: 'a' },
          { port: 81, name: 'b' },
        ],
      },
      check: (s) => {
        const ports = s.spec.ports!.map((p) => p.nodePort!);
        assert.ok(
          ports.every((p) => p >= 30086 && p <= 32767),
          String(ports),
        );
        assert.notEqual(ports[0], ports[1]);
      },
    },
    {
      name: 'TCP and UDP of one port share one nodePort',
      spec: {
        type: 'NodePort',
        ports: [
          { port: 53, name: 'dns', protocol: 'UDP' },
          { port: 53, name: 'dns-tcp', protocol: 'TCP' },
        ],
      },
      check: (s) => assert.equal(s.spec.ports![0]!.nodePort, s.spec.ports![1]!.nodePort),
    },
    {
      name: 'a taken nodePort is refused',
      spec: { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] },
      error: [
        422,
        'Service "NAME" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated',
      ],
    },
    {
      name: 'a nodePort out of range is refused',
      spec: { type: 'NodePort', ports: [{ port: 80, nodePort: 8080 }] },
      error: [
        422,
        'spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the valid range. The range of valid ports is 30000-32767',
      ],
    },
    {
      name: 'a LoadBalancer gets nodePorts',
      spec: { type: 'LoadBalancer' },
      check: (s) => assert.ok((s.spec.ports![0]!.nodePort ?? 0) >= 30000),
    },
    {
      name: 'a LoadBalancer with allocateLoadBalancerNodePorts false gets none',
      spec: { type: 'LoadBalancer', allocateLoadBalancerNodePorts: false },
      check: (s) => assert.equal(s.spec.ports![0]!.nodePort, undefined),
    },
    {
      name: 'a LoadBalancer with externalTrafficPolicy Local gets a healthCheckNodePort',
      spec: { type: 'LoadBalancer', externalTrafficPolicy: 'Local' },
      check: (s) => assert.ok(((s.spec.healthCheckNodePort as number) ?? 0) >= 30000),
    },
    {
      name: 'dual-stack is refused on this single-stack cluster',
      spec: { ipFamilyPolicy: 'RequireDualStack' },
      error: [
        422,
        'spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services',
      ],
    },
  ];

  for (const c of CASES) {
    it(c.name, async () => {
      const body = svc(c.spec);
      if (c.error) {
        const err = await failure(api.client.create(resources.services, body));
        assert.equal(err.code, c.error[0]);
        assert.ok(err.message.includes(c.error[1].replace('NAME', body.metadata.name!)), err.message);
      } else {
        c.check!(await api.client.create(resources.services, body));
      }
    });
  }
});

// The nodePorts these tests ask for lie in the static band (30000-30085 of the default
// range), which dynamic allocations leave alone while the rest has room: a test that lets a
// port be picked for it can never take one another test names.
describe('service allocation: release and rollback', () => {
  let api: TestApi;
  before(async () => (api = await startTestApi()));
  after(() => api.stop());
  const create = (s: Service) => api.client.create(resources.services, s);
  const del = (name: string) => api.client.delete(resources.services, 'default', name);

  it('releases the clusterIP and nodePorts when the Service is deleted', async () => {
    const spec = {
      type: 'NodePort' as const,
      clusterIP: '10.43.0.20',
      ports: [{ port: 80, nodePort: 30040 }],
    };
    await create(svc(spec, 'first'));
    assert.equal((await failure(create(svc(spec, 'second')))).code, 422);
    await del('first');
    const again = await create(svc(spec, 'second'));
    assert.equal(again.spec.clusterIP, '10.43.0.20');
    await del('second');
  });

  it('releases nodePorts when the type changes to ClusterIP and when a port is removed', async () => {
    const s = await create(
      svc(
        {
          type: 'NodePort',
          ports: [
            { port: 80, name: 'a', nodePort: 30041 },
            { port: 81, name: 'b', nodePort: 30042 },
          ],
        },
        'multi',
      ),
    );
    s.spec.ports = [s.spec.ports![0]!];
    await api.client.update(resources.services, s);
    await create(svc({ type: 'NodePort', ports: [{ port: 80, nodePort: 30042 }] }, 'took-b'));
    const current = await api.client.get<Service>(resources.services, 'default', 'multi');
    current.spec.type = 'ClusterIP';
    delete current.spec.externalTrafficPolicy;
    delete current.spec.ports![0]!.nodePort;
    const updated = await api.client.update(resources.services, current);
    assert.equal(updated.spec.ports![0]!.nodePort, undefined);
    await create(svc({ type: 'NodePort', ports: [{ port: 80, nodePort: 30041 }] }, 'took-a'));
    // And back to NodePort: a nodePort is allocated again.
    updated.spec.type = 'NodePort';
    const back = await api.client.update(resources.services, updated);
    assert.ok((back.spec.ports![0]!.nodePort ?? 0) >= 30000);
  });

  it('a rejected create changes nothing: what it had allocated is rolled back', async () => {
    await create(svc({ type: 'NodePort', ports: [{ port: 80, nodePort: 30050 }] }, 'holder'));
    const err = await failure(
      create(
        svc(
          {
            type: 'NodePort',
            clusterIP: '10.43.0.30',
            ports: [
              { port: 80, name: 'a', nodePort: 30051 },
              { port: 81, name: 'b', nodePort: 30050 },
            ],
          },
          'rejected',
        ),
      ),
    );
    assert.match(
      err.message,
      /spec\.ports\[1\]\.nodePort: Invalid value: 30050: provided port is already allocated/,
    );
    const ok = await create(
      svc({ type: 'NodePort', clusterIP: '10.43.0.30', ports: [{ port: 80, nodePort: 30051 }] }, 'later'),
    );
    assert.equal(ok.spec.clusterIP, '10.43.0.30');
  });

  it('a rejected update keeps the old allocations and takes no new ones', async () => {
    const s = await create(
      svc({ type: 'NodePort', ports: [{ port: 80, name: 'a', nodePort: 30060 }] }, 'upd'),
    );
    await create(svc({ type: 'NodePort', ports: [{ port: 80, nodePort: 30061 }] }, 'upd-holder'));
    s.spec.ports = [
      { port: 80, name: 'a', nodePort: 30062 },
      { port: 81, name: 'b', nodePort: 30061 },
    ];
    assert.equal((await failure(api.client.update(resources.services, s))).code, 422);
    // 30060 is still held by upd; 30062 was rolled back.
    assert.equal(
      (await failure(create(svc({ type: 'NodePort', ports: [{ port: 80, nodePort: 30060 }] })))).code,
      422,
    );
    await create(svc({ type: 'NodePort', ports: [{ port: 80, nodePort: 30062 }] }));
  });

  it('a dry-run create allocates nothing', async () => {
    const spec = {
      type: 'NodePort' as const,
      clusterIP: '10.43.0.40',
      ports: [{ port: 80, nodePort: 30070 }],
    };
    const dry = await api.client.create(resources.services, svc(spec, 'dry'), { dryRun: true });
    assert.equal(dry.spec.clusterIP, '10.43.0.40');
    await create(svc(spec, 'dry'));
  });
});

/** Two API servers over one store, with small ranges: 6 service IPs and 6 nodePorts. */
async function twoServers(store: Store): Promise<{ clients: RestClient[]; stop(): Promise<void> }> {
  const servers = [0, 1].map(
    () =>
      new ApiServer({
        store,
        strategyFor,
        nameValidatorFor,
        port: 0,
        logger: silentLogger(),
        serviceClusterIPRange: '10.96.0.0/29',
        serviceNodePortRange: '30000-30005',
      }),
  );
  const clients: RestClient[] = [];
  for (const s of servers)
    clients.push(new RestClient({ server: `http://127.0.0.1:${(await s.start()).port}` }));
  return {
    clients,
    async stop() {
      for (const c of clients) c.close();
      for (const s of servers) await s.stop();
    },
  };
}

/** 12 concurrent creates across both servers: exactly 6 succeed, all with distinct IPs and ports. */
async function raceForRange(clients: RestClient[]): Promise<void> {
  const results = await Promise.allSettled(
    Array.from({ length: 12 }, (_, i) =>
      clients[i % 2]!.create(resources.services, svc({ type: 'NodePort' }, `race-${i}`)),
    ),
  );
  const ok = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as ApiStatusError] : []));
  assert.equal(ok.length, 6);
  assert.equal(new Set(ok.map((s) => s.spec.clusterIP)).size, 6);
  assert.equal(new Set(ok.map((s) => s.spec.ports![0]!.nodePort)).size, 6);
  assert.ok(ok.every((s) => inRange(s.spec.clusterIP, '10.96.0.1', '10.96.0.6')));
  for (const e of failed) assert.match(e.message, /range is full/);
}

describe('service allocation: repair', () => {
  const keys = async (store: Store) =>
    [
      ...(await store.list(SERVICE_IPS_PREFIX)).items,
      ...(await store.list(SERVICE_NODE_PORTS_PREFIX)).items,
    ].map((kv) => kv.key.slice(kv.key.lastIndexOf('/') + 1));

  it('releases what no Service uses after three runs in a row, records what a Service uses unrecorded', async () => {
    const store = new MemoryStore();
    const server = new ApiServer({
      store,
      strategyFor,
      nameValidatorFor,
      port: 0,
      logger: silentLogger(),
      serviceAllocationRepairIntervalMs: 0,
    });
    const client = new RestClient({ server: `http://127.0.0.1:${(await server.start()).port}` });
    try {
      const spec = { type: 'NodePort' as const, ports: [{ port: 80, nodePort: 30100 }] };
      const kept = await client.create(resources.services, svc({ ...spec, clusterIP: '10.43.0.20' }, 'kept'));
      await client.create(
        resources.services,
        svc({ ...spec, clusterIP: '10.43.0.21', ports: [{ port: 80, nodePort: 30101 }] }, 'gone'),
      );
      // A crash between the reservation and the Service write, and one between the
      // Service's deletion and its release, as the store shows them afterwards.
      await store.create(`${SERVICE_IPS_PREFIX}10.43.0.99`, JSON.stringify({ uid: 'never-written' }));
      await store.delete('/registry/services/default/gone');
      // A Service stored without allocation keys (data from before the allocator), and one
      // outside the ranges.
      const unrecorded = svc(
        { ...spec, clusterIP: '10.43.0.77', ports: [{ port: 80, nodePort: 30777 }] },
        'old',
      );
      unrecorded.metadata!.uid = 'uid-old';
      (unrecorded.spec as { clusterIPs?: string[] }).clusterIPs = ['10.43.0.77'];
      await store.create('/registry/services/default/old', JSON.stringify(unrecorded));
      const outside = svc({ type: 'ClusterIP', clusterIP: '192.168.7.7' }, 'outside');
      (outside.spec as { clusterIPs?: string[] }).clusterIPs = ['192.168.7.7'];
      await store.create('/registry/services/default/outside', JSON.stringify(outside));

      const allocator = new ServiceAllocator({ store, logger: silentLogger() });
      const first = await allocator.repair();
      assert.deepEqual(first.released, []);
      assert.deepEqual(first.recorded.sort(), ['10.43.0.77', '30777']);
      assert.deepEqual(first.outOfRange, ['192.168.7.7']);
      assert.equal(JSON.parse((await store.get(`${SERVICE_IPS_PREFIX}10.43.0.77`))!.value).uid, 'uid-old');
      // The recorded address is now taken for everyone else.
      const taken = await failure(
        client.create(resources.services, svc({ type: 'ClusterIP', clusterIP: '10.43.0.77' }, 'other')),
      );
      assert.equal(taken.code, 422);

      assert.deepEqual((await allocator.repair()).released, []);
      // A leaked key that changed since the last run starts its count again.
      const moved = (await store.get(`${SERVICE_IPS_PREFIX}10.43.0.99`))!;
      await store.update(moved.key, JSON.stringify({ uid: 'still-never-written' }), moved.modRevision);
      const third = await allocator.repair();
      assert.deepEqual(third.released.sort(), ['10.43.0.21', '30101']);
      assert.deepEqual((await allocator.repair()).released, []);
      assert.deepEqual((await allocator.repair()).released, ['10.43.0.99']);
      assert.deepEqual((await keys(store)).sort(), ['10.43.0.20', '10.43.0.77', '30100', '30777']);
      // The live Service's allocations were never touched: its address is still its own.
      assert.equal(
        (await client.get<Service>(resources.services, 'default', 'kept')).spec!.clusterIP,
        kept.spec!.clusterIP,
      );
      const again = await failure(
        client.create(resources.services, svc({ type: 'ClusterIP', clusterIP: '10.43.0.20' }, 'copy')),
      );
      assert.equal(again.code, 422);
      // The released address can be had again.
      const reuse = await client.create(
        resources.services,
        svc({ type: 'ClusterIP', clusterIP: '10.43.0.21' }, 'reuse'),
      );
      assert.equal(reuse.spec!.clusterIP, '10.43.0.21');
    } finally {
      client.close();
      await server.stop();
      await store.close();
    }
  });
});

describe('service allocation: two API servers on one store', () => {
  it('memory store: concurrent creates never share an IP or a port; a full range says so', async () => {
    const store = new MemoryStore();
    const { clients, stop } = await twoServers(store);
    try {
      await raceForRange(clients);
      // Nothing of the failed creates stayed allocated: one key per successful service.
      assert.equal((await store.list(SERVICE_NODE_PORTS_PREFIX)).items.length, 6);
    } finally {
      await stop();
      await store.close();
    }
  });

  let etcd: EtcdMember | undefined;
  after(() => etcd?.stop());
  it('etcd: concurrent creates never share an IP or a port', async () => {
    etcd = await startEtcd();
    const store = await EtcdStore.open({ endpoints: etcd.endpoints, namespace: '/alloc' });
    const { clients, stop } = await twoServers(store);
    try {
      await raceForRange(clients);
      assert.equal((await store.list(SERVICE_NODE_PORTS_PREFIX)).items.length, 6);
    } finally {
      await stop();
      await store.close();
    }
  });
});

describe('service allocation: reserved clusterIPs (the kubernetes and kube-dns Services)', () => {
  it('never hands a reserved address to another Service, dynamically or on request', async () => {
    const store = new MemoryStore();
    // 10.96.0.0/28: 14 usable addresses, two of them reserved.
    const server = new ApiServer({
      store,
      strategyFor,
      nameValidatorFor,
      port: 0,
      logger: silentLogger(),
      serviceClusterIPRange: '10.96.0.0/28',
      serviceAllocationRepairIntervalMs: 0,
      reservedClusterIPs: { '10.96.0.1': 'default/kubernetes', '10.96.0.10': 'kube-system/kube-dns' },
    });
    const client = new RestClient({ server: `http://127.0.0.1:${(await server.start()).port}` });
    try {
      const asked = await failure(client.create(resources.services, svc({ clusterIP: '10.96.0.1' }, 'mine')));
      assert.equal(asked.code, 422);
      assert.match(asked.message, /reserved for the Service default\/kubernetes/);
      const dry = await failure(
        client.create(resources.services, svc({ clusterIP: '10.96.0.10' }, 'dry'), { dryRun: true }),
      );
      assert.equal(dry.code, 422);
      const got: string[] = [];
      for (let i = 0; i < 12; i++) {
        const s = await client.create(resources.services, svc({}, `dyn-${i}`));
        got.push(s.spec.clusterIP!);
      }
      assert.ok(!got.includes('10.96.0.1') && !got.includes('10.96.0.10'), got.join(' '));
      assert.equal(new Set(got).size, 12);
      const full = await failure(client.create(resources.services, svc({}, 'one-too-many')));
      assert.equal(full.code, 500);
      assert.match(full.message, /range is full/);
      // The holders themselves get their addresses.
      const k = await client.create(resources.services, {
        ...svc({ clusterIP: '10.96.0.1' }, 'kubernetes'),
        spec: { clusterIP: '10.96.0.1', ports: [{ port: 443 }] },
      });
      assert.equal(k.spec.clusterIP, '10.96.0.1');
      const dns = await client.create(resources.services, {
        ...svc({}, 'kube-dns'),
        metadata: { name: 'kube-dns', namespace: 'kube-system' },
        spec: { clusterIP: '10.96.0.10', ports: [{ port: 53, protocol: 'UDP' }] },
      });
      assert.equal(dns.spec.clusterIP, '10.96.0.10');
    } finally {
      client.close();
      await server.stop();
      await store.close();
    }
  });
});
