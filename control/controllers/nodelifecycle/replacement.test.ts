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
import type { TestApi } from '../../../test/support/api.js';
import { makeNode } from '../../../test/support/fake-nodes.js';
import { replicaSetController } from '../replicaset/index.js';
import { taintEvictionController } from '../tainteviction/controller.js';
import { startControllers, until as poll } from '../testing.js';
import type { ControllerTest } from '../testing.js';
import { nodeLifecycleController } from './controller.js';

let cluster: ControllerTest;
let api: TestApi;
const ac = new AbortController();
let scheduling: Promise<void>;

before(async () => {
  cluster = await startControllers({
    nodes: [makeNode('n1'), makeNode('n2')],
    leaseRenewMs: 200,
    controllers: {
      replicaset: replicaSetController,
      nodelifecycle: nodeLifecycleController,
      'taint-eviction-controller': taintEvictionController,
    },
    config: { nodeMonitorPeriodSeconds: 0.25, nodeMonitorGracePeriodSeconds: 1.5 },
  });
  api = cluster.api;
  scheduling = new Scheduler({ client: api.client, podInitialBackoffMs: 100, podMaxBackoffMs: 200 }).run(
    ac.signal,
  );
});
after(async () => {
  ac.abort();
  await scheduling;
  await cluster.stop();
});

/** Polls `f`; an eviction and its replacement take up to 30 s. */
const until = <T>(what: string, f: () => Promise<T | undefined | false>, ms = 30_000) => poll(what, f, ms);

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
  cluster.kubelet!.pauseLease(down);

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
