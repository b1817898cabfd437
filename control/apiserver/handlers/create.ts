/**
 * POST (kube-apiserver's handlers/create.go: CreateResource): decode the body with field
 * validation, admission's admit phase on it, then the registry. The POST subresources
 * that are not stored objects answer here too: a Pod's `binding` (the scheduler's) and
 * `eviction` (the Eviction API), and the access reviews, which are computed, never
 * stored, and a ServiceAccount's `token` (the TokenRequest API: a JWT, nothing stored). A
 * Namespace's create also makes its `default` ServiceAccount.
 */
import { isReview } from '../resources.js';
import { methodNotAllowed } from '../status.js';
import { bindPod } from '../subresources.js';
import { decodeChecked } from './decode.js';
import { respond } from './response.js';
import type { RequestScope } from './scope.js';

/**
 * POST to a collection: 201 with the created object. `.../binding`: 201 with a Success
 * Status; `.../eviction`: 201 with the Status evictPod answers; `.../token`: 201 with the
 * TokenRequest and its token; a review: 201 with it answered.
 * @throws ApiError 405 for a POST to a name or another subresource; 400, 409
 *   AlreadyExists, 422 Invalid from decoding and the registry; 403 from admission or RBAC
 *   escalation prevention.
 */
export async function createResource(scope: RequestScope): Promise<void> {
  const { rr, registry, user, dryRun, server } = scope;
  const sub = rr.subresource;
  const body = await decodeChecked(scope, 'create', sub === undefined ? rr.resource.model : undefined);
  await scope.admit('CREATE', body);
  if (sub === 'binding') {
    await bindPod(registry, rr.namespace!, rr.name!, body, dryRun);
    respond(scope, 201, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      code: 201,
    });
    return;
  }
  if (sub === 'eviction') {
    respond(scope, 201, await server.evict(rr.namespace!, rr.name!, body, dryRun));
    return;
  }
  if (sub === 'token') {
    respond(scope, 201, await server.tokenRequest(rr.namespace!, rr.name!, body));
    return;
  }
  if (isReview(rr.resource)) {
    respond(scope, 201, await server.review(rr.resource, body, user));
    return;
  }
  if (sub !== undefined || rr.name !== undefined)
    throw methodNotAllowed('POST', `${rr.resource.resource}/${sub ?? '{name}'}`);
  (await server.escalationCheck(rr, user, body))?.(body);
  respond(scope, 201, await registry.create(rr.namespace, body, scope.write));
}
