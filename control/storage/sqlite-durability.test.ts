/**
 * "A write acknowledged to a client survives kill -9 of the control process" (DESIGN.md),
 * for the sqlite backend: a child process writes with 16 writes in flight and prints each
 * acknowledged write; the test kills it with SIGKILL mid-stream, reopens the store and
 * checks every acknowledged write and the shape of the log. Two rounds, so the second
 * writer also starts from a recovered database.
 */
import Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SqliteStore } from './sqlite.js';
import type { LogRow } from './sqlite.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WRITER = fileURLToPath(new URL('./testdata/durability-writer.ts', import.meta.url));
/** Acknowledged writes to read from each writer before killing it. */
const ACKS_BEFORE_KILL = 400;
const DEADLINE_MS = 60_000;

interface Ack {
  key: string;
  revision: number;
  /** 0: the create, 1: the update (see durability-writer.ts). */
  n: number;
}

const dir = mkdtempSync(join(tmpdir(), 'k8ts-sqlite-durability-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Runs the writer until it has printed at least `acks` acknowledgements, kills it with
 * SIGKILL (by its PID), and returns every ack it printed before dying.
 */
async function writeThenKill(path: string, round: number, acks: number): Promise<Ack[]> {
  const child = spawn(process.execPath, ['--import', 'tsx', WRITER, path, String(round)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const read: Ack[] = [];
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const lines = createInterface({ input: child.stdout });
  // Every line the child printed, up to its death: resolves when its stdout is closed.
  const drained = new Promise<void>((resolve) => lines.once('close', resolve));
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`writer: only ${read.length} acks in ${DEADLINE_MS} ms; stderr: ${stderr}`)),
        DEADLINE_MS,
      );
      lines.on('line', (line) => {
        const [tag, key, revision, n] = line.split(' ');
        if (tag !== 'ack') return;
        read.push({ key: key!, revision: Number(revision), n: Number(n) });
        if (read.length >= acks) {
          clearTimeout(timer);
          resolve();
        }
      });
      void exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(new Error(`writer exited early (code ${code}, signal ${signal}); stderr: ${stderr}`));
      });
    });
    process.kill(child.pid!, 'SIGKILL');
    const { signal } = await exited;
    assert.equal(signal, 'SIGKILL');
    await drained;
    return read;
  } finally {
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL');
  }
}

/** The whole log, read with a plain connection once the store is closed. */
function readLog(path: string): { rows: LogRow[]; compactRevision: number } {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare('SELECT * FROM log ORDER BY revision').all() as LogRow[];
    const compactRevision = db
      .prepare(`SELECT value FROM meta WHERE name = 'compact_revision'`)
      .pluck()
      .get();
    return { rows, compactRevision: compactRevision as number };
  } finally {
    db.close();
  }
}

/**
 * A consistent revision sequence, for a log without compaction: the rows' revisions are
 * exactly 2, 3, ..., `current` (the first write of an empty store gets 2), one row each;
 * and per key the rows form one chain: the first row is a create (no prev_revision,
 * create_revision = its own revision), every later row names the key's previous row as
 * prev_revision and keeps its create_revision. (No deletes in this workload.)
 */
function assertConsistentLog(rows: LogRow[], current: number): void {
  assert.equal(rows.length, current - 1, `log has ${rows.length} rows for revisions 2..${current}`);
  const last = new Map<string, LogRow>();
  for (const [i, row] of rows.entries()) {
    assert.equal(row.revision, i + 2, `gap or duplicate in the log at revision ${row.revision}`);
    assert.equal(row.deleted, 0);
    const prev = last.get(row.key);
    if (prev) {
      assert.equal(
        row.prev_revision,
        prev.revision,
        `row ${row.revision} does not follow row ${prev.revision}`,
      );
      assert.equal(row.create_revision, prev.create_revision);
    } else {
      assert.equal(row.prev_revision, null, `first row of ${row.key} at ${row.revision} names a predecessor`);
      assert.equal(row.create_revision, row.revision);
    }
    last.set(row.key, row);
  }
}

describe('sqlite durability', () => {
  it('every acknowledged write survives SIGKILL of the writing process, and the log stays contiguous', async () => {
    const path = join(dir, 'state.db');
    let acked = 0;
    for (const round of [1, 2]) {
      const acks = await writeThenKill(path, round, ACKS_BEFORE_KILL);
      acked += acks.length;
      const store = await SqliteStore.open({ path });
      let current: number;
      try {
        current = await store.currentRevision();
        const maxAcked = Math.max(...acks.map((a) => a.revision));
        assert.ok(current >= maxAcked, `current revision ${current} is behind an acked write at ${maxAcked}`);
        const latest = new Map<string, number>();
        for (const ack of acks) {
          // The acknowledged write itself is in history, with the value that was written...
          const at = await store.get(ack.key, { revision: ack.revision });
          assert.equal(
            at?.modRevision,
            ack.revision,
            `${ack.key}: acked at ${ack.revision}, found ${at?.modRevision}`,
          );
          assert.equal((JSON.parse(at.value) as { n: number }).n, ack.n);
          latest.set(ack.key, Math.max(latest.get(ack.key) ?? 0, ack.revision));
        }
        // ...and the key is still there now, at that revision or a later one.
        for (const [key, revision] of latest) {
          const now = await store.get(key);
          assert.ok(
            now && now.modRevision >= revision,
            `${key}: acked at ${revision}, now ${now?.modRevision}`,
          );
        }
        // The recovered store goes on at current + 1.
        const probe = await store.create(
          `/registry/configmaps/r${round}/probe`,
          JSON.stringify({ probe: true }),
        );
        assert.equal(probe.modRevision, current + 1);
        current = probe.modRevision;
      } finally {
        await store.close();
      }
      const { rows, compactRevision } = readLog(path);
      assert.equal(compactRevision, 1);
      assertConsistentLog(rows, current);
    }
    assert.ok(acked >= 2 * ACKS_BEFORE_KILL);
  });
});
