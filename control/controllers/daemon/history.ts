/**
 * A DaemonSet's history as ControllerRevisions (Kubernetes' pkg/controller/daemon/update.go
 * constructHistory, snapshot, Match, getPatch, dedupCurHistories and cleanupHistory).
 *
 * A revision's `data` is the strategic merge patch that puts the DaemonSet's template
 * back: `{"spec":{"template":{...,"$patch":"replace"}}}` — what `kubectl rollout undo`
 * applies. Its name is `<ds>-<hash>`, the hash (controller.ComputeHash of the template and
 * status.collisionCount) is its `controller-revision-hash` label, and the template's labels
 * are its labels too, so the DaemonSet's selector finds it (kubectl lists them that way).
 * The revision matching the current template is the current one; it gets the highest
 * revision number (an old template coming back is renumbered, as after a rollback).
 */
import { isAlreadyExists } from '../../../api/client/errors.js';
import { resources } from '../../../api/client/resource.js';
import type { RestClient } from '../../../api/client/rest.js';
import type { OwnerReference } from '../../../api/object.js';
import type { ControllerRevision, DaemonSet, PodTemplateSpec } from '../../../api/types.js';
import { canonicalJSON, computeHash } from '../deployment/hash.js';
import { CONTROLLER_REVISION_HASH_LABEL } from './placement.js';

/** The `data` of a DaemonSet's revision (getPatch). */
export function revisionData(ds: DaemonSet): { spec: { template: Record<string, unknown> } } {
  return { spec: { template: { ...structuredClone(ds.spec.template), $patch: 'replace' } } };
}

/** The template a revision's data puts back (without the `$patch` directive). */
export function revisionTemplate(rev: ControllerRevision): PodTemplateSpec | undefined {
  const tpl = (rev.data as { spec?: { template?: Record<string, unknown> } } | undefined)?.spec?.template;
  if (!tpl) return undefined;
  const { $patch: _, ...rest } = tpl;
  return rest as unknown as PodTemplateSpec;
}

/** Match: whether `rev` records the DaemonSet's current template (compared in canonical JSON). */
export function matchesRevision(ds: DaemonSet, rev: ControllerRevision): boolean {
  const tpl = revisionTemplate(rev);
  return tpl !== undefined && canonicalJSON(tpl) === canonicalJSON(ds.spec.template);
}

/** What constructHistory found or made. */
export interface History {
  cur: ControllerRevision;
  old: ControllerRevision[];
  /** The current revision's controller-revision-hash (the label new pods get). */
  hash: string;
}

function controllerRefOf(ds: DaemonSet): OwnerReference {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    name: ds.metadata.name ?? '',
    uid: ds.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/**
 * constructHistory: splits the DaemonSet's revisions (`owned`: those it controls) into the
 * current one and the old ones, creating the current one (snapshot) when none matches, and
 * renumbering it to max(old)+1 when lower. Duplicates of the current one are deleted
 * (dedupCurHistories, keeping the highest revision).
 * @throws the API error of a write; on a name collision with a different revision, bumps
 *   status.collisionCount and throws so the sync is retried with the new hash.
 */
export async function constructHistory(
  client: RestClient,
  ds: DaemonSet,
  owned: readonly ControllerRevision[],
): Promise<History> {
  const current: ControllerRevision[] = [];
  const old: ControllerRevision[] = [];
  for (const rev of owned) (matchesRevision(ds, rev) ? current : old).push(rev);
  const next = old.reduce((m, r) => Math.max(m, r.revision ?? 0), 0) + 1;
  let cur: ControllerRevision;
  if (current.length === 0) {
    cur = await snapshot(client, ds, next);
  } else {
    current.sort((a, b) => (b.revision ?? 0) - (a.revision ?? 0));
    cur = current[0]!;
    for (const dup of current.slice(1)) {
      await client
        .delete(resources.controllerrevisions, dup.metadata.namespace, dup.metadata.name!)
        .catch(() => {});
    }
    if ((cur.revision ?? 0) < next) {
      cur = await client.update<ControllerRevision>(resources.controllerrevisions, {
        ...cur,
        revision: next,
      });
    }
  }
  const hash = cur.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? cur.metadata.name ?? '';
  return { cur, old, hash };
}

async function snapshot(client: RestClient, ds: DaemonSet, revision: number): Promise<ControllerRevision> {
  const hash = computeHash(ds.spec.template, ds.status?.collisionCount);
  const name = `${ds.metadata.name ?? ''}-${hash}`;
  const rev: ControllerRevision = {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name,
      namespace: ds.metadata.namespace,
      labels: { ...ds.spec.template.metadata?.labels, [CONTROLLER_REVISION_HASH_LABEL]: hash },
      ...(ds.metadata.annotations ? { annotations: { ...ds.metadata.annotations } } : {}),
      ownerReferences: [controllerRefOf(ds)],
    },
    data: revisionData(ds),
    revision,
  };
  try {
    return await client.create<ControllerRevision>(resources.controllerrevisions, rev);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    const existing = await client.get<ControllerRevision>(
      resources.controllerrevisions,
      ds.metadata.namespace,
      name,
    );
    if (matchesRevision(ds, existing)) return existing;
    // A hash collision with another template: bump collisionCount (on a fresh read) and retry.
    const fresh = await client.get<DaemonSet>(resources.daemonsets, ds.metadata.namespace, ds.metadata.name!);
    if ((fresh.status?.collisionCount ?? 0) === (ds.status?.collisionCount ?? 0)) {
      await client.updateStatus<DaemonSet>(resources.daemonsets, {
        ...fresh,
        status: {
          ...fresh.status!,
          collisionCount: (fresh.status?.collisionCount ?? 0) + 1,
        },
      });
    }
    throw err;
  }
}

/**
 * cleanupHistory: deletes the oldest old revisions beyond spec.revisionHistoryLimit
 * (default 10), never one whose hash a live pod still carries (`liveHashes`).
 * @throws the API error of a delete.
 */
export async function cleanupHistory(
  client: RestClient,
  ds: DaemonSet,
  old: readonly ControllerRevision[],
  liveHashes: ReadonlySet<string>,
): Promise<void> {
  let toKill = old.length - (ds.spec.revisionHistoryLimit ?? 10);
  if (toKill <= 0) return;
  const sorted = [...old].sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0));
  for (const rev of sorted) {
    if (toKill <= 0) break;
    if (liveHashes.has(rev.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? '')) continue;
    await client.delete(resources.controllerrevisions, rev.metadata.namespace, rev.metadata.name!);
    toKill--;
  }
}
