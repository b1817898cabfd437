/**
 * authentication.k8s.io/v1 TokenReview (pkg/registry/authentication/tokenreview): who is
 * this bearer token? Answered by the API server's token authenticators (authn.ts
 * `authenticateToken`) for `spec.audiences` (default the API audiences), never stored.
 * `status.authenticated`, and when it is: `status.user` (username, uid, groups, extra) and
 * `status.audiences` (those of the token that were asked for); when it is not, the reason
 * in `status.error`.
 */
import type { KubeObject } from '../../../api/object.js';
import { badRequest } from '../status.js';
import type { TokenAuthResult } from './serviceaccount-token.js';

/** Authenticates one token for the requested audiences (undefined: the API audiences). */
export type TokenAuthenticator = (token: string, audiences: string[] | undefined) => Promise<TokenAuthResult>;

/**
 * Answers a TokenReview (the request's object plus `status`).
 * @throws ApiError 400 without `spec.token`.
 */
export async function tokenReview(body: KubeObject, authenticate: TokenAuthenticator): Promise<KubeObject> {
  const spec = (typeof body.spec === 'object' && body.spec !== null ? body.spec : {}) as {
    token?: unknown;
    audiences?: unknown;
  };
  const token = typeof spec.token === 'string' ? spec.token : '';
  if (token === '') throw badRequest('token is required for TokenReview in authentication');
  const audiences = Array.isArray(spec.audiences)
    ? spec.audiences.filter((a): a is string => typeof a === 'string')
    : [];
  const result = await authenticate(token, audiences.length > 0 ? audiences : undefined);
  if (result === undefined || 'error' in result) {
    return {
      ...body,
      status: { authenticated: false, ...(result ? { error: result.error } : {}), user: {} },
    };
  }
  const { user } = result;
  return {
    ...body,
    status: {
      authenticated: true,
      user: {
        username: user.name,
        ...(user.uid ? { uid: user.uid } : {}),
        groups: user.groups,
        ...(user.extra ? { extra: user.extra } : {}),
      },
      audiences: result.audiences,
    },
  };
}
