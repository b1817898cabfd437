// @kubernetes/client-node, unchanged, against a real `k8ts server`: an informer sees
// ADDED, MODIFIED and DELETED, and when its resourceVersion has fallen out of the
// server's history it gets 410 Expired, relists and carries on without losing an object.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { startK8tsServer, type K8tsServer } from './support/k8ts-server.js';

async function eventually<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  deadlineMs = 20_000,
): Promise<T> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const pod = (name: string, namespace = 'default'): k8s.V1Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, labels: { app: 'informer-test' } },
  spec: { containers: [{ name: 'c', image: 'spring-server:1.0' }] },
});

describe('client-node informer against k8ts', () => {
  /** How many LISTs of default-namespace pods the server has answered (from its request log). */
  const defaultPodLists = (): number =>
    k
      .logs()
      .split('\n')
      .filter((line) => line.includes('"message":"request"'))
      .map((line) => JSON.parse(line) as { verb: string; path: string })
      .filter((r) => r.verb === 'list' && r.path === '/api/v1/namespaces/default/pods').length;

  let k: K8tsServer;
  let core: k8s.CoreV1Api;
  let informer: k8s.Informer<k8s.V1Pod> & k8s.ObjectCache<k8s.V1Pod>;
  const events: string[] = [];
  const errors: unknown[] = [];

  before(async () => {
    // Watches end after 1–2 s (so the informer re-watches from its resourceVersion often),
    // and each resource's watch history holds only 20 changes.
    k = await startK8tsServer({
      args: [
        '--min-request-timeout',
        '1',
        '--default-watch-cache-size',
        '20',
        '--etcd-compaction-interval',
        '1s',
      ],
    });
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(k.kubeconfig);
    core = kc.makeApiClient(k8s.CoreV1Api);
    informer = k8s.makeInformer(kc, '/api/v1/namespaces/default/pods', () =>
      core.listNamespacedPod({ namespace: 'default' }),
    );
    informer.on('add', (p) => events.push(`ADDED ${p.metadata!.name}`));
    informer.on('update', (p) =>
      events.push(`MODIFIED ${p.metadata!.name} ${p.metadata!.labels?.step ?? ''}`),
    );
    informer.on('delete', (p) => events.push(`DELETED ${p.metadata!.name}`));
    informer.on('error', (err) => errors.push(err));
    await informer.start();
  });

  after(async () => {
    await informer?.stop();
    await k?.stop();
  });

  it('sees ADDED, MODIFIED and DELETED', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: pod('a') });
    await eventually('ADDED a', () => (events.includes('ADDED a') ? true : undefined));
    await core.patchNamespacedPod(
      { namespace: 'default', name: 'a', body: { metadata: { labels: { step: 'two' } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await eventually('MODIFIED a', () => (events.includes('MODIFIED a two') ? true : undefined));
    await core.deleteNamespacedPod({ namespace: 'default', name: 'a' });
    await eventually('DELETED a', () => (events.includes('DELETED a') ? true : undefined));
    assert.deepEqual(errors, []);
  });

  it('relists after its resourceVersion is too old, and loses no object', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: pod('b') });
    await eventually('ADDED b', () => (events.includes('ADDED b') ? true : undefined));
    const listsBefore = defaultPodLists();
    // 60 pod changes in another namespace push every default-namespace change out of the
    // 20-change history: the informer's next re-watch is answered 410 Expired.
    await core.createNamespace({ body: { metadata: { name: 'churn' } } });
    for (let i = 0; i < 60; i++)
      await core.createNamespacedPod({ namespace: 'churn', body: pod(`p${i}`, 'churn') });
    await eventually(
      'the informer to relist',
      () => {
        const lists = defaultPodLists();
        return lists > listsBefore ? true : undefined;
      },
      30_000,
    );
    // It carries on: live events arrive, and its cache equals the server's state.
    await core.createNamespacedPod({ namespace: 'default', body: pod('c') });
    await eventually('ADDED c', () => (events.includes('ADDED c') ? true : undefined));
    const server = (await core.listNamespacedPod({ namespace: 'default' })).items
      .map((p) => p.metadata!.name)
      .sort();
    assert.deepEqual(server, ['b', 'c']);
    assert.deepEqual(
      informer
        .list('default')
        .map((p) => p.metadata!.name)
        .sort(),
      server,
    );
    assert.deepEqual(errors, []);
  });
});
