/**
 * `k8ts snapshot restore`: a snapshot back into a data dir, checked whole before anything
 * is touched.
 *
 *   1. find it: a path, or a name in the snapshot dir;
 *   2. check it: against its sidecar (size: truncated; SHA-256: corrupt), then by its own
 *      means (sqlite: a private copy through integrity_check and the schema check; etcd:
 *      size shape, sha256 trailer, bbolt magic) — a failure here leaves everything as it was;
 *   3. refuse while a server runs on the data dir (its snapshot socket answers, or, sqlite,
 *      another process holds the database's lock);
 *   4. sqlite: move the data dir's database (state.db, -wal, -shm) aside into
 *      `DATA_DIR/db/old-<unix seconds>/` (k3s moves its old etcd dir aside the same way),
 *      and rename the checked copy into its place; etcd: `etcdctl snapshot restore` into a
 *      new member data dir;
 *   5. the sidecar's files (tls/, node-token) into the data dir; ones that differ go aside
 *      into the same old-<unix seconds>/ first.
 *
 * A data dir without a database is a new data dir; one with one is restored in place, which
 * step 3 allows only while no server runs.
 */
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { realClock, type Clock } from '../../api/clock.js';
import { sqlitePath } from '../storage/index.js';
import { restoreDataDirFiles } from './data-dir-files.js';
import { serverAnswers, snapshotSocketPath } from './endpoint.js';
import { checkEtcdSnapshot, restoreEtcdSnapshot, type EtcdRestoreOptions } from './etcd.js';
import { SnapshotError } from './errors.js';
import {
  checkAgainstMetadata,
  readMetadata,
  sniffDatastore,
  type SnapshotDatastore,
  type SnapshotMetadata,
} from './metadata.js';
import { defaultSnapshotDir } from './snapshotter.js';
import { prepareSqliteRestore, sqliteFileLocked } from './sqlite.js';

/**
 * How far a restored sqlite store's revision is raised (and marked compacted), as
 * `etcdutl snapshot restore --bump-revision 1000000000 --mark-compacted`, which Kubernetes'
 * etcd guide suggests: more writes than any cluster makes between a snapshot and its restore.
 */
export const DEFAULT_BUMP_REVISION = 1_000_000_000;

/** What to restore, and where. */
export interface RestoreOptions {
  /** A snapshot file's path, or a name from `k8ts snapshot list` (looked up in snapshotDir). */
  snapshot: string;
  /** The k8ts data dir to restore into (created 0700 when missing). */
  dataDir: string;
  /** Where names are looked up; default `<dataDir>/snapshots`. */
  snapshotDir?: string;
  /** sqlite: see DEFAULT_BUMP_REVISION (the default); 0 keeps the snapshot's revision. */
  bumpRevision?: number;
  /** etcd snapshots: the new member's data dir and identity (required for them). */
  etcd?: EtcdRestoreOptions;
  /** Names the aside dir. Default realClock. */
  clock?: Clock;
}

/** What a restore did. */
export interface RestoreResult {
  /** The snapshot file restored. */
  path: string;
  datastore: SnapshotDatastore;
  /** The revision the snapshot holds (sqlite: read from it; etcd: its sidecar's, 0 without one). */
  revision: number;
  /** The store's revision after the restore (sqlite: revision + bump; etcd: revision). */
  restoredRevision: number;
  /** Where what the restore replaced was moved, if anything was. */
  asideDir?: string;
  /** The data dir files written from the sidecar (DATA_DIR-relative). */
  files: string[];
  /** The sidecar, when there was one. */
  metadata?: SnapshotMetadata;
}

/**
 * Restores a snapshot into a data dir; see the top of this file.
 * @throws SnapshotError NotFound, Truncated, Corrupt (nothing touched), ServerRunning
 *   (nothing touched), Invalid (an etcd snapshot without `etcd`), Exists (etcd data dir
 *   not empty), Failed (etcdctl failed).
 */
export async function restoreSnapshot(opts: RestoreOptions): Promise<RestoreResult> {
  const path = resolveSnapshot(opts.snapshot, opts.snapshotDir ?? defaultSnapshotDir(opts.dataDir));
  const metadata = readMetadata(path);
  if (metadata) await checkAgainstMetadata(path, metadata);
  const datastore = metadata?.datastore ?? sniffDatastore(path);
  if (datastore === 'unknown')
    throw new SnapshotError(
      'Corrupt',
      `${path} is neither a SQLite database nor an etcd snapshot; refusing to restore it`,
    );
  const bump = opts.bumpRevision ?? DEFAULT_BUMP_REVISION;
  if (!Number.isSafeInteger(bump) || bump < 0)
    throw new SnapshotError('Invalid', `bump revision must be a whole number >= 0, got ${bump}`);
  const aside = join(opts.dataDir, 'db', `old-${Math.floor((opts.clock ?? realClock).now() / 1000)}`);

  if (datastore === 'sqlite') {
    const dbPath = sqlitePath(opts.dataDir);
    const candidate = `${dbPath}.restoring`;
    // Checked on a private copy before asking about the server: a bad snapshot is refused
    // with its own reason whatever else is the case.
    const info = prepareSqliteRestore(path, candidate, bump);
    try {
      await refuseWhileRunning(opts.dataDir);
      if (sqliteFileLocked(dbPath))
        throw new SnapshotError(
          'ServerRunning',
          `${dbPath} is locked by a running k8ts server; stop it before restoring in place, or restore into a new --data-dir`,
        );
    } catch (err) {
      rmSync(candidate, { force: true });
      throw err;
    }
    prepareDataDir(opts.dataDir);
    let moved = false;
    for (const side of ['', '-wal', '-shm']) {
      if (!existsSync(`${dbPath}${side}`)) continue;
      mkdirSync(aside, { recursive: true, mode: 0o700 });
      renameSync(`${dbPath}${side}`, join(aside, `${basename(dbPath)}${side}`));
      moved = true;
    }
    renameSync(candidate, dbPath);
    const files = metadata ? restoreDataDirFiles(opts.dataDir, metadata.files, aside) : [];
    return {
      path,
      datastore,
      revision: info.revision,
      restoredRevision: info.restoredRevision,
      ...(moved || (files.length > 0 && existsSync(aside)) ? { asideDir: aside } : {}),
      files,
      ...(metadata ? { metadata } : {}),
    };
  }

  await checkEtcdSnapshot(path);
  if (!opts.etcd)
    throw new SnapshotError(
      'Invalid',
      `${path} is an etcd snapshot: give --etcd-data-dir (a new etcd member data dir), or run 'ETCDCTL_API=3 etcdctl snapshot restore ${path} --data-dir DIR'`,
    );
  await refuseWhileRunning(opts.dataDir);
  await restoreEtcdSnapshot(path, opts.etcd);
  prepareDataDir(opts.dataDir);
  const files = metadata ? restoreDataDirFiles(opts.dataDir, metadata.files, aside) : [];
  const revision = metadata?.revision ?? 0;
  return {
    path,
    datastore,
    revision,
    restoredRevision: revision,
    ...(existsSync(aside) ? { asideDir: aside } : {}),
    files,
    ...(metadata ? { metadata } : {}),
  };
}

/**
 * The snapshot file `ref` names: a path (it has a '/', or exists as given), else a name in
 * `snapshotDir`.
 * @throws SnapshotError NotFound.
 */
export function resolveSnapshot(ref: string, snapshotDir: string): string {
  if (ref.includes('/') || existsSync(ref)) {
    if (!existsSync(ref)) throw new SnapshotError('NotFound', `no snapshot file ${ref}`);
    return ref;
  }
  const path = join(snapshotDir, ref);
  if (!existsSync(path))
    throw new SnapshotError('NotFound', `no snapshot ${ref} in ${snapshotDir} (see k8ts snapshot list)`);
  return path;
}

async function refuseWhileRunning(dataDir: string): Promise<void> {
  const socket = snapshotSocketPath(dataDir);
  if (await serverAnswers(socket))
    throw new SnapshotError(
      'ServerRunning',
      `a k8ts server is running on ${dataDir} (it answers on ${socket}); stop it before restoring in place, or restore into a new --data-dir`,
    );
}

function prepareDataDir(dataDir: string): void {
  mkdirSync(join(dataDir, 'db'), { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  chmodSync(dirname(sqlitePath(dataDir)), 0o700);
}
