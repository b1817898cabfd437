/**
 * Field ownership for writes that are not server-side apply — create, update (PUT),
 * JSON / merge / strategic-merge patch — as Kubernetes' field manager records them with
 * operation `Update`: the writing manager takes every field the write changed or added,
 * away from whoever owned it before, so that a later Apply by someone else conflicts on
 * exactly those fields.
 */
import type { KubeObject, ManagedFieldsEntry } from '../../../api/object.js';
import { rfc3339 } from '../../../api/object.js';
import { findKind } from '../resources.js';
import { deepCopy, isObject } from './json.js';
import {
  capUpdateManagers,
  decodeManagedFields,
  encodeManagedFields,
  isResetManagedFields,
  managerId,
  STRIPPED_FIELDS,
  type Managers,
} from './managed-fields.js';
import { reassignOwnership } from './ownership.js';
import { rootPlace, type Place } from './typed.js';

export interface RecordUpdateOptions {
  /** The client-node model of the kind; default: looked up from `apiVersion` and `obj.kind`. */
  model?: string;
  /** 'status', 'scale', ... for writes through a subresource; default: the main resource. */
  subresource?: string;
  /**
   * Top-level fields whose changes the strategy discards on this path (`['status']` for the
   * main resource of kinds with a status subresource); they move no ownership.
   */
  resetFields?: readonly string[];
}

/** The object without `metadata.managedFields` (what ownership is computed over). */
export function withoutManagedFields(obj: KubeObject | undefined): KubeObject {
  if (!obj) return {};
  const copy = deepCopy(obj);
  if (copy.metadata) delete copy.metadata.managedFields;
  return copy;
}

/**
 * `obj` as ownership sees it, without `metadata.managedFields`, sharing everything else
 * with `obj`: for reading only (comparing versions), where a deep copy would be wasted.
 */
function ownershipView(obj: KubeObject | undefined): KubeObject {
  if (!obj) return {};
  if (obj.metadata?.managedFields === undefined) return obj;
  const { managedFields: _mf, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

/** Decodes managedFields, answering an empty set of managers for anything undecodable. */
function decodeOrEmpty(mf: readonly ManagedFieldsEntry[] | undefined): Managers {
  try {
    return decodeManagedFields(mf);
  } catch {
    return new Map();
  }
}

/**
 * The managers an Update starts from (Kubernetes' decodeLiveOrNew): those the request
 * carries if it sends any (an empty list, or one empty entry, resets them), else the live
 * object's. Subresource writes always start from the live object's.
 */
function startingManagers(obj: KubeObject, old: KubeObject | undefined, subresource: string): Managers {
  const liveManagers = (): Managers => decodeOrEmpty(old?.metadata?.managedFields);
  if (subresource) return liveManagers();
  const sent: unknown = obj.metadata?.managedFields;
  if (isResetManagedFields(sent)) return new Map();
  if (!Array.isArray(sent)) return liveManagers();
  const fromRequest = decodeOrEmpty(sent as ManagedFieldsEntry[]);
  return fromRequest.size > 0 ? fromRequest : liveManagers();
}

/**
 * Records a non-apply write of `obj` (replacing `old`, undefined for a create) by
 * `manager` in `obj.metadata.managedFields`, with operation 'Update', `apiVersion` (the
 * group/version the request was made in, e.g. 'apps/v1') and time `now` (only if the
 * manager changed something).
 *
 * As Kubernetes: an existing object that has no managedFields stays untracked (until its
 * first apply); an empty manager name is recorded as 'unknown'; more than 10 Update
 * managers are folded into 'ancient-changes'. Call it after defaulting, so defaulted
 * fields belong to the writer as they do in Kubernetes.
 *
 * Mutates and returns `obj`; never throws (undecodable managedFields are treated as none).
 */
export function recordUpdate(
  obj: KubeObject,
  old: KubeObject | undefined,
  manager: string,
  apiVersion: string,
  now: Date,
  options: RecordUpdateOptions = {},
): KubeObject {
  const subresource = options.subresource ?? '';
  const managers = startingManagers(obj, old, subresource);
  const meta = (obj.metadata ??= {});
  if (managers.size === 0 && old?.metadata?.uid) {
    // Kubernetes does not start tracking an existing object on an update.
    delete meta.managedFields;
    return obj;
  }
  const model = options.model ?? findKind(apiVersion, obj.kind ?? '')?.model ?? '';
  const place: Place = rootPlace(model);
  // updateManagers only compares the two versions, so views do instead of copies.
  const live = ownershipView(old);
  const next = ownershipView(obj);
  updateManagers({
    managers,
    live,
    next,
    place,
    manager: manager || 'unknown',
    apiVersion,
    subresource,
    now,
    resetFields: options.resetFields ?? [],
  });
  const encoded = encodeManagedFields(managers);
  if (encoded) meta.managedFields = encoded;
  else delete meta.managedFields;
  return obj;
}

export interface UpdateManagersInput {
  managers: Managers;
  live: unknown;
  next: unknown;
  place: Place;
  manager: string;
  apiVersion: string;
  subresource: string;
  now: Date;
  resetFields: readonly string[];
}

/**
 * The Update operation on a set of managers (mutated in place): others lose what changed,
 * the writer gains it (minus the fields nobody owns), and its time moves to `now` if it
 * gained anything.
 */
export function updateManagers(input: UpdateManagersInput): void {
  const id = managerId({
    manager: input.manager,
    operation: 'Update',
    apiVersion: input.apiVersion,
    subresource: input.subresource,
  });
  const own = input.managers.get(id);
  const c = reassignOwnership({
    live: isObject(input.live) ? input.live : {},
    next: isObject(input.next) ? input.next : {},
    place: input.place,
    managers: input.managers,
    self: id,
    force: true,
    resetFields: input.resetFields,
  });
  const gained = (c.modified.empty() ? c.added : c.modified.union(c.added)).difference(STRIPPED_FIELDS);
  if (gained.empty()) {
    if (own) {
      own.set = own.set.difference(c.removed);
      if (own.set.empty()) input.managers.delete(id);
    }
  } else {
    // `gained` is a set of its own (difference() builds a new one), so it may be kept as is.
    const set = own ? own.set.difference(c.removed).difference(gained).union(gained) : gained;
    input.managers.set(id, {
      manager: input.manager,
      operation: 'Update',
      apiVersion: input.apiVersion,
      subresource: input.subresource,
      time: rfc3339(input.now),
      set,
    });
  }
  capUpdateManagers(input.managers);
}
