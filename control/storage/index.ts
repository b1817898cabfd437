/**
 * Opens the store a control process runs on, from the `--datastore` choice of the CLI
 * contract: `sqlite` (the embedded default, a file in the data dir), `etcd` (a cluster,
 * for several control processes) or `memory` (tests).
 */
import { chmodSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Store } from './store.js';

export type {
  KeyValue,
  ListOptions,
  ListResult,
  Store,
  StoreBackend,
  Watch,
  WatchEvent,
  WatchHandler,
} from './store.js';
export { StorageError, isStorageError } from './errors.js';

export type StoreConfig =
  | { datastore: 'memory' }
  /** The database is `<dataDir>/db/state.db` (the directory 0700, the file 0600). */
  | { datastore: 'sqlite'; dataDir: string }
  /** `endpoints` as `http://host:port`; `namespace` prefixes every key inside etcd. */
  | { datastore: 'etcd'; endpoints: string[]; namespace?: string };

/** The sqlite database file of a data dir. */
export function sqlitePath(dataDir: string): string {
  return join(dataDir, 'db', 'state.db');
}

/**
 * Opens the configured backend.
 * @throws Error naming the flag to fix when the configuration is incomplete;
 *   StorageError Unavailable when the backend cannot be opened or reached.
 */
export async function openStore(cfg: StoreConfig): Promise<Store> {
  switch (cfg.datastore) {
    // Each backend is loaded only when chosen: the etcd client (gRPC) alone costs ~15 MB.
    case 'memory': {
      const { MemoryStore } = await import('./memory.js');
      return new MemoryStore();
    }
    case 'sqlite': {
      const { SqliteStore } = await import('./sqlite.js');
      // DATA_DIR/db is the store's own: owner-only, also when an older k8ts made it 0755.
      const dir = dirname(sqlitePath(cfg.dataDir));
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      chmodSync(dir, 0o700);
      return SqliteStore.open({ path: sqlitePath(cfg.dataDir) });
    }
    case 'etcd': {
      const { EtcdStore } = await import('./etcd.js');
      if (cfg.endpoints.length === 0) throw new Error('--datastore etcd needs --etcd-endpoints URL[,URL...]');
      return EtcdStore.open(
        cfg.namespace === undefined
          ? { endpoints: cfg.endpoints }
          : { endpoints: cfg.endpoints, namespace: cfg.namespace },
      );
    }
  }
}
