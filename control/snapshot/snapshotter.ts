/**
 * Taking a snapshot: the datastore's copy (sqlite.ts, etcd.ts) into
 * `<snapshot dir>/<name>-<node>-<unix seconds>.partial`, then its size and SHA-256, the
 * sidecar (metadata.ts) with the data dir's credentials (data-dir-files.ts), and last the
 * rename that makes it a snapshot: a save that fails or is killed midway leaves a
 * `.partial` (or an orphan sidecar) that `list` does not show, never a snapshot that is
 * not whole. Saves run one at a time.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { realClock, type Clock } from '../../api/clock.js';
import type { SqliteStore } from '../storage/sqlite.js';
import { collectDataDirFiles } from './data-dir-files.js';
import { saveEtcdSnapshot } from './etcd.js';
import { SnapshotError } from './errors.js';
import {
  METADATA_VERSION,
  ON_DEMAND_NAME,
  checkBaseName,
  fileDigest,
  pruneSnapshots,
  snapshotFileName,
  writeMetadata,
  type SnapshotMetadata,
} from './metadata.js';
import { DEFAULT_PAGES_PER_STEP, backupSqliteStore } from './sqlite.js';

/** What is snapshotted: the open sqlite store of this process, or etcd's members. */
export type SnapshotSource =
  { datastore: 'sqlite'; store: SqliteStore } | { datastore: 'etcd'; endpoints: readonly string[] };

/** A Snapshotter's configuration. */
export interface SnapshotterConfig {
  source: SnapshotSource;
  /** The server's data dir (its tls/ and node-token go into the sidecar). */
  dataDir: string;
  /** Where snapshots go (created 0700); default `<dataDir>/snapshots`. */
  snapshotDir?: string;
  /** The node name in snapshot names (the server's --node-name, or the hostname). */
  nodeName: string;
  /** The time snapshots are named and dated by. Default realClock. */
  clock?: Clock;
  /** sqlite only: pages per backup step (default 256 of 4 KiB). */
  pagesPerStep?: number;
}

/** The default snapshot dir of a data dir. */
export function defaultSnapshotDir(dataDir: string): string {
  return join(dataDir, 'snapshots');
}

/** Saves snapshots of one datastore into one directory; see the top of this file. */
export class Snapshotter {
  readonly snapshotDir: string;
  private readonly clock: Clock;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly cfg: SnapshotterConfig) {
    if (cfg.nodeName === '') throw new SnapshotError('Invalid', 'snapshotter: nodeName must not be empty');
    this.snapshotDir = cfg.snapshotDir ?? defaultSnapshotDir(cfg.dataDir);
    this.clock = cfg.clock ?? realClock;
  }

  /**
   * Takes one snapshot named `<base>-<node>-<unix seconds>`, after any save under way.
   * @returns its metadata (the sidecar as written).
   * @throws SnapshotError Invalid (bad base name), Exists (one of that name this second),
   *   Failed (the datastore's copy failed), Corrupt (etcd sent a snapshot that does not check out).
   */
  save(base: string = ON_DEMAND_NAME): Promise<SnapshotMetadata> {
    const run = this.queue.then(() => this.saveNow(base));
    this.queue = run.catch(() => {});
    return run;
  }

  /**
   * Deletes all but the `retention` newest snapshots named `<base>-…` (metadata.ts
   * pruneSnapshots), after any save under way.
   */
  prune(base: string, retention: number): Promise<string[]> {
    const run = this.queue.then(() => pruneSnapshots(this.snapshotDir, base, retention));
    this.queue = run.catch(() => {});
    return run;
  }

  /** Resolves once the saves queued so far have ended (before the store is closed). */
  async idle(): Promise<void> {
    await this.queue;
  }

  private async saveNow(base: string): Promise<SnapshotMetadata> {
    checkBaseName(base);
    const { source, dataDir, nodeName } = this.cfg;
    mkdirSync(this.snapshotDir, { recursive: true, mode: 0o700 });
    chmodSync(this.snapshotDir, 0o700);
    const now = new Date(this.clock.now());
    const name = snapshotFileName(base, nodeName, now);
    const path = join(this.snapshotDir, name);
    if (existsSync(path))
      throw new SnapshotError(
        'Exists',
        `snapshot ${name} exists already (one per name and second); try again`,
      );
    const partial = `${path}.partial`;
    rmSync(partial, { force: true });
    try {
      const revision =
        source.datastore === 'sqlite'
          ? (await backupSqliteStore(source.store, partial, this.cfg.pagesPerStep ?? DEFAULT_PAGES_PER_STEP))
              .revision
          : (await saveEtcdSnapshot(source.endpoints, partial)).revision;
      const { sha256, size } = await fileDigest(partial);
      const metadata: SnapshotMetadata = {
        metadataVersion: METADATA_VERSION,
        name,
        datastore: source.datastore,
        nodeName,
        createdAt: now.toISOString(),
        revision,
        size,
        sha256,
        k8tsVersion: k8tsVersion(),
        files: collectDataDirFiles(dataDir),
      };
      await writeMetadata(path, metadata);
      await rename(partial, path);
      return metadata;
    } catch (err) {
      rmSync(partial, { force: true });
      if (err instanceof SnapshotError) throw err;
      throw new SnapshotError('Failed', `snapshot ${name}: ${(err as Error).message}`);
    }
  }
}

/** This k8ts's version (package.json's), for the sidecar. */
export function k8tsVersion(): string {
  for (const rel of ['../../../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'k8ts' && pkg.version) return pkg.version;
    } catch {
      // try the next location (dist/ or the source tree)
    }
  }
  return 'unknown';
}
