/**
 * Empties a terminating namespace (Kubernetes' pkg/controller/namespace/deletion,
 * namespacedResourcesDeleter.deleteAllContent): for every namespaced resource discovery
 * lists with `list` and `delete`, delete what is in the namespace — one deletecollection
 * where the resource supports it, else one DELETE per object, propagation Background —
 * then list again to see what is left (pods waiting for their kubelet, objects held by
 * finalizers).
 */
import { isNotFound } from '../../../api/client/errors.js';
import { resourcePath } from '../../../api/client/resource.js';
import type { RestClient } from '../../../api/client/rest.js';
import type { KubeObject } from '../../../api/object.js';
import type { DiscoveredResource } from '../discovery.js';
import { supportsVerbs } from '../discovery.js';
import type { NamespaceProblems } from './conditions.js';
import { errorMessage } from '../../../api/errors.js';

/** What one pass over a namespace's content found. */
export interface ContentDeletionResult {
  /** Objects still present, per resource (`pods.`, `replicasets.apps`, as Kubernetes prints them). */
  remaining: Map<string, number>;
  /** Objects still present per finalizer they carry. */
  finalizers: Map<string, number>;
  /** Failures, one line per resource that could not be deleted or listed. */
  errors: string[];
  /**
   * Seconds until the slowest graceful deletion seen (a pod's deletionTimestamp) is due;
   * 0 when none is pending.
   */
  estimateSeconds: number;
}

/** The resources the namespace controller empties: namespaced, with list and delete. */
export function deletableNamespacedResources(
  discovered: readonly DiscoveredResource[],
): DiscoveredResource[] {
  return discovered.filter((r) => r.namespaced && supportsVerbs(r, 'list', 'delete'));
}

/**
 * Deletes everything of `resourcesToEmpty` in `namespace` and reports what is left.
 * Never throws for a single resource's failure (it is in `errors`); `nowMs` (epoch ms)
 * dates the grace-period estimate.
 */
export async function deleteAllContent(
  client: RestClient,
  namespace: string,
  resourcesToEmpty: readonly DiscoveredResource[],
  nowMs: number,
): Promise<ContentDeletionResult> {
  const out: ContentDeletionResult = {
    remaining: new Map(),
    finalizers: new Map(),
    errors: [],
    estimateSeconds: 0,
  };
  const body = { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' };
  for (const r of resourcesToEmpty) {
    const name = `${r.resource}.${r.group}`;
    try {
      if (supportsVerbs(r, 'deletecollection')) {
        await client.request('DELETE', resourcePath(r, namespace), { body });
      } else {
        for (const item of (await client.list(r, { namespace })).items) {
          if (item.metadata?.deletionTimestamp) continue;
          try {
            await client.delete(r, namespace, item.metadata!.name!, {
              propagationPolicy: 'Background',
              ...(item.metadata?.uid ? { preconditions: { uid: item.metadata.uid } } : {}),
            });
          } catch (err) {
            if (!isNotFound(err)) throw err;
          }
        }
      }
      const left = (await client.list(r, { namespace })).items;
      if (left.length > 0) out.remaining.set(name, left.length);
      for (const item of left) {
        for (const f of item.metadata?.finalizers ?? [])
          out.finalizers.set(f, (out.finalizers.get(f) ?? 0) + 1);
        out.estimateSeconds = Math.max(out.estimateSeconds, gracefulSecondsLeft(item, nowMs));
      }
    } catch (err) {
      out.errors.push(`${name}: ${errorMessage(err)}`);
    }
  }
  return out;
}

/** Seconds until an object's deletionTimestamp (the end of its grace period), 0 when none or past. */
function gracefulSecondsLeft(obj: KubeObject, nowMs: number): number {
  const ts = obj.metadata?.deletionTimestamp;
  if (!ts) return 0;
  return Math.max(0, Math.ceil((Date.parse(ts) - nowMs) / 1000));
}

/** The conditions' problems of a pass, worded as Kubernetes' namespace deleter words them. */
export function contentProblems(result: ContentDeletionResult): NamespaceProblems {
  const problems: NamespaceProblems = {};
  if (result.errors.length > 0)
    problems.NamespaceDeletionContentFailure = {
      reason: 'ContentDeletionFailed',
      message: `Failed to delete all resource types, ${result.errors.length} remaining: ${result.errors.join(', ')}`,
    };
  if (result.remaining.size > 0)
    problems.NamespaceContentRemaining = {
      reason: 'SomeResourcesRemain',
      message: `Some resources are remaining: ${[...result.remaining]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([r, n]) => `${r} has ${n} resource instances`)
        .join(', ')}`,
    };
  if (result.finalizers.size > 0)
    problems.NamespaceFinalizersRemaining = {
      reason: 'SomeFinalizersRemain',
      message: `Some content in the namespace has finalizers remaining: ${[...result.finalizers]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([f, n]) => `${f} in ${n} resource instances`)
        .join(', ')}`,
    };
  return problems;
}
