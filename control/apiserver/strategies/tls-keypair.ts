/**
 * The check of a `kubernetes.io/tls` Secret's pair, as the Secret strategy's
 * warningsForSecret makes it with Go's `tls.X509KeyPair(data[tls.crt], data[tls.key])`: the
 * error text of that call, which kube-apiserver sends as a warning on create and update.
 *
 * The PEM scan and its messages are crypto/tls's; the DER parsing is Node's (X509Certificate,
 * createPrivateKey), so a certificate Node cannot parse is reported with x509's generic
 * `x509: malformed certificate`, where Go might name the exact defect.
 */
import { createPrivateKey, createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';

interface PemBlock {
  type: string;
  der: Buffer;
}

/** The well-formed PEM blocks of `text`, in order (encoding/pem's Decode skips what is not one). */
function pemBlocks(text: string): PemBlock[] {
  const out: PemBlock[] = [];
  const re = /-----BEGIN ([^-\r\n]*)-----\r?\n([\s\S]*?)-----END \1-----/g;
  for (const m of text.matchAll(re)) {
    // Headers (`Proc-Type: ...`) end at a blank line; the rest is base64.
    const body = m[2]!.includes(':')
      ? m[2]!
          .split(/\r?\n\r?\n/)
          .slice(1)
          .join('\n')
      : m[2]!;
    const b64 = body.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) continue;
    out.push({ type: m[1]!, der: Buffer.from(b64, 'base64') });
  }
  return out;
}

/** Go's `%v` of a []string. */
function goList(items: readonly string[]): string {
  return `[${items.join(' ')}]`;
}

/** crypto/tls parsePrivateKey: PKCS #1, then PKCS #8, then SEC 1 (EC), whatever the PEM type says. */
function parsePrivateKey(der: Buffer): KeyObject | undefined {
  for (const type of ['pkcs1', 'pkcs8', 'sec1'] as const) {
    try {
      return createPrivateKey({ key: der, format: 'der', type });
    } catch {
      // Try the next encoding.
    }
  }
  return undefined;
}

const SUPPORTED_KEYS = new Set(['rsa', 'ec', 'ed25519']);

/**
 * The error Go's tls.X509KeyPair returns for this certificate and key (PEM text), or
 * undefined when they are a matching pair.
 */
export function x509KeyPairError(certPEM: string, keyPEM: string): string | undefined {
  const certBlocks = pemBlocks(certPEM);
  const certs = certBlocks.filter((b) => b.type === 'CERTIFICATE');
  if (certs.length === 0) {
    const skipped = certBlocks.map((b) => b.type);
    if (skipped.length === 0) return 'tls: failed to find any PEM data in certificate input';
    if (skipped.length === 1 && skipped[0]!.endsWith('PRIVATE KEY'))
      return 'tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM inputs may have been switched';
    return `tls: failed to find "CERTIFICATE" PEM block in certificate input after skipping PEM blocks of the following types: ${goList(skipped)}`;
  }
  const skipped: string[] = [];
  let keyBlock: PemBlock | undefined;
  for (const b of pemBlocks(keyPEM)) {
    if (b.type === 'PRIVATE KEY' || b.type.endsWith(' PRIVATE KEY')) {
      keyBlock = b;
      break;
    }
    skipped.push(b.type);
  }
  if (!keyBlock) {
    if (skipped.length === 0) return 'tls: failed to find any PEM data in key input';
    if (skipped.length === 1 && skipped[0] === 'CERTIFICATE')
      return 'tls: found a certificate rather than a key in the PEM for the private key';
    return `tls: failed to find PEM block with type ending in "PRIVATE KEY" in key input after skipping PEM blocks of the following types: ${goList(skipped)}`;
  }
  let publicKey: KeyObject;
  try {
    publicKey = new X509Certificate(certs[0]!.der).publicKey;
  } catch {
    return 'x509: malformed certificate';
  }
  const privateKey = parsePrivateKey(keyBlock.der);
  if (!privateKey) return 'tls: failed to parse private key';
  if (!SUPPORTED_KEYS.has(publicKey.asymmetricKeyType ?? '')) return 'tls: unknown public key algorithm';
  if (publicKey.asymmetricKeyType !== privateKey.asymmetricKeyType)
    return 'tls: private key type does not match public key type';
  const fromPrivate = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  if (!fromPrivate.equals(publicKey.export({ type: 'spki', format: 'der' })))
    return 'tls: private key does not match public key';
  return undefined;
}
