/**
 * Server-side apply (`application/apply-patch+yaml`), as Kubernetes' field manager and
 * structured-merge-diff do it:
 *
 * 1. The applied configuration must be of the request's apiVersion and kind and carry no
 *    managedFields (400 otherwise); it must decode into the kind's schema, field names and
 *    scalar types included (a 500 without reason otherwise, as upstream's field manager).
 * 2. It is merged into the live object (ssa-schema.ts says how lists and maps merge).
 * 3. The applier now owns exactly the fields the configuration sets. Fields it owned
 *    before and no longer sets are removed from the object unless another manager owns
 *    them.
 * 4. Fields the merge changes that another manager owns are conflicts: 409 listing them,
 *    unless `force`, which moves their ownership to the applier. Setting a field to the
 *    value it already has is no conflict: the field is then shared.
 * 5. An object without managedFields gets them first: everything it holds is owned by an
 *    Update manager 'before-first-apply'.
 * 6. For the manager 'kubectl' (`kubectl apply --server-side`), conflicts on fields whose
 *    live value still equals the client-side `kubectl.kubernetes.io/last-applied-configuration`
 *    are forced (the migration from client-side apply), and that annotation, if present,
 *    is rewritten to the new configuration.
 */
import type { KubeObject } from '../../../api/object.js';
import { rfc3339 } from '../../../api/object.js';
import { TOTAL_ANNOTATION_SIZE_LIMIT_BYTES } from '../../../api/meta/validation.js';
import { ApiError, badRequest, internalError, unknownError } from '../status.js';
import { FieldSet, pathString } from './fieldset.js';
import { canonicalJson, deepCopy, deepEqual, isObject, type JsonObject } from './json.js';
import {
  decodeManagedFields,
  encodeManagedFields,
  managerId,
  printManager,
  stripManager,
  type Managers,
} from './managed-fields.js';
import { ApplyConflicts, reassignOwnership, withoutTopLevel, type Conflict } from './ownership.js';
import { updateManagers, withoutManagedFields } from './record-update.js';
import { compare, merge, prune, rootPlace, toFieldSet, validateApplied, type Place } from './typed.js';

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** The manager name kubectl uses for `kubectl apply --server-side`. */
const KUBECTL_MANAGER = 'kubectl';

export interface ServerSideApplyOptions {
  /** The live object; undefined when the apply creates it. Never modified. */
  live: KubeObject | undefined;
  /** The applied configuration (the decoded request body). Never modified. */
  applied: JsonObject;
  /** The client-node model of the kind, e.g. 'V1Deployment'. */
  model: string;
  /** The request's group/version ('apps/v1', 'v1') and kind. */
  apiVersion: string;
  kind: string;
  /** The `fieldManager` query parameter (required, checked by the caller). */
  fieldManager: string;
  force: boolean;
  now: Date;
  /** 'status', ... for applies through a subresource. */
  subresource?: string;
  /** Top-level fields the strategy resets on this path (e.g. `['status']`): never owned. */
  resetFields?: readonly string[];
}

/** `apps/v1, Kind=Deployment` / `/v1, Kind=Pod`: Go's GroupVersionKind.String(). */
function gvkString(apiVersion: unknown, kind: unknown): string {
  const av = typeof apiVersion === 'string' ? apiVersion : '';
  const slash = av.indexOf('/');
  const group = slash >= 0 ? av.slice(0, slash) : '';
  const version = slash >= 0 ? av.slice(slash + 1) : av;
  return `${group}/${version}, Kind=${typeof kind === 'string' ? kind : ''}`;
}

/**
 * Applies a configuration to the live object (or to nothing, creating it) and returns
 * the resulting object with its managedFields. See the file comment for the rules.
 * @throws ApiError 400 BadRequest for a configuration of another kind/version or one
 *   carrying managedFields; 500 with reason Unknown (`failed to create typed patch
 *   object (<ns>/<name>; <gvk>): <SMD's errors>`) for one that does not fit the schema,
 *   as kube-apiserver answers; 409 Conflict
 *   (`Apply failed with N conflict(s): ...`, causes of type FieldManagerConflict) for
 *   conflicts without force; 500 for live managedFields that cannot be decoded.
 */
export function serverSideApply(opts: ServerSideApplyOptions): KubeObject {
  const { applied } = opts;
  if (applied.apiVersion !== opts.apiVersion || applied.kind !== opts.kind) {
    throw badRequest(`invalid object type: ${gvkString(applied.apiVersion, applied.kind)}`);
  }
  const appliedMeta = isObject(applied.metadata) ? applied.metadata : {};
  if (appliedMeta.managedFields !== undefined && appliedMeta.managedFields !== null) {
    throw badRequest('metadata.managedFields must be nil');
  }
  const place = rootPlace(opts.model);
  const errs = validateApplied(applied, place);
  if (errs.length > 0) {
    const ns = typeof appliedMeta.namespace === 'string' ? appliedMeta.namespace : '';
    const name = typeof appliedMeta.name === 'string' ? appliedMeta.name : '';
    const detail = errs.length === 1 ? errs[0]! : ['errors:', ...errs.map((e) => `  ${e}`)].join('\n');
    // A plain error in the field manager (structuredmerge.go), so a 500 without a reason.
    throw unknownError(
      `failed to create typed patch object (${ns}/${name}; ${gvkString(applied.apiVersion, applied.kind)}): ${detail}`,
    );
  }
  let managers: Managers;
  try {
    managers = decodeManagedFields(opts.live?.metadata?.managedFields);
  } catch (err) {
    throw internalError(`failed to decode managed fields: ${(err as Error).message}`);
  }

  let result: KubeObject;
  try {
    result = applyOnce(opts, place, cloneManagers(managers), opts.force);
  } catch (err) {
    if (!(err instanceof ApplyConflicts)) throw err;
    let remaining = err.conflicts;
    if (opts.fieldManager === KUBECTL_MANAGER) {
      const allowed = allowedByLastApplied(opts, place);
      remaining = remaining.filter((c) => !allowed?.has(c.path));
    }
    if (remaining.length > 0) throw conflictError(remaining);
    result = applyOnce(opts, place, cloneManagers(managers), true);
  }

  if (opts.fieldManager === KUBECTL_MANAGER) updateLastApplied(result, applied);
  if (!opts.live) wipeSystemFields(result);
  return result;
}

function cloneManagers(managers: Managers): Managers {
  const out: Managers = new Map();
  for (const [id, m] of managers) out.set(id, { ...m, set: m.set.copy() });
  return out;
}

function applyOnce(
  opts: ServerSideApplyOptions,
  place: Place,
  managers: Managers,
  force: boolean,
): KubeObject {
  const resetFields = opts.resetFields ?? [];
  const subresource = opts.subresource ?? '';
  const live = withoutManagedFields(opts.live);
  if (managers.size === 0 && opts.live) {
    // Everything the object already holds belongs to someone before its first apply.
    updateManagers({
      managers,
      live: {},
      next: live,
      place,
      manager: 'before-first-apply',
      apiVersion: opts.apiVersion,
      subresource,
      now: opts.now,
      resetFields,
    });
  }

  const self = managerId({ manager: opts.fieldManager, operation: 'Apply', apiVersion: '', subresource });
  const previous = managers.get(self);
  const lastSet = previous?.set;
  let next = merge(live, opts.applied, place) as KubeObject;
  const set = withoutTopLevel(toFieldSet(opts.applied, place), resetFields);
  managers.set(self, {
    manager: opts.fieldManager,
    operation: 'Apply',
    apiVersion: opts.apiVersion,
    subresource,
    ...(previous?.time ? { time: previous.time } : {}),
    set,
  });
  if (lastSet && !lastSet.empty()) {
    let owned = new FieldSet();
    for (const m of managers.values()) owned = owned.union(m.set);
    next = (prune(next, place, lastSet, owned) ?? {}) as KubeObject;
  }
  reassignOwnership({ live, next, place, managers, self, force, resetFields });
  stripManager(managers, self);
  for (const [id, m] of managers) if (m.set.empty()) managers.delete(id);

  const changed = !deepEqual(live, next);
  const mine = managers.get(self);
  if (changed && mine) mine.time = rfc3339(opts.now);
  const result = changed ? next : live;
  const encoded = encodeManagedFields(managers);
  result.metadata ??= {};
  if (encoded) result.metadata.managedFields = encoded;
  else delete result.metadata.managedFields;
  return result;
}

/** The 409 Kubernetes answers for apply conflicts. */
function conflictError(conflicts: readonly Conflict[]): ApiError {
  const causes = conflicts.map((c) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with ${printManager(c.manager)}`,
    field: pathString(c.path),
  }));
  let message: string;
  if (conflicts.length === 1) {
    const c = conflicts[0]!;
    message = `Apply failed with 1 conflict: conflict with ${printManager(c.manager)}: ${pathString(c.path)}`;
  } else {
    const byManager = new Map<string, Conflict[]>();
    for (const c of conflicts) {
      const id = managerId(c.manager);
      byManager.set(id, [...(byManager.get(id) ?? []), c]);
    }
    const lines: string[] = [];
    for (const id of [...byManager.keys()].sort()) {
      const list = byManager.get(id)!;
      lines.push(`conflicts with ${printManager(list[0]!.manager)}:`);
      for (const c of list) lines.push(`- ${pathString(c.path)}`);
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError(409, 'Conflict', message, { causes });
}

/**
 * The fields a client-side `kubectl apply` last set and that still hold that value: the
 * conflicts `kubectl apply --server-side` may take over. Undefined without a usable
 * annotation.
 */
function allowedByLastApplied(opts: ServerSideApplyOptions, place: Place): FieldSet | undefined {
  const raw = opts.live?.metadata?.annotations?.[LAST_APPLIED_ANNOTATION];
  if (!raw) return undefined;
  let last: unknown;
  try {
    last = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!isObject(last) || last.apiVersion !== opts.apiVersion) return undefined;
  if (validateApplied(last, place).length > 0) return undefined;
  const live = withoutManagedFields(opts.live);
  const c = compare(last, live, place);
  return toFieldSet(last, place).difference(c.modified).difference(c.added).difference(c.removed);
}

/** Rewrites an existing last-applied annotation to `applied` (dropped if it would not fit). */
function updateLastApplied(result: KubeObject, applied: JsonObject): void {
  const annotations = result.metadata?.annotations;
  if (!annotations?.[LAST_APPLIED_ANNOTATION]) return;
  const copy = deepCopy(applied);
  if (isObject(copy.metadata) && isObject(copy.metadata.annotations)) {
    delete copy.metadata.annotations[LAST_APPLIED_ANNOTATION];
  }
  annotations[LAST_APPLIED_ANNOTATION] = `${canonicalJson(copy)}\n`;
  let size = 0;
  for (const [k, v] of Object.entries(annotations)) size += Buffer.byteLength(k) + Buffer.byteLength(v);
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES) delete annotations[LAST_APPLIED_ANNOTATION];
}

/** What an apply that creates an object may not set (Kubernetes' WipeObjectMetaSystemFields). */
function wipeSystemFields(obj: KubeObject): void {
  const meta = obj.metadata;
  if (!meta) return;
  delete meta.creationTimestamp;
  delete meta.uid;
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  delete (meta as Record<string, unknown>).selfLink;
}
