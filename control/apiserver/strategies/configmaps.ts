/**
 * ConfigMap (core/v1): Kubernetes' ValidateConfigMap / ValidateConfigMapUpdate. (Kubernetes
 * also defaults `data` to an empty map, which serializes as nothing; so does k8ts.)
 */
import type { FieldError } from '../../../api/meta/validation.js';
import { forbidden, invalid, isConfigMapKey, keyPath, tooLong } from '../../../api/meta/validation.js';
import type { KubeObject } from '../../../api/object.js';
import { asObj, defineStrategy, problems, semanticEqual, str } from './meta.js';

/** Kubernetes' MaxSecretSize: the data of a ConfigMap or Secret is at most 1 MiB. */
export const MAX_DATA_SIZE = 1024 * 1024;

/** The decoded length of a base64 value (binaryData, Secret data). */
export function base64Length(v: string): number {
  return Buffer.from(v, 'base64').length;
}

/** Problems of a base64 value as Go's decoder sees them (`illegal base64 data ...`). */
export function base64Problem(v: string): string | undefined {
  if (v.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(v)) {
    const bad = v.search(/[^A-Za-z0-9+/=]/);
    return `illegal base64 data at input byte ${bad >= 0 ? bad : v.length}`;
  }
  return undefined;
}

/**
 * `immutable: true` freezes a ConfigMap or Secret: it cannot be unset and its data
 * cannot change (`field is immutable when `immutable` is set`).
 */
export function validateImmutableData(
  obj: KubeObject,
  old: KubeObject,
  fields: readonly string[],
): FieldError[] {
  if (old.immutable !== true) return [];
  const errs: FieldError[] = [];
  const msg = 'field is immutable when `immutable` is set';
  if (obj.immutable !== true) errs.push(forbidden('immutable', msg));
  for (const f of fields) if (!semanticEqual(obj[f], old[f])) errs.push(forbidden(f, msg));
  return errs;
}

/**
 * ValidateConfigMap: keys of `data` and `binaryData` are config keys (`data[key]`), a key
 * appears in only one of them, binaryData is base64, and the values total at most 1 MiB
 * (TooLong, reported on `data`; Kubernetes uses the empty path for the whole object).
 */
function validateConfigMap(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const data = asObj(obj.data) ?? {};
  const binary = asObj(obj.binaryData) ?? {};
  let total = 0;
  for (const [key, value] of Object.entries(data)) {
    errs.push(...problems(keyPath('data', key), key, isConfigMapKey(key)));
    if (Object.hasOwn(binary, key))
      errs.push(invalid(keyPath('data', key), key, 'duplicate of key present in binaryData'));
    // A non-string value (`port: 8080` in YAML) is a decode error in Kubernetes.
    if (typeof value !== 'string')
      errs.push(invalid(keyPath('data', key), value ?? null, 'must be a string'));
    total += Buffer.byteLength(str(value));
  }
  for (const [key, value] of Object.entries(binary)) {
    errs.push(...problems(keyPath('binaryData', key), key, isConfigMapKey(key)));
    const problem = base64Problem(str(value));
    if (problem) errs.push(invalid(keyPath('binaryData', key), '<binary data>', problem));
    else total += base64Length(str(value));
  }
  if (total > MAX_DATA_SIZE) errs.push(tooLong('data', MAX_DATA_SIZE));
  return errs;
}

/** The ConfigMap strategy: no status, no generation, only metadata field selectors. */
export const configMapStrategy = defineStrategy({
  namespaced: true,
  validate: validateConfigMap,
  validateUpdate: (obj, old) => validateImmutableData(obj, old, ['data', 'binaryData']),
});
