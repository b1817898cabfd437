import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { resources } from '../../api/client/resource.js';
import type { Lease, Node, Pod } from '../../api/types.js';
import { startTestApi, type TestApi } from './api.js';
import { FakeKubelet, makeNode } from './fake-nodes.js';
import { until as waitUntil } from './wait.js';

let api: TestApi;
let kubelet: FakeKubelet;
before(async () => {
  api = await startTestApi();
  kubelet = new FakeKubelet({ client: api.client, nodes: [makeNode('n1'), makeNode('n2', { cpu: '2' })] });
  await kubelet.start();
});
after(async () => {
  await kubelet.stop();
  await api.stop();
});

/** Polls `check` (support/wait.ts) with this file's deadline (10_000 ms) and pace (20 ms). */
const until = <T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms = 10_000) =>
  waitUntil(what, check, ms, 20);

test('nodes and their leases exist', async () => {
  const n2 = await api.client.get<Node>(resources.nodes, undefined, 'n2');
  assert.equal(n2.status?.allocatable?.cpu, '2');
  const lease = await api.client.get<Lease>(resources.leases, 'kube-node-lease', 'n1');
  assert.equal(lease.spec?.holderIdentity, 'n1');
});

test('a pod bound to a fake node becomes Running and Ready; a graceful delete is confirmed', async () => {
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p1', namespace: 'default' },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'spring-server:1.0' }] },
  };
  await api.client.create(resources.pods, pod);
  const running = await until('Running', async () => {
    const p = await api.client.get<Pod>(resources.pods, 'default', 'p1');
    return p.status?.phase === 'Running' ? p : undefined;
  });
  assert.equal(running.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  assert.match(running.status?.podIP ?? '', /^10\.42\./);
  await api.client.delete(resources.pods, 'default', 'p1');
  await until('gone', async () => {
    const list = await api.client.list<Pod>(resources.pods, { namespace: 'default' });
    return list.items.length === 0 ? true : undefined;
  });
});

test('kubectl works against the in-process API server', async () => {
  const r = await api.kubectl('get', 'nodes', '-o', 'name');
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n').sort(), ['node/n1', 'node/n2']);
});
