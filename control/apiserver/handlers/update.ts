/**
 * PUT (kube-apiserver's handlers/update.go: UpdateResource): the whole object replaced,
 * with optimistic concurrency on its resourceVersion, through the registry's update rules
 * (`.../status` and a Namespace's `.../finalize` through theirs; `.../scale` writes the
 * replica count). Admission's admit phase has run on the URL before (index.ts). A PUT to
 * a missing name creates the object where the strategy allows it (`allowCreateOnUpdate`:
 * Services, Endpoints, Events, Leases, Roles, ClusterRoles and their bindings).
 */
import type { KubeObject } from '../../../api/object.js';
import { ApiError, methodNotAllowed } from '../status.js';
import { updateScale } from '../subresources.js';
import { decodeChecked } from './decode.js';
import { respond } from './response.js';
import { isNotFoundOf, type RequestScope } from './scope.js';

/**
 * PUT `.../<name>` (or `/status`, `/finalize`, `/scale`): 200 with the stored object; 201
 * when it was created (allowCreateOnUpdate). An update that removes the last finalizer of
 * an object being deleted deletes it.
 * @throws ApiError 405 on another subresource; 404 when missing (and not created); 409
 *   Conflict on a stale resourceVersion; 400/422 from decoding and validation; 403 from
 *   admission or RBAC escalation prevention.
 */
export async function updateResource(scope: RequestScope): Promise<void> {
  const { rr, registry, user, dryRun, server, write } = scope;
  const sub = rr.subresource;
  const body = await decodeChecked(scope, 'update', sub === 'scale' ? 'V1Scale' : rr.resource.model);
  if (sub === 'scale') {
    respond(scope, 200, await updateScale(registry, rr.namespace!, rr.name!, body, dryRun, scope.warn));
    return;
  }
  if (sub !== undefined && sub !== 'status' && sub !== 'finalize')
    throw methodNotAllowed('PUT', `${rr.resource.resource}/${sub}`);
  const opts = sub === 'status' || sub === 'finalize' ? { ...write, subresource: sub } : write;
  let updated: KubeObject;
  const escalation = await server.escalationCheck(rr, user, body);
  try {
    escalation?.(body, await registry.get(rr.namespace, rr.name!));
    updated = await registry.update(rr.namespace, rr.name!, body, opts);
  } catch (err) {
    // Services, Endpoints, Events, Leases and the RBAC kinds are created by a PUT to a
    // missing name: their strategies' allowCreateOnUpdate, as Kubernetes'
    // AllowCreateOnUpdate. A Role or binding created so passes the escalation check too.
    if (!(
      sub === undefined &&
      registry.allowCreateOnUpdate &&
      err instanceof ApiError &&
      err.code === 404 &&
      isNotFoundOf(err, rr)
    ))
      throw err;
    const meta = (body.metadata ??= {});
    if (meta.name !== undefined && meta.name !== rr.name) throw err;
    meta.name = rr.name!;
    delete meta.resourceVersion;
    escalation?.(body);
    await scope.admit('CREATE', body);
    respond(scope, 201, await registry.create(rr.namespace, body, write));
    return;
  }
  if (!dryRun) await registry.finishDeletionIfDone(updated);
  respond(scope, 200, updated);
}
