/**
 * The Endpoints controller against the real API server, with pods run by a fake cluster.kubelet.
 * One worker, so keys are reconciled in the order they were queued: a later "sentinel"
 * Service whose Endpoints appear proves that earlier keys were handled.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isNotFound } from '../../../api/client/errors.js';
import { resources } from '../../../api/client/resource.js';
import type { Endpoints, EndpointSubset, Pod } from '../../../api/types.js';
import { makeNode, setPodReady } from '../../../test/support/fake-nodes.js';
import { ANNOTATION_LAST_CHANGE_TRIGGER_TIME, LABEL_HEADLESS_SERVICE } from '../endpoints-common.js';
import { until, useControllers } from '../testing.js';
import { endpointsController } from './controller.js';
import {
  createHeldWebPod,
  createWebService,
  dropFinalizers,
  makePod,
  makeService,
  podRunning,
} from './testing.js';

const cluster = useControllers({
  nodes: [makeNode('node-a'), makeNode('node-b')],
  ready: (p) => p.metadata.labels?.['start'] !== 'unready',
  controllers: { endpoint: endpointsController },
  config: { concurrentEndpointSyncs: 1 },
});

const getEndpoints = (name: string) =>
  cluster.api.client.get<Endpoints>(resources.endpoints, 'default', name);

/** Waits until the Endpoints `name` satisfy `check`, returning them. */
function endpointsWhere(name: string, what: string, check: (ep: Endpoints) => boolean): Promise<Endpoints> {
  return until(`endpoints ${name}: ${what}`, async () => {
    const ep = await getEndpoints(name).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
    if (ep && check(ep)) return ep;
    throw new Error(`not yet: ${ep ? JSON.stringify(ep.subsets) : 'absent'}`);
  });
}

/** Pod names of the subsets' `which` addresses, each once, sorted (a pod appears in every subset of a port it serves). */
function names(subsets: EndpointSubset[] | undefined, which: 'addresses' | 'notReadyAddresses'): string[] {
  return [...new Set((subsets ?? []).flatMap((s) => (s[which] ?? []).map((a) => a.targetRef!.name!)))].sort();
}

/** A Service + its Endpoints created after everything queued before: proves the queue got past those keys. */
let sentinels = 0;
async function sentinel(): Promise<void> {
  const name = `sentinel-${++sentinels}`;
  await cluster.api.client.create(resources.services, makeService(name, { sentinel: name }, [{ port: 80 }]));
  await endpointsWhere(name, 'created', () => true);
}

describe('Endpoints controller', () => {
  it('lists ready pods with ports resolved by number and by name, grouping pods by port set', async () => {
    await createWebService(cluster.api.client);
    const ep = await endpointsWhere(
      'web',
      '3 ready addresses',
      (e) => names(e.subsets, 'addresses').length === 3,
    );
    assert.deepEqual(names(ep.subsets, 'addresses'), ['web-1', 'web-2', 'web-3']);
    const portsOf = (pod: string) =>
      ep
        .subsets!.filter((s) => s.addresses?.some((a) => a.targetRef?.name === pod))
        .flatMap((s) => s.ports!.map((p) => `${p.name}:${p.port}/${p.protocol}`))
        .sort();
    assert.deepEqual(portsOf('web-1'), ['named:8080/TCP', 'num:8080/TCP']);
    assert.deepEqual(portsOf('web-2'), ['named:8080/TCP', 'num:8080/TCP']);
    // web-3 has no port named http: it serves only the numeric target port. Subsets group
    // addresses by port (RepackSubsets): `named` → web-1, web-2; `num` → all three.
    assert.deepEqual(portsOf('web-3'), ['num:8080/TCP']);
    assert.equal(ep.subsets!.length, 2);
    const pod2 = await cluster.api.client.get<Pod>(resources.pods, 'default', 'web-2');
    const addr2 = ep.subsets!.flatMap((s) => s.addresses ?? []).find((a) => a.targetRef?.name === 'web-2')!;
    assert.equal(addr2.ip, pod2.status!.podIP);
    assert.equal(addr2.nodeName, 'node-b');
    assert.deepEqual(
      { kind: addr2.targetRef!.kind, namespace: addr2.targetRef!.namespace, uid: addr2.targetRef!.uid },
      { kind: 'Pod', namespace: 'default', uid: pod2.metadata.uid },
    );
    assert.deepEqual(ep.metadata.labels, { tier: 'front' });
    assert.match(ep.metadata.annotations?.[ANNOTATION_LAST_CHANGE_TRIGGER_TIME] ?? '', /^\d{4}-\d\d-\d\dT/);
  });

  it('moves a pod that stops being ready to notReadyAddresses and back', async () => {
    const pod = await podRunning(cluster.api.client, 'web-1');
    await setPodReady(cluster.api.client, pod, false);
    let ep = await endpointsWhere('web', 'web-1 not ready', (e) =>
      names(e.subsets, 'notReadyAddresses').includes('web-1'),
    );
    assert.deepEqual(names(ep.subsets, 'addresses'), ['web-2', 'web-3']);
    await setPodReady(cluster.api.client, pod, true);
    ep = await endpointsWhere('web', 'web-1 ready again', (e) =>
      names(e.subsets, 'addresses').includes('web-1'),
    );
    assert.deepEqual(names(ep.subsets, 'notReadyAddresses'), []);
  });

  it('drops terminating pods, and follows pods coming and going', async () => {
    await createHeldWebPod(cluster.api.client, 'web-4');
    await endpointsWhere('web', 'web-4 added', (e) => names(e.subsets, 'addresses').includes('web-4'));
    // The finalizer keeps web-4 terminating (deletionTimestamp set, still Running and Ready).
    await cluster.api.client.delete(resources.pods, 'default', 'web-4');
    const ep = await endpointsWhere(
      'web',
      'web-4 gone',
      (e) => !names(e.subsets, 'addresses').includes('web-4'),
    );
    assert.deepEqual(names(ep.subsets, 'notReadyAddresses'), []);
    await dropFinalizers(cluster.api.client, 'web-4');
    await cluster.api.client.delete(resources.pods, 'default', 'web-3', { gracePeriodSeconds: 0 });
    await endpointsWhere('web', 'web-3 gone', (e) => names(e.subsets, 'addresses').join() === 'web-1,web-2');
  });

  it('lists not-ready pods as ready with publishNotReadyAddresses, and labels headless Services', async () => {
    await cluster.api.client.create(resources.pods, makePod('peer-1', { app: 'peer', start: 'unready' }));
    await cluster.api.client.create(
      resources.services,
      makeService('peer', { app: 'peer' }, [], { clusterIP: 'None', publishNotReadyAddresses: true }),
    );
    const ep = await endpointsWhere('peer', 'peer-1 listed', (e) =>
      names(e.subsets, 'addresses').includes('peer-1'),
    );
    assert.equal(ep.subsets![0]!.ports, undefined);
    assert.equal(ep.metadata.labels?.[LABEL_HEADLESS_SERVICE], '');
    const pod = await cluster.api.client.get<Pod>(resources.pods, 'default', 'peer-1');
    assert.equal(pod.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'False');
  });

  it('deletes the Endpoints with their Service', async () => {
    await cluster.api.client.delete(resources.services, 'default', 'peer');
    await until('endpoints peer deleted', async () =>
      getEndpoints('peer').then(
        () => false,
        (err: unknown) => isNotFound(err),
      ),
    );
  });

  it('leaves the Endpoints of a Service without selector alone, and writes nothing when nothing changed', async () => {
    await cluster.api.client.create(resources.services, makeService('external', undefined, [{ port: 5432 }]));
    const user = await cluster.api.client.create<Endpoints>(resources.endpoints, {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'external', namespace: 'default' },
      subsets: [{ addresses: [{ ip: '192.0.2.10' }], ports: [{ port: 5432 }] }],
    });
    const web = await getEndpoints('web');
    // A Service change that changes no endpoint makes the controller sync without writing.
    await cluster.api.client.patch(resources.services, 'default', 'web', 'merge', {
      metadata: { annotations: { note: 'touched' } },
    });
    await sentinel();
    assert.equal((await getEndpoints('external')).metadata.resourceVersion, user.metadata.resourceVersion);
    assert.equal((await getEndpoints('web')).metadata.resourceVersion, web.metadata.resourceVersion);
  });

  it('recreates Endpoints someone deleted', async () => {
    await cluster.api.client.delete(resources.endpoints, 'default', 'web');
    const ep = await endpointsWhere('web', 'recreated', (e) => names(e.subsets, 'addresses').length === 2);
    assert.deepEqual(names(ep.subsets, 'addresses'), ['web-1', 'web-2']);
  });

  it('coalesces a burst of pod changes into few writes', async () => {
    await cluster.api.client.create(
      resources.services,
      makeService('burst', { app: 'burst' }, [{ port: 80 }]),
    );
    await endpointsWhere('burst', 'created', () => true);
    const rvs = new Set<string>();
    const stream = await cluster.api.client.watch<Endpoints>(resources.endpoints, {
      namespace: 'default',
      fieldSelector: 'metadata.name=burst',
    });
    const watching = (async () => {
      for await (const ev of stream)
        if (ev.type === 'MODIFIED') rvs.add(ev.object.metadata!.resourceVersion!);
    })();
    const n = 30;
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        cluster.api.client.create(resources.pods, makePod(`burst-${i}`, { app: 'burst' })),
      ),
    );
    const last = await endpointsWhere(
      'burst',
      `${n} addresses`,
      (e) => names(e.subsets, 'addresses').length === n,
    );
    // The count below means something only if the watch saw the writes, up to the last one.
    await until(
      'the watch to see the last write',
      async () => rvs.has(last.metadata.resourceVersion!) || undefined,
    );
    stream.stop();
    await watching;
    // Each pod makes two pod events (create, then running and ready); every one of them
    // arriving while a sync is queued or running is folded into the next sync.
    assert.ok(rvs.size < n, `${rvs.size} writes for ${n} pods`);
  });

  it('shows in kubectl get endpoints', async () => {
    const res = await cluster.api.kubectl('get', 'endpoints', 'web', '-n', 'default');
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^NAME\s+ENDPOINTS\s+AGE/m);
    assert.match(res.stdout, /^web\s+10\.42\.\d+\.\d+:8080,/m);
  });
});
