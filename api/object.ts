/**
 * API objects as they travel on the wire and sit in the store: plain JSON, timestamps as
 * RFC 3339 strings. (The client-node model classes describe the same shapes with `Date`
 * fields and serve as the schema source; the server itself works on plain JSON.)
 */

/** metav1.OwnerReference. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** metav1.ManagedFieldsEntry (server-side apply). */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: 'Apply' | 'Update';
  apiVersion?: string;
  time?: string;
  fieldsType?: 'FieldsV1';
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

/** metav1.ObjectMeta, wire form. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  /** RFC 3339, seconds precision. */
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: ManagedFieldsEntry[];
}

/** Any API object: `apiVersion`, `kind`, `metadata`, and kind-specific fields. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [field: string]: unknown;
}

/** metav1.ListMeta. */
export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

/** A `<Kind>List`. */
export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion: string;
  kind: string;
  metadata: ListMeta;
  items: T[];
}

/** The last second rfc3339 formatted (epoch seconds) and its text. */
let rfc3339Memo = { second: Number.NaN, text: '' };

/**
 * RFC 3339 at seconds precision, as metav1.Time serializes (`2026-11-30T10:00:00Z`).
 * Formatting costs microseconds and busy writers (every managedFields entry, every Event)
 * stamp the same second over and over, so the last second's text is kept.
 * @throws RangeError for an invalid Date.
 */
export function rfc3339(d: Date): string {
  const second = Math.floor(d.getTime() / 1000);
  if (second !== rfc3339Memo.second) {
    rfc3339Memo = { second, text: d.toISOString().replace(/\.\d{3}Z$/, 'Z') };
  }
  return rfc3339Memo.text;
}
