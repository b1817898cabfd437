/**
 * GET of one object and of a list (kube-apiserver's handlers/get.go: GetResource,
 * ListResource). Either answers as a `Table` when the Accept header asks for one
 * (kubectl get), else as the object or the List; `.../scale` answers an autoscaling/v1
 * Scale.
 */
import { parseIncludeObject, negotiateTable, toTable } from '../table.js';
import { toScale } from '../subresources.js';
import { listQuery } from './options.js';
import { writeJson } from './response.js';
import type { RequestScope } from './scope.js';

/**
 * GET `.../<name>` (and `.../<name>/scale`, `.../<name>/status`): 200 with the object.
 * @throws ApiError 404 when it does not exist, 400 for a bad `includeObject`.
 */
export async function getResource(scope: RequestScope): Promise<void> {
  const { rr, registry, req, res, query } = scope;
  const table = negotiateTable(req.headers.accept);
  const obj = await registry.get(rr.namespace, rr.name!);
  if (rr.subresource === 'scale') writeJson(res, 200, toScale(obj, registry.scale));
  else if (table)
    writeJson(
      res,
      200,
      toTable(rr.resource, [obj], {
        includeObject: parseIncludeObject(query.get('includeObject')),
        now: scope.now,
        version: table,
      }),
    );
  else writeJson(res, 200, obj);
}

/**
 * GET of a collection (one namespace, or all): 200 with the List, one page with `limit`.
 * @throws ApiError 400 (bad selectors or limit, listQuery), 410 Expired (a compacted
 *   continue token or resourceVersion).
 */
export async function listResource(scope: RequestScope): Promise<void> {
  const { rr, registry, req, res, query } = scope;
  const table = negotiateTable(req.headers.accept);
  const list = await registry.list(rr.namespace, listQuery(query, registry));
  if (table) {
    writeJson(
      res,
      200,
      toTable(rr.resource, list.items, {
        includeObject: parseIncludeObject(query.get('includeObject')),
        now: scope.now,
        version: table,
        listMeta: list.metadata,
      }),
    );
  } else {
    writeJson(res, 200, list);
  }
}
