/**
 * End to end with the ReplicaSet controller and the scheduler: when a node's kubelet goes
 * silent, its pods are evicted after their toleration, stay terminating (nobody confirms
 * them), and the ReplicaSet's replacements are scheduled onto the healthy node.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { resources } from '../../../api/client/resource.js';
import { isPodReady } from '../../../api/podutil.js';
import type { Pod, ReplicaSet } from '../../../api/types.js';
import { Scheduler } from '../../scheduler/scheduler.js';
import { startTestApi, type TestApi } from '../../../test/support/api.js';
import { FakeKubelet, makeNode } from '../../../test/support/fake-nodes.js';
import { silentLogger } from '../context.js';
import { ControllerManager } from '../manager.js';
import { replicaSetController } from '../replicaset/index.js';
import { taintEvictionController } from '../tainteviction/controller.js';
import { nodeLifecycleController } from './controller.js';

let api: TestApi;
let kubelet: FakeKubelet;
const ac = new AbortController();
let running: Promise<unknown>;

before(async () => {
  api = await startTestApi();
  kubelet = new FakeKubelet({
    client: api.client,
    nodes: [makeNode('n1'), makeNode('n2')],
    leaseRenewMs: 200,
  });
  await kubelet.start();
  running = Promise.all([
    new ControllerManager({
      client: api.client,
      controllers: {
        replicaset: replicaSetController,
        nodelifecycle: nodeLifecycleController,
        'taint-eviction-controller': taintEvictionController,
      },
      config: { nodeMonitorPeriodSeconds: 0.25, nodeMonitorGracePeriodSeconds: 1.5 },
      logger: silentLogger,
    }).run(ac.signal),
    new Scheduler({ client: api.client, podInitialBackoffMs: 100, podMaxBackoffMs: 200 }).run(ac.signal),
  ]);
});
after(async () => {
  ac.abort();
  await running;
  await kubelet.stop();
  await api.stop();
});

async function until<T>(what: string, f: () => Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const rsPods = async (): Promise<Pod[]> =>
  (await api.client.list<Pod>(resources.pods, { namespace: 'default', labelSelector: 'app=web' })).items;

it('pods of a silent node are replaced on the healthy one', async () => {
  const rs: ReplicaSet = {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [{ name: 'c', image: 'spring-server:1.0' }],
          tolerations: [
            {
              key: 'node.kubernetes.io/unreachable',
              operator: 'Exists',
              effect: 'NoExecute',
              tolerationSeconds: 1,
            },
          ],
        },
      },
    },
  };
  await api.client.create(resources.replicasets, rs);
  const first = await until('2 pods Ready', async () => {
    const pods = (await rsPods()).filter(isPodReady);
    return pods.length === 2 && pods;
  });
  const down = first[0]!.spec.nodeName!;
  const up = down === 'n1' ? 'n2' : 'n1';
  kubelet.pauseLease(down);

  const replaced = await until(`2 live pods Ready on ${up}`, async () => {
    const pods = (await rsPods()).filter((p) => !p.metadata.deletionTimestamp && isPodReady(p));
    return pods.length === 2 && pods.every((p) => p.spec.nodeName === up) && pods;
  });
  assert.equal(replaced.length, 2);
  // The evicted pods are still there, terminating: their kubelet cannot confirm them.
  const terminating = (await rsPods()).filter((p) => p.metadata.deletionTimestamp);
  assert.ok(terminating.length >= 1);
  assert.ok(terminating.every((p) => p.spec.nodeName === down));
});
