/**
 * The shape of every field of a built-in kind, read from the @kubernetes/client-node
 * models (`getAttributeTypeMap()`: `{ name, baseName, type }` per field, where `type` is
 * `'string' | 'number' | 'boolean' | 'Date' | 'any' | 'IntOrString'`, a model name such as
 * `'V1PodSpec'`, `'Array<V1Container>'` or `'{ [key: string]: string; }'`).
 *
 * Both strategic merge patch and server-side apply walk objects with this: a model gives
 * a struct, `Array<...>` a list, `{ [key: string]: ... }` a map, and anything unknown
 * (a model the package does not have, `any`, a field a model does not declare) is
 * `untyped`, which the mechanisms treat as plain JSON (maps merge by key, lists replace).
 *
 * Scalars keep the kind structured-merge-diff gives them when kube-openapi's schemaconv
 * converts the OpenAPI schema (convertPrimitive): `string` (a string, `byte` format
 * included), `numeric` (integer or number), `boolean`, and `untyped` for strings with
 * another format (Time's date-time, IntOrString's int-or-string) and Quantity, which
 * take any scalar. Server-side apply checks applied values against them.
 */
import { isQuantityField, modelAttributeTypeMap } from '../openapi/index.js';

/** structured-merge-diff's scalar types (schema.Scalar): what a scalar field accepts. */
export type ScalarKind = 'string' | 'numeric' | 'boolean' | 'untyped';

/** The type of a value at some place in an object. */
export type SchemaType =
  | { readonly kind: 'scalar'; readonly scalar: ScalarKind }
  | { readonly kind: 'struct'; readonly model: string }
  | { readonly kind: 'map'; readonly elem: SchemaType }
  | { readonly kind: 'list'; readonly elem: SchemaType }
  | { readonly kind: 'untyped' };

export const UNTYPED: SchemaType = { kind: 'untyped' };

const SCALARS: Readonly<Record<ScalarKind, SchemaType>> = {
  string: { kind: 'scalar', scalar: 'string' },
  numeric: { kind: 'scalar', scalar: 'numeric' },
  boolean: { kind: 'scalar', scalar: 'boolean' },
  untyped: { kind: 'scalar', scalar: 'untyped' },
};

const fieldCache = new Map<string, ReadonlyMap<string, SchemaType>>();

/**
 * The fields of a client-node model by JSON name, or undefined if there is no such model
 * (or it is not loaded: the models come from openapi/catalogue.ts, which the API server
 * loads at start-up with `loadModels()`; a model it never reaches is treated as untyped).
 */
export function modelFields(model: string): ReadonlyMap<string, SchemaType> | undefined {
  let fields = fieldCache.get(model);
  if (fields === undefined) {
    const attrs = modelAttributeTypeMap(model);
    if (!attrs) return undefined;
    fields = new Map(
      attrs.map((a) => [a.baseName, parseTypeName(a.type, isQuantityField(model, a.baseName))]),
    );
    fieldCache.set(model, fields);
  }
  return fields;
}

/** The scalar kind of each client-node scalar type name. */
const SCALAR_TYPES: ReadonlyMap<string, ScalarKind> = new Map([
  ['string', 'string'],
  ['number', 'numeric'],
  ['boolean', 'boolean'],
  ['Date', 'untyped'],
  ['IntOrString', 'untyped'],
]);

/**
 * The SchemaType of a client-node attribute type string; `quantity`: the field holds
 * Quantities, so its innermost strings are untyped scalars.
 */
export function parseTypeName(t: string, quantity = false): SchemaType {
  const type = t.trim();
  const scalar = SCALAR_TYPES.get(type);
  if (scalar !== undefined) return SCALARS[quantity ? 'untyped' : scalar];
  const list = /^Array<(.+)>$/.exec(type);
  if (list) return { kind: 'list', elem: parseTypeName(list[1]!, quantity) };
  const map = /^\{\s*\[key: string\]:\s*(.+?);?\s*\}$/.exec(type);
  if (map) return { kind: 'map', elem: parseTypeName(map[1]!, quantity) };
  if (modelAttributeTypeMap(type)) return { kind: 'struct', model: type };
  return UNTYPED;
}

/** The type of the kind served as client-node model `model`; untyped if the model is unknown. */
export function typeOfModel(model: string): SchemaType {
  return modelFields(model) ? { kind: 'struct', model } : UNTYPED;
}

/**
 * The type of field `name` of a value of type `t`: a struct's declared field, a map's
 * element, or untyped (an undeclared field, or inside an untyped value).
 */
export function fieldType(t: SchemaType, name: string): SchemaType {
  if (t.kind === 'struct') return modelFields(t.model)?.get(name) ?? UNTYPED;
  if (t.kind === 'map') return t.elem;
  return UNTYPED;
}

/** Whether `name` is a field the struct type declares. */
export function declaresField(t: SchemaType, name: string): boolean {
  return t.kind === 'struct' && (modelFields(t.model)?.has(name) ?? false);
}

/** The element type of a list type; untyped for anything else. */
export function elementType(t: SchemaType): SchemaType {
  return t.kind === 'list' ? t.elem : UNTYPED;
}
