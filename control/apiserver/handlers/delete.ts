/**
 * DELETE of one object and of a collection (kube-apiserver's handlers/delete.go:
 * DeleteResource, DeleteCollection), with DeleteOptions from the query and the body.
 * Objects with finalizers or a grace period are only marked (deletionTimestamp); the
 * registry removes them when the last finalizer goes.
 */
import { ApiError, deletedStatus, methodNotAllowed } from '../status.js';
import { deleteOptions, listQuery } from './options.js';
import { respond } from './response.js';
import type { RequestScope } from './scope.js';

/**
 * DELETE `.../<name>`: 200 with the marked object (a graceful pod delete, finalizers, a
 * terminating Namespace), except 202 when it was not deleted at once and the request sent
 * `orphanDependents: false`: delete.go's rule, kept for old clients, which upstream notes
 * it would rather apply to every deferred delete. An object removed at once (a dry run
 * too) is answered 200 with itself for the kinds whose strategy sets
 * `returnDeletedObject`, else with a Status naming it (`deletedStatus`).
 * @throws ApiError 405 on a subresource; 400 for bad DeleteOptions; 403 from admission
 *   (a system namespace); 404 when missing; 409 when a precondition fails.
 */
export async function deleteResource(scope: RequestScope): Promise<void> {
  const { rr, registry, req, query } = scope;
  if (rr.subresource !== undefined)
    throw methodNotAllowed('DELETE', `${rr.resource.resource}/${rr.subresource}`);
  const opts = await deleteOptions(req, query);
  await scope.admit('DELETE');
  const result = await registry.delete(rr.namespace, rr.name!, opts);
  if (result.deleted && !registry.returnDeletedObject) {
    const ref = { group: rr.resource.group, resource: rr.resource.resource, name: rr.name! };
    respond(scope, 200, deletedStatus(ref, result.object.metadata?.uid));
    return;
  }
  respond(scope, !result.deleted && opts.orphanDependents === false ? 202 : 200, result.object);
}

/**
 * DELETE of a collection of one namespace (or of a cluster-scoped resource), filtered by
 * the list's selectors: deletes each listed object (one already gone is skipped) and
 * answers 200 with the list as it was.
 * @throws ApiError 405 for a namespaced resource without a namespace; 400 for bad
 *   DeleteOptions or selectors.
 */
export async function deleteCollection(scope: RequestScope): Promise<void> {
  const { rr, registry, req, query } = scope;
  if (rr.resource.namespaced && rr.namespace === undefined)
    throw methodNotAllowed(
      'DELETE',
      `${rr.resource.resource} of all namespaces (deletecollection needs a namespace)`,
    );
  const opts = await deleteOptions(req, query);
  const list = await registry.list(rr.namespace, listQuery(query, registry));
  for (const item of list.items) {
    try {
      await registry.delete(item.metadata!.namespace, item.metadata!.name!, opts);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
  }
  respond(scope, 200, list);
}
