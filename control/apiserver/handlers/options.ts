/**
 * The options of list, watch and delete requests, read from the query (and a delete's
 * body), as kube-apiserver decodes metav1.ListOptions and metav1.DeleteOptions.
 */
import type { IncomingMessage } from 'node:http';
import { parseFieldSelector } from '../../../api/meta/fields.js';
import { parseLabelSelector, SelectorParseError } from '../../../api/meta/labels.js';
import type { DeleteOptions, ListQuery, Registry } from '../registry.js';
import { decodeObject, readBody } from '../request.js';
import { badRequest } from '../status.js';

/**
 * The list parameters of a request: `labelSelector`, `fieldSelector` (checked against the
 * resource's selectable fields), `limit`, `continue`, `resourceVersion`.
 * @throws ApiError 400 for a selector that does not parse, a field the resource cannot
 *   select on, or a limit that is not a non-negative integer.
 */
export function listQuery(q: URLSearchParams, registry: Registry): ListQuery {
  const out: ListQuery = {};
  try {
    const ls = q.get('labelSelector');
    if (ls) out.labelSelector = parseLabelSelector(ls);
    const fs = q.get('fieldSelector');
    if (fs) {
      const sel = parseFieldSelector(fs);
      const unsupported = sel.unsupportedField(registry.selectableFieldNames());
      if (unsupported) throw badRequest(`field label not supported: ${unsupported}`);
      out.fieldSelector = sel;
    }
  } catch (err) {
    if (err instanceof SelectorParseError) throw badRequest(`unable to parse requirement: ${err.message}`);
    throw err;
  }
  const limit = q.get('limit');
  if (limit) {
    if (!/^\d+$/.test(limit))
      throw badRequest(`limit: Invalid value: "${limit}": must be a non-negative integer`);
    out.limit = Number(limit);
  }
  const cont = q.get('continue');
  if (cont) out.continue = cont;
  const rv = q.get('resourceVersion');
  if (rv) out.resourceVersion = rv;
  return out;
}

/**
 * DeleteOptions from the query and/or a DeleteOptions body (kubectl sends a body; the
 * query wins): gracePeriodSeconds (negative: the default), propagationPolicy (or the old
 * orphanDependents), preconditions, dryRun.
 * @throws ApiError 400 for a grace period that is not an integer or an unknown policy;
 *   the body's decoding errors (request.ts decodeObject).
 */
export async function deleteOptions(req: IncomingMessage, q: URLSearchParams): Promise<DeleteOptions> {
  const raw = await readBody(req);
  const body = raw.trim() ? (decodeObject(raw, req.headers['content-type']) as Record<string, unknown>) : {};
  const opts: DeleteOptions = {};
  const grace =
    q.get('gracePeriodSeconds') ??
    (body.gracePeriodSeconds !== undefined ? String(body.gracePeriodSeconds) : null);
  if (grace !== null) {
    if (!/^-?\d+$/.test(grace))
      throw badRequest(`gracePeriodSeconds: Invalid value: "${grace}": must be an integer`);
    // Kubernetes treats a negative grace period as "use the default".
    if (Number(grace) >= 0) opts.gracePeriodSeconds = Number(grace);
  }
  const policy = q.get('propagationPolicy') ?? (body.propagationPolicy as string | undefined);
  if (policy !== undefined && policy !== null) {
    if (policy !== 'Orphan' && policy !== 'Background' && policy !== 'Foreground') {
      throw badRequest(
        `propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`,
      );
    }
    opts.propagationPolicy = policy;
  } else if (q.get('orphanDependents') === 'true' || body.orphanDependents === true) {
    opts.propagationPolicy = 'Orphan';
  }
  const orphan = q.get('orphanDependents') ?? body.orphanDependents;
  if (orphan === true || orphan === 'true') opts.orphanDependents = true;
  else if (orphan === false || orphan === 'false') opts.orphanDependents = false;
  const pre = body.preconditions as DeleteOptions['preconditions'] | undefined;
  if (pre) opts.preconditions = pre;
  const bodyDryRun = Array.isArray(body.dryRun) && (body.dryRun as unknown[]).includes('All');
  if (q.getAll('dryRun').includes('All') || bodyDryRun) opts.dryRun = true;
  return opts;
}
