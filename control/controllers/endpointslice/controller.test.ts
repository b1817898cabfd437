/**
 * The EndpointSlice controller against the real API server, with pods run by a fake
 * cluster.kubelet. One worker, so keys are reconciled in the order they were queued: a later
 * "sentinel" Service whose slice appears proves that earlier keys were handled.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resources } from '../../../api/client/resource.js';
import type { Endpoint, EndpointSlice, Pod } from '../../../api/types.js';
import { makeNode, setPodReady } from '../../../test/support/fake-nodes.js';
import { silentLogger } from '../context.js';
import { LABEL_HEADLESS_SERVICE } from '../endpoints-common.js';
import {
  createHeldWebPod,
  createWebService,
  dropFinalizers,
  makePod,
  makeService,
  podRunning,
} from '../endpoints/testing.js';
import { until, useControllers } from '../testing.js';
import { endpointSliceController } from './controller.js';
import { CONTROLLER_NAME, LABEL_MANAGED_BY, LABEL_SERVICE_NAME } from './endpoint.js';

const cluster = useControllers({
  nodes: [
    makeNode('node-a', { pods: '500' }),
    makeNode('node-b', { labels: { 'topology.kubernetes.io/zone': 'z1' } }),
  ],
  ready: (p) => p.metadata.labels?.['start'] !== 'unready',
  controllers: { endpointslice: endpointSliceController },
  config: { concurrentEndpointSyncs: 1 },
  logger: process.env.DEBUG_CONTROLLERS
    ? { ...silentLogger, warn: (m, meta) => console.error(m, JSON.stringify(meta)) }
    : silentLogger,
});

/** The slices labelled for Service `name` (anyone's). */
async function slicesOf(name: string): Promise<EndpointSlice[]> {
  const list = await cluster.api.client.list<EndpointSlice>(resources.endpointslices, {
    namespace: 'default',
    labelSelector: `${LABEL_SERVICE_NAME}=${name}`,
  });
  return list.items;
}

/** Waits until the slices of `name` satisfy `check`; returns them. */
function slicesWhere(
  name: string,
  what: string,
  check: (s: EndpointSlice[]) => boolean,
): Promise<EndpointSlice[]> {
  return until(`slices of ${name}: ${what}`, async () => {
    const slices = await slicesOf(name);
    if (check(slices)) return slices;
    throw new Error(
      `not yet: ${JSON.stringify(slices.map((s) => s.endpoints?.map((e) => e.targetRef?.name)))}`,
    );
  });
}

const allEndpoints = (slices: EndpointSlice[]): Endpoint[] => slices.flatMap((s) => s.endpoints ?? []);
const endpointOf = (slices: EndpointSlice[], pod: string) =>
  allEndpoints(slices).find((e) => e.targetRef?.name === pod);
const podNames = (slices: EndpointSlice[]) =>
  allEndpoints(slices)
    .map((e) => e.targetRef!.name!)
    .sort();

let sentinels = 0;
async function sentinel(): Promise<void> {
  const name = `sentinel-${++sentinels}`;
  await cluster.api.client.create(resources.services, makeService(name, { sentinel: name }, [{ port: 80 }]));
  await slicesWhere(name, 'placeholder created', (s) => s.length === 1);
}

describe('EndpointSlice controller', () => {
  it('lists matching pods as ready endpoints, one slice per port set', async () => {
    const svc = await createWebService(cluster.api.client);
    const slices = await slicesWhere(
      'web',
      '3 ready endpoints',
      (s) => allEndpoints(s).filter((e) => e.conditions?.ready).length === 3,
    );
    assert.equal(slices.length, 2);
    const portsOf = (pod: string) =>
      slices
        .find((s) => s.endpoints.some((e) => e.targetRef?.name === pod))!
        .ports!.map((p) => `${p.name}:${p.port}/${p.protocol}`)
        .sort();
    assert.deepEqual(portsOf('web-1'), ['named:8080/TCP', 'num:8080/TCP']);
    assert.deepEqual(portsOf('web-2'), ['named:8080/TCP', 'num:8080/TCP']);
    assert.deepEqual(portsOf('web-3'), ['num:8080/TCP']);
    for (const s of slices) {
      assert.equal(s.addressType, 'IPv4');
      assert.match(s.metadata.name!, /^web-[a-z0-9]{5}$/);
      assert.equal(s.metadata.generateName, 'web-');
      assert.deepEqual(s.metadata.labels, {
        tier: 'front',
        [LABEL_SERVICE_NAME]: 'web',
        [LABEL_MANAGED_BY]: CONTROLLER_NAME,
      });
      assert.deepEqual(s.metadata.ownerReferences, [
        {
          apiVersion: 'v1',
          kind: 'Service',
          name: 'web',
          uid: svc.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
    }
    const pod2 = await cluster.api.client.get<Pod>(resources.pods, 'default', 'web-2');
    assert.deepEqual(endpointOf(slices, 'web-2'), {
      addresses: [pod2.status!.podIP],
      conditions: { ready: true, serving: true, terminating: false },
      nodeName: 'node-b',
      zone: 'z1',
      targetRef: { kind: 'Pod', namespace: 'default', name: 'web-2', uid: pod2.metadata.uid },
    });
  });

  it('marks a pod that stops being ready ready:false serving:false, in place', async () => {
    const before = await slicesOf('web');
    const pod = await podRunning(cluster.api.client, 'web-1');
    await setPodReady(cluster.api.client, pod, false);
    let slices = await slicesWhere(
      'web',
      'web-1 not ready',
      (s) => endpointOf(s, 'web-1')?.conditions?.ready === false,
    );
    assert.deepEqual(endpointOf(slices, 'web-1')!.conditions, {
      ready: false,
      serving: false,
      terminating: false,
    });
    assert.deepEqual(slices.map((s) => s.metadata.name).sort(), before.map((s) => s.metadata.name).sort());
    await setPodReady(cluster.api.client, pod, true);
    slices = await slicesWhere(
      'web',
      'web-1 ready',
      (s) => endpointOf(s, 'web-1')?.conditions?.ready === true,
    );
  });

  it('keeps a terminating pod as terminating, not ready but serving, until it is gone', async () => {
    await createHeldWebPod(cluster.api.client, 'web-4');
    await slicesWhere('web', 'web-4 ready', (s) => endpointOf(s, 'web-4')?.conditions?.ready === true);
    await cluster.api.client.delete(resources.pods, 'default', 'web-4');
    const slices = await slicesWhere(
      'web',
      'web-4 terminating',
      (s) => !!endpointOf(s, 'web-4')?.conditions?.terminating,
    );
    assert.deepEqual(endpointOf(slices, 'web-4')!.conditions, {
      ready: false,
      serving: true,
      terminating: true,
    });
    await dropFinalizers(cluster.api.client, 'web-4');
    await slicesWhere('web', 'web-4 gone', (s) => !endpointOf(s, 'web-4'));
  });

  it('follows pods coming and going', async () => {
    await cluster.api.client.create(
      resources.pods,
      makePod('web-5', { app: 'web' }, { ports: [{ name: 'http', containerPort: 8080 }] }),
    );
    await slicesWhere('web', 'web-5 added', (s) => podNames(s).join() === 'web-1,web-2,web-3,web-5');
    await cluster.api.client.delete(resources.pods, 'default', 'web-3', { gracePeriodSeconds: 0 });
    await cluster.api.client.delete(resources.pods, 'default', 'web-5', { gracePeriodSeconds: 0 });
    const slices = await slicesWhere(
      'web',
      'web-3 and web-5 gone',
      (s) => podNames(s).join() === 'web-1,web-2',
    );
    // The slice that served only web-3's port set went with it.
    assert.equal(slices.length, 1);
  });

  it('publishes not-ready pods as ready with publishNotReadyAddresses; headless label; placeholder slice', async () => {
    await cluster.api.client.create(
      resources.services,
      makeService('peer', { app: 'peer' }, [], { clusterIP: 'None', publishNotReadyAddresses: true }),
    );
    const empty = await slicesWhere('peer', 'placeholder', (s) => s.length === 1);
    assert.deepEqual(empty[0]!.endpoints ?? [], []);
    await cluster.api.client.create(resources.pods, makePod('peer-1', { app: 'peer', start: 'unready' }));
    const slices = await slicesWhere('peer', 'peer-1 listed', (s) => !!endpointOf(s, 'peer-1'));
    assert.deepEqual(endpointOf(slices, 'peer-1')!.conditions, {
      ready: true,
      serving: false,
      terminating: false,
    });
    assert.equal(slices.length, 1);
    assert.equal(slices[0]!.metadata.name, empty[0]!.metadata.name, 'the placeholder is filled in place');
    assert.equal(slices[0]!.metadata.labels?.[LABEL_HEADLESS_SERVICE], '');
  });

  it('removes the slices of a deleted Service', async () => {
    await cluster.api.client.delete(resources.services, 'default', 'peer');
    await slicesWhere('peer', 'none left', (s) => s.length === 0);
  });

  it('never touches slices managed by someone else, nor gives selectorless Services slices', async () => {
    await cluster.api.client.create(resources.services, makeService('external', undefined, [{ port: 5432 }]));
    const foreign = await cluster.api.client.create<EndpointSlice>(resources.endpointslices, {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'external-manual',
        namespace: 'default',
        labels: { [LABEL_SERVICE_NAME]: 'external', [LABEL_MANAGED_BY]: 'someone-else' },
      },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['192.0.2.10'] }],
      ports: [{ name: '', port: 5432, protocol: 'TCP' }],
    });
    // Someone else's slice claiming a selector Service is left alone too.
    const alongside = await cluster.api.client.create<EndpointSlice>(resources.endpointslices, {
      ...foreign,
      metadata: {
        name: 'web-manual',
        namespace: 'default',
        labels: { [LABEL_SERVICE_NAME]: 'web', [LABEL_MANAGED_BY]: 'someone-else' },
      },
    });
    await cluster.api.client.patch(resources.services, 'default', 'web', 'merge', {
      metadata: { annotations: { n: '1' } },
    });
    await sentinel();
    const external = await slicesOf('external');
    assert.deepEqual(
      external.map((s) => [s.metadata.name, s.metadata.resourceVersion]),
      [['external-manual', foreign.metadata.resourceVersion]],
    );
    const web = await cluster.api.client.get<EndpointSlice>(
      resources.endpointslices,
      'default',
      'web-manual',
    );
    assert.equal(web.metadata.resourceVersion, alongside.metadata.resourceVersion);
    await cluster.api.client.delete(resources.endpointslices, 'default', 'web-manual');
  });

  it('recreates a slice someone deleted', async () => {
    const [slice] = await slicesWhere('web', 'one slice', (s) => s.length === 1);
    await cluster.api.client.delete(resources.endpointslices, 'default', slice!.metadata.name!);
    const slices = await slicesWhere(
      'web',
      'recreated',
      (s) => s.length === 1 && s[0]!.metadata.name !== slice!.metadata.name,
    );
    assert.deepEqual(podNames(slices), ['web-1', 'web-2']);
  });

  it('splits 150 endpoints into slices of at most 100', async () => {
    const n = 150;
    for (let i = 0; i < n; i += 25) {
      await Promise.all(
        Array.from({ length: Math.min(25, n - i) }, (_, j) =>
          cluster.api.client.create(resources.pods, makePod(`many-${i + j}`, { app: 'many' })),
        ),
      );
    }
    // All running before the Service exists, so its first sync sees them all at once.
    await until(`${n} pods running`, async () => {
      const pods = await cluster.api.client.list<Pod>(resources.pods, {
        namespace: 'default',
        labelSelector: 'app=many',
      });
      return pods.items.filter((p) => p.status?.podIP).length === n;
    });
    await cluster.api.client.create(
      resources.services,
      makeService('many', { app: 'many' }, [{ name: 'http', port: 80 }]),
    );
    const slices = await slicesWhere('many', `${n} endpoints`, (s) => allEndpoints(s).length === n);
    assert.deepEqual(
      slices.map((s) => s.endpoints.length).sort((a, b) => b - a),
      [100, 50],
    );
    assert.equal(new Set(podNames(slices)).size, n);
    assert.ok(allEndpoints(slices).every((e) => e.conditions?.ready));
    // More pods: no slice grows beyond 100.
    for (let i = n; i < n + 60; i += 20) {
      await Promise.all(
        Array.from({ length: 20 }, (_, j) =>
          cluster.api.client.create(resources.pods, makePod(`many-${i + j}`, { app: 'many' })),
        ),
      );
    }
    await until(`${n + 60} pods running`, async () => {
      const pods = await cluster.api.client.list<Pod>(resources.pods, {
        namespace: 'default',
        labelSelector: 'app=many',
      });
      return pods.items.filter((p) => p.status?.podIP).length === n + 60;
    });
    const more = await slicesWhere('many', `${n + 60} endpoints`, (s) => allEndpoints(s).length === n + 60);
    assert.ok(
      more.every((s) => s.endpoints.length <= 100),
      more.map((s) => s.endpoints.length).join(),
    );
    assert.equal(new Set(podNames(more)).size, n + 60);
  });

  it('shows in kubectl get endpointslices', async () => {
    const res = await cluster.api.kubectl(
      'get',
      'endpointslices',
      '-n',
      'default',
      '-l',
      `${LABEL_SERVICE_NAME}=web`,
    );
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^NAME\s+ADDRESSTYPE\s+PORTS\s+ENDPOINTS\s+AGE/m);
    assert.match(res.stdout, /^web-[a-z0-9]{5}\s+IPv4\s+8080,8080\s+10\.42\.\d+\.\d+,10\.42\.\d+\.\d+/m);
  });
});
