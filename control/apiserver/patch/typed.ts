/**
 * Objects as server-side apply sees them (structured-merge-diff's typed values): walks a
 * plain JSON object together with its schema to
 *   - list the fields a value sets (`toFieldSet`: the ownership an Apply records),
 *   - compare two versions (`compare`: what an Update changed),
 *   - merge an applied configuration into the live object (`merge`),
 *   - remove fields an applier dropped and nobody else owns (`prune`),
 *   - check an applied configuration the way decoding it into a typed value would
 *     (`validateApplied`).
 *
 * Granularity follows ssa-schema.ts: scalars, atomic lists/maps/structs and untyped
 * lists are leaves; structs, maps and untyped objects are walked field by field;
 * associative lists item by key (`k:`), set lists item by value (`v:`).
 */
import { fieldElement, FieldSet, keyElement, pathString, valueElement } from './fieldset.js';
import { deepCopy, deepEqual, isObject, type JsonObject } from './json.js';
import { formatGoValue, goSharpV, goUnstructuredType } from '../encoding/go-format.js';
import {
  declaresField,
  elementType,
  fieldType,
  typeOfModel,
  UNTYPED,
  type ScalarKind,
  type SchemaType,
} from './schema.js';
import { isAtomicMapField, isAtomicStruct, listSemantics, type ListSemantics } from './ssa-schema.js';
import { setOwnValue } from '../../../api/meta/maps.js';

/** A place in an object: its type and how apply treats it. */
export interface Place {
  readonly t: SchemaType;
  /** For non-atomic lists: how items are identified. */
  readonly sem?: ListSemantics;
  /** Owned and replaced as a whole. */
  readonly atomic: boolean;
}

const UNTYPED_PLACE: Place = { t: UNTYPED, atomic: false };

/** The place of a whole object of client-node model `model`. */
export function rootPlace(model: string): Place {
  return { t: typeOfModel(model), atomic: false };
}

function placeOf(t: SchemaType, model?: string, field?: string): Place {
  switch (t.kind) {
    case 'list': {
      const sem: ListSemantics =
        model !== undefined && field !== undefined ? listSemantics(model, field, t.elem) : { type: 'atomic' };
      return { t, sem, atomic: sem.type === 'atomic' };
    }
    case 'map':
      return { t, atomic: model !== undefined && field !== undefined && isAtomicMapField(model, field) };
    case 'struct':
      return { t, atomic: isAtomicStruct(t.model) };
    default:
      return { t, atomic: false };
  }
}

/** The place of field (or map key) `name` inside `parent`. */
export function childPlace(parent: Place, name: string): Place {
  const t = parent.t;
  if (t.kind === 'struct') {
    if (!declaresField(t, name)) return UNTYPED_PLACE;
    return placeOf(fieldType(t, name), t.model, name);
  }
  if (t.kind === 'map') return placeOf(t.elem);
  return UNTYPED_PLACE;
}

/** The place of an item of the list at `parent`. */
export function itemPlace(parent: Place): Place {
  return placeOf(elementType(parent.t));
}

type Shape = 'leaf' | 'fields' | 'items';

/** How a value at a place is walked: as a leaf, field by field, or item by item. */
function shapeOf(place: Place, v: unknown): Shape {
  if (place.atomic || v === null) return 'leaf';
  switch (place.t.kind) {
    case 'scalar':
      return 'leaf';
    case 'list':
      return Array.isArray(v) ? 'items' : 'leaf';
    default:
      // struct, map and untyped objects; untyped lists are atomic
      return isObject(v) ? 'fields' : 'leaf';
  }
}

/** Thrown for a list item whose key cannot be built. */
export class ItemKeyError extends Error {}

/** The path element of list item `item` (a `k:` or `v:` element). */
export function itemElement(place: Place, item: unknown): string {
  const sem = place.sem;
  if (sem?.type === 'map') {
    if (!isObject(item)) throw new ItemKeyError('expected a map item in an associative list');
    const keys: Record<string, unknown> = {};
    for (const k of sem.keys) {
      if (item[k] !== undefined && item[k] !== null) keys[k] = item[k];
      else if (Object.hasOwn(sem.defaults, k)) keys[k] = sem.defaults[k];
      else
        throw new ItemKeyError(
          `associative list with keys has an element that omits key field ${JSON.stringify(k)} (and doesn't have default value)`,
        );
    }
    return keyElement(keys);
  }
  return valueElement(item);
}

/**
 * Indexes list items by path element. Items whose key cannot be built, and later items
 * repeating a key (live objects may hold duplicates), get a private element so they are
 * kept in place but never matched.
 */
function indexItems(place: Place, items: readonly unknown[]): { pes: string[]; byPe: Map<string, unknown> } {
  const pes: string[] = [];
  const byPe = new Map<string, unknown>();
  items.forEach((item, i) => {
    let pe: string;
    try {
      pe = itemElement(place, item);
    } catch {
      pe = `#${i}`;
    }
    if (byPe.has(pe)) pe = `#${i}`;
    pes.push(pe);
    byPe.set(pe, item);
  });
  return { pes, byPe };
}

const isPrivate = (pe: string): boolean => pe.startsWith('#');

// ---------------------------------------------------------------------------------------
// toFieldSet
// ---------------------------------------------------------------------------------------

/** The set of fields `value` sets: leaves, list items, empty and null fields, map keys. */
export function toFieldSet(value: unknown, place: Place): FieldSet {
  const set = new FieldSet();
  addFields(value, place, [], set);
  return set;
}

function addFields(v: unknown, place: Place, path: string[], set: FieldSet): void {
  switch (shapeOf(place, v)) {
    case 'leaf':
      set.insert(path);
      return;
    case 'fields':
      for (const [k, cv] of Object.entries(v as JsonObject)) {
        const p = [...path, fieldElement(k)];
        addFields(cv, childPlace(place, k), p, set);
        if (cv === null || (isObject(cv) && Object.keys(cv).length === 0) || !declaresField(place.t, k)) {
          set.insert(p);
        }
      }
      return;
    case 'items': {
      const ip = itemPlace(place);
      const { pes, byPe } = indexItems(place, v as unknown[]);
      for (const pe of pes) {
        if (isPrivate(pe)) continue;
        const p = [...path, pe];
        addFields(byPe.get(pe), ip, p, set);
        set.insert(p);
      }
      return;
    }
  }
}

// ---------------------------------------------------------------------------------------
// compare
// ---------------------------------------------------------------------------------------

/** What changed from one version of an object to the next. */
export interface Comparison {
  modified: FieldSet;
  added: FieldSet;
  removed: FieldSet;
}

/**
 * Compares `lhs` (old) with `rhs` (new). Leaves that differ are modified; every node
 * only in `rhs` is added and every node only in `lhs` removed — except that an added
 * struct field is not itself recorded (only what it holds): Kubernetes' Go objects always
 * carry their non-pointer structs, so `spec` and `template` never show up as added there.
 */
export function compare(lhs: unknown, rhs: unknown, place: Place): Comparison {
  const c: Comparison = { modified: new FieldSet(), added: new FieldSet(), removed: new FieldSet() };
  compareAt(lhs, rhs, place, [], c);
  return c;
}

function isEmptyContainer(v: unknown): boolean {
  return (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);
}

function compareAt(l: unknown, r: unknown, place: Place, path: string[], c: Comparison): void {
  if (l === undefined) {
    if (r !== undefined) graft(c.added, path, addedNode(r, place, path[path.length - 1]));
    return;
  }
  const sl = l === undefined ? undefined : shapeOf(place, l);
  const sr = r === undefined ? undefined : shapeOf(place, r);
  const bothEmpty = (l === undefined || isEmptyContainer(l)) && (r === undefined || isEmptyContainer(r));
  const shape = sl ?? sr!;
  if (shape === 'leaf' || (sl !== undefined && sr !== undefined && sl !== sr) || bothEmpty) {
    if (l === undefined) c.added.insert(path);
    else if (r === undefined) c.removed.insert(path);
    else if (!deepEqual(l, r)) c.modified.insert(path);
    return;
  }
  if (shape === 'fields') {
    const lo = (l ?? {}) as JsonObject;
    const ro = (r ?? {}) as JsonObject;
    const keys = new Set([...Object.keys(lo), ...Object.keys(ro)]);
    for (const k of keys) compareAt(lo[k], ro[k], childPlace(place, k), [...path, fieldElement(k)], c);
  } else {
    const ip = itemPlace(place);
    const li = indexItems(place, (l ?? []) as unknown[]);
    const ri = indexItems(place, (r ?? []) as unknown[]);
    const all = [...li.pes, ...ri.pes.filter((pe) => !li.byPe.has(pe))];
    for (const pe of all) {
      if (isPrivate(pe)) continue;
      compareAt(li.byPe.get(pe), ri.byPe.get(pe), ip, [...path, pe], c);
    }
  }
  if (path.length === 0) return;
  const structField = place.t.kind === 'struct' && path[path.length - 1]!.startsWith('f:');
  if (l === undefined && !structField) c.added.insert(path);
  else if (r === undefined) c.removed.insert(path);
}

/**
 * What compareAt records for a value only in `rhs` (everything in it is added), built as
 * a detached subtree instead of path by path: the node of the value at path element `pe`
 * (undefined at the root), holding a node only where a member is (as `insert` would).
 */
function addedNode(r: unknown, place: Place, pe: string | undefined): FieldSet {
  const node = new FieldSet();
  const shape = shapeOf(place, r);
  if (shape === 'leaf' || isEmptyContainer(r)) {
    node.member = pe !== undefined;
    return node;
  }
  if (shape === 'fields') {
    const ro = r as JsonObject;
    for (const k of Object.keys(ro)) {
      const v = ro[k];
      if (v === undefined) continue;
      const kpe = fieldElement(k);
      const child = addedNode(v, childPlace(place, k), kpe);
      if (child.member || child.children.size > 0) node.children.set(kpe, child);
    }
  } else {
    const ip = itemPlace(place);
    const ri = indexItems(place, r as unknown[]);
    for (const ipe of ri.pes) {
      const v = ri.byPe.get(ipe);
      if (isPrivate(ipe) || v === undefined) continue;
      const child = addedNode(v, ip, ipe);
      if (child.member || child.children.size > 0) node.children.set(ipe, child);
    }
  }
  // As compareAt: an added struct field is not itself recorded, only what it holds.
  if (pe !== undefined && !(place.t.kind === 'struct' && pe.startsWith('f:'))) node.member = true;
  return node;
}

/** Puts `node` at `path` in `set` (merging with what is there), unless it holds nothing. */
function graft(set: FieldSet, path: readonly string[], node: FieldSet): void {
  if (!node.member && node.children.size === 0) return;
  if (path.length === 0) {
    set.mergeFrom(node);
    return;
  }
  let parent = set;
  for (let i = 0; i < path.length - 1; i++) {
    let next = parent.children.get(path[i]!);
    if (!next) {
      next = new FieldSet();
      parent.children.set(path[i]!, next);
    }
    parent = next;
  }
  const pe = path[path.length - 1]!;
  const existing = parent.children.get(pe);
  if (!existing) parent.children.set(pe, node);
  else {
    existing.member = existing.member || node.member;
    existing.mergeFrom(node);
  }
}

// ---------------------------------------------------------------------------------------
// merge
// ---------------------------------------------------------------------------------------

/**
 * Merges an applied configuration `rhs` into `lhs` (structured-merge-diff's Merge):
 * fields merge recursively, associative and set lists merge item by item, everything
 * else (scalars, atomic values) is taken from `rhs`. Explicit nulls in `rhs` remove the
 * field. Neither input is modified.
 */
export function merge(lhs: unknown, rhs: unknown, place: Place): unknown {
  return dropNulls(mergeAt(lhs, rhs, place));
}

function mergeAt(l: unknown, r: unknown, place: Place): unknown {
  if (r === undefined) return deepCopy(l);
  if (l === undefined) return deepCopy(r);
  const sl = shapeOf(place, l);
  const sr = shapeOf(place, r);
  if (sl !== sr || sr === 'leaf') return deepCopy(r);
  if (sr === 'fields') {
    const lo = l as JsonObject;
    const ro = r as JsonObject;
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(lo)) {
      setOwnValue(out, k, Object.hasOwn(ro, k) ? mergeAt(v, ro[k], childPlace(place, k)) : deepCopy(v));
    }
    for (const [k, v] of Object.entries(ro)) if (!Object.hasOwn(lo, k)) setOwnValue(out, k, deepCopy(v));
    return out;
  }
  return mergeItems(l as unknown[], r as unknown[], place);
}

/**
 * Merges list items keeping structured-merge-diff's order: items only in the live list
 * stay where they are, items of the applied list follow its order, and new items are
 * placed after the applied item that precedes them.
 */
function mergeItems(l: readonly unknown[], r: readonly unknown[], place: Place): unknown[] {
  const ip = itemPlace(place);
  const li = indexItems(place, l);
  const ri = indexItems(place, r);
  const shared = ri.pes.filter((pe) => li.byPe.has(pe));
  let nextShared = shared.shift();
  const mergedR = new Set<string>();
  const out: unknown[] = [];
  let lI = 0;
  let rI = 0;
  const advanceShared = (): void => {
    nextShared = shared.shift();
  };
  while (lI < li.pes.length || rI < ri.pes.length) {
    if (lI < li.pes.length && rI < ri.pes.length) {
      const pe = li.pes[lI]!;
      if (pe === ri.pes[rI]) {
        mergedR.add(pe);
        out.push(mergeAt(li.byPe.get(pe), ri.byPe.get(pe), ip));
        lI++;
        rI++;
        advanceShared();
        continue;
      }
      if (ri.byPe.has(pe) && nextShared !== undefined && nextShared !== pe) {
        lI++;
        continue;
      }
    }
    if (lI < li.pes.length) {
      const pe = li.pes[lI]!;
      if (!ri.byPe.has(pe)) {
        out.push(deepCopy(l[lI]));
        lI++;
        continue;
      }
      if (mergedR.has(pe)) lI++;
    }
    if (rI < ri.pes.length) {
      const pe = ri.pes[rI]!;
      mergedR.add(pe);
      out.push(mergeAt(li.byPe.get(pe), ri.byPe.get(pe), ip));
      rI++;
      if (nextShared === pe) advanceShared();
    }
  }
  return out;
}

function dropNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropNulls);
  if (isObject(v)) {
    const out: JsonObject = {};
    for (const [k, cv] of Object.entries(v)) if (cv !== null) setOwnValue(out, k, dropNulls(cv));
    return out;
  }
  return v;
}

// ---------------------------------------------------------------------------------------
// prune
// ---------------------------------------------------------------------------------------

const REMOVED = Symbol('removed');

/**
 * Removes from `merged` what the applier owned before (`last`) and no manager owns now
 * (`owned`, the union of every manager's set including the applier's new one), as
 * structured-merge-diff's prune: a struct field counts as owned when anything beneath it
 * is; list items and map keys only when they are members themselves. Containers emptied
 * by the removal go too. `merged` is not modified.
 */
export function prune(merged: unknown, place: Place, last: FieldSet, owned: FieldSet): unknown {
  const out = pruneAt(merged, place, last, owned);
  return out === REMOVED ? undefined : out;
}

function holds(node: FieldSet | undefined, named: boolean): boolean {
  return node !== undefined && (node.member || (named && !node.empty()));
}

function pruneAt(v: unknown, place: Place, last: FieldSet, owned: FieldSet | undefined): unknown {
  const shape = shapeOf(place, v);
  if (shape === 'leaf') return v;
  let dropped = false;
  if (shape === 'fields') {
    const out: JsonObject = {};
    for (const [k, cv] of Object.entries(v as JsonObject)) {
      const pe = fieldElement(k);
      const l = last.child(pe);
      if (!l) {
        setOwnValue(out, k, cv);
        continue;
      }
      const o = owned?.child(pe);
      const named = declaresField(place.t, k);
      if (holds(l, named) && !holds(o, named)) {
        dropped = true;
        continue;
      }
      const nv = l.children.size > 0 ? pruneAt(cv, childPlace(place, k), l, o) : cv;
      if (nv === REMOVED) dropped = true;
      else setOwnValue(out, k, nv);
    }
    return dropped && Object.keys(out).length === 0 ? REMOVED : out;
  }
  const ip = itemPlace(place);
  const { pes } = indexItems(place, v as unknown[]);
  const out: unknown[] = [];
  (v as unknown[]).forEach((item, i) => {
    const pe = pes[i]!;
    const l = last.child(pe);
    if (isPrivate(pe) || !l) {
      out.push(item);
      return;
    }
    const o = owned?.child(pe);
    if (holds(l, false) && !holds(o, false)) {
      dropped = true;
      return;
    }
    const nv = l.children.size > 0 ? pruneAt(item, ip, l, o) : item;
    if (nv === REMOVED) dropped = true;
    else out.push(nv);
  });
  return dropped && out.length === 0 ? REMOVED : out;
}

// ---------------------------------------------------------------------------------------
// validateApplied
// ---------------------------------------------------------------------------------------

/**
 * The problems decoding an applied configuration into a typed value would report, in
 * structured-merge-diff's words (typed/validate.go, typed/helpers.go): undeclared fields
 * of known structs (the first one of a struct ends its walk, as SMD's map iteration
 * stops there), list items without their key fields, duplicate keys, a list or scalar
 * where the schema wants a map (or the other way round), and scalars of the wrong type
 * (`expected string, got &value.valueUnstructured{Value:true}`: SMD prints the value it
 * wraps with `%v`, `%#v` or `%T` depending on the scalar type). Empty when the
 * configuration is well-formed.
 */
export function validateApplied(value: unknown, place: Place): string[] {
  const errs: string[] = [];
  validateAt(value, place, [], errs);
  return errs;
}

function validateAt(v: unknown, place: Place, path: string[], errs: string[]): void {
  if (v === null || v === undefined) return;
  const where = path.length === 0 ? '' : `${pathString(path)}: `;
  const t = place.t;
  if ((t.kind === 'struct' || t.kind === 'map') && !isObject(v)) {
    errs.push(`${where}expected map, got ${wrapped(v)}`);
    return;
  }
  if (t.kind === 'list' && !Array.isArray(v)) {
    errs.push(`${where}expected list, got ${wrapped(v)}`);
    return;
  }
  if (t.kind === 'scalar') {
    const err = scalarError(t.scalar, v);
    if (err !== undefined) errs.push(`${where}${err}`);
    return;
  }
  if (t.kind === 'struct') {
    for (const [k, cv] of Object.entries(v as JsonObject)) {
      const p = [...path, fieldElement(k)];
      if (!declaresField(t, k)) {
        errs.push(`${pathString(p)}: field not declared in schema`);
        return;
      }
      validateAt(cv, childPlace(place, k), p, errs);
    }
    return;
  }
  if (t.kind === 'map') {
    for (const [k, cv] of Object.entries(v as JsonObject)) {
      validateAt(cv, childPlace(place, k), [...path, fieldElement(k)], errs);
    }
    return;
  }
  if (t.kind === 'list') {
    const ip = itemPlace(place);
    const seen = new Set<string>();
    (v as unknown[]).forEach((item, i) => {
      if (place.atomic) {
        validateAt(item, ip, [...path, `i:${i}`], errs);
        return;
      }
      let pe: string;
      try {
        pe = itemElement(place, item);
      } catch (err) {
        errs.push(`${where}element ${i}: ${(err as Error).message}`);
        return;
      }
      if (seen.has(pe)) {
        errs.push(`${where}duplicate entries for key ${pathString([pe])}`);
        return;
      }
      seen.add(pe);
      validateAt(item, ip, [...path, pe], errs);
    });
  }
}

/** SMD's value.Value holding `v`, as `%v` prints it (a pointer to its valueUnstructured). */
function wrapped(v: unknown): string {
  return `&{${formatGoValue(v)}}`;
}

/** SMD's validateScalar: what is wrong with `v` for a scalar of kind `kind`, if anything. */
function scalarError(kind: ScalarKind, v: unknown): string | undefined {
  switch (kind) {
    case 'numeric':
      return typeof v === 'number'
        ? undefined
        : `expected numeric (int or float), got ${goUnstructuredType(v)}`;
    case 'string':
      return typeof v === 'string'
        ? undefined
        : `expected string, got &value.valueUnstructured{Value:${goSharpV(v)}}`;
    case 'boolean':
      return typeof v === 'boolean' ? undefined : `expected boolean, got ${wrapped(v)}`;
    case 'untyped':
      return typeof v === 'object' ? `expected any scalar, got ${wrapped(v)}` : undefined;
  }
}
