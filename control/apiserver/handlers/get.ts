/**
 * GET of one object and of a list (kube-apiserver's handlers/get.go: GetResource,
 * ListResource), answered in the negotiated form (response.ts `respond`: the object or the
 * List, a `Table` for kubectl get, PartialObjectMetadata(List) for metadata clients; JSON
 * or YAML); `.../scale` answers an autoscaling/v1 Scale.
 */
import { toScale } from '../subresources.js';
import { listQuery } from './options.js';
import { respond } from './response.js';
import type { RequestScope } from './scope.js';

/**
 * GET `.../<name>` (and `.../<name>/scale`, `.../<name>/status`): 200 with the object.
 * @throws ApiError 404 when it does not exist; 406 for PartialObjectMetadataList.
 */
export async function getResource(scope: RequestScope): Promise<void> {
  const { rr, registry } = scope;
  const obj = await registry.get(rr.namespace, rr.name!);
  respond(scope, 200, rr.subresource === 'scale' ? toScale(obj, registry.scale) : obj);
}

/**
 * GET of a collection (one namespace, or all): 200 with the List, one page with `limit`.
 * @throws ApiError 400 (bad selectors or limit, listQuery), 410 Expired (a compacted
 *   continue token or resourceVersion), 406 for PartialObjectMetadata.
 */
export async function listResource(scope: RequestScope): Promise<void> {
  const { rr, registry, query } = scope;
  const list = await registry.list(rr.namespace, listQuery(query, registry));
  respond(scope, 200, list);
}
