/**
 * GET with `watch=true` (kube-apiserver's handlers/watch.go: serveWatch, over the
 * cacher): newline-delimited JSON events (`{"type":...,"object":...}`) on a chunked 200
 * response, from the resource's watch cache (watchcache/cache.ts), until `timeoutSeconds`
 * (default: a random time between --min-request-timeout and twice it, as kube-apiserver
 * spreads reconnects), the client leaves, or the watcher falls too far behind. With a
 * Table Accept header (kubectl get -w), each object is sent as a one-row Table.
 */
import type { KubeObject } from '../../../api/object.js';
import { badRequest } from '../status.js';
import { negotiateTable, parseIncludeObject, tableWatchTransformer } from '../table.js';
import { listQuery } from './options.js';
import type { RequestScope } from './scope.js';

/**
 * Serves one watch until it ends (see the file comment); `GET .../<name>?watch=true`
 * watches that one object. Resolves when the response has ended.
 * @throws ApiError 400 for a resourceVersion or timeoutSeconds that is not a number, or
 *   bad selectors. (A resourceVersion older than the cache's history is not thrown: the
 *   stream carries a 410 Expired ERROR event.)
 */
export async function watchResource(scope: RequestScope): Promise<void> {
  const { rr, registry, req, res, query: q, server } = scope;
  const query = listQuery(q, registry);
  // GET .../name?watch=true watches that one object, as Kubernetes does.
  const only = rr.name;
  const rv = q.get('resourceVersion') ?? '';
  if (rv !== '' && !/^\d{1,16}$/.test(rv))
    throw badRequest(
      `resourceVersion: Invalid value: "${rv}": must be a resourceVersion returned by the server`,
    );
  const timeoutParam = q.get('timeoutSeconds');
  if (timeoutParam !== null && !/^\d+$/.test(timeoutParam))
    throw badRequest(`timeoutSeconds: Invalid value: "${timeoutParam}": must be a non-negative integer`);
  const minTimeout = server.minRequestTimeoutSeconds;
  const timeoutMs = timeoutParam
    ? Number(timeoutParam) * 1000
    : (minTimeout + Math.random() * minTimeout) * 1000;
  const table = negotiateTable(req.headers.accept);
  const toRow = table
    ? tableWatchTransformer(rr.resource, {
        includeObject: parseIncludeObject(q.get('includeObject')),
        version: table,
        ...(server.now ? { now: server.now } : {}),
      })
    : undefined;
  const cache = await server.watchCache(rr.resource);
  const filtered =
    query.labelSelector !== undefined || query.fieldSelector !== undefined || only !== undefined;
  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Transfer-Encoding': 'chunked',
    'Cache-Control': 'no-cache, private',
  });
  res.flushHeaders();
  let timer: NodeJS.Timeout | undefined;
  let corked = false;
  const finished = new Promise<void>((resolve) => {
    const watcher = cache.watch({
      ...(rr.namespace !== undefined ? { namespace: rr.namespace } : {}),
      sinceRevision: rv === '' ? undefined : Number(rv),
      ...(q.get('sendInitialEvents') === 'true' ? { sendInitialEvents: true } : {}),
      ...(filtered
        ? {
            filter: (obj: KubeObject) =>
              (only === undefined || obj.metadata?.name === only) && registry.matches(obj, query),
          }
        : {}),
      allowBookmarks: q.get('allowWatchBookmarks') === 'true',
      timeoutMs,
      onEvent: (ev) => {
        // Events that arrive in one turn of the event loop leave in one write (one
        // writev), not one syscall each.
        if (!corked) {
          corked = true;
          res.cork();
          setImmediate(() => {
            corked = false;
            res.uncork();
          });
        }
        const line =
          toRow && (ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED')
            ? `${JSON.stringify({ type: ev.type, object: toRow(ev.object) })}\n`
            : ev.line();
        return res.write(line);
      },
      onClose: (reason) => {
        clearTimeout(timer);
        // A watcher too slow to keep up is cut off, not left with a full send buffer.
        if (reason === 'too slow') res.destroy();
        else res.end();
        resolve();
      },
    });
    res.on('drain', () => watcher.resume());
    res.on('close', () => watcher.stop());
    timer = setTimeout(() => watcher.stop(), timeoutMs);
    timer.unref();
  });
  await finished;
}
