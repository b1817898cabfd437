// The client machinery against a REAL `k8ts server` (built CLI, dist/): an informer on
// default-namespace pods sees ADDED/MODIFIED/DELETED, re-watches every 2–3 s, relists
// after 410 Expired, survives a restart of the server on the same data dir and port while
// objects change behind its back, and ends with a cache equal to the server's list.
// Watches are short (the informer asks for 2–3 s) and the server keeps only 20 changes
// of history, so re-watches and 410s happen often. No test step sleeps to wait: each
// waits on a condition with a deadline.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startK8tsServer } from '../../test/support/k8ts-server.js';
import type { K8tsServer } from '../../test/support/k8ts-server.js';
import type { KubeObject } from '../object.js';
import { realClock, type Clock } from '../clock.js';
import { isAlreadyExists } from './errors.js';
import { InformerFactory } from './factory.js';
import { DeletedFinalStateUnknown } from './informer.js';
import type { SharedInformer } from './informer.js';
import { resources } from './resource.js';
import { RestClient } from './rest.js';
import { waitFor } from './testing.js';

const SERVER_ARGS = ['--min-request-timeout', '1', '--default-watch-cache-size', '20'];

const pod = (name: string, namespace = 'default'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, labels: { app: 'informer-e2e' } },
  spec: { containers: [{ name: 'c', image: 'spring-server:1.0' }] },
});

/**
 * The informer's clock: backoff delays are recorded at their nominal length (1 s, 2 s,
 * ...) but waited out at 1/20 of it (timers are real), and hold() keeps the informer inside its backoff
 * until release(), so that the test can change the world "while it is away".
 */
class ScaledClock implements Clock {
  readonly sleeps: number[] = [];
  held = 0;
  private gate: { promise: Promise<void>; open: () => void } | undefined;
  now(): number {
    return Date.now();
  }
  // Timers (resync, waitForSync's deadline) run in real time, unscaled.
  setTimeout(fn: () => void, ms: number): unknown {
    return realClock.setTimeout(fn, ms);
  }
  clearTimeout(handle: unknown): void {
    realClock.clearTimeout(handle);
  }
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    if (this.gate) {
      this.held++;
      const aborted = new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve()));
      await Promise.race([this.gate.promise, aborted]);
      this.held--;
      return;
    }
    await realClock.sleep(ms / 20, signal);
  }
  hold(): void {
    let open!: () => void;
    const promise = new Promise<void>((resolve) => (open = resolve));
    this.gate = { promise, open };
  }
  release(): void {
    this.gate?.open();
    this.gate = undefined;
  }
}

describe('informer against a real k8ts server', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'k8ts-informer-e2e-'));
  let server: K8tsServer;
  let port: string;
  let writer: RestClient;
  let factory: InformerFactory;
  let informer: SharedInformer;
  const clock = new ScaledClock();
  const events: string[] = [];
  const errors: string[] = [];

  /** The server's default-namespace pods as `name@resourceVersion`, sorted. */
  const serverState = async () =>
    (await writer.list(resources.pods, { namespace: 'default' })).items
      .map((p) => `${p.metadata!.name}@${p.metadata!.resourceVersion}`)
      .sort();
  const cacheState = () =>
    informer
      .lister()
      .namespace('default')
      .list()
      .map((p) => `${p.metadata!.name}@${p.metadata!.resourceVersion}`)
      .sort();
  const saw = (what: string) => () => events.includes(what);
  /**
   * The cache ends up equal to the server's state. The scheduler writes PodScheduled=False
   * to pods it cannot place (this server has no nodes), so the cache may need a moment to
   * see those writes too.
   */
  async function assertCaughtUp(): Promise<void> {
    const deadline = Date.now() + 10_000;
    let want = await serverState();
    while (JSON.stringify(cacheState()) !== JSON.stringify(want) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      want = await serverState();
    }
    assert.deepEqual(cacheState(), want);
  }

  /** `n` pod creations in another namespace, all at once (so that they land between two bookmarks). */
  async function churn(n: number, prefix: string): Promise<void> {
    await Promise.all(
      Array.from({ length: n }, (_, i) => writer.create(resources.pods, pod(`${prefix}-${i}`, 'churn'))),
    );
  }

  before(async () => {
    server = await startK8tsServer({ dataDir, args: SERVER_ARGS });
    port = new URL(server.url).port;
    writer = RestClient.fromKubeconfig(server.kubeconfig);
    try {
      await writer.create(resources.namespaces, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'churn' },
      });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    factory = new InformerFactory({
      client: RestClient.fromKubeconfig(server.kubeconfig, { userAgent: 'informer-e2e' }),
      minWatchTimeoutSeconds: 2,
      clock,
      onError: (err, during) => errors.push(`${during}: ${err.message}`),
    });
    informer = factory.informerFor(resources.pods, { namespace: 'default' });
    informer.addEventHandler({
      onAdd: (p) => events.push(`ADDED ${p.metadata!.name}`),
      onUpdate: (a, b) => {
        if (a !== b) events.push(`MODIFIED ${b.metadata!.name} ${b.metadata!.labels?.step ?? ''}`.trim());
      },
      onDelete: (p) =>
        events.push(
          p instanceof DeletedFinalStateUnknown
            ? `DELETED ${p.key} (final state unknown)`
            : `DELETED ${p.metadata!.name}`,
        ),
    });
    factory.start();
    assert.equal(await factory.waitForCacheSync(20_000), true, 'synced');
  });

  after(async () => {
    await factory?.shutdown();
    writer?.close();
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('sees ADDED, MODIFIED and DELETED', async () => {
    await writer.create(resources.pods, pod('a'));
    await waitFor('ADDED a', saw('ADDED a'));
    await writer.patch(resources.pods, 'default', 'a', 'merge', { metadata: { labels: { step: 'two' } } });
    await waitFor('MODIFIED a two', saw('MODIFIED a two'));
    assert.equal(informer.lister().get('default', 'a')?.metadata?.labels?.step, 'two');
    await writer.delete(resources.pods, 'default', 'a');
    await waitFor('DELETED a', saw('DELETED a'));
    assert.equal(informer.lister().get('default', 'a'), undefined);
    // The server ends each watch after the 2–3 s the informer asks for; the informer
    // resumes from its resourceVersion without relisting.
    await waitFor('two re-watches', () => informer.stats.watches >= 3, 15_000);
    assert.deepEqual(informer.stats, { lists: 1, watches: informer.stats.watches, expired: 0, failures: 0 });
    assert.deepEqual(errors, []);
  });

  it('re-watches from its resourceVersion, relists after 410 Expired, and loses nothing', async () => {
    await writer.create(resources.pods, pod('b'));
    await waitFor('ADDED b', saw('ADDED b'));
    const start = informer.stats;
    // Pod changes in another namespace push the default namespace's position out of the
    // 20-change history. A watch's bookmark (the server sends one 2 s before a watch's
    // deadline) moves the informer's resourceVersion past such changes; so wait for the
    // bookmark that covers a few changes, then make 40 more before the watch ends (every
    // 2–3 s): resuming from the bookmark's resourceVersion is then answered 410 Expired.
    const deadline = Date.now() + 60_000;
    for (let round = 0; informer.stats.expired === start.expired; round++) {
      assert.ok(Date.now() < deadline, `no 410 within 60 s: ${JSON.stringify(informer.stats)}`);
      const rv = informer.lastSyncResourceVersion;
      const watches = informer.stats.watches;
      await churn(3, `a${round}`);
      await waitFor('a bookmark', () => informer.lastSyncResourceVersion !== rv, 15_000);
      await churn(40, `b${round}`);
      await waitFor(
        'the next watch',
        () => informer.stats.watches > watches + 1 || informer.stats.expired > start.expired,
        15_000,
      );
    }
    await waitFor('the relist and a watch after it', () => {
      const now = informer.stats;
      return now.lists > start.lists && now.watches > start.watches;
    });
    await writer.create(resources.pods, pod('c'));
    await waitFor('ADDED c', saw('ADDED c'));
    await assertCaughtUp();
    assert.deepEqual(
      cacheState().map((s) => s.split('@')[0]),
      ['b', 'c'],
    );
  });

  it('survives a server restart on the same data dir and port, catching up on what changed meanwhile', async () => {
    await writer.create(resources.pods, pod('d'));
    await waitFor('ADDED d', saw('ADDED d'));
    const expiredBefore = informer.stats.expired;
    clock.hold();
    writer.close();
    await server.stop();
    // The informer's watch ended with the server; its reconnect was refused and it now
    // waits in its backoff.
    await waitFor('the informer in backoff', () => clock.held > 0, 20_000);
    server = await startK8tsServer({ dataDir, args: [...SERVER_ARGS, '--port', port] });
    assert.equal(new URL(server.url).port, port);
    writer = RestClient.fromKubeconfig(server.kubeconfig);
    await writer.delete(resources.pods, 'default', 'b');
    await writer.patch(resources.pods, 'default', 'd', 'merge', { metadata: { labels: { step: 'after' } } });
    await writer.create(resources.pods, pod('e'));
    // More changes than the restarted server's watch history holds: resuming from the
    // informer's resourceVersion is answered 410, and only a relist can catch up.
    await churn(30, 'restart');
    clock.release();
    await waitFor('DELETED b (final state unknown)', saw('DELETED default/b (final state unknown)'), 20_000);
    await waitFor('MODIFIED d after', saw('MODIFIED d after'));
    await waitFor('ADDED e', saw('ADDED e'));
    assert.ok(informer.stats.expired > expiredBefore, 'relisted after 410');
    assert.ok(
      clock.sleeps.every((ms) => ms >= 1_000 && ms <= 30_000),
      `backoff within 1–30 s: ${clock.sleeps.join(', ')}`,
    );
    // And it keeps following the live server.
    await writer.create(resources.pods, pod('f'));
    await waitFor('ADDED f', saw('ADDED f'));
    await assertCaughtUp();
    assert.deepEqual(
      cacheState().map((s) => s.split('@')[0]),
      ['c', 'd', 'e', 'f'],
    );
    assert.deepEqual(
      errors.filter((e) => e.startsWith('handler')),
      [],
    );
  });
});
