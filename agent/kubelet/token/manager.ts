/**
 * The kubelet's ServiceAccount token manager (Kubernetes' pkg/kubelet/token,
 * token_manager.go): bound tokens for projected `serviceAccountToken` volume sources,
 * asked of the API server with a TokenRequest (`POST
 * /api/v1/namespaces/<ns>/serviceaccounts/<name>/token`, authentication.k8s.io/v1) under
 * the node's own credential, and cached, so that a pod sync does not mint a token each
 * time.
 *
 *   get(ns, sa, spec) ─ cached and fresh? ──────────────── yes ─→ cached token
 *          │ no
 *          └→ POST TokenRequest ─ ok ─→ cache, return
 *                           └ fails ─→ the cached one if it has not expired, else throw
 *
 * A token is refreshed (requiresRefresh) once it is older than 80 % of its lifetime or
 * than 24 h, whichever comes first (a jitter of up to 10 s spreads the refreshes of many
 * pods); its lifetime is the answer's spec.expirationSeconds (the server may shorten what
 * was asked), its issue time the expiration minus that.
 * The cache is keyed as upstream's keyFunc: name, namespace, audiences, expiration, bound
 * object's uid. Expired entries are dropped on each get; a pod's entries when it goes
 * (deleteForPod).
 */
import type { Clock } from '../../../api/clock.js';
import { realClock } from '../../../api/clock.js';
import type { RestClient } from '../../../api/client/rest.js';
import { resources } from '../../../api/client/resource.js';
import type { KubeObject } from '../../../api/object.js';

/** authentication.k8s.io/v1 BoundObjectReference. */
export interface BoundObjectReference {
  kind: 'Pod' | 'Secret' | 'Node';
  apiVersion: string;
  name: string;
  uid: string;
}

/** authentication.k8s.io/v1 TokenRequestSpec, as the kubelet fills it. */
export interface TokenRequestSpec {
  /** [] means the API server's own audiences (kube-apiserver's --api-audiences). */
  audiences: string[];
  /** Seconds the token is valid (the API server may shorten it). */
  expirationSeconds: number;
  boundObjectRef?: BoundObjectReference;
}

/** A token the API server issued. */
export interface IssuedToken {
  token: string;
  /** status.expirationTimestamp, ms since the epoch. */
  expiresAt: number;
  /** When the manager will ask for a new one (ms since the epoch). */
  refreshAt: number;
}

/**
 * POSTs one TokenRequest; answers its status (token, RFC 3339 expirationTimestamp) and
 * the answer's spec.expirationSeconds (the server may have shortened the lifetime asked for).
 */
export type TokenRequester = (
  namespace: string,
  serviceAccount: string,
  spec: TokenRequestSpec,
) => Promise<{ token: string; expirationTimestamp: string; expirationSeconds?: number }>;

/** A TokenRequester over a RestClient (the node's credential). @throws ApiStatusError from the API. */
export function restTokenRequester(client: RestClient): TokenRequester {
  return async (namespace, serviceAccount, spec) => {
    const answer = await client.create<KubeObject>(
      resources.serviceaccounts,
      {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        metadata: { name: serviceAccount, namespace },
        spec,
      },
      { namespace, subresource: 'token' },
    );
    const status = (answer.status ?? {}) as { token?: unknown; expirationTimestamp?: unknown };
    if (
      typeof status.token !== 'string' ||
      status.token === '' ||
      typeof status.expirationTimestamp !== 'string'
    )
      throw new Error(`TokenRequest for ${namespace}/${serviceAccount} answered no token`);
    const seconds = (answer.spec as { expirationSeconds?: unknown } | undefined)?.expirationSeconds;
    return {
      token: status.token,
      expirationTimestamp: status.expirationTimestamp,
      ...(typeof seconds === 'number' && seconds > 0 ? { expirationSeconds: seconds } : {}),
    };
  };
}

/** Settings of a TokenManager. */
export interface TokenManagerOptions {
  request: TokenRequester;
  clock?: Clock;
  /** Math.random() by default: the refresh jitter (0–10 s). */
  random?: () => number;
}

/** Refresh at the latest this long after issue (maxTTL). */
const MAX_TTL_MS = 24 * 3600 * 1000;
/** Up to this much earlier than the rule says (maxJitter). */
const MAX_JITTER_MS = 10_000;
/** The soonest a new token is asked for again. */
const MIN_REFRESH_MS = 1_000;

interface Entry {
  spec: TokenRequestSpec;
  token: IssuedToken;
}

/** See the file comment. */
export class TokenManager {
  private readonly cache = new Map<string, Entry>();
  private readonly clock: Clock;
  private readonly random: () => number;

  constructor(private readonly opts: TokenManagerOptions) {
    this.clock = opts.clock ?? realClock;
    this.random = opts.random ?? Math.random;
  }

  /**
   * A token of ServiceAccount `namespace/name` for `spec`: the cached one while it needs
   * no refresh, else a new one (or, when asking fails, the cached one until it expires).
   * @throws the requester's error when there is no usable token.
   */
  async get(namespace: string, name: string, spec: TokenRequestSpec): Promise<IssuedToken> {
    const now = this.clock.now();
    for (const [k, e] of this.cache) if (e.token.expiresAt <= now) this.cache.delete(k);
    const key = keyOf(namespace, name, spec);
    const cached = this.cache.get(key);
    if (cached && now < cached.token.refreshAt) return cached.token;
    try {
      const answer = await this.opts.request(namespace, name, spec);
      const expiresAt = Date.parse(answer.expirationTimestamp);
      if (Number.isNaN(expiresAt))
        throw new Error(
          `TokenRequest answered expirationTimestamp ${JSON.stringify(answer.expirationTimestamp)}`,
        );
      const ttlSeconds = answer.expirationSeconds ?? spec.expirationSeconds;
      const token = { token: answer.token, expiresAt, refreshAt: this.refreshAt(ttlSeconds, expiresAt, now) };
      this.cache.set(key, { spec, token });
      return token;
    } catch (err) {
      if (cached && this.clock.now() < cached.token.expiresAt) return cached.token;
      throw err;
    }
  }

  /** Forgets the tokens bound to pod `uid` (DeleteServiceAccountToken). */
  deleteForPod(uid: string): void {
    for (const [k, e] of this.cache) if (e.spec.boundObjectRef?.uid === uid) this.cache.delete(k);
  }

  /**
   * requiresRefresh as a time: 80 % of the lifetime or 24 h after issue, less the jitter;
   * never sooner than MIN_REFRESH_MS from `now` (a token shorter than the jitter would
   * otherwise be asked for again on every sync).
   */
  private refreshAt(ttlSeconds: number, expiresAt: number, now: number): number {
    const ttlMs = ttlSeconds * 1000;
    const issuedAt = expiresAt - ttlMs;
    const jitter = Math.floor(this.random() * MAX_JITTER_MS);
    return Math.max(now + MIN_REFRESH_MS, Math.min(issuedAt + MAX_TTL_MS, expiresAt - ttlMs / 5) - jitter);
  }
}

/** keyFunc: `"name/namespace/audiences/expirationSeconds/boundUID"`. */
function keyOf(namespace: string, name: string, spec: TokenRequestSpec): string {
  return JSON.stringify([
    name,
    namespace,
    spec.audiences,
    spec.expirationSeconds,
    spec.boundObjectRef?.uid ?? '',
  ]);
}
