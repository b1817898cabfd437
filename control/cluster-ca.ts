/**
 * One cluster CA per cluster, not per control process: a client of one API server (a
 * kubeconfig, a node credential, a join token's CA hash) must be able to verify, and be
 * verified by, every other API server of the cluster, or it cannot fail over to them.
 * kubeadm copies `/etc/kubernetes/pki/ca.{crt,key}` to every control-plane node (its
 * "upload-certs" phase puts them in a Secret); k3s keeps its CAs in the datastore's
 * bootstrap data, which every server reads at start.
 *
 * Here the first control process to start puts its CA (DATA_DIR/tls/server-ca.{crt,key},
 * control/pki.ts) in the store under CLUSTER_CA_STORE_KEY; the others adopt that one: they
 * write it over their own files and sign their serving and admin certificates with it again
 * (ensureControlPKI signs what is missing). The store already holds every Secret and the
 * service account signing key (service-account-key.ts), so it holds this key at the same
 * trust.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { SubjectAltName } from '../api/tls/certs.js';
import { ensureControlPKI, writePair, type ControlPKI } from './pki.js';
import { firstValue } from './storage/first-value.js';
import type { Store } from './storage/store.js';

/** Where the cluster CA is kept: beside the service account key, under no API resource's prefix. */
export const CLUSTER_CA_STORE_KEY = '/registry/k8ts/cluster-ca';

/**
 * The control process's PKI with the cluster's CA: `pki` unchanged when its CA is the
 * store's (or was put there now, create-if-absent, so two processes starting at once
 * agree); otherwise the store's CA replaces `pki.dir`'s `server-ca.crt`/`.key`, and the
 * serving and admin certificates are signed again with it (same `sans`), all files 0600.
 * @throws StorageError when the store cannot be read or written; Error when the stored
 *   value is not a certificate and key.
 */
export async function clusterCA(
  store: Store,
  pki: ControlPKI,
  dataDir: string,
  sans: readonly SubjectAltName[],
): Promise<ControlPKI> {
  const local = { cert: pki.ca.cert, key: pki.ca.key };
  const { cert, key } = await firstValue(store, CLUSTER_CA_STORE_KEY, local, (stored) => {
    const { cert, key } = stored as { cert?: unknown; key?: unknown };
    if (
      typeof cert !== 'string' ||
      !cert.includes('BEGIN CERTIFICATE') ||
      typeof key !== 'string' ||
      !key.includes('PRIVATE KEY')
    )
      throw new Error(`${CLUSTER_CA_STORE_KEY} in the store is not a certificate and private key`);
    return { cert, key };
  });
  if (cert === local.cert && key === local.key) return pki;
  writePair(pki.dir, 'server-ca', { cert, key });
  // Signed by the old CA: ensureControlPKI signs them again with the one just written.
  for (const name of ['serving', 'client-admin'])
    for (const ext of ['crt', 'key']) rmSync(join(pki.dir, `${name}.${ext}`), { force: true });
  return ensureControlPKI(dataDir, sans);
}
