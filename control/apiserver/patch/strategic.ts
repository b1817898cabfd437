/**
 * Strategic merge patch (`application/strategic-merge-patch+json`), with the semantics
 * of k8s.io/apimachinery/pkg/util/strategicpatch applying a patch on the server:
 *
 * - Maps merge key by key; `null` deletes a key; `$patch: replace` replaces a map,
 *   `$patch: delete` empties it; `$retainKeys: [...]` drops the keys not listed.
 * - Lists whose field has strategy `merge` (patch-meta.ts) merge: items of lists of
 *   objects are matched by the merge key and merged (new ones added), `{$patch: delete,
 *   <key>: v}` removes an item, `{$patch: replace}` replaces the list with the patch's
 *   other items; lists of scalars are merged as sets, and
 *   `$deleteFromPrimitiveList/<field>: [...]` removes values. Other lists are replaced.
 * - `$setElementOrder/<field>: [...]` (sent by kubectl) sets the order of the patched
 *   items; items only on the server keep their place relative to them. Without it,
 *   patched items come first in patch order, as Kubernetes orders them.
 * - Fields the model does not know (and kinds without a model) follow merge-patch rules.
 *
 * Errors are `SmpError`s carrying the HTTP code Kubernetes answers (400, or 422 for lists
 * of lists and retainKeys mismatches); messages are Kubernetes'.
 */
import { ownValue, setOwnValue } from '../../../api/meta/maps.js';
import { patchMetaOf } from '../patch-meta.js';
import { deepCopy, isObject, jsonTypeName, type JsonObject } from './json.js';
import { elementType, fieldType, typeOfModel, UNTYPED, type SchemaType } from './schema.js';

/** A strategic merge patch that cannot be applied; `code` is 400 or 422. */
export class SmpError extends Error {
  constructor(
    message: string,
    readonly code: 400 | 422 = 400,
  ) {
    super(message);
  }
}

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ELEMENT_ORDER = '$setElementOrder';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList';

const ERR_BAD_PATCH_FORMAT_FOR_PRIMITIVE_LIST = 'invalid patch format of primitive list';
const ERR_BAD_PATCH_FORMAT_FOR_RETAIN_KEYS = 'invalid patch format of retainKeys';
const ERR_BAD_PATCH_FORMAT_FOR_SET_ELEMENT_ORDER = 'invalid patch format of setElementOrder list';

/**
 * Parses a strategic merge patch body and applies it to `original` (client-node model
 * `model`). Neither input is modified.
 * @throws SmpError
 */
export function strategicMergePatch(original: JsonObject, body: string, model: string): JsonObject {
  let patch: unknown;
  try {
    patch = JSON.parse(body);
  } catch (err) {
    throw new SmpError((err as Error).message);
  }
  if (patch === null) patch = {};
  if (!isObject(patch)) {
    throw new SmpError(
      `json: cannot unmarshal ${jsonTypeName(patch)} into Go value of type map[string]interface {}`,
    );
  }
  return applyStrategicPatch(original, patch, model);
}

/** Applies a decoded strategic merge patch to `original`. Neither input is modified. */
export function applyStrategicPatch(original: JsonObject, patch: JsonObject, model: string): JsonObject {
  return mergeMap(deepCopy(original), deepCopy(patch), typeOfModel(model));
}

// ---------------------------------------------------------------------------------------
// Schema lookups (Kubernetes' LookupPatchMeta)
// ---------------------------------------------------------------------------------------

interface SliceMeta {
  elem: SchemaType;
  /** 'merge' or '' (replace); retainKeys is carried by the patch's `$retainKeys`. */
  strategy: string;
  mergeKey: string;
}

function lookupSlice(t: SchemaType, key: string): SliceMeta {
  const elem = elementType(fieldType(t, key));
  if (t.kind !== 'struct') return { elem, strategy: '', mergeKey: '' };
  const meta = patchMetaOf(t.model, key);
  const strategies = meta ? meta.strategy.split(',') : [];
  return {
    elem,
    strategy: strategies.filter((s) => s !== 'retainKeys')[0] ?? '',
    mergeKey: meta?.mergeKey ?? '',
  };
}

// ---------------------------------------------------------------------------------------
// Maps
// ---------------------------------------------------------------------------------------

type Kind = 'object' | 'array' | 'scalar' | 'null';

function kindOf(v: unknown): Kind {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return isObject(v) ? 'object' : 'scalar';
}

function mergeMap(original: JsonObject, patch: JsonObject, schema: SchemaType): JsonObject {
  if (Object.hasOwn(patch, DIRECTIVE)) {
    const directive = patch[DIRECTIVE];
    if (directive === 'replace') {
      delete patch[DIRECTIVE];
      return cleanPatchValue(patch) as JsonObject;
    }
    if (directive === 'delete') return {};
    throw new SmpError(`unknown patch type: ${goString(directive)} in map: ${goString(patch)}`);
  }
  applyRetainKeys(original, patch);
  applySetElementOrder(original, patch, schema);

  for (const [rawKey, patchV] of Object.entries(patch)) {
    let key = rawKey;
    let isDeleteList = false;
    if (rawKey.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      key = directiveTarget(rawKey, DELETE_FROM_PRIMITIVE_LIST, ERR_BAD_PATCH_FORMAT_FOR_PRIMITIVE_LIST);
      isDeleteList = true;
    }
    if (patchV === null) {
      delete original[key];
      continue;
    }
    const originalV = ownValue(original, key);
    if (!Object.hasOwn(original, key) || kindOf(originalV) !== kindOf(patchV)) {
      if (isDeleteList) continue;
      const v = cleanPatchValue(patchV);
      if (v === undefined) delete original[key];
      else setOwnValue(original, key, v);
      continue;
    }
    switch (kindOf(patchV)) {
      case 'object':
        setOwnValue(
          original,
          key,
          mergeMap(originalV as JsonObject, patchV as JsonObject, fieldType(schema, key)),
        );
        break;
      case 'array': {
        const meta = lookupSlice(schema, key);
        setOwnValue(
          original,
          key,
          mergeSliceHandler(originalV as unknown[], patchV as unknown[], meta, isDeleteList),
        );
        break;
      }
      default:
        setOwnValue(original, key, patchV);
    }
  }
  return original;
}

/** `$retainKeys: [...]`: keys of `original` not listed are dropped; the patch may name no others. */
function applyRetainKeys(original: JsonObject, patch: JsonObject): void {
  if (!Object.hasOwn(patch, RETAIN_KEYS)) return;
  const list = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(list)) throw new SmpError(ERR_BAD_PATCH_FORMAT_FOR_RETAIN_KEYS);
  const keep = new Set<unknown>(list);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(DELETE_FROM_PRIMITIVE_LIST) || k.startsWith(SET_ELEMENT_ORDER)) continue;
    if (!keep.has(k)) throw new SmpError(ERR_BAD_PATCH_FORMAT_FOR_RETAIN_KEYS);
  }
  for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k];
}

/** `$setElementOrder/<field>`: merges that field's list and orders it (removing both from `patch`). */
function applySetElementOrder(original: JsonObject, patch: JsonObject, schema: SchemaType): void {
  for (const [directiveKey, order] of Object.entries(patch)) {
    if (!directiveKey.startsWith(SET_ELEMENT_ORDER)) continue;
    delete patch[directiveKey];
    if (!Array.isArray(order)) throw new SmpError(badArgType('[]interface {}', order));
    const key = directiveTarget(directiveKey, SET_ELEMENT_ORDER, ERR_BAD_PATCH_FORMAT_FOR_SET_ELEMENT_ORDER);
    const foundOriginal = Object.hasOwn(original, key);
    const foundPatch = Object.hasOwn(patch, key);
    const originalList = ownValue(original, key);
    const patchList = ownValue(patch, key);
    if (foundOriginal && !Array.isArray(originalList)) {
      throw new SmpError(badArgType('[]interface {}', originalList));
    }
    if (foundPatch && !Array.isArray(patchList)) throw new SmpError(badArgType('[]interface {}', patchList));
    const originalItems = (foundOriginal ? originalList : []) as unknown[];
    const patchItems = (foundPatch ? patchList : []) as unknown[];
    const meta = lookupSlice(schema, key);
    validatePatchWithSetOrderList(patchItems, order, meta.mergeKey);

    let merged: unknown[];
    if (foundOriginal && foundPatch) merged = mergeSliceHandler(originalItems, patchItems, meta, false);
    else if (foundOriginal) merged = originalItems;
    else if (foundPatch) merged = cleanPatchValue(patchItems) as unknown[];
    else continue;

    if (merged.length > 0) {
      const kind = elementKind(originalItems, patchItems);
      const serverOrder =
        foundOriginal && foundPatch && kind === 'object' && meta.strategy === 'merge'
          ? serverOrderAfterMerge(originalItems, patchItems, meta.mergeKey)
          : originalItems;
      const [inOrder, serverOnly] = partition(merged, order, meta.mergeKey);
      merged = normalizeElementOrder(inOrder, serverOnly, order, serverOrder, meta.mergeKey, kind);
    }
    setOwnValue(original, key, merged);
    delete patch[key];
  }
}

/**
 * The server order Kubernetes orders a `$setElementOrder` list by after merging it: the
 * original list as Go's slice aliasing leaves it in strategicpatch — items removed by
 * `$patch: delete` shift the rest left, and items the patch adds are written into the
 * slots that frees (same length as the original). It decides where a new item goes
 * relative to server-only items when kubectl's apply deletes one item and adds another,
 * so it is reproduced here.
 */
function serverOrderAfterMerge(original: unknown[], patch: unknown[], mergeKey: string): unknown[] {
  const view = [...original];
  let len = view.length;
  const sameKey = (o: unknown, item: JsonObject): boolean => isObject(o) && o[mergeKey] === item[mergeKey];
  let replaced = false;
  for (const v of patch) {
    if (!isObject(v) || !Object.hasOwn(v, DIRECTIVE)) continue;
    if (v[DIRECTIVE] === 'replace') replaced = true;
    if (v[DIRECTIVE] !== 'delete') continue;
    for (;;) {
      const i = view.slice(0, len).findIndex((o) => sameKey(o, v));
      if (i < 0) break;
      view.copyWithin(i, i + 1, len);
      len--;
    }
  }
  if (replaced) return view;
  const current = view.slice(0, len);
  for (const v of patch) {
    if (!isObject(v) || Object.hasOwn(v, DIRECTIVE) || current.some((o) => sameKey(o, v))) continue;
    if (current.length < view.length) view[current.length] = v;
    current.push(v);
  }
  return view;
}

/** `$setElementOrder/containers` → `containers`. */
function directiveTarget(key: string, prefix: string, err: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) throw new SmpError(err);
  return key.slice(slash + 1);
}

/** The patched items must appear in the `$setElementOrder` list, in the same relative order. */
function validatePatchWithSetOrderList(patchList: unknown[], order: unknown[], mergeKey: string): void {
  if (order.length === 0 || patchList.length === 0) return;
  const items = mergeKey ? splitDeletes(patchList)[0] : patchList;
  let pi = 0;
  let si = 0;
  while (pi < items.length && si < order.length) {
    if (hasDirective(items[pi])) {
      pi++;
      continue;
    }
    if (mergeKeyValueEqual(items[pi], order[si], mergeKey)) pi++;
    si++;
  }
  if (pi < items.length && si >= order.length) {
    throw new SmpError(
      `The order in patch list:\n${goString(patchList)}\n doesn't match ${SET_ELEMENT_ORDER} list:\n${goString(order)}\n`,
    );
  }
}

function mergeKeyValueEqual(left: unknown, right: unknown, mergeKey: string): boolean {
  if (!mergeKey) return left === right;
  if (!isObject(left)) throw new SmpError(badArgType('map[string]interface {}', left));
  if (!isObject(right)) throw new SmpError(badArgType('map[string]interface {}', right));
  if (!Object.hasOwn(left, mergeKey)) throw new SmpError(noMergeKey(left, mergeKey));
  if (!Object.hasOwn(right, mergeKey)) throw new SmpError(noMergeKey(right, mergeKey));
  return left[mergeKey] === right[mergeKey];
}

// ---------------------------------------------------------------------------------------
// Lists
// ---------------------------------------------------------------------------------------

function mergeSliceHandler(
  original: unknown[],
  patch: unknown[],
  meta: SliceMeta,
  isDeleteList: boolean,
): unknown[] {
  if (meta.strategy === 'merge' || isDeleteList) {
    return mergeSlice(original, patch, meta.elem, meta.mergeKey, isDeleteList);
  }
  return cleanPatchValue(patch) as unknown[];
}

function mergeSlice(
  original: unknown[],
  patch: unknown[],
  elem: SchemaType,
  mergeKey: string,
  isDeleteList: boolean,
): unknown[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = elementKind(original, patch);
  let merged: unknown[];
  let serverOrder = original;
  let patchItems = patch;
  if (kind !== 'object') {
    if (isDeleteList) return original.filter((v) => !patch.includes(v));
    merged = dedupe([...original, ...patch]);
  } else {
    if (!mergeKey) throw new SmpError(`cannot merge lists without merge key for ${schemaName(elem)}`);
    [serverOrder, patchItems] = applyListDirectives(original, patch, mergeKey);
    merged = mergeItemsByKey(serverOrder, patchItems, mergeKey, elem);
  }
  const [inPatch, serverOnly] = partition(merged, patchItems, mergeKey);
  return normalizeElementOrder(inPatch, serverOnly, patchItems, serverOrder, mergeKey, kind);
}

/**
 * Handles list items carrying `$patch`: `delete` removes the original items with that
 * key, `replace` makes the patch's other items the whole list.
 * @returns the original items left and the patch items to merge
 */
function applyListDirectives(
  original: unknown[],
  patch: unknown[],
  mergeKey: string,
): [unknown[], unknown[]] {
  const rest: unknown[] = [];
  let replace = false;
  let kept = original;
  for (const v of patch) {
    const item = v as JsonObject;
    if (!Object.hasOwn(item, DIRECTIVE)) {
      rest.push(item);
      continue;
    }
    switch (item[DIRECTIVE]) {
      case 'delete':
        if (!Object.hasOwn(item, mergeKey)) throw new SmpError(noMergeKey(item, mergeKey));
        kept = kept.filter((o) => !(isObject(o) && o[mergeKey] === item[mergeKey]));
        break;
      case 'replace':
        replace = true;
        break;
      case 'merge':
        throw new SmpError('merging lists cannot yet be specified in the patch');
      default:
        throw new SmpError(`unknown patch type: ${goString(item[DIRECTIVE])} in map: ${goString(item)}`);
    }
  }
  return replace ? [rest.map((v) => cleanPatchValue(v)), []] : [kept, rest];
}

/** Merges each patch item into the original item with the same key, or appends it. */
function mergeItemsByKey(
  original: unknown[],
  patch: unknown[],
  mergeKey: string,
  elem: SchemaType,
): unknown[] {
  const out = [...original];
  for (const v of patch) {
    const item = v as JsonObject;
    if (!Object.hasOwn(item, mergeKey)) throw new SmpError(noMergeKey(item, mergeKey));
    const idx = out.findIndex((o, i) => {
      if (!isObject(o)) throw new SmpError(`value for key ${i} is not a map`);
      return Object.hasOwn(o, mergeKey) && o[mergeKey] === item[mergeKey];
    });
    if (idx >= 0) out[idx] = mergeMap(out[idx] as JsonObject, item, elem);
    else out.push(cleanPatchValue(item));
  }
  return out;
}

function elementKind(...lists: unknown[][]): Kind {
  let first: unknown;
  let seen = false;
  const typeName = (v: unknown): string => (kindOf(v) === 'scalar' ? typeof v : kindOf(v));
  for (const list of lists) {
    for (const v of list) {
      if (!seen) {
        if (Array.isArray(v)) throw new SmpError('lists of lists are not supported', 422);
        first = v;
        seen = true;
      } else if (typeName(v) !== typeName(first)) {
        throw new SmpError(`list element types are not identical: ${goString(lists)}`);
      }
    }
  }
  if (!seen) throw new SmpError('no elements in any of the given slices');
  return kindOf(first);
}

function dedupe(list: unknown[]): unknown[] {
  const out: unknown[] = [];
  for (const v of list) if (!out.includes(v)) out.push(v);
  return out;
}

/** Splits `list` into the items present in `by` (by merge key, or by value) and the others. */
function partition(list: unknown[], by: unknown[], mergeKey: string): [unknown[], unknown[]] {
  const inBy: unknown[] = [];
  const others: unknown[] = [];
  for (const v of list) {
    let found: boolean;
    if (mergeKey) {
      if (!isObject(v)) throw new SmpError(badArgType('map[string]interface {}', v));
      if (!Object.hasOwn(v, mergeKey)) throw new SmpError(noMergeKey(v, mergeKey));
      found = by.some((b) => isObject(b) && b[mergeKey] === v[mergeKey]);
    } else {
      found = by.includes(v);
    }
    (found ? inBy : others).push(v);
  }
  return [inBy, others];
}

/** Position of `v` in `list`: by merge key for objects, by value otherwise; -1 if absent. */
function indexIn(list: unknown[], v: unknown, mergeKey: string, kind: Kind): number {
  if (kind === 'object') {
    const key = isObject(v) ? v[mergeKey] : undefined;
    return list.findIndex((x) => isObject(x) && x[mergeKey] === key);
  }
  return list.indexOf(v);
}

function sortByOrder(items: unknown[], order: unknown[], mergeKey: string, kind: Kind): unknown[] {
  let toSort = items;
  let deleted: unknown[] = [];
  if (kind === 'object') {
    for (const list of [items, order]) {
      for (const v of list) {
        if (!isObject(v)) throw new SmpError(badArgType('map[string]interface {}', v));
        if (!Object.hasOwn(v, mergeKey)) throw new SmpError(noMergeKey(v, mergeKey));
      }
    }
    [toSort, deleted] = splitDeletes(items);
  }
  const sorted = [...toSort].sort((a, b) => {
    const ia = indexIn(order, a, mergeKey, kind);
    const ib = indexIn(order, b, mergeKey, kind);
    return ia >= 0 && ib >= 0 ? ia - ib : 0;
  });
  return [...sorted, ...deleted];
}

/**
 * Orders the merged list: patched items by `patchOrder`, server-only items by
 * `serverOrder`, then interleaves them, placing a server-only item before a patched one
 * only when both are in the server's list and it came first there.
 */
function normalizeElementOrder(
  patched: unknown[],
  serverOnly: unknown[],
  patchOrder: unknown[],
  serverOrder: unknown[],
  mergeKey: string,
  kind: Kind,
): unknown[] {
  const right = sortByOrder(patched, patchOrder, mergeKey, kind);
  const left = sortByOrder(serverOnly, serverOrder, mergeKey, kind);
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]);
    else if (j >= right.length) out.push(left[i++]);
    else {
      const li = indexIn(serverOrder, left[i], mergeKey, kind);
      const ri = indexIn(serverOrder, right[j], mergeKey, kind);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}

function splitDeletes(list: unknown[]): [unknown[], unknown[]] {
  const keep: unknown[] = [];
  const del: unknown[] = [];
  for (const v of list) {
    if (!isObject(v)) throw new SmpError(badArgType('map[string]interface {}', v));
    (v[DIRECTIVE] === 'delete' ? del : keep).push(v);
  }
  return [keep, del];
}

function hasDirective(v: unknown): boolean {
  return isObject(v) && Object.hasOwn(v, DIRECTIVE);
}

// ---------------------------------------------------------------------------------------
// Patch values taken as they are
// ---------------------------------------------------------------------------------------

function isDirectiveKey(k: string): boolean {
  return (
    k === DIRECTIVE ||
    k === RETAIN_KEYS ||
    k.startsWith(`${SET_ELEMENT_ORDER}/`) ||
    k.startsWith(`${DELETE_FROM_PRIMITIVE_LIST}/`)
  );
}

/**
 * A patch value that has nothing to merge with, as it goes into the object: nulls and
 * directive keys dropped, `$patch: delete` maps and list items dropped (undefined),
 * `$patch: replace` maps taken without the marker.
 */
function cleanPatchValue(v: unknown): unknown {
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (const item of v) if (!hasDirective(item)) out.push(cleanPatchValue(item));
    return out;
  }
  if (isObject(v)) {
    if (Object.hasOwn(v, DIRECTIVE) && v[DIRECTIVE] !== 'replace') return undefined;
    const out: JsonObject = {};
    for (const [k, cv] of Object.entries(v)) {
      if (cv === null || isDirectiveKey(k)) continue;
      const c = cleanPatchValue(cv);
      if (c !== undefined) setOwnValue(out, k, c);
    }
    return out;
  }
  return v;
}

// ---------------------------------------------------------------------------------------
// Messages in Go's words
// ---------------------------------------------------------------------------------------

function schemaName(t: SchemaType): string {
  return t.kind === 'struct' ? t.model : t === UNTYPED ? 'untyped' : t.kind;
}

function noMergeKey(m: JsonObject, key: string): string {
  return `map: ${goString(m)} does not contain declared merge key: ${key}`;
}

function goTypeName(v: unknown): string {
  switch (kindOf(v)) {
    case 'object':
      return 'map[string]interface {}';
    case 'array':
      return '[]interface {}';
    case 'null':
      return '<nil>';
    default:
      return typeof v === 'number' ? (Number.isInteger(v) ? 'int64' : 'float64') : typeof v;
  }
}

function badArgType(expected: string, actual: unknown): string {
  return `expected a ${expected}, but received a ${goTypeName(actual)}`;
}

/** A value as Go's `%v` prints it: `map[a:1 b:[x y]]`. */
function goString(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goString).join(' ')}]`;
  if (isObject(v)) {
    return `map[${Object.keys(v)
      .sort()
      .map((k) => `${k}:${goString(v[k])}`)
      .join(' ')}]`;
  }
  return String(v);
}
