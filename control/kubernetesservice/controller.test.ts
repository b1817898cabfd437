/**
 * The kubernetes Service controller against the real API server (registries, strategies,
 * the service allocator with the reserved addresses) over a memory store, with a
 * FakeClock: the two Services, the endpoints of one and of two API servers, a dead one
 * leaving once its lease has expired and not before, a clean stop leaving at once,
 * API servers on one address with different ports, a deleted Service coming back.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { FakeClock } from '../../api/clock.js';
import { silentLogger } from '../../api/log.js';
import type { EndpointSlice, Endpoints, Lease, Service } from '../../api/types.js';
import { ApiServer } from '../apiserver/server.js';
import { ApiError } from '../apiserver/status.js';
import { nameValidatorFor, strategyFor } from '../apiserver/strategies/index.js';
import { MemoryStore } from '../storage/memory.js';
import { KubernetesServiceController, type KubernetesServiceControllerConfig } from './controller.js';
import type { ApiEndpoint } from './leases.js';

const RANGE = '10.43.0.0/16';
const reserved = { '10.43.0.1': 'default/kubernetes', '10.43.0.10': 'kube-system/kube-dns' };

describe('kubernetes Service controller', () => {
  let store: MemoryStore;
  let api: ApiServer;
  let clock: FakeClock;
  const controllers: KubernetesServiceController[] = [];

  before(async () => {
    store = new MemoryStore();
    api = new ApiServer({
      store,
      strategyFor,
      nameValidatorFor,
      port: 0,
      logger: silentLogger(),
      serviceClusterIPRange: RANGE,
      serviceAllocationRepairIntervalMs: 0,
      reservedClusterIPs: reserved,
    });
    await api.start();
  });
  after(async () => {
    await api.stop();
    await store.close();
  });
  beforeEach(async () => {
    clock = new FakeClock();
    // Each case starts from no Services, endpoints or endpoint leases.
    for (const [group, resource, ns] of [
      ['', 'services', 'default'],
      ['', 'services', 'kube-system'],
      ['', 'endpoints', 'default'],
      ['discovery.k8s.io', 'endpointslices', 'default'],
      ['coordination.k8s.io', 'leases', 'kube-system'],
    ] as const) {
      const r = api.registry(group, 'v1', resource);
      for (const o of (await r.list(ns)).items) await r.delete(ns, o.metadata!.name!);
    }
  });
  afterEach(() => {
    controllers.length = 0;
  });

  const controller = (endpoint: ApiEndpoint, over: Partial<KubernetesServiceControllerConfig> = {}) => {
    const c = new KubernetesServiceController({
      registry: (g, v, r) => api.registry(g, v, r),
      endpoint,
      kubernetesClusterIP: '10.43.0.1',
      clusterDNS: '10.43.0.10',
      identity: `${endpoint.ip}:${endpoint.port}`,
      clock,
      logger: silentLogger(),
      ...over,
    });
    controllers.push(c);
    return c;
  };
  const get = async <T>(
    group: string,
    resource: string,
    ns: string,
    name: string,
  ): Promise<T | undefined> => {
    try {
      return (await api.registry(group, 'v1', resource).get(ns, name)) as T;
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return undefined;
      throw err;
    }
  };
  const endpoints = () => get<Endpoints>('', 'endpoints', 'default', 'kubernetes');
  const slices = async () =>
    (
      (await api.registry('discovery.k8s.io', 'v1', 'endpointslices').list('default'))
        .items as EndpointSlice[]
    )
      .filter((s) => s.metadata.labels?.['kubernetes.io/service-name'] === 'kubernetes')
      .map((s) => ({
        name: s.metadata.name,
        ips: s.endpoints.map((e) => e.addresses[0]),
        ports: (s.ports ?? []).map((p) => `${p.name}/${p.port}/${p.protocol}`),
      }));
  const addresses = async () =>
    ((await endpoints())?.subsets ?? []).map((s) => ({
      ips: (s.addresses ?? []).map((a) => a.ip),
      ports: (s.ports ?? []).map((p) => `${p.name}/${p.port}`),
    }));

  it('creates default/kubernetes at the first address and kube-system/kube-dns at --cluster-dns', async () => {
    await controller({ ip: '192.0.2.10', port: 6443 }).reconcile();
    const k = await get<Service>('', 'services', 'default', 'kubernetes');
    assert.ok(k);
    assert.equal(k.spec.clusterIP, '10.43.0.1');
    assert.deepEqual(k.spec.clusterIPs, ['10.43.0.1']);
    assert.equal(k.spec.type, 'ClusterIP');
    assert.equal(k.spec.selector, undefined);
    assert.deepEqual(k.metadata.labels, { component: 'apiserver', provider: 'kubernetes' });
    assert.deepEqual(
      k.spec.ports?.map((p) => [p.name, p.port, p.protocol, p.targetPort]),
      [['https', 443, 'TCP', 6443]],
    );
    const dns = await get<Service>('', 'services', 'kube-system', 'kube-dns');
    assert.ok(dns);
    assert.equal(dns.spec.clusterIP, '10.43.0.10');
    assert.equal(dns.spec.selector, undefined);
    assert.equal(dns.metadata.labels?.['k8s-app'], 'kube-dns');
    assert.equal(dns.metadata.labels?.['kubernetes.io/name'], 'KubeDNS');
    assert.equal(dns.metadata.labels?.['service.kubernetes.io/service-proxy-name'], 'k8ts-dns');
    assert.deepEqual(
      dns.spec.ports?.map((p) => [p.name, p.port, p.protocol]),
      [
        ['dns', 53, 'UDP'],
        ['dns-tcp', 53, 'TCP'],
      ],
    );
  });

  it('writes Endpoints and the EndpointSlice kubernetes, and nothing when nothing changed', async () => {
    const c = controller({ ip: '192.0.2.10', port: 6443 });
    await c.reconcile();
    assert.deepEqual(await addresses(), [{ ips: ['192.0.2.10'], ports: ['https/6443'] }]);
    const ep = await endpoints();
    assert.equal(ep?.metadata.labels?.['endpointslice.kubernetes.io/skip-mirror'], 'true');
    assert.deepEqual(await slices(), [
      { name: 'kubernetes', ips: ['192.0.2.10'], ports: ['https/6443/TCP'] },
    ]);
    const slice = (await get<EndpointSlice>('discovery.k8s.io', 'endpointslices', 'default', 'kubernetes'))!;
    assert.equal(slice.addressType, 'IPv4');
    assert.equal(slice.endpoints[0]?.conditions?.ready, true);
    const before = [ep!.metadata.resourceVersion, slice.metadata.resourceVersion];
    await clock.advance(10_000);
    await c.reconcile();
    const again = [
      (await endpoints())!.metadata.resourceVersion,
      (await get<EndpointSlice>('discovery.k8s.io', 'endpointslices', 'default', 'kubernetes'))!.metadata
        .resourceVersion,
    ];
    assert.deepEqual(again, before, 'an unchanged reconcile writes neither object');
  });

  it('lists every live API server; a dead one leaves once its lease has expired, not before', async () => {
    const a = controller({ ip: '192.0.2.10', port: 6443 });
    const b = controller({ ip: '192.0.2.11', port: 6443 });
    await a.reconcile();
    await b.reconcile();
    assert.deepEqual(await addresses(), [{ ips: ['192.0.2.10', '192.0.2.11'], ports: ['https/6443'] }]);
    assert.deepEqual((await slices())[0]?.ips, ['192.0.2.10', '192.0.2.11']);
    await a.reconcile(); // a has now seen b's last renewal (at t = 0)

    // b dies (stops renewing, no clean stop). a reconciles every 10 s: b's lease expires
    // 15 s after a saw its last renewal.
    await clock.advance(10_000);
    await a.reconcile();
    assert.deepEqual(
      (await addresses())[0]?.ips,
      ['192.0.2.10', '192.0.2.11'],
      'within the lease period b stays',
    );
    await clock.advance(10_000);
    await a.reconcile();
    assert.deepEqual(await addresses(), [{ ips: ['192.0.2.10'], ports: ['https/6443'] }]);
    assert.deepEqual(await slices(), [
      { name: 'kubernetes', ips: ['192.0.2.10'], ports: ['https/6443/TCP'] },
    ]);
    assert.equal(
      await get<Lease>('coordination.k8s.io', 'leases', 'kube-system', 'apiserver-endpoint-192.0.2.11-6443'),
      undefined,
      "b's expired lease is deleted",
    );
    assert.ok(
      await get<Lease>('coordination.k8s.io', 'leases', 'kube-system', 'apiserver-endpoint-192.0.2.10-6443'),
    );

    // b comes back: it is listed again at its first reconcile.
    await b.reconcile();
    assert.deepEqual((await addresses())[0]?.ips, ['192.0.2.10', '192.0.2.11']);
  });

  it('a renewing API server is never dropped however long it runs', async () => {
    const a = controller({ ip: '192.0.2.10', port: 6443 });
    const b = controller({ ip: '192.0.2.11', port: 6443 });
    for (let i = 0; i < 10; i++) {
      await a.reconcile();
      await b.reconcile();
      assert.deepEqual((await addresses())[0]?.ips, ['192.0.2.10', '192.0.2.11'], `round ${i}`);
      await clock.advance(10_000);
    }
  });

  it('a clean stop removes the endpoint at once; the last one is never erased', async () => {
    const a = controller({ ip: '192.0.2.10', port: 6443 });
    const b = controller({ ip: '192.0.2.11', port: 6443 });
    await a.reconcile();
    await b.reconcile();
    await b.stop();
    assert.deepEqual(await addresses(), [{ ips: ['192.0.2.10'], ports: ['https/6443'] }]);
    await b.reconcile();
    assert.deepEqual((await addresses())[0]?.ips, ['192.0.2.10'], 'a stopped controller no longer writes');
    await a.stop();
    assert.deepEqual(
      (await addresses())[0]?.ips,
      ['192.0.2.10'],
      'with no live lease the endpoints are kept',
    );
  });

  it('API servers on one address with different ports: one subset and one slice per port', async () => {
    await controller({ ip: '192.0.2.10', port: 6444 }).reconcile();
    await controller({ ip: '192.0.2.10', port: 6443 }).reconcile();
    assert.deepEqual(await addresses(), [
      { ips: ['192.0.2.10'], ports: ['https/6443'] },
      { ips: ['192.0.2.10'], ports: ['https/6444'] },
    ]);
    assert.deepEqual(await slices(), [
      { name: 'kubernetes', ips: ['192.0.2.10'], ports: ['https/6443/TCP'] },
      { name: 'kubernetes-6444', ips: ['192.0.2.10'], ports: ['https/6444/TCP'] },
    ]);
  });

  it('a restarted control process keeps both Services as they are, whatever its flags now say', async () => {
    await controller({ ip: '192.0.2.10', port: 6443 }).reconcile();
    const k = (await get<Service>('', 'services', 'default', 'kubernetes'))!;
    const dns = (await get<Service>('', 'services', 'kube-system', 'kube-dns'))!;
    // The restart: a new process, another port and another --cluster-dns.
    await controller({ ip: '192.0.2.10', port: 7443 }, { clusterDNS: '10.43.0.53' }).reconcile();
    const k2 = (await get<Service>('', 'services', 'default', 'kubernetes'))!;
    const dns2 = (await get<Service>('', 'services', 'kube-system', 'kube-dns'))!;
    assert.deepEqual(
      [k2.metadata.uid, k2.metadata.resourceVersion, k2.spec.clusterIP],
      [k.metadata.uid, k.metadata.resourceVersion, '10.43.0.1'],
    );
    assert.deepEqual(
      [dns2.metadata.uid, dns2.metadata.resourceVersion, dns2.spec.clusterIP],
      [dns.metadata.uid, dns.metadata.resourceVersion, '10.43.0.10'],
    );
  });

  it('a deleted kubernetes Service comes back with the same clusterIP; the loop runs on the clock', async () => {
    const c = controller({ ip: '192.0.2.10', port: 6443 });
    await c.start();
    assert.equal((await get<Service>('', 'services', 'default', 'kubernetes'))?.spec.clusterIP, '10.43.0.1');
    await api.registry('', 'v1', 'services').delete('default', 'kubernetes');
    // A user Service made meanwhile does not get the address.
    const user = (await api.registry('', 'v1', 'services').create('default', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'user', namespace: 'default' },
      spec: { selector: { app: 'x' }, ports: [{ port: 80 }] },
    })) as Service;
    assert.notEqual(user.spec.clusterIP, '10.43.0.1');
    await clock.advance(10_000);
    const deadline = Date.now() + 5_000;
    let back: Service | undefined;
    while (!(back = await get<Service>('', 'services', 'default', 'kubernetes')) && Date.now() < deadline)
      await new Promise((resolve) => setImmediate(resolve));
    assert.equal(back?.spec.clusterIP, '10.43.0.1');
    await c.stop();
  });
});
