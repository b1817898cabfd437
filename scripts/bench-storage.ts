/**
 * `npm run bench:storage`: the store backends side by side on this machine, in one run.
 *
 * For sqlite (a temp dir, synchronous=FULL) and etcd (a throwaway real member on
 * loopback, data in a temp dir), at 1, 16 and 64 concurrent writers:
 *   - create: each writer creates new keys back to back for BENCH_SECONDS (default 3);
 *   - update: each writer compare-and-swaps its own key back to back.
 * Then watch delivery: one watcher on the prefix while one writer creates keys one at a
 * time, over BENCH_WATCH_EVENTS events (default 1000), two ways: from the write call to
 * the event reaching the watcher (includes the commit and its fsync), and from the
 * writer's acknowledgement to the event (what the watch path adds once the write is
 * durable).
 *
 * Prints a Markdown table. Not a test: nothing here passes or fails.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EtcdStore } from '../control/storage/etcd.js';
import { SqliteStore } from '../control/storage/sqlite.js';
import type { Store, WatchEvent } from '../control/storage/store.js';
import { startEtcd } from '../test/support/etcd.js';
import { msSince, percentile, table } from './lib/stats.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const WATCH_EVENTS = Number(process.env.BENCH_WATCH_EVENTS ?? 1000);
const WRITERS = [1, 16, 64];
const VALUE = JSON.stringify({
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: { name: 'bench', namespace: 'default', labels: { app: 'bench' } },
  spec: { containers: [{ name: 'c', image: 'spring-server:1.0', ports: [{ containerPort: 8080 }] }] },
  status: { phase: 'Pending', padding: 'x'.repeat(600) },
}); // about 1 KiB, the size of a small Pod

interface Result {
  ops: number;
  seconds: number;
  latencies: number[];
}

/** Runs `writers` loops of `op` until the deadline; returns count and per-op latency (ms). */
async function drive(writers: number, op: (writer: number, i: number) => Promise<void>): Promise<Result> {
  const latencies: number[] = [];
  const start = process.hrtime.bigint();
  const deadline = Date.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let i = 0; Date.now() < deadline; i++) {
        const t = process.hrtime.bigint();
        await op(w, i);
        latencies.push(msSince(t));
      }
    }),
  );
  return { ops: latencies.length, seconds: msSince(start) / 1000, latencies };
}

async function benchWrites(name: string, store: Store, run: number): Promise<string[][]> {
  const rows: string[][] = [];
  for (const writers of WRITERS) {
    const prefix = `/registry/bench/r${run}-w${writers}/`;
    const created = await drive(writers, (w, i) => store.create(`${prefix}${w}-${i}`, VALUE).then(() => {}));
    rows.push(row(name, writers, 'create', created));

    const revs: number[] = [];
    for (let w = 0; w < writers; w++) revs[w] = (await store.create(`${prefix}own-${w}`, VALUE)).modRevision;
    const updated = await drive(writers, async (w) => {
      revs[w] = (await store.update(`${prefix}own-${w}`, VALUE, revs[w]!)).modRevision;
    });
    rows.push(row(name, writers, 'update', updated));
  }
  return rows;
}

async function benchWatch(name: string, store: Store, run: number): Promise<string[][]> {
  const prefix = `/registry/bench-watch/r${run}/`;
  const sent = new Map<string, bigint>();
  const acked = new Map<string, bigint>();
  const delivered = new Map<string, bigint>();
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => (done = resolve));
  let failed: Error | undefined;
  const watch = await store.watch(prefix, await store.currentRevision(), {
    onEvents: (events: WatchEvent[]) => {
      const now = process.hrtime.bigint();
      for (const e of events) delivered.set(e.kv.key, now);
      if (delivered.size >= WATCH_EVENTS) done();
    },
    onError: (err) => {
      failed = err;
      done();
    },
  });
  for (let i = 0; i < WATCH_EVENTS; i++) {
    const key = `${prefix}k${i}`;
    sent.set(key, process.hrtime.bigint());
    await store.create(key, VALUE);
    acked.set(key, process.hrtime.bigint());
  }
  await finished;
  watch.cancel();
  if (failed) throw failed;
  // write → event includes the commit (fsync); ack → event is what the watch path adds
  // after the write is durable (0 when the event arrived before the writer's ack).
  const fromWrite: number[] = [];
  const fromAck: number[] = [];
  for (const [key, t] of delivered) {
    fromWrite.push(Number(t - sent.get(key)!) / 1e6);
    fromAck.push(Math.max(0, Number(t - acked.get(key)!) / 1e6));
  }
  const fmt = (x: number) => x.toFixed(2);
  return [
    [
      name,
      '1 (+1 watcher)',
      'watch: write → event',
      '',
      fmt(percentile(fromWrite, 50)),
      fmt(percentile(fromWrite, 99)),
    ],
    [
      name,
      '1 (+1 watcher)',
      'watch: ack → event',
      '',
      fmt(percentile(fromAck, 50)),
      fmt(percentile(fromAck, 99)),
    ],
  ];
}

function row(name: string, writers: number, op: string, r: Result): string[] {
  return [
    name,
    String(writers),
    op,
    (r.ops / r.seconds).toFixed(0),
    percentile(r.latencies, 50).toFixed(2),
    percentile(r.latencies, 99).toFixed(2),
  ];
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'k8ts-bench-storage-'));
  const etcd = await startEtcd();
  const rows: string[][] = [['backend', 'writers', 'operation', 'ops/s', 'p50 ms', 'p99 ms']];
  const watchRows: string[][] = [];
  try {
    const backends: [string, () => Promise<Store>][] = [
      ['sqlite', () => SqliteStore.open({ path: join(dir, 'state.db') })],
      ['etcd', () => EtcdStore.open({ endpoints: etcd.endpoints })],
    ];
    for (const [i, [name, open]] of backends.entries()) {
      const store = await open();
      try {
        rows.push(...(await benchWrites(name, store, i)));
        watchRows.push(...(await benchWatch(name, store, i)));
      } finally {
        await store.close();
      }
    }
  } finally {
    await etcd.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const sorted = rows.slice(1).sort((a, b) => Number(a[1]) - Number(b[1]) || a[2]!.localeCompare(b[2]!));
  console.log(`storage benchmark: ${SECONDS} s per case, ~1 KiB values, node ${process.version}\n`);
  console.log(table([rows[0]!, ...sorted, ...watchRows]));
}

await main();
