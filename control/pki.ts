/**
 * The control process's certificates, kept in `DATA_DIR/tls/` (directory 0700, every file
 * 0600, as k3s keeps `server/tls`): created at first start, reused afterwards.
 *
 *   server-ca.crt / .key    the cluster CA: signs the serving certificate and every client
 *                           certificate (admin, node credentials, in-process components);
 *                           the cluster's one (in the store) replaces it (cluster-ca.ts)
 *   serving.crt / .key      the API server's certificate; SANs: hostname, the bind address,
 *                           127.0.0.1, localhost, each --tls-san; re-signed (same CA) when
 *                           a SAN is missing or it expires within 30 days
 *   client-admin.crt / .key CN=system:admin, O=system:masters (the admin kubeconfig's user)
 *   service-account.key     RSA 2048 private key (PKCS#8 PEM) signing service account
 *                           tokens (k3s's service.key, kube-apiserver's
 *                           --service-account-signing-key-file); never rotated, since
 *                           rotating it would invalidate every issued token; the
 *                           cluster's one replaces it (service-account-key.ts)
 */
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import {
  createCA,
  notAfter,
  signLeaf,
  subjectAltNames,
  type KeyPair,
  type SubjectAltName,
} from '../api/tls/certs.js';
import { ADMIN_USER, SYSTEM_MASTERS } from '../api/auth/user.js';

const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;

/** The certificates the control process runs with. */
export interface ControlPKI {
  ca: KeyPair;
  serving: KeyPair;
  admin: KeyPair;
  /** PEM of the key that signs service account tokens. */
  serviceAccountKey: string;
  /** The directory they are in. */
  dir: string;
}

function readPair(dir: string, name: string): KeyPair | undefined {
  const certPath = join(dir, `${name}.crt`);
  const keyPath = join(dir, `${name}.key`);
  if (!existsSync(certPath) || !existsSync(keyPath)) return undefined;
  return { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') };
}

/** Writes `DIR/NAME.crt` and `DIR/NAME.key`, each 0600 (also when the file existed). */
export function writePair(dir: string, name: string, pair: KeyPair): void {
  for (const [ext, text] of [
    ['crt', pair.cert],
    ['key', pair.key],
  ] as const) {
    const path = join(dir, `${name}.${ext}`);
    writeFileSync(path, text, { mode: 0o600 });
    chmodSync(path, 0o600); // an existing file keeps its mode on write
  }
}

/**
 * The SANs of the serving certificate for a bind address and extra names/addresses
 * (main.ts passes --tls-san, the advertise address, and the `kubernetes` Service's
 * clusterIP and names from kubernetesservice/services.ts kubernetesServiceSANs).
 */
export function servingSANs(bindAddress: string, extra: readonly string[]): SubjectAltName[] {
  const out: SubjectAltName[] = [];
  const add = (v: string) => {
    if (v === '' || v === '0.0.0.0' || v === '::') return;
    const san: SubjectAltName = isIP(v) ? { type: 'ip', value: v } : { type: 'dns', value: v.toLowerCase() };
    if (!out.some((s) => s.type === san.type && s.value === san.value)) out.push(san);
  };
  for (const v of ['localhost', hostname(), '127.0.0.1', bindAddress, ...extra]) add(v);
  return out;
}

function isExpiring(pem: string, now: Date): boolean {
  return notAfter(pem).getTime() - now.getTime() < RENEW_BEFORE_MS;
}

/**
 * Loads the PKI from `DATA_DIR/tls`, creating what is missing (and re-signing the serving
 * certificate when `sans` are not all in it, or it is expiring).
 * @throws Error when the directory cannot be created or written.
 */
export async function ensureControlPKI(
  dataDir: string,
  sans: readonly SubjectAltName[],
  now = new Date(),
): Promise<ControlPKI> {
  const dir = join(dataDir, 'tls');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  let ca = readPair(dir, 'server-ca');
  let fresh = false;
  if (!ca) {
    ca = await createCA(`k8ts-server-ca@${Math.floor(now.getTime() / 1000)}`, now);
    writePair(dir, 'server-ca', ca);
    fresh = true;
  }
  let serving = fresh ? undefined : readPair(dir, 'serving');
  if (serving) {
    const have = subjectAltNames(serving.cert);
    const missing = sans.some((s) => !have.some((h) => h.type === s.type && h.value === s.value));
    if (missing || isExpiring(serving.cert, now)) serving = undefined;
  }
  if (!serving) {
    const signed = await signLeaf(ca, { usage: 'server', commonName: 'k8ts', sans }, { now });
    serving = { cert: signed.cert, key: signed.key! };
    writePair(dir, 'serving', serving);
  }
  let admin = fresh ? undefined : readPair(dir, 'client-admin');
  if (admin && isExpiring(admin.cert, now)) admin = undefined;
  if (!admin) {
    const signed = await signLeaf(
      ca,
      { usage: 'client', user: ADMIN_USER, groups: [SYSTEM_MASTERS] },
      { now },
    );
    admin = { cert: signed.cert, key: signed.key! };
    writePair(dir, 'client-admin', admin);
  }
  return { ca, serving, admin, serviceAccountKey: ensureServiceAccountKey(dir), dir };
}

/** The service account signing key of `dir`, created (RSA 2048, file 0600) when missing. */
function ensureServiceAccountKey(dir: string): string {
  const path = join(dir, 'service-account.key');
  if (existsSync(path)) return readFileSync(path, 'utf8');
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  writeFileSync(path, privateKey, { mode: 0o600 });
  chmodSync(path, 0o600);
  return privateKey;
}

/** A client certificate for an in-process component (kept in memory only). */
export async function componentCredential(
  ca: KeyPair,
  user: string,
  groups: readonly string[] = [],
): Promise<KeyPair> {
  const signed = await signLeaf(ca, { usage: 'client', user, groups });
  return { cert: signed.cert, key: signed.key! };
}
