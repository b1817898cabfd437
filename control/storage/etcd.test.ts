/**
 * The etcd backend against a real etcd: one throwaway member for this file, a fresh key
 * namespace per store. Compaction is global to etcd, but the tests of a file run one after
 * another and the conformance suite reasons only relative to currentRevision(), so sharing
 * the member is sound.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEtcd, type EtcdMember } from '../../test/support/etcd.js';
import { startTcpProxy } from '../../test/support/tcp-proxy.js';
import { runStoreConformance } from './conformance.js';
import { EtcdStore, type EtcdStoreOptions } from './etcd.js';
import { isStorageError, type StorageError } from './errors.js';
import type { Store, WatchEvent, WatchHandler } from './store.js';

let etcd: EtcdMember;
let namespaces = 0;

before(async () => {
  etcd = await startEtcd();
});
after(async () => {
  await etcd?.stop();
});

const json = (o: unknown): string => JSON.stringify(o);

/** A store in a namespace of its own on the shared member (or wherever `opts` says). */
function openStore(opts: Partial<EtcdStoreOptions> = {}): Promise<EtcdStore> {
  return EtcdStore.open({ endpoints: etcd.endpoints, namespace: `/t-${++namespaces}`, ...opts });
}

runStoreConformance('etcd', () => openStore());

/** Collects watch events and the error, if any; `until` waits on a condition with a deadline. */
class Collector {
  readonly events: WatchEvent[] = [];
  error: StorageError | undefined;
  batches = 0;
  constructor(private readonly onBatch: (events: WatchEvent[]) => void = () => {}) {}
  readonly handler: WatchHandler = {
    onEvents: (evs) => {
      this.batches++;
      this.events.push(...evs);
      this.onBatch(evs);
    },
    onError: (err) => {
      assert.equal(this.error, undefined, 'onError called twice');
      this.error = err;
    },
  };
  async until(what: string, cond: () => boolean, deadlineMs = 10_000): Promise<void> {
    const until = Date.now() + deadlineMs;
    while (!cond()) {
      if (Date.now() > until) {
        assert.fail(`timed out waiting for ${what}: ${this.events.length} events, error ${this.error}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

async function withStores(
  n: number,
  fn: (...stores: EtcdStore[]) => Promise<void>,
  opts = {},
): Promise<void> {
  const stores = await Promise.all(Array.from({ length: n }, () => openStore(opts)));
  try {
    await fn(...stores);
  } finally {
    await Promise.all(stores.map((s) => s.close()));
  }
}

describe('etcd backend', () => {
  it('keeps namespaces apart: a watch sees exactly its own keys while others write around it', async () => {
    await withStores(2, async (a, b) => {
      const since = await a.currentRevision();
      const seenA = new Collector();
      const seenB = new Collector();
      const wa = await a.watch('/registry/pods/', 0, seenA.handler);
      const wb = await b.watch('/registry/pods/', 0, seenB.handler);
      try {
        const a1 = await a.create('/registry/pods/default/p', json({ a: 1 }));
        await b.create('/registry/pods/default/p', json({ b: 1 }));
        await b.create('/registry/pods/default/q', json({ b: 2 }));
        const a2 = await a.update('/registry/pods/default/p', json({ a: 2 }), a1.modRevision);
        await b.delete('/registry/pods/default/q');
        const gone = await a.delete('/registry/pods/default/p', a2.modRevision);
        const a3 = await a.create('/registry/pods/default/r', json({ a: 3 }));

        await seenA.until('4 events in a', () => seenA.events.length >= 4);
        await seenB.until('3 events in b', () => seenB.events.length >= 3);
        assert.deepEqual(seenA.events, [
          { type: 'PUT', kv: a1 },
          { type: 'PUT', kv: a2, prevKv: a1 },
          {
            type: 'DELETE',
            kv: { key: '/registry/pods/default/p', value: '', createRevision: 0, modRevision: gone.revision },
            prevKv: a2,
          },
          { type: 'PUT', kv: a3 },
        ]);
        assert.deepEqual(
          seenB.events.map((e) => [e.type, e.kv.key]),
          [
            ['PUT', '/registry/pods/default/p'],
            ['PUT', '/registry/pods/default/q'],
            ['DELETE', '/registry/pods/default/q'],
          ],
        );
        // A replay from before all of it, after the other namespace wrote more, still sees only a's.
        await b.create('/registry/pods/default/later', json({}));
        const replay = new Collector();
        const wr = await a.watch('/registry/pods/', since, replay.handler);
        await replay.until('4 replayed events', () => replay.events.length >= 4);
        await a.create('/registry/pods/default/live', json({}));
        await replay.until('the live event', () => replay.events.length >= 5);
        wr.cancel();
        assert.deepEqual(replay.events.slice(0, 4), seenA.events.slice(0, 4));
        assert.equal(replay.events[4]!.kv.key, '/registry/pods/default/live');
        assert.deepEqual((await b.list('/registry/')).items.map((kv) => kv.key).sort(), [
          '/registry/pods/default/later',
          '/registry/pods/default/p',
        ]);
      } finally {
        wa.cancel();
        wb.cancel();
      }
    });
  });

  it('a watch cut off during catch-up resumes from its last delivered event: no gap, no duplicate', async () => {
    // etcd replays history in batches of at most 1000 revisions, each stamped with the
    // current revision; etcd3 alone would resume after that stamp and skip the rest.
    const proxy = await startTcpProxy(etcd.endpoints[0]!);
    const namespace = `/t-${++namespaces}`;
    const writer = await EtcdStore.open({ endpoints: etcd.endpoints, namespace });
    const watcher = await EtcdStore.open({ endpoints: [proxy.url], namespace });
    try {
      const since = await writer.currentRevision();
      const written: number[] = [];
      for (let i = 0; i < 2500; i += 100) {
        const batch = Array.from({ length: 100 }, (_, j) =>
          writer.create(`/registry/pods/d/k${i + j}`, '{}'),
        );
        written.push(...(await Promise.all(batch)).map((kv) => kv.modRevision));
      }
      let cut = false;
      const seen = new Collector(() => {
        if (!cut) {
          cut = true;
          proxy.sever();
        }
      });
      const w = await watcher.watch('/registry/pods/', since, seen.handler);
      try {
        await seen.until('the replay', () => seen.events.length >= 2500 || seen.error !== undefined, 30_000);
        for (let i = 0; i < 10; i++) {
          written.push((await writer.create(`/registry/pods/d/live${i}`, '{}')).modRevision);
        }
        await seen.until('the live events', () => seen.events.length >= 2510 || seen.error !== undefined);
        assert.equal(seen.error, undefined);
        assert.ok(proxy.accepted > 1, 'the watch stream was re-established');
        assert.deepEqual(
          seen.events.map((e) => e.kv.modRevision),
          written.sort((x, y) => x - y),
        );
      } finally {
        w.cancel();
      }
    } finally {
      await watcher.close();
      await writer.close();
      await proxy.close();
    }
  });

  it('a watch that reconnects after its next revision was compacted ends with Compacted', async () => {
    const proxy = await startTcpProxy(etcd.endpoints[0]!);
    const namespace = `/t-${++namespaces}`;
    const writer = await EtcdStore.open({ endpoints: etcd.endpoints, namespace });
    const watcher = await EtcdStore.open({ endpoints: [proxy.url], namespace });
    try {
      const seen = new Collector();
      await watcher.watch('/registry/pods/', 0, seen.handler);
      const first = await writer.create('/registry/pods/d/a', '{}');
      await seen.until('the first event', () => seen.events.length === 1);
      proxy.pause();
      await writer.create('/registry/pods/d/b', '{}');
      await writer.create('/registry/pods/d/c', '{}');
      const at = await writer.currentRevision();
      await writer.compact(at);
      proxy.resume();
      await seen.until('the error', () => seen.error !== undefined, 15_000);
      assert.ok(isStorageError(seen.error, 'Compacted'), String(seen.error));
      assert.equal(seen.error.details.compactRevision, at);
      assert.deepEqual(
        seen.events.map((e) => e.kv),
        [first],
      );
    } finally {
      await watcher.close();
      await writer.close();
      await proxy.close();
    }
  });

  it('compactedRevision() sees a compaction made by another client', async () => {
    await withStores(2, async (a, b) => {
      await a.create('/registry/pods/d/x', '{}');
      const before = await b.compactedRevision();
      const at = await a.currentRevision();
      assert.ok(at > before);
      await a.compact(at);
      assert.equal(await b.compactedRevision(), at);
      assert.equal(await a.compactedRevision(), at);
    });
  });

  it('a value above etcd --max-request-bytes fails with InvalidValue and writes nothing', async () => {
    await withStores(1, async (s) => {
      const rev = await s.currentRevision();
      const big = json({ data: 'x'.repeat(4 * 1024 * 1024 + 100 * 1024) });
      await assert.rejects(s.create('/registry/configmaps/d/big', big), (err) => {
        assert.ok(isStorageError(err, 'InvalidValue'), String(err));
        return true;
      });
      assert.equal(await s.currentRevision(), rev);
    });
  });

  it("a stopped etcd surfaces Unavailable by the store's own deadlines, never a hang", async () => {
    const member = await startEtcd();
    let store: Store | undefined;
    let patient: Store | undefined;
    try {
      const opts = { endpoints: member.endpoints, requestTimeoutMs: 1500, watchRetryTimeoutMs: 1500 };
      // The same calls on a store with a much longer deadline: every call of the 1.5 s store
      // must end before its twin of the 8 s one. That shows the configured deadline is what
      // ended it (a store that ignored it, or fell back to its 10 s default, ends later),
      // without timing anything against the wall clock of a loaded machine.
      const patientOpts = { ...opts, requestTimeoutMs: 8000, watchRetryTimeoutMs: 8000 };
      store = await EtcdStore.open(opts);
      patient = await EtcdStore.open(patientOpts);
      const kv = await store.create('/registry/pods/d/a', '{}');
      const seen = new Collector();
      await store.watch('/registry/pods/', 0, seen.handler);
      await member.stop();

      // A call still pending after HANG_MS counts as a hang.
      const HANG_MS = 30_000;
      const hung = Symbol('hung');
      const order: string[] = [];
      const settle = (what: string, call: Promise<unknown>) => {
        let timer: NodeJS.Timeout | undefined;
        const watchdog = new Promise<typeof hung>((resolve) => {
          timer = setTimeout(() => resolve(hung), HANG_MS);
        });
        return Promise.race([call, watchdog]).finally(() => {
          clearTimeout(timer);
          order.push(what);
        });
      };
      const callsOn = (s: Store, o: typeof opts): [string, () => Promise<unknown>][] => [
        ['get', () => s.get(kv.key)],
        ['list', () => s.list('/registry/pods/')],
        ['create', () => s.create('/registry/pods/d/b', '{}')],
        ['update', () => s.update(kv.key, '{}', kv.modRevision)],
        ['delete', () => s.delete(kv.key)],
        ['currentRevision', () => s.currentRevision()],
        ['watch', () => s.watch('/registry/pods/', kv.modRevision, new Collector().handler)],
        ['compact', () => s.compact(kv.modRevision)],
        ['open', () => EtcdStore.open({ ...o, dialTimeoutMs: o.requestTimeoutMs === 1500 ? 500 : 8000 })],
      ];
      const fast = callsOn(store, opts).map(([what, call]) => settle(`fast ${what}`, call()));
      // Settled together from the start: a twin that fails first is never an unhandled rejection.
      const slowSettled = Promise.allSettled(
        callsOn(patient, patientOpts).map(([what, call]) => settle(`slow ${what}`, call())),
      );
      const results = await Promise.allSettled(fast);
      const names = callsOn(store, opts).map(([what]) => what);
      results.forEach((r, i) => {
        const what = names[i]!;
        if (r.status === 'fulfilled') assert.fail(r.value === hung ? `${what} hung` : `${what} succeeded`);
        const err = r.reason as unknown;
        assert.ok(isStorageError(err, 'Unavailable'), `${what}: ${String(err)}`);
      });
      const slowResults = await slowSettled;
      slowResults.forEach((r, i) =>
        assert.equal(r.status, 'rejected', `slow ${names[i]} settled as ${r.status}`),
      );
      for (const what of names) {
        assert.ok(
          order.indexOf(`fast ${what}`) < order.indexOf(`slow ${what}`),
          `${what} on the 1.5 s store ended after its twin on the 8 s store: ${order.join(', ')}`,
        );
      }
      await seen.until('the watch error', () => seen.error !== undefined, 5_000);
      assert.ok(isStorageError(seen.error, 'Unavailable'), String(seen.error));
    } finally {
      await store?.close();
      await patient?.close();
      await member.stop();
    }
  });
});
