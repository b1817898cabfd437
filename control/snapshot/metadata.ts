/**
 * What a snapshot is on disk, and the snapshot directory's bookkeeping (list, delete,
 * prune), in the manner of k3s's `etcd-snapshot`:
 *
 *   DATA_DIR/snapshots/                       (0700; --snapshot-dir)
 *     <name>-<node>-<unix seconds>            the datastore's own snapshot (0600): a SQLite
 *                                             database, or etcd's snapshot db (bbolt + its
 *                                             sha256 trailer), usable with sqlite3 / etcdctl
 *     <name>-<node>-<unix seconds>.json       the sidecar (0600): SnapshotMetadata below
 *     *.partial                               a save under way (renamed when complete)
 *
 * `<name>` is `on-demand` for `k8ts snapshot save` (or its `--name`) and `scheduled` for
 * the server's schedule; `<node>` is the server's node name. The sidecar carries the
 * snapshot file's size and sha256 (checked before any restore), the datastore, its
 * revision, the k8ts version, and the server's credentials (DATA_DIR/tls, node-token:
 * data-dir-files.ts), without which a restored server would be a new cluster to its
 * agents. A snapshot without its sidecar (copied alone) can still be restored: the file
 * is then checked by its own means only (SQLite's integrity_check, etcd's trailer).
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  createReadStream,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
} from 'node:fs';
import { open, rename, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { DataDirFile } from './data-dir-files.js';
import { SnapshotError } from './errors.js';

/** The datastores a snapshot can be of. */
export type SnapshotDatastore = 'sqlite' | 'etcd';

/** The sidecar's layout; a newer one is refused rather than misread. */
export const METADATA_VERSION = 1;

/** The base name of `k8ts snapshot save` without `--name` (k3s's). */
export const ON_DEMAND_NAME = 'on-demand';
/** The base name of the server's scheduled snapshots. */
export const SCHEDULED_NAME = 'scheduled';

/** The sidecar `<snapshot>.json`. */
export interface SnapshotMetadata {
  metadataVersion: typeof METADATA_VERSION;
  /** The snapshot's file name, `<name>-<node>-<unix seconds>`. */
  name: string;
  datastore: SnapshotDatastore;
  /** The node (server) that took it. */
  nodeName: string;
  /** When it was taken, RFC 3339. */
  createdAt: string;
  /**
   * The store's revision in the snapshot (sqlite: the newest row, or the compact revision
   * if higher; etcd: `etcdctl snapshot status`'s, else the revision etcd reported just
   * before the stream began, a lower bound).
   */
  revision: number;
  /** The snapshot file's size in bytes. */
  size: number;
  /** The snapshot file's SHA-256, lowercase hex. */
  sha256: string;
  /** The k8ts version that wrote it. */
  k8tsVersion: string;
  /** DATA_DIR-relative path → the file (DATA_DIR/tls/*, node-token). */
  files: Record<string, DataDirFile>;
}

/** One row of `k8ts snapshot list`. */
export interface SnapshotInfo {
  name: string;
  path: string;
  /** Bytes of the snapshot file (without the sidecar). */
  size: number;
  /** From the sidecar, else the name's timestamp, else the file's mtime. */
  createdAt: Date;
  /** From the sidecar, else sniffed from the file's first page; 'unknown' when neither says. */
  datastore: SnapshotDatastore | 'unknown';
  /** The sidecar, when there is one that parses. */
  metadata?: SnapshotMetadata;
}

/** What `--name` may be: letters, digits, '.', '_' and '-', starting with a letter or digit. */
const BASE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/**
 * Checks a snapshot base name (`--name`).
 * @throws SnapshotError Invalid when it has other characters (a '/', spaces) or is empty.
 */
export function checkBaseName(name: string): string {
  if (!BASE_NAME.test(name))
    throw new SnapshotError(
      'Invalid',
      `snapshot name ${JSON.stringify(name)} must be letters, digits, '.', '_' and '-' (at most 100)`,
    );
  return name;
}

/** `<base>-<node>-<unix seconds>`, k3s's snapshot file name. */
export function snapshotFileName(base: string, nodeName: string, at: Date): string {
  return `${base}-${nodeName}-${Math.floor(at.getTime() / 1000)}`;
}

/** The sidecar's path for a snapshot file. */
export function metadataPath(snapshotPath: string): string {
  return `${snapshotPath}.json`;
}

/**
 * The sidecar of `snapshotPath`, undefined when there is none.
 * @throws SnapshotError Corrupt when it exists but is not a sidecar this k8ts reads.
 */
export function readMetadata(snapshotPath: string): SnapshotMetadata | undefined {
  const path = metadataPath(snapshotPath);
  if (!existsSync(path)) return undefined;
  let m: Partial<SnapshotMetadata>;
  try {
    m = JSON.parse(readFileSync(path, 'utf8')) as Partial<SnapshotMetadata>;
  } catch (err) {
    throw new SnapshotError('Corrupt', `snapshot metadata ${path} is not JSON: ${(err as Error).message}`);
  }
  if (m.metadataVersion !== METADATA_VERSION)
    throw new SnapshotError(
      'Corrupt',
      `snapshot metadata ${path} has version ${String(m.metadataVersion)}; this k8ts reads version ${METADATA_VERSION}`,
    );
  if (
    (m.datastore !== 'sqlite' && m.datastore !== 'etcd') ||
    typeof m.size !== 'number' ||
    typeof m.sha256 !== 'string' ||
    typeof m.revision !== 'number' ||
    typeof m.files !== 'object' ||
    m.files === null
  )
    throw new SnapshotError(
      'Corrupt',
      `snapshot metadata ${path} lacks datastore, size, sha256, revision or files`,
    );
  return m as SnapshotMetadata;
}

/** Writes the sidecar (0600) through a temporary file, so a reader never sees half of it. */
export async function writeMetadata(snapshotPath: string, m: SnapshotMetadata): Promise<void> {
  const path = metadataPath(snapshotPath);
  await writeFile(`${path}.partial`, `${JSON.stringify(m, null, 2)}\n`, { mode: 0o600 });
  await fsyncFile(`${path}.partial`);
  await rename(`${path}.partial`, path);
}

/** The SHA-256 (hex) and size of a file, read as a stream (the event loop is not held). */
export async function fileDigest(path: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), size };
}

/** fsyncs a file (a snapshot is durable before it is renamed into place). */
export async function fsyncFile(path: string): Promise<void> {
  const fh = await open(path, 'r+');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Checks a snapshot file against its sidecar: size first (a shorter file is truncated),
 * then SHA-256.
 * @throws SnapshotError Truncated, Corrupt — each naming the file and both values.
 */
export async function checkAgainstMetadata(path: string, m: SnapshotMetadata): Promise<void> {
  const size = statSync(path).size;
  if (size !== m.size)
    throw new SnapshotError(
      size < m.size ? 'Truncated' : 'Corrupt',
      `snapshot ${path} is ${size} bytes but its metadata says ${m.size}: it is ${size < m.size ? 'truncated' : 'not the file that was saved'}; refusing to restore it`,
    );
  const { sha256 } = await fileDigest(path);
  if (sha256 !== m.sha256)
    throw new SnapshotError(
      'Corrupt',
      `snapshot ${path} has sha256 ${sha256} but its metadata says ${m.sha256}: it is corrupt; refusing to restore it`,
    );
}

/** The datastore a file's first bytes say it is of: SQLite's header, or a bbolt meta page. */
export function sniffDatastore(path: string): SnapshotDatastore | 'unknown' {
  const head = Buffer.alloc(32);
  let read: number;
  try {
    const fd = openSync(path, 'r');
    try {
      read = readSync(fd, head, 0, head.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return 'unknown';
  }
  if (read >= 16 && head.subarray(0, 16).toString('latin1') === 'SQLite format 3\0') return 'sqlite';
  // bbolt's page header is 16 bytes, then the meta page's magic 0xED0CDAED (little-endian).
  if (read >= 20 && head.readUInt32LE(16) === 0xed0cdaed) return 'etcd';
  return 'unknown';
}

/**
 * The snapshots in `dir`, newest first (a missing dir has none). Sidecars, `.partial`
 * files and anything that is not a regular file are not snapshots.
 */
export function listSnapshots(dir: string): SnapshotInfo[] {
  if (!existsSync(dir)) return [];
  const out: SnapshotInfo[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isFile() || entry.name.endsWith('.json') || entry.name.endsWith('.partial')) continue;
    const path = join(dir, entry.name);
    let metadata: SnapshotMetadata | undefined;
    try {
      metadata = readMetadata(path);
    } catch {
      metadata = undefined;
    }
    const stat = statSync(path);
    const stamp = /-(\d{9,11})$/.exec(entry.name);
    const createdAt = metadata
      ? new Date(metadata.createdAt)
      : stamp
        ? new Date(Number(stamp[1]) * 1000)
        : stat.mtime;
    out.push({
      name: entry.name,
      path,
      size: stat.size,
      createdAt,
      datastore: metadata?.datastore ?? sniffDatastore(path),
      ...(metadata ? { metadata } : {}),
    });
  }
  return out.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.name.localeCompare(a.name));
}

/**
 * Deletes the snapshot `name` (a file name as `list` shows it) and its sidecar from `dir`.
 * @throws SnapshotError Invalid for a name with a path in it; NotFound when there is no such snapshot.
 */
export function deleteSnapshot(dir: string, name: string): void {
  if (name !== basename(name) || name === '' || name === '.' || name === '..')
    throw new SnapshotError(
      'Invalid',
      `snapshot name ${JSON.stringify(name)} must be a file name from 'k8ts snapshot list'`,
    );
  const path = join(dir, name);
  if (!existsSync(path) || name.endsWith('.json'))
    throw new SnapshotError('NotFound', `no snapshot ${name} in ${dir}`);
  rmSync(metadataPath(path), { force: true });
  rmSync(path);
}

/**
 * Deletes all but the `retention` newest snapshots whose name is `<base>-…` (k3s's prune:
 * only snapshots of that base name count, so on-demand ones are never pruned by the
 * schedule's retention and the other way round).
 * @returns the names deleted, oldest last.
 * @throws SnapshotError Invalid when retention is not a positive whole number.
 */
export function pruneSnapshots(dir: string, base: string, retention: number): string[] {
  if (!Number.isSafeInteger(retention) || retention < 1)
    throw new SnapshotError('Invalid', `retention must be a whole number >= 1, got ${retention}`);
  const matching = listSnapshots(dir).filter((s) => s.name.startsWith(`${base}-`));
  const deleted: string[] = [];
  for (const s of matching.slice(retention)) {
    deleteSnapshot(dir, s.name);
    deleted.push(s.name);
  }
  return deleted;
}
