/**
 * The pod-template-hash: the name suffix and label value that tie a ReplicaSet to the pod
 * template it was made from (Kubernetes' controller.ComputeHash and
 * deploymentutil.EqualIgnoreHash).
 *
 * Kubernetes feeds a spew dump of the Go struct into FNV-1a 32; a Go dump cannot be
 * reproduced from JSON, so k8ts hashes a canonical JSON form instead (sorted keys, empty
 * values dropped: see canonicalJSON). The hashes therefore differ from a real cluster's,
 * but they have the same shape (`5d9c7b8f6`) and the same properties: equal templates give
 * equal hashes, and a collisionCount changes the hash.
 */
import type { PodTemplateSpec } from '../../../api/types.js';

/** The label (and selector key) that carries the hash: apps/v1 DefaultDeploymentUniqueLabelKey. */
export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';

/** The alphabet of apimachinery's rand.String / SafeEncodeString: no vowels, no 0/1/3, so no words. */
const SAFE_ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

/**
 * Maps every character of `s` to SAFE_ALPHANUMS[codePoint % 27] (apimachinery's
 * rand.SafeEncodeString): `"1234"` → `"5678"`. The output has as many characters as `s`
 * has code points.
 */
export function safeEncodeString(s: string): string {
  let out = '';
  for (const ch of s) out += SAFE_ALPHANUMS[ch.codePointAt(0)! % SAFE_ALPHANUMS.length];
  return out;
}

const FNV32_OFFSET = 0x811c9dc5;
const FNV32_PRIME = 0x01000193;

/** Continues an FNV-1a 32 hash `h` over `bytes`; returns the new state as an unsigned 32-bit number. */
export function fnv1a32(bytes: Uint8Array, h: number = FNV32_OFFSET): number {
  let x = h >>> 0;
  for (const b of bytes) {
    x ^= b;
    x = Math.imul(x, FNV32_PRIME) >>> 0;
  }
  return x >>> 0;
}

/** True for the values Go's JSON encoding leaves out of an omitempty field and a nil compares equal to. */
function isEmpty(v: unknown): boolean {
  if (v === null || v === undefined) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.keys(v).length === 0;
  return false;
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) {
    const c = canonical((v as Record<string, unknown>)[k]);
    if (!isEmpty(c)) out[k] = c;
  }
  return out;
}

/**
 * The canonical JSON text of a value: object keys sorted, and fields whose value is null,
 * an empty object or an empty array left out (recursively) — as apimachinery's semantic
 * equality treats a nil map or slice as equal to an empty one, and as a template that went
 * through a Go client (`kubectl rollout undo`) comes back with `creationTimestamp: null`
 * and `resources: {}`. `false`, `0` and `""` are kept: for pointer fields they mean
 * something. Array order is kept.
 */
export function canonicalJSON(v: unknown): string {
  const c = canonical(v);
  return JSON.stringify(isEmpty(c) ? {} : c);
}

/** A copy of `template` without the pod-template-hash label (the form that is hashed and compared). */
export function withoutHashLabel(template: PodTemplateSpec): PodTemplateSpec {
  const copy = structuredClone(template);
  if (copy.metadata?.labels) delete copy.metadata.labels[POD_TEMPLATE_HASH_LABEL];
  return copy;
}

/**
 * The pod-template-hash of `template` (controller.ComputeHash): FNV-1a 32 over the
 * canonical JSON of the template (UTF-8), followed, when `collisionCount` is set, by the
 * count as 8 little-endian bytes (a uint32 and four zero bytes, as Kubernetes writes it);
 * the sum is printed in decimal and passed through safeEncodeString. 1 to 10 characters.
 * A pod-template-hash label already on the template is ignored.
 */
export function computeHash(template: PodTemplateSpec, collisionCount?: number): string {
  let h = fnv1a32(new TextEncoder().encode(canonicalJSON(withoutHashLabel(template))));
  if (collisionCount !== undefined && collisionCount !== null) {
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setUint32(0, collisionCount >>> 0, true);
    h = fnv1a32(bytes, h);
  }
  return safeEncodeString(String(h));
}

/**
 * True when two pod templates are the same apart from the pod-template-hash label
 * (deploymentutil.EqualIgnoreHash), compared in canonical form (see canonicalJSON).
 */
export function equalIgnoreHash(a: PodTemplateSpec, b: PodTemplateSpec): boolean {
  return canonicalJSON(withoutHashLabel(a)) === canonicalJSON(withoutHashLabel(b));
}
