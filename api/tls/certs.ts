/**
 * X.509 certificates for the cluster's PKI, built with @peculiar/x509 over Node's
 * WebCrypto (no hand-written ASN.1): ECDSA P-256 keys, a self-signed CA, leaf certificates
 * for serving (SANs) and for clients (CN = user name, O = groups, as Kubernetes' x509
 * authenticator reads them), PKCS#10 certificate requests, and the CA hash that join
 * tokens carry.
 *
 * PEM text in and out everywhere: private keys are PKCS#8 (`-----BEGIN PRIVATE KEY-----`),
 * which node:tls and kubectl read.
 */
import { createHash, randomBytes, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

/** ECDSA over P-256 with SHA-256: what kubeadm and k3s use for their own certificates. */
const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

const DAY_MS = 24 * 3600 * 1000;
/** Validity of the CA (10 years, as kubeadm's) and of leaf certificates (1 year, as kubeadm's). */
export const CA_VALIDITY_DAYS = 3650;
export const LEAF_VALIDITY_DAYS = 365;

/** A certificate and its private key, PEM. */
export interface KeyPair {
  cert: string;
  key: string;
}

/** A Subject Alternative Name: a DNS name or an IP address. */
export type SubjectAltName = { type: 'dns'; value: string } | { type: 'ip'; value: string };

async function generateKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
}

/** A PKCS#8 PEM private key from a WebCrypto key. */
async function keyToPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

/** A WebCrypto signing key from PKCS#8 PEM (as keyToPem writes). */
async function pemToKey(pem: string): Promise<CryptoKey> {
  const der = x509.PemConverter.decode(pem)[0];
  if (!der) throw new Error('no PEM block in private key');
  return webcrypto.subtle.importKey('pkcs8', der, ALGORITHM, false, ['sign']);
}

/** A random positive serial number (16 bytes, top bit clear), hex. */
function serialNumber(): string {
  const b = randomBytes(16);
  b[0] = b[0]! & 0x7f;
  return b.toString('hex');
}

function validity(days: number, now: Date): { notBefore: Date; notAfter: Date } {
  // A minute of slack for clocks slightly behind this one.
  return { notBefore: new Date(now.getTime() - 60_000), notAfter: new Date(now.getTime() + days * DAY_MS) };
}

/**
 * A new self-signed CA (`CN=<commonName>`, basicConstraints CA:true, keyCertSign).
 * @returns PEM certificate and PKCS#8 key.
 */
export async function createCA(commonName: string, now = new Date()): Promise<KeyPair> {
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: [{ CN: [commonName] }],
    ...validity(CA_VALIDITY_DAYS, now),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert: cert.toString('pem'), key: await keyToPem(keys.privateKey) };
}

/** What a leaf certificate is for: a TLS server (with SANs) or a TLS client (user + groups). */
export type LeafProfile =
  | { usage: 'server'; commonName: string; sans: readonly SubjectAltName[] }
  | { usage: 'client'; user: string; groups: readonly string[] };

/**
 * Signs a leaf certificate with `ca` for `publicKey` (a new key pair is made when
 * omitted; `key` is then returned too). Client certificates carry the user as CN and
 * each group as an O, the form Kubernetes' x509 authenticator reads.
 */
export async function signLeaf(
  ca: KeyPair,
  profile: LeafProfile,
  opts: { publicKey?: CryptoKey; now?: Date; days?: number } = {},
): Promise<{ cert: string; key?: string }> {
  const caCert = new x509.X509Certificate(ca.cert);
  const caKey = await pemToKey(ca.key);
  const keys = opts.publicKey ? undefined : await generateKeys();
  const publicKey = opts.publicKey ?? keys!.publicKey;
  const subject: x509.JsonName =
    profile.usage === 'server'
      ? [{ CN: [profile.commonName] }]
      : [...profile.groups.map((g) => ({ O: [g] })), { CN: [profile.user] }];
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(
      x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
      true,
    ),
    new x509.ExtendedKeyUsageExtension(
      [profile.usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth],
      false,
    ),
    await x509.AuthorityKeyIdentifierExtension.create(caCert, false),
  ];
  if (profile.usage === 'server') {
    extensions.push(
      new x509.SubjectAlternativeNameExtension(
        profile.sans.map((s) => ({ ...s })),
        false,
      ),
    );
  }
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject,
    issuer: caCert.subject,
    ...validity(opts.days ?? LEAF_VALIDITY_DAYS, opts.now ?? new Date()),
    signingAlgorithm: ALGORITHM,
    publicKey,
    signingKey: caKey,
    extensions,
  });
  return { cert: cert.toString('pem'), ...(keys ? { key: await keyToPem(keys.privateKey) } : {}) };
}

/**
 * A new key pair and a PKCS#10 certificate request for `CN=<user>, O=<groups>` signed
 * with it (what a kubelet sends in its bootstrap CertificateSigningRequest).
 */
export async function createCertificateRequest(
  user: string,
  groups: readonly string[],
): Promise<{ csr: string; key: string }> {
  const keys = await generateKeys();
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: [...groups.map((g) => ({ O: [g] })), { CN: [user] }],
    keys,
    signingAlgorithm: ALGORITHM,
  });
  return { csr: csr.toString('pem'), key: await keyToPem(keys.privateKey) };
}

/** A parsed, signature-checked certificate request: its subject and public key. */
export interface CertificateRequest {
  commonName: string;
  organizations: string[];
  publicKey: CryptoKey;
}

/**
 * Parses a PEM PKCS#10 request and checks its self-signature (proof that the sender holds
 * the key).
 * @throws Error when the text is no request, the signature is wrong, or the key is not P-256.
 */
export async function parseCertificateRequest(pem: string): Promise<CertificateRequest> {
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(pem);
  } catch (err) {
    throw new Error(`not a PEM certificate request: ${(err as Error).message}`);
  }
  if (!(await csr.verify())) throw new Error('the certificate request is not signed by its own key');
  const publicKey = (await csr.publicKey.export(ALGORITHM, ['verify'])) as unknown as CryptoKey;
  const name = csr.subjectName.toJSON();
  const values = (key: string) => name.flatMap((rdn) => rdn[key] ?? []);
  return { commonName: values('CN')[0] ?? '', organizations: values('O'), publicKey };
}

/** The SANs of a PEM certificate. */
export function subjectAltNames(pem: string): SubjectAltName[] {
  const cert = new x509.X509Certificate(pem);
  const ext = cert.getExtension(x509.SubjectAlternativeNameExtension);
  if (!ext) return [];
  return ext.names
    .toJSON()
    .filter((n): n is SubjectAltName => n.type === 'dns' || n.type === 'ip')
    .map((n) => ({ type: n.type, value: n.value }));
}

/** The subject of a PEM certificate: CN and O values. */
export function certificateSubject(pem: string): { commonName: string; organizations: string[] } {
  const name = new x509.X509Certificate(pem).subjectName.toJSON();
  const values = (key: string) => name.flatMap((rdn) => rdn[key] ?? []);
  return { commonName: values('CN')[0] ?? '', organizations: values('O') };
}

/** The validity end of a PEM certificate. */
export function notAfter(pem: string): Date {
  return new x509.X509Certificate(pem).notAfter;
}

/** The anyExtendedKeyUsage OID (RFC 5280 4.2.1.12). */
const ANY_EXTENDED_KEY_USAGE = '2.5.29.37.0';

/**
 * Whether a PEM certificate may authenticate a TLS client: no extended key usage extension
 * (any use), or one listing clientAuth or anyExtendedKeyUsage, as OpenSSL's check of a
 * client's certificate (purpose sslclient) reads it.
 */
export function allowsClientAuth(pem: string): boolean {
  const ext = new x509.X509Certificate(pem).getExtension(x509.ExtendedKeyUsageExtension);
  if (!ext) return true;
  return ext.usages.some((u) => u === x509.ExtendedKeyUsage.clientAuth || u === ANY_EXTENDED_KEY_USAGE);
}

/**
 * Whether `pem` was signed by the CA `caPem` (signature and issuer name; not expiry).
 */
export async function isSignedBy(pem: string, caPem: string): Promise<boolean> {
  const cert = new x509.X509Certificate(pem);
  const ca = new x509.X509Certificate(caPem);
  if (cert.issuer !== ca.subject) return false;
  return cert.verify({ publicKey: ca.publicKey, signatureOnly: true });
}

/**
 * The CA hash of join tokens: hex SHA-256 of the CA certificate's DER bytes (kubeadm's
 * `--discovery-token-ca-cert-hash` hashes the public key; k3s's `K10<hash>` the CA
 * bundle; the DER of the one CA certificate is the same idea, independent of PEM layout).
 */
export function caHash(caPem: string): string {
  const der = x509.PemConverter.decode(caPem)[0];
  if (!der) throw new Error('no PEM block in CA certificate');
  return createHash('sha256').update(Buffer.from(der)).digest('hex');
}
