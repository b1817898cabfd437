/**
 * A StatefulSet's ControllerRevisions (Kubernetes' pkg/controller/history and the
 * revision half of stateful_set_utils.go): a revision stores the pod template as the
 * strategic merge patch `{"spec":{"template":{..., "$patch":"replace"}}}` (getPatch), is
 * named `<set>-<hash>` with the hash also in its `controller-revision-hash` label, and
 * carries a revision number; applying one to the set gives the set at that revision
 * (ApplyRevision). `kubectl rollout history|undo statefulset/x` reads and re-applies them.
 */
import type { ControllerRevision, StatefulSet } from '../../../api/types.js';
import { canonicalJSON, safeEncodeString } from '../deployment/hash.js';
import { CONTROLLER_REVISION_HASH_LABEL, setControllerRef } from './utils.js';

export type { ControllerRevision } from '../../../api/types.js';

const FNV32_OFFSET = 0x811c9dc5;
const FNV32_PRIME = 0x01000193;

/** FNV-1 (not 1a) 32 over `bytes`, as Go's hash/fnv New32 that HashControllerRevision uses. */
function fnv1(bytes: Uint8Array, h = FNV32_OFFSET): number {
  let x = h >>> 0;
  for (const b of bytes) {
    x = Math.imul(x, FNV32_PRIME) >>> 0;
    x ^= b;
  }
  return x >>> 0;
}

/**
 * The patch a revision stores (getPatch): the set's pod template, to be replaced whole.
 * The template is copied; `$patch: replace` makes a strategic merge patch swap it in.
 */
export function revisionData(set: StatefulSet): { spec: { template: Record<string, unknown> } } {
  return { spec: { template: { ...structuredClone(set.spec.template), $patch: 'replace' } } };
}

/**
 * HashControllerRevision: FNV-1 32 of the data's JSON (canonical: sorted keys, empty
 * values left out) and, with a collisionCount, its decimal digits; the sum in decimal
 * through SafeEncodeString.
 */
export function hashRevision(data: unknown, collisionCount: number | undefined): string {
  const enc = new TextEncoder();
  let h = fnv1(enc.encode(canonicalJSON(data)));
  if (collisionCount !== undefined) h = fnv1(enc.encode(String(collisionCount)), h);
  return safeEncodeString(String(h));
}

/** ControllerRevisionName: `<prefix>-<hash>`, the prefix cut to 223 characters. */
export function revisionName(prefix: string, hash: string): string {
  return `${prefix.length > 223 ? prefix.slice(0, 223) : prefix}-${hash}`;
}

/**
 * The revision of the set's current template (newRevision / NewControllerRevision): named
 * and labelled by its hash, the template's labels, the set's annotations, the set as
 * controller, number `revision`.
 */
export function newRevision(set: StatefulSet, revision: number, collisionCount: number): ControllerRevision {
  const data = revisionData(set);
  const hash = hashRevision(data, collisionCount);
  const annotations = set.metadata.annotations;
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: revisionName(set.metadata.name ?? '', hash),
      namespace: set.metadata.namespace,
      labels: { ...set.spec.template.metadata?.labels, [CONTROLLER_REVISION_HASH_LABEL]: hash },
      ...(annotations && Object.keys(annotations).length > 0 ? { annotations: { ...annotations } } : {}),
      ownerReferences: [setControllerRef(set)],
    },
    data,
    revision,
  };
}

/** Same data (EqualRevision: the raw bytes, here the canonical JSON). */
export function equalRevision(a: ControllerRevision, b: ControllerRevision): boolean {
  return canonicalJSON(a.data) === canonicalJSON(b.data);
}

/** Oldest first: by revision number, then creation time, then name (SortControllerRevisions). */
export function sortRevisions(revisions: ControllerRevision[]): ControllerRevision[] {
  return revisions.sort(
    (a, b) =>
      a.revision - b.revision ||
      (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
      (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
  );
}

/** One more than the highest revision number, 1 for none (nextRevision; `revisions` sorted). */
export function nextRevision(revisions: readonly ControllerRevision[]): number {
  return revisions.length === 0 ? 1 : revisions[revisions.length - 1]!.revision + 1;
}

/**
 * The set at a revision (ApplyRevision): a copy whose pod template is the revision's
 * (the stored patch replaces `spec.template` whole).
 */
export function applyRevision(set: StatefulSet, revision: ControllerRevision): StatefulSet {
  const copy = structuredClone(set);
  const template = (revision.data as { spec?: { template?: Record<string, unknown> } } | undefined)?.spec
    ?.template;
  if (template) {
    const t = structuredClone(template);
    delete t.$patch;
    copy.spec.template = t as unknown as StatefulSet['spec']['template'];
  }
  return copy;
}
