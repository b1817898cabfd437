/**
 * What `k8ts snapshot save|list|delete|prune|restore` do, given their checked options
 * (cmd/options/snapshot.ts); cli.ts only prints what these return and maps a
 * SnapshotError to exit code 1.
 *
 * save asks the server running on the data dir (its snapshot socket, endpoint.ts) when one
 * answers: the sqlite store is that process's alone. When none answers it takes the
 * snapshot itself: sqlite by opening the store (which fails if a server holds it after
 * all), etcd straight from `--etcd-endpoints`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { SnapshotOptions } from '../../cmd/options/snapshot.js';
import { sqlitePath } from '../storage/index.js';
import { SqliteStore } from '../storage/sqlite.js';
import { requestSnapshot, serverAnswers, snapshotSocketPath, type SnapshotSummary } from './endpoint.js';
import { SnapshotError } from './errors.js';
import { deleteSnapshot, listSnapshots, pruneSnapshots } from './metadata.js';
import { restoreSnapshot } from './restore.js';
import { Snapshotter, defaultSnapshotDir } from './snapshotter.js';

/**
 * Runs one `k8ts snapshot` subcommand.
 * @returns the lines to print on stdout.
 * @throws SnapshotError (see each operation); the CLI prints its message and exits 1.
 */
export async function runSnapshotCommand(opts: SnapshotOptions): Promise<string[]> {
  const snapshotDir = opts.snapshotDir ?? defaultSnapshotDir(opts.dataDir);
  switch (opts.command) {
    case 'save': {
      const s = await save(opts, snapshotDir);
      return [
        `snapshot ${s.name} saved: ${s.path}`,
        `  datastore ${s.datastore}, revision ${s.revision}, ${s.size} bytes, sha256 ${s.sha256}`,
      ];
    }
    case 'list': {
      const rows = listSnapshots(snapshotDir);
      const width = Math.max(4, ...rows.map((r) => r.name.length));
      return [
        `${'NAME'.padEnd(width)}  DATASTORE  ${'SIZE'.padStart(12)}  CREATED`,
        ...rows.map(
          (r) =>
            `${r.name.padEnd(width)}  ${r.datastore.padEnd(9)}  ${String(r.size).padStart(12)}  ${r.createdAt.toISOString()}`,
        ),
      ];
    }
    case 'delete':
      return opts.names.map((n) => {
        deleteSnapshot(snapshotDir, n);
        return `snapshot ${n} deleted`;
      });
    case 'prune': {
      const deleted = pruneSnapshots(snapshotDir, opts.name, opts.retention);
      return deleted.length === 0
        ? [`no ${opts.name} snapshots beyond the newest ${opts.retention}`]
        : deleted.map((n) => `snapshot ${n} deleted`);
    }
    case 'restore': {
      const r = await restoreSnapshot({
        snapshot: opts.snapshot,
        dataDir: opts.dataDir,
        snapshotDir,
        ...(opts.bumpRevision !== undefined ? { bumpRevision: opts.bumpRevision } : {}),
        ...(opts.etcd ? { etcd: opts.etcd } : {}),
      });
      const lines = [
        `restored ${r.path} (${r.datastore}, revision ${r.revision}) into ${opts.dataDir}`,
        r.datastore === 'sqlite'
          ? `  the store's revision is now ${r.restoredRevision}${r.restoredRevision > r.revision ? ' (raised and marked compacted: clients that saw a later revision relist)' : ''}`
          : `  etcd member data dir ${opts.etcd!.dataDir}: start etcd on it with the same --name and --initial-advertise-peer-urls, then k8ts server --datastore etcd`,
      ];
      if (r.files.length > 0) lines.push(`  wrote ${r.files.join(', ')}`);
      if (!r.metadata)
        lines.push(
          '  (no sidecar: only the store was restored; the data dir keeps its own tls/ and node-token)',
        );
      if (r.asideDir) lines.push(`  what it replaced is in ${r.asideDir}`);
      return lines;
    }
  }
}

async function save(
  opts: Extract<SnapshotOptions, { command: 'save' }>,
  snapshotDir: string,
): Promise<SnapshotSummary> {
  const socket = snapshotSocketPath(opts.dataDir);
  if (await serverAnswers(socket)) return requestSnapshot(socket, opts.name);
  if (opts.datastore === 'etcd') {
    const saved = await new Snapshotter({
      source: { datastore: 'etcd', endpoints: opts.etcdEndpoints },
      dataDir: opts.dataDir,
      snapshotDir,
      nodeName: opts.nodeName,
    }).save(opts.name);
    return summary(saved, snapshotDir);
  }
  const path = sqlitePath(opts.dataDir);
  if (!existsSync(path))
    throw new SnapshotError(
      'NotFound',
      `no sqlite store at ${path}; is --data-dir the server's (or is it --datastore etcd)?`,
    );
  let store: SqliteStore;
  try {
    store = await SqliteStore.open({ path, busyTimeoutMs: 0 });
  } catch (err) {
    throw new SnapshotError(
      'Failed',
      `cannot open ${path} (${(err as Error).message}); a server holding it should answer on ${socket}: is it an older k8ts, or is --data-dir's path over 100 characters?`,
    );
  }
  try {
    const saved = await new Snapshotter({
      source: { datastore: 'sqlite', store },
      dataDir: opts.dataDir,
      snapshotDir,
      nodeName: opts.nodeName,
    }).save(opts.name);
    return summary(saved, snapshotDir);
  } finally {
    await store.close();
  }
}

function summary(m: Awaited<ReturnType<Snapshotter['save']>>, snapshotDir: string): SnapshotSummary {
  const { files: _files, ...rest } = m;
  return { ...rest, path: join(snapshotDir, m.name) };
}
