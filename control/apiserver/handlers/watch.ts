/**
 * GET with `watch=true` (kube-apiserver's handlers/watch.go: serveWatch, over the
 * cacher): newline-delimited JSON events (`{"type":...,"object":...}`) on a chunked 200
 * response, from the resource's watch cache (watchcache/cache.ts), until `timeoutSeconds`
 * (default: a random time between --min-request-timeout and twice it, as kube-apiserver
 * spreads reconnects), the client leaves, or the watcher falls too far behind. With a
 * Table Accept header (kubectl get -w), each object is sent as a one-row Table; with
 * `as=PartialObjectMetadata` (client-go's metadata informers), as its metadata alone. A
 * conversion an event cannot take (`PartialObjectMetadataList`) leaves its object as it
 * is, as kube-apiserver's watchEmbeddedEncoder does.
 */
import type { KubeObject } from '../../../api/object.js';
import { badRequest } from '../status.js';
import { asPartialObjectMetadata } from '../negotiation.js';
import { tableWatchTransformer } from '../table.js';
import type { WatchEvent } from '../watchcache/event.js';
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
  const { rr, registry, res, query: q, server } = scope;
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
  const convert = scope.form.output.convert;
  const toRow =
    convert?.kind === 'Table'
      ? tableWatchTransformer(rr.resource, {
          includeObject: scope.form.includeObject,
          version: convert.version,
          ...(server.now ? { now: server.now } : {}),
        })
      : undefined;
  // The events' objects as sent: converted, or the cache's shared line.
  const convertEvent: ((ev: WatchEvent) => unknown) | undefined = toRow
    ? (ev) => toRow(scope.form.includeObject === 'Object' ? ev.full() : ev.object)
    : convert?.kind === 'PartialObjectMetadata'
      ? (ev) => asPartialObjectMetadata(ev.full(), convert.version)
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
        // ERROR events keep their Status; a BOOKMARK becomes metadata too (a metadata
        // client decodes nothing else), not a Table row.
        const converted =
          convertEvent !== undefined &&
          ev.type !== 'ERROR' &&
          (ev.type !== 'BOOKMARK' || toRow === undefined);
        const line = converted
          ? `${JSON.stringify({ type: ev.type, object: convertEvent(ev) })}\n`
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
