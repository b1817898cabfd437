/**
 * One service account signing key per cluster, not per control process: every API server
 * of a cluster must accept the tokens any of them issued (in-cluster clients reach them in
 * turn through the `kubernetes` Service), as kube-apiserver requires the same
 * --service-account-key-file everywhere and k3s shares `server/tls/service.key` through its
 * datastore. The first control process to start puts its key (DATA_DIR/tls/service-account.key,
 * control/pki.ts) in the store under SERVICE_ACCOUNT_KEY_STORE_KEY; the others adopt that one
 * and write it over their own file. The store already holds every Secret, so it holds this
 * key at the same trust.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { firstValue } from './storage/first-value.js';
import type { Store } from './storage/store.js';

/** Where the cluster's key is kept: beside the allocators' `/registry/ranges/`, under no API resource's prefix. */
export const SERVICE_ACCOUNT_KEY_STORE_KEY = '/registry/k8ts/service-account-key';

/**
 * The cluster's service account signing key (PEM): the store's, else `localKey` put there
 * (create-if-absent, so two processes starting at once agree). When the store's differs
 * from `localKey`, it replaces the file `tlsDir/service-account.key` (0600).
 * @throws StorageError when the store cannot be read or written; Error when its value is not a key.
 */
export async function clusterServiceAccountKey(
  store: Store,
  localKey: string,
  tlsDir: string,
): Promise<string> {
  const { key } = await firstValue(store, SERVICE_ACCOUNT_KEY_STORE_KEY, { key: localKey }, (stored) => {
    const key = (stored as { key?: unknown }).key;
    if (typeof key !== 'string' || !key.includes('PRIVATE KEY'))
      throw new Error(`${SERVICE_ACCOUNT_KEY_STORE_KEY} in the store is not a private key`);
    return { key };
  });
  if (key !== localKey) {
    const path = join(tlsDir, 'service-account.key');
    writeFileSync(path, key, { mode: 0o600 });
    chmodSync(path, 0o600);
  }
  return key;
}
