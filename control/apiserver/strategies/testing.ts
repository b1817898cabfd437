/**
 * Test helpers for the strategies: run an object through a resource's create, update or
 * status flow in the registry's order (strategy.ts), and compare field errors by
 * `field` and `type` (the part of an error every client reads).
 */
import assert from 'node:assert/strict';
import type { FieldError, FieldErrorType } from '../../../api/meta/validation.js';
import type { KubeObject } from '../../../api/object.js';
import { findResource } from '../resources.js';
import type { Strategy } from '../strategy.js';
import { strategyFor } from './index.js';

/** The strategy of `group/version/resource` (core group: `v1/pods`). */
export function strategy(gvr: string): Strategy {
  const parts = gvr.split('/');
  const resource = parts.pop()!;
  const version = parts.pop()!;
  const r = findResource(parts.join('/'), version, resource);
  if (!r) throw new Error(`unknown resource ${gvr}`);
  return strategyFor(r);
}

/** prepareForCreate → defaults → validate on a copy; returns the object and the errors. */
export function create(gvr: string, input: KubeObject): { obj: KubeObject; errs: FieldError[] } {
  const s = strategy(gvr);
  const obj = structuredClone(input);
  s.prepareForCreate(obj);
  s.defaults(obj);
  return { obj, errs: s.validate(obj) };
}

/** prepareForUpdate → defaults → validate + validateUpdate on a copy of `input` against `old`. */
export function update(
  gvr: string,
  old: KubeObject,
  input: KubeObject,
): { obj: KubeObject; errs: FieldError[] } {
  const s = strategy(gvr);
  const obj = structuredClone(input);
  s.prepareForUpdate(obj, old);
  s.defaults(obj);
  return { obj, errs: [...s.validate(obj), ...s.validateUpdate(obj, old)] };
}

/** prepareForStatusUpdate → validateStatusUpdate on a copy of `input` against `old`. */
export function updateStatus(
  gvr: string,
  old: KubeObject,
  input: KubeObject,
): { obj: KubeObject; errs: FieldError[] } {
  const s = strategy(gvr);
  const obj = structuredClone(input);
  s.prepareForStatusUpdate(obj, old);
  return { obj, errs: s.validateStatusUpdate(obj, old) };
}

/** A created, valid object (asserts that creating it gave no errors). */
export function created(gvr: string, input: KubeObject): KubeObject {
  const { obj, errs } = create(gvr, input);
  assert.deepEqual(errs, [], `unexpected errors creating ${gvr}`);
  return obj;
}

const TYPES: Record<string, FieldErrorType> = {
  Required: 'FieldValueRequired',
  Invalid: 'FieldValueInvalid',
  NotSupported: 'FieldValueNotSupported',
  Duplicate: 'FieldValueDuplicate',
  TooLong: 'FieldValueTooLong',
  Forbidden: 'FieldValueForbidden',
};

/**
 * Asserts that `errs` are exactly the expected errors, each a `field` with a type
 * (`Required`, `Invalid`, ... or a FieldErrorType), in any order, none missing and none
 * extra (a field and type expected twice must be there twice); and that every error names
 * a field.
 */
export function assertErrors(
  errs: readonly FieldError[],
  expected: readonly (readonly [string, string])[],
): void {
  for (const e of errs) assert.ok(e.field !== '', `error without a field: ${JSON.stringify(e)}`);
  const got = errs.map((e) => `${e.field} ${e.type}`).sort();
  const want = expected.map(([field, type]) => `${field} ${TYPES[type] ?? type}`).sort();
  const missing = [...want];
  const extra: string[] = [];
  for (const g of got) {
    const i = missing.indexOf(g);
    if (i >= 0) missing.splice(i, 1);
    else extra.push(g);
  }
  const list = (xs: readonly string[]) => xs.map((x) => `\n  ${x}`).join('') || ' none';
  assert.ok(
    missing.length === 0 && extra.length === 0,
    `missing:${list(missing)}\nunexpected:${list(extra)}\nall errors:${list(
      errs.map((e) => `${e.field} ${e.type}: ${e.message}`),
    )}`,
  );
}

/**
 * Free-form JSON for test edits (`d.spec.template.spec.containers[0].image = ...`): the
 * one `any` of these tests, so each case can break an object in one line.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/** A deep copy of `obj` with `patch(copy)` applied. */
export function modified(obj: KubeObject, patch: (copy: Json) => void): KubeObject {
  const copy = structuredClone(obj);
  patch(copy);
  return copy;
}
