/**
 * The TokenRequest API: POST `serviceaccounts/<name>/token` with an
 * authentication.k8s.io/v1 TokenRequest answers 201 with it and `status.token`, a JWT for
 * the ServiceAccount (pkg/registry/core/serviceaccount/storage/token.go). Nothing is
 * stored. In order, as upstream:
 *
 *   1. metadata.name / namespace, when given, must be the URL's            422
 *   2. the ServiceAccount must exist                                        404
 *   3. defaults: spec.audiences → the API audiences, spec.expirationSeconds → 3600
 *   4. 600 ≤ spec.expirationSeconds ≤ 2^32                                   422
 *   5. spec.boundObjectRef (optional): a Pod (whose serviceAccountName must be this
 *      ServiceAccount, 400) or a Secret of the namespace, or a Node, which must exist (404)
 *      and, when the ref gives a uid, have it (409); a pod on a node binds the node too
 *      (ServiceAccountTokenPodNodeInfo, ServiceAccountTokenNodeBinding)
 *   6. sign (auth/serviceaccount-token.ts); status.expirationTimestamp is the request's
 *      time + expirationSeconds, never after the token's exp. As kube-apiserver's
 *      --service-account-extend-token-expiration (default true): a pod-bound token asked
 *      for 3607 s (the kubelet's projected token) for API audiences only gets a year, with
 *      `warnafter` at the 3607 s, so pods keep working while their kubelet cannot refresh
 */
import type { KubeObject } from '../../api/object.js';
import { rfc3339 } from '../../api/object.js';
import type { ServiceAccountTokens } from './auth/serviceaccount-token.js';
import type { BoundObjects } from './auth/serviceaccount-claims.js';
import { badRequest, conflict, invalid, notFound } from './status.js';

/** authentication.MinTokenAgeSec and the most a token may ask for. */
export const MIN_TOKEN_SECONDS = 600;
export const MAX_TOKEN_SECONDS = 2 ** 32;
/** The default of spec.expirationSeconds (SetDefaults_TokenRequestSpec). */
export const DEFAULT_TOKEN_SECONDS = 3600;
/** token.WarnOnlyBoundTokenExpirationSeconds and ExpirationExtensionSeconds. */
export const WARN_ONLY_BOUND_TOKEN_SECONDS = 3607;
export const EXTENDED_TOKEN_SECONDS = 365 * 24 * 3600;

/** What createToken reads: the objects a token may be bound to (each throws 404 when missing, but getNode). */
export interface TokenRequestDeps {
  tokens: ServiceAccountTokens;
  getServiceAccount(namespace: string, name: string): Promise<KubeObject>;
  getPod(namespace: string, name: string): Promise<KubeObject>;
  getSecret(namespace: string, name: string): Promise<KubeObject>;
  /** A Node; undefined when it does not exist (a bound pod's missing node is left out of the token). */
  getNode(name: string): Promise<KubeObject | undefined>;
  now(): Date;
}

type Obj = Record<string, unknown>;
const o = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const s = (v: unknown): string => (typeof v === 'string' ? v : '');

const REF = { group: 'authentication.k8s.io', resource: 'tokenrequests' };

/**
 * Answers a TokenRequest for ServiceAccount `namespace`/`name` (see the file comment).
 * @returns the TokenRequest with its defaults, metadata and `status.token`, `status.expirationTimestamp`.
 * @throws ApiError 400 for a body of another kind, a non-integer expirationSeconds, a
 *   boundObjectRef of another kind or a pod of another ServiceAccount; 404 for a missing
 *   ServiceAccount, pod or Secret; 409 for a bound object's uid that differs; 422 for names
 *   that differ from the URL's and expirationSeconds out of range.
 */
export async function createToken(
  deps: TokenRequestDeps,
  namespace: string,
  name: string,
  body: KubeObject,
): Promise<KubeObject> {
  if (body.kind !== undefined && body.kind !== 'TokenRequest')
    throw badRequest(`expected a TokenRequest, got ${String(body.kind)}`);
  const meta = body.metadata ?? {};
  if (meta.name && meta.name !== name)
    throw invalid('TokenRequest', { ...REF, name }, [
      {
        reason: 'FieldValueInvalid',
        field: 'metadata.name',
        message: `Invalid value: ${JSON.stringify(meta.name)}: must match the service account name if specified`,
      },
    ]);
  if (meta.namespace && meta.namespace !== namespace)
    throw invalid('TokenRequest', { ...REF, name }, [
      {
        reason: 'FieldValueInvalid',
        field: 'metadata.namespace',
        message: `Invalid value: ${JSON.stringify(meta.namespace)}: must match the service account namespace if specified`,
      },
    ]);
  const sa = await deps.getServiceAccount(namespace, name);
  const spec = o(body.spec);
  const audiences = Array.isArray(spec.audiences)
    ? spec.audiences.filter((a): a is string => typeof a === 'string')
    : [];
  if (audiences.length === 0) audiences.push(...deps.tokens.audiences);
  const rawSeconds = spec.expirationSeconds ?? DEFAULT_TOKEN_SECONDS;
  if (typeof rawSeconds !== 'number' || !Number.isInteger(rawSeconds))
    throw badRequest(
      `the body of the request could not be decoded: spec.expirationSeconds must be an integer, got ${JSON.stringify(rawSeconds)}`,
    );
  const seconds = rawSeconds;
  const now = deps.now();
  if (seconds < MIN_TOKEN_SECONDS || seconds > MAX_TOKEN_SECONDS)
    throw invalid('TokenRequest', { ...REF, name: '' }, [
      {
        reason: 'FieldValueInvalid',
        field: 'spec.expirationSeconds',
        message: `Invalid value: ${seconds}: ${
          seconds < MIN_TOKEN_SECONDS
            ? 'may not specify a duration less than 10 minutes'
            : 'may not specify a duration larger than 2^32 seconds'
        }`,
      },
    ]);
  const objs: BoundObjects = { serviceAccount: sa };
  const boundRef =
    spec.boundObjectRef === undefined || spec.boundObjectRef === null ? undefined : o(spec.boundObjectRef);
  if (boundRef) {
    const kind = s(boundRef.kind);
    const apiVersion = s(boundRef.apiVersion) || 'v1';
    const refName = s(boundRef.name);
    let bound: KubeObject;
    if (apiVersion === 'v1' && kind === 'Pod') {
      bound = await deps.getPod(namespace, refName);
      const podSA = s(o(bound.spec).serviceAccountName);
      if (podSA !== name)
        throw badRequest(
          `cannot bind token for serviceaccount "${name}" to pod running with different serviceaccount name.`,
        );
      objs.pod = bound;
      const nodeName = s(o(bound.spec).nodeName);
      if (nodeName !== '') {
        const node = await deps.getNode(nodeName);
        if (node) objs.node = node;
      }
    } else if (apiVersion === 'v1' && kind === 'Secret') {
      bound = await deps.getSecret(namespace, refName);
      objs.secret = bound;
    } else if (apiVersion === 'v1' && kind === 'Node') {
      const node = await deps.getNode(refName);
      if (!node) throw notFound({ group: '', resource: 'nodes', name: refName });
      bound = node;
      objs.node = node;
    } else {
      const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
      const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
      throw badRequest(`cannot bind token for object of type ${group}/${version}, Kind=${kind}`);
    }
    const wantUID = s(boundRef.uid);
    if (wantUID !== '' && wantUID !== bound.metadata?.uid)
      throw conflict(
        { group: '', resource: kind, name: refName },
        `the UID in the bound object reference (${wantUID}) does not match the UID in record. The object might have been deleted and then recreated`,
      );
  }
  const extend =
    objs.pod !== undefined &&
    seconds === WARN_ONLY_BOUND_TOKEN_SECONDS &&
    audiences.every((a) => deps.tokens.audiences.includes(a));
  const token = extend
    ? await deps.tokens.issue(objs, EXTENDED_TOKEN_SECONDS, audiences, now, seconds)
    : await deps.tokens.issue(objs, seconds, audiences, now);
  return {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name: sa.metadata?.name ?? name, namespace, creationTimestamp: rfc3339(now) },
    spec: {
      audiences,
      expirationSeconds: seconds,
      ...(boundRef ? { boundObjectRef: boundRef } : {}),
    },
    status: { token, expirationTimestamp: rfc3339(new Date(now.getTime() + seconds * 1000)) },
  };
}
