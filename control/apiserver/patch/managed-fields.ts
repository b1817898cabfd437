/**
 * `metadata.managedFields` in memory and on the wire (k8s.io/apimachinery
 * pkg/util/managedfields/internal: managedfields.go, buildmanagerinfo.go,
 * capmanagers.go, stripmeta.go).
 *
 * A manager is identified by its name, operation, subresource and — for Update only —
 * apiVersion: an Apply manager keeps one entry whatever version it applies with, while
 * the same updater writing through apps/v1 and apps/v1beta1 has two.
 */
import type { ManagedFieldsEntry } from '../../../api/object.js';
import { FieldSet } from './fieldset.js';
import { isObject } from './json.js';

export type Operation = 'Apply' | 'Update';

/** One manager's ownership. */
export interface Manager {
  manager: string;
  operation: Operation;
  apiVersion: string;
  /** '' for the main resource. */
  subresource: string;
  /** RFC 3339, when this manager last changed the object. */
  time?: string;
  set: FieldSet;
}

/** Managers by identifier (see `managerId`). */
export type Managers = Map<string, Manager>;

/** The identity of a manager, as Kubernetes' BuildManagerIdentifier (a JSON string). */
export function managerId(m: Pick<Manager, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  const id: Record<string, string> = { manager: m.manager, operation: m.operation };
  if (m.operation === 'Update' && m.apiVersion) id.apiVersion = m.apiVersion;
  if (m.subresource) id.subresource = m.subresource;
  return JSON.stringify(id);
}

/**
 * Managers of an object's `metadata.managedFields`.
 * @throws Error on an entry Kubernetes would refuse to decode (operation not Apply or
 *   Update, no apiVersion, fieldsType not FieldsV1, malformed fieldsV1).
 */
export function decodeManagedFields(entries: readonly ManagedFieldsEntry[] | undefined): Managers {
  const managers: Managers = new Map();
  (entries ?? []).forEach((e, i) => {
    if (e.operation !== 'Apply' && e.operation !== 'Update') {
      throw new Error('operation must be `Apply` or `Update`');
    }
    if (!e.apiVersion) throw new Error('apiVersion must not be empty');
    if (e.fieldsType !== 'FieldsV1') {
      throw new Error(
        e.fieldsType
          ? `invalid fieldsType ${JSON.stringify(e.fieldsType)} in managed fields entry ${i}`
          : `missing fieldsType in managed fields entry ${i}`,
      );
    }
    const m: Manager = {
      manager: e.manager ?? '',
      operation: e.operation,
      apiVersion: e.apiVersion,
      subresource: e.subresource ?? '',
      set: FieldSet.fromFieldsV1(e.fieldsV1 ?? {}),
    };
    if (e.time) m.time = e.time;
    managers.set(managerId(m), m);
  });
  return managers;
}

/**
 * The wire form of `managers`, sorted as Kubernetes sorts it (Apply before Update, then
 * oldest first, then by manager, apiVersion, subresource). Undefined when there are none.
 */
export function encodeManagedFields(managers: Managers): ManagedFieldsEntry[] | undefined {
  const entries: ManagedFieldsEntry[] = [];
  for (const m of managers.values()) {
    const e: ManagedFieldsEntry = { manager: m.manager, operation: m.operation, apiVersion: m.apiVersion };
    if (m.time) e.time = m.time;
    e.fieldsType = 'FieldsV1';
    e.fieldsV1 = m.set.toFieldsV1();
    if (m.subresource) e.subresource = m.subresource;
    entries.push(e);
  }
  if (entries.length === 0) return undefined;
  const seconds = (t: string | undefined): number => (t ? Math.floor(Date.parse(t) / 1000) || 0 : 0);
  const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  return entries.sort(
    (p, q) =>
      cmp(p.operation!, q.operation!) ||
      seconds(p.time) - seconds(q.time) ||
      cmp(p.manager!, q.manager!) ||
      cmp(p.apiVersion!, q.apiVersion!) ||
      cmp(p.subresource ?? '', q.subresource ?? ''),
  );
}

/**
 * Whether a request's managedFields ask for a reset: an empty list, or a list holding one
 * empty entry (how a client clears managedFields with an update).
 */
export function isResetManagedFields(mf: unknown): boolean {
  if (!Array.isArray(mf)) return false;
  if (mf.length === 0) return true;
  return mf.length === 1 && isObject(mf[0]) && Object.keys(mf[0]).length === 0;
}

/** How conflicts name a manager: `"kubectl"`, `"kube-controller-manager" using apps/v1`. */
export function printManager(
  m: Pick<Manager, 'manager' | 'operation' | 'apiVersion' | 'subresource'>,
): string {
  let s = JSON.stringify(m.manager);
  if (m.subresource) s += ` with subresource ${JSON.stringify(m.subresource)}`;
  if (m.operation === 'Update') s += ` using ${m.apiVersion}`;
  return s;
}

/**
 * Fields nobody owns, whatever they set (Kubernetes' stripMeta): type meta and the
 * metadata the server assigns. Removed from a manager's set after each operation.
 */
export const STRIPPED_FIELDS: FieldSet = FieldSet.of(
  ['f:apiVersion'],
  ['f:kind'],
  ['f:metadata'],
  ['f:metadata', 'f:name'],
  ['f:metadata', 'f:namespace'],
  ['f:metadata', 'f:creationTimestamp'],
  ['f:metadata', 'f:selfLink'],
  ['f:metadata', 'f:uid'],
  ['f:metadata', 'f:clusterName'],
  ['f:metadata', 'f:generation'],
  ['f:metadata', 'f:managedFields'],
  ['f:metadata', 'f:resourceVersion'],
);

/** Strips STRIPPED_FIELDS from manager `id`'s set, dropping the manager if nothing is left. */
export function stripManager(managers: Managers, id: string): void {
  const m = managers.get(id);
  if (!m) return;
  m.set = m.set.difference(STRIPPED_FIELDS);
  if (m.set.empty()) managers.delete(id);
}

/** Kubernetes keeps at most this many Update managers. */
export const MAX_UPDATE_MANAGERS = 10;

/**
 * Folds the oldest Update managers into one `ancient-changes` manager per apiVersion
 * once there are more than `max` (Kubernetes' capManagers).
 */
export function capUpdateManagers(managers: Managers, max = MAX_UPDATE_MANAGERS): void {
  const updaters = [...managers.entries()].filter(([, m]) => m.operation === 'Update');
  if (updaters.length <= max) return;
  const seconds = (m: Manager): number => (m.time ? Math.floor(Date.parse(m.time) / 1000) || 0 : 0);
  updaters.sort(([ia, a], [ib, b]) => seconds(a) - seconds(b) || (ia < ib ? -1 : ia > ib ? 1 : 0));
  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (const [id, m] of updaters) {
    if (length <= max) break;
    const bucketId = managerId({
      manager: 'ancient-changes',
      operation: 'Update',
      apiVersion: m.apiVersion,
      subresource: '',
    });
    const first = firstOfVersion.get(m.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(m.apiVersion, id);
      continue;
    }
    let bucket = managers.get(bucketId);
    if (!bucket) {
      const f = managers.get(first)!;
      managers.delete(first);
      bucket = { ...f, manager: 'ancient-changes', subresource: '' };
      managers.set(bucketId, bucket);
    }
    bucket.set = m.set.union(bucket.set);
    if (m.time) bucket.time = m.time;
    else delete bucket.time;
    managers.delete(id);
    length--;
  }
}
