/**
 * The claims of a bound service account token and their validation against the objects
 * the token is bound to (pkg/serviceaccount/claims.go):
 *
 *   iss  the issuer (added by the signer, serviceaccount-token.ts)
 *   sub  system:serviceaccount:<namespace>:<name>
 *   aud  the requested audiences
 *   iat, nbf  now;  exp  now + expirationSeconds;  jti  a fresh UUID
 *   kubernetes.io: { namespace, serviceaccount: {name, uid},
 *                    pod: {name, uid} | secret: {name, uid} | node: {name, uid},
 *                    node: {name, uid} (also for a pod-bound token whose pod has a node),
 *                    warnafter: when an extended token's requested lifetime ends }
 *
 * A token is valid while its ServiceAccount, and its pod, Secret or Node, exist with the uids in
 * the claims; one deleted more than a minute ago (go-jose's leeway: a pod in graceful
 * termination keeps working meanwhile) or recreated under a new uid is not.
 */
import { randomUUID } from 'node:crypto';
import type { JWTPayload } from 'jose';
import type { KubeObject } from '../../../api/object.js';
import {
  EXTRA_CREDENTIAL_ID,
  EXTRA_NODE_NAME,
  EXTRA_NODE_UID,
  EXTRA_POD_NAME,
  EXTRA_POD_UID,
  serviceAccountGroups,
  serviceAccountUsername,
} from '../../../api/auth/serviceaccount.js';
import { SYSTEM_AUTHENTICATED, type UserInfo } from '../../../api/auth/user.js';

/** The private claim key. */
export const KUBERNETES_CLAIM = 'kubernetes.io';
/** go-jose's jwt.DefaultLeeway (seconds): clock skew allowed on exp and nbf, and how long a deleted object's tokens live on. */
export const TOKEN_LEEWAY_SECONDS = 60;

interface Ref {
  name: string;
  uid: string;
}

/** The `kubernetes.io` private claims. */
export interface KubernetesClaims {
  namespace: string;
  serviceaccount: Ref;
  pod?: Ref;
  secret?: Ref;
  node?: Ref;
  /** Seconds since the epoch: the requested end of a token whose exp was extended (token-request.ts). */
  warnafter?: number;
}

/** What a token is bound to: always its ServiceAccount; at most one of pod, secret and node; a pod's node. */
export interface BoundObjects {
  serviceAccount: KubeObject;
  pod?: KubeObject;
  secret?: KubeObject;
  node?: KubeObject;
}

const ref = (o: KubeObject): Ref => ({ name: o.metadata?.name ?? '', uid: o.metadata?.uid ?? '' });

/**
 * The claims of a new token (everything but `iss`), as Kubernetes' serviceaccount.Claims.
 * @param expirationSeconds the token's lifetime
 * @param now the time it is issued at
 * @param opts.warnAfterSeconds the lifetime asked for, when `expirationSeconds` extends it
 */
export function tokenClaims(
  objs: BoundObjects,
  expirationSeconds: number,
  audiences: readonly string[],
  now: Date,
  opts: { jti?: string; warnAfterSeconds?: number } = {},
): JWTPayload {
  const sa = objs.serviceAccount;
  const namespace = sa.metadata?.namespace ?? '';
  const t = Math.floor(now.getTime() / 1000);
  const k8s: KubernetesClaims = { namespace, serviceaccount: ref(sa) };
  if (objs.pod) {
    k8s.pod = ref(objs.pod);
    if (objs.node) k8s.node = ref(objs.node);
  } else if (objs.secret) {
    k8s.secret = ref(objs.secret);
  } else if (objs.node) {
    k8s.node = ref(objs.node);
  }
  if (opts.warnAfterSeconds !== undefined) k8s.warnafter = t + opts.warnAfterSeconds;
  return {
    sub: serviceAccountUsername(namespace, ref(sa).name),
    aud: [...audiences],
    iat: t,
    nbf: t,
    exp: t + expirationSeconds,
    jti: opts.jti ?? randomUUID(),
    [KUBERNETES_CLAIM]: k8s,
  };
}

/** The current objects a token's validity is checked against (the API server's caches). */
export interface BoundObjectGetter {
  serviceAccount(namespace: string, name: string): Promise<KubeObject | undefined>;
  pod(namespace: string, name: string): Promise<KubeObject | undefined>;
  secret(namespace: string, name: string): Promise<KubeObject | undefined>;
  node(name: string): Promise<KubeObject | undefined>;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function refOf(v: unknown): Ref | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const r = v as Record<string, unknown>;
  return { name: str(r.name), uid: str(r.uid) };
}

/** The `kubernetes.io` claims of a verified payload, or undefined when they are missing or malformed. */
export function kubernetesClaims(payload: JWTPayload): KubernetesClaims | undefined {
  const raw = payload[KUBERNETES_CLAIM];
  if (typeof raw !== 'object' || raw === null) return undefined;
  const k = raw as Record<string, unknown>;
  const sa = refOf(k.serviceaccount);
  const namespace = str(k.namespace);
  if (!sa || sa.name === '' || sa.uid === '' || namespace === '') return undefined;
  const out: KubernetesClaims = { namespace, serviceaccount: sa };
  for (const key of ['pod', 'secret', 'node'] as const) {
    if (k[key] === undefined) continue;
    const r = refOf(k[key]);
    if (!r || r.name === '' || r.uid === '') return undefined;
    out[key] = r;
  }
  return out;
}

/** Whether `obj` is gone as far as tokens go: missing, another uid, or deleted before `deadline`. */
function invalidated(obj: KubeObject | undefined, uid: string, deadline: Date): boolean {
  if (!obj || obj.metadata?.uid !== uid) return true;
  const deleted = obj.metadata?.deletionTimestamp;
  return deleted !== undefined && Date.parse(deleted) < deadline.getTime();
}

/**
 * The user a verified token's claims name, after checking that what it is bound to still
 * exists (Kubernetes' validator.Validate): `system:serviceaccount:<ns>:<name>` with the
 * ServiceAccount's uid, groups system:serviceaccounts, system:serviceaccounts:<ns> and
 * system:authenticated, and extra pod-name/pod-uid (node-name/node-uid) and credential-id.
 * @returns the user, or the reason the token is refused (for TokenReview's status.error
 *   only; a request is answered a bare 401).
 */
export async function validateClaims(
  payload: JWTPayload,
  getter: BoundObjectGetter,
  now: Date,
): Promise<UserInfo | { error: string }> {
  const k = kubernetesClaims(payload);
  if (!k || payload.sub !== serviceAccountUsername(k.namespace, k.serviceaccount.name))
    return { error: 'service account token claims could not be validated' };
  const deadline = new Date(now.getTime() - TOKEN_LEEWAY_SECONDS * 1000);
  const invalid = { error: 'service account token has been invalidated' };
  const sa = await getter.serviceAccount(k.namespace, k.serviceaccount.name);
  if (invalidated(sa, k.serviceaccount.uid, deadline)) return invalid;
  if (k.secret && invalidated(await getter.secret(k.namespace, k.secret.name), k.secret.uid, deadline))
    return invalid;
  if (k.pod && invalidated(await getter.pod(k.namespace, k.pod.name), k.pod.uid, deadline)) return invalid;
  // A pod-bound token only names its pod's node; a node-bound one depends on it.
  if (!k.pod && k.node && invalidated(await getter.node(k.node.name), k.node.uid, deadline)) return invalid;
  const extra: Record<string, string[]> = {};
  if (k.pod) {
    extra[EXTRA_POD_NAME] = [k.pod.name];
    extra[EXTRA_POD_UID] = [k.pod.uid];
  }
  if (k.node) {
    extra[EXTRA_NODE_NAME] = [k.node.name];
    extra[EXTRA_NODE_UID] = [k.node.uid];
  }
  if (typeof payload.jti === 'string' && payload.jti !== '')
    extra[EXTRA_CREDENTIAL_ID] = [`JTI=${payload.jti}`];
  return {
    name: serviceAccountUsername(k.namespace, k.serviceaccount.name),
    uid: k.serviceaccount.uid,
    groups: [...serviceAccountGroups(k.namespace), SYSTEM_AUTHENTICATED],
    ...(Object.keys(extra).length > 0 ? { extra } : {}),
  };
}
