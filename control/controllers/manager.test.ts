import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { resources } from '../../api/client/resource.js';
import type { KubeObject } from '../../api/object.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';
import type { ControllerContext, ControllerFactory } from './context.js';
import { silentLogger } from './context.js';
import { ControllerManager } from './manager.js';

let api: TestApi;
before(async () => {
  api = await startTestApi();
  await api.client.create(resources.configmaps, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'seed', namespace: 'default' },
  });
});
after(() => api.stop());

test('controllers share informers, run only after the caches synced, and stop on abort', async () => {
  const seenAtRun: number[] = [];
  let contexts: ControllerContext[] = [];
  const make =
    (name: string): ControllerFactory =>
    (ctx) => {
      contexts.push(ctx);
      const informer = ctx.informers.informerFor(resources.configmaps);
      return {
        name,
        run: async (signal) => {
          seenAtRun.push(informer.lister().list().length);
          await new Promise<void>((resolve) =>
            signal.addEventListener('abort', () => resolve(), { once: true }),
          );
        },
      };
    };
  const ac = new AbortController();
  const done = new ControllerManager({
    client: api.client,
    controllers: { one: make('one'), two: make('two') },
    logger: silentLogger,
    config: { nodeMonitorGracePeriodSeconds: 7 },
  }).run(ac.signal);
  const deadline = Date.now() + 10_000;
  while (seenAtRun.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(seenAtRun, [1, 1], 'each controller saw the synced cache when it started');
  assert.equal(contexts[0]!.informers, contexts[1]!.informers);
  assert.equal(contexts[0]!.config.nodeMonitorGracePeriodSeconds, 7);
  assert.equal(contexts[0]!.config.concurrentGCSyncs, 20, 'unset settings keep their defaults');
  ac.abort();
  await done;
  contexts = [];
});

test("the controllers' informers drop managedFields, as kube-controller-manager's", async () => {
  const stored: KubeObject = await api.client.create(resources.configmaps, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'owned', namespace: 'default', labels: { app: 'web' } },
    data: { k: 'v' },
  });
  assert.ok(stored?.metadata?.managedFields?.length, 'the server records managedFields');
  const cached: unknown[] = [];
  const ac = new AbortController();
  const done = new ControllerManager({
    client: api.client,
    controllers: {
      look: (ctx) => {
        const informer = ctx.informers.informerFor(resources.configmaps);
        return {
          name: 'look',
          run: async () => {
            const cm = informer.lister().namespace('default').get('owned');
            cached.push(cm?.metadata?.resourceVersion, cm?.metadata?.labels, cm?.metadata?.managedFields);
          },
        };
      },
    },
    logger: silentLogger,
  }).run(ac.signal);
  const deadline = Date.now() + 10_000;
  while (cached.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(cached, [stored.metadata!.resourceVersion, { app: 'web' }, undefined]);
  ac.abort();
  await done;
  await api.client.delete(resources.configmaps, 'default', 'owned');
});

test('a controller registered under another name, or a bad setting, is refused', async () => {
  const lying: ControllerFactory = () => ({ name: 'other', run: async () => {} });
  await assert.rejects(
    new ControllerManager({ client: api.client, controllers: { mine: lying }, logger: silentLogger }).run(
      new AbortController().signal,
    ),
    /registered as mine calls itself other/,
  );
  assert.throws(
    () =>
      new ControllerManager({
        client: api.client,
        controllers: {},
        logger: silentLogger,
        config: { terminatedPodGCThreshold: 0 },
      }),
    /terminatedPodGCThreshold must be > 0/,
  );
});

test('a controller that fails is logged and does not stop the others', async () => {
  const errors: string[] = [];
  let otherStopped = false;
  const ac = new AbortController();
  const failing: ControllerFactory = () => ({
    name: 'failing',
    run: async () => {
      throw new Error('boom');
    },
  });
  const steady: ControllerFactory = () => ({
    name: 'steady',
    run: async (signal) => {
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      otherStopped = true;
    },
  });
  const done = new ControllerManager({
    client: api.client,
    controllers: { failing, steady },
    logger: { ...silentLogger, error: (m: string) => errors.push(m) },
  }).run(ac.signal);
  const deadline = Date.now() + 10_000;
  while (errors.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(errors, ['failing controller failed']);
  assert.equal(otherStopped, false);
  ac.abort();
  await done;
  assert.equal(otherStopped, true);
});
