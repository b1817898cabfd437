/**
 * Bootstrap tokens (kubeadm's, stored as Secrets `bootstrap-token-<id>` of type
 * `bootstrap.kubernetes.io/token` in kube-system) and the join token that carries one
 * together with the hash of the cluster CA, in the manner of k3s: `K10<sha256 hex of the
 * CA certificate>::<id>.<secret>`. The CA hash lets an agent check the CA it downloads
 * before trusting the server; the `<id>.<secret>` part authenticates it as
 * `system:bootstrap:<id>` (groups `system:bootstrappers` + the token's extra groups) for the
 * one thing bootstrappers may do: obtain a node credential.
 *
 * The format is shared: `k8ts server` and `k8ts token` make tokens and their Secrets
 * (control/main.ts, control/tokens.ts), the agent parses the join token
 * (agent/kubelet/bootstrap.ts), the API server checks them
 * (control/apiserver/auth/bootstrap-token.ts). Upstream keeps the same split: the format
 * in k8s.io/cluster-bootstrap (token/api, token/util, secret), the authenticator in
 * plugin/pkg/auth/authenticator/token/bootstrap.
 */
import { randomInt } from 'node:crypto';
import type { KubeObject } from '../object.js';

/** `<id>.<secret>`: 6 and 16 characters of [a-z0-9] (kubeadm's BootstrapTokenPattern). */
export const BOOTSTRAP_TOKEN_PATTERN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
export const BOOTSTRAP_TOKEN_SECRET_TYPE = 'bootstrap.kubernetes.io/token';
export const BOOTSTRAP_TOKEN_SECRET_PREFIX = 'bootstrap-token-';
/** The group every k8ts join token adds (kubeadm's `system:bootstrappers:kubeadm:default-node-token`). */
export const DEFAULT_NODE_TOKEN_GROUP = 'system:bootstrappers:k8ts:default-node-token';
/** The prefix of join tokens: k3s's `K10` (a versioned, CA-pinning token). */
export const JOIN_TOKEN_PREFIX = 'K10';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

function randomString(n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

/** A new random bootstrap token `<id>.<secret>`. */
export function generateBootstrapToken(): { id: string; secret: string; token: string } {
  const id = randomString(6);
  const secret = randomString(16);
  return { id, secret, token: `${id}.${secret}` };
}

/** A join token: `K10<caHash>::<id>.<secret>`. */
export function formatJoinToken(caHash: string, token: string): string {
  return `${JOIN_TOKEN_PREFIX}${caHash}::${token}`;
}

/** A parse failure of a join token, with a message for the person who typed it. */
export class JoinTokenError extends Error {
  override readonly name = 'JoinTokenError';
}

/**
 * Parses a join token `K10<64 hex>::<id>.<secret>`.
 * @throws JoinTokenError naming what is wrong (no CA hash, malformed bootstrap token).
 */
export function parseJoinToken(text: string): { caHash: string; token: string; id: string; secret: string } {
  const m = /^K10([0-9a-f]{64})::(.*)$/.exec(text.trim());
  if (!m)
    throw new JoinTokenError(
      'the token must be a join token K10<CA hash>::<id>.<secret> (the server\'s DATA_DIR/node-token, or one from "k8ts token create")',
    );
  const t = BOOTSTRAP_TOKEN_PATTERN.exec(m[2]!);
  if (!t)
    throw new JoinTokenError(
      'the token\'s part after "::" must be <6 characters [a-z0-9]>.<16 characters [a-z0-9]>',
    );
  return { caHash: m[1]!, token: m[2]!, id: t[1]!, secret: t[2]! };
}

/** Options of bootstrapTokenSecret(). */
export interface BootstrapTokenOptions {
  description?: string;
  /** Seconds from `now` until the token expires; undefined = never. */
  ttlSeconds?: number;
  now?: Date;
  /** Extra groups (`auth-extra-groups`); default the k8ts default-node-token group. */
  groups?: readonly string[];
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

/** The kube-system Secret of a bootstrap token, as kubeadm writes it. */
export function bootstrapTokenSecret(
  id: string,
  secret: string,
  opts: BootstrapTokenOptions = {},
): KubeObject {
  const data: Record<string, string> = {
    'token-id': b64(id),
    'token-secret': b64(secret),
    'usage-bootstrap-authentication': b64('true'),
    'usage-bootstrap-signing': b64('true'),
    'auth-extra-groups': b64((opts.groups ?? [DEFAULT_NODE_TOKEN_GROUP]).join(',')),
  };
  if (opts.description) data.description = b64(opts.description);
  if (opts.ttlSeconds !== undefined) {
    const exp = new Date((opts.now ?? new Date()).getTime() + opts.ttlSeconds * 1000);
    data.expiration = b64(exp.toISOString().replace(/\.\d{3}Z$/, 'Z'));
  }
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `${BOOTSTRAP_TOKEN_SECRET_PREFIX}${id}`, namespace: 'kube-system' },
    type: BOOTSTRAP_TOKEN_SECRET_TYPE,
    data,
  };
}

/** The decoded string data of a Secret. */
export function secretStrings(secret: KubeObject): Record<string, string> {
  const out: Record<string, string> = {};
  const data = (secret.data ?? {}) as Record<string, unknown>;
  for (const [k, v] of Object.entries(data))
    if (typeof v === 'string') out[k] = Buffer.from(v, 'base64').toString('utf8');
  return out;
}
