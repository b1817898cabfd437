/**
 * "An online backup that never blocks writers for long": a sqlite store of 50,000 objects
 * (about 1 KiB each) is copied as a snapshot is (backupSqliteStore: SQLite's backup API in
 * steps, then the switch to one file; the rest of a save, the digest and the sidecar, reads
 * and writes asynchronously) while four writers create objects back to back. Each write's
 * latency (call to acknowledgement, fsync included) is recorded during the copy and for as
 * long again without one; the test prints both (p50, p99, max, writes) and the event
 * loop's longest delay, and fails when in each of ATTEMPTS copies a write waited for a
 * large share of the copy (STALL_SHARE) — as it does when the copy is made in one step,
 * holding the event loop throughout (PAGES_PER_STEP=1000000 shows it).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, it } from 'node:test';
import { openStore, sqlitePath } from '../storage/index.js';
import type { SqliteStore } from '../storage/sqlite.js';
import { backupSqliteStore } from './sqlite.js';

const OBJECTS = Number(process.env.SNAPSHOT_OBJECTS ?? 50_000);
const WRITERS = 4;
/**
 * The longest write may take at most this share of the whole copy. Made in one step, the
 * copy holds the event loop for nearly all of it; in steps the longest wait is the last
 * step's commit (50–150 ms of a 0.5–1.3 s copy, on a shared two-core VM whose writes alone
 * take up to 20–660 ms now and then), so a ratio holds on a loaded machine where an
 * absolute limit would not.
 */
const STALL_SHARE = 1 / 3;
/** Copies tried; the test passes on the first whose longest write is within STALL_SHARE. */
const ATTEMPTS = 3;
/** Pages per backup step; PAGES_PER_STEP=1000000 in the environment copies in one step (to see this test fail). */
const PAGES_PER_STEP = Number(process.env.PAGES_PER_STEP ?? 256);

const root = mkdtempSync(join(tmpdir(), 'k8ts-snap-stall-'));
after(() => rmSync(root, { recursive: true, force: true }));

interface Run {
  writes: number;
  p50: number;
  p99: number;
  max: number;
  loopMaxMs: number;
}

/** Runs the writers until `done` settles; the latencies of their writes. */
async function writeUntil(store: SqliteStore, tag: string, done: Promise<unknown>): Promise<Run> {
  const latencies: number[] = [];
  let stop = false;
  void done.finally(() => (stop = true));
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const value = JSON.stringify({ kind: 'ConfigMap', data: { v: 'x'.repeat(900) } });
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const t0 = performance.now();
        await store.create(`/registry/configmaps/${tag}/w${w}-${i}`, value);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  loop.disable();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { writes: latencies.length, p50: at(0.5), p99: at(0.99), max: at(1), loopMaxMs: loop.max / 1e6 };
}

const fmt = (r: Run) =>
  `${r.writes} writes, latency p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, max ${r.max.toFixed(1)} ms; event loop max delay ${r.loopMaxMs.toFixed(1)} ms`;

it(`writers wait at most a step while ${OBJECTS} objects are copied for a snapshot`, async (t) => {
  const dataDir = join(root, 'data');
  const store = (await openStore({ datastore: 'sqlite', dataDir })) as SqliteStore;
  try {
    const value = JSON.stringify({
      kind: 'Secret',
      data: { v: Buffer.from('y'.repeat(700)).toString('base64') },
    });
    for (let i = 0; i < OBJECTS; i += 1000) {
      await Promise.all(
        Array.from({ length: 1000 }, (_, j) => store.create(`/registry/secrets/default/s-${i + j}`, value)),
      );
    }
    const dbBytes = statSync(sqlitePath(dataDir)).size + statSync(`${sqlitePath(dataDir)}-wal`).size;
    t.diagnostic(`store: ${OBJECTS} objects, ${(dbBytes / 2 ** 20).toFixed(1)} MiB (db + wal)`);
    // Other work on a shared machine can hold a write up now and then, with or without a
    // copy; a copy that holds writers itself does so every time. So: the best of ATTEMPTS.
    const failures: string[] = [];
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const t0 = performance.now();
      const copy = join(root, `snapshot-${attempt}`);
      const saving = backupSqliteStore(store, copy, PAGES_PER_STEP);
      const during = await writeUntil(store, `during-${attempt}`, saving);
      const saved = await saving;
      const copyMs = performance.now() - t0;
      const size = statSync(copy).size;
      const baseline = await writeUntil(
        store,
        `baseline-${attempt}`,
        new Promise((r) => setTimeout(r, copyMs)),
      );
      t.diagnostic(
        `backup ${attempt}: ${copyMs.toFixed(0)} ms, copy ${(size / 2 ** 20).toFixed(1)} MiB at revision ${saved.revision}`,
      );
      t.diagnostic(`  during the copy: ${fmt(during)}`);
      t.diagnostic(`  without a copy:  ${fmt(baseline)}`);
      assert.ok(during.writes > 0, 'writes were acknowledged during the copy');
      assert.ok(saved.revision > OBJECTS, 'the copy holds the objects');
      if (during.max < copyMs * STALL_SHARE) return;
      failures.push(`a write waited ${during.max.toFixed(1)} ms of a ${copyMs.toFixed(0)} ms copy`);
    }
    assert.fail(
      `${failures.join('; ')} (limit: a share of ${STALL_SHARE.toFixed(2)}, in one of ${ATTEMPTS} copies)`,
    );
  } finally {
    await store.close();
  }
});
