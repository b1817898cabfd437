/**
 * Field paths and field-level validation errors (Kubernetes'
 * k8s.io/apimachinery/pkg/util/validation/field): the `FieldError` every `validate*`
 * function returns, its constructors (Required, Invalid, NotSupported, Duplicate,
 * TooLong, Forbidden), the sentences Kubernetes prints for them, and the
 * `metav1.StatusCause` entries of a 422 Invalid. Re-exported by validation.ts.
 */

/** The `reason` of a `metav1.StatusCause`: Kubernetes' field.ErrorType names. */
export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueDuplicate'
  | 'FieldValueTooLong'
  | 'FieldValueForbidden';

/**
 * One field-level validation failure (Kubernetes' field.Error).
 *
 * - `field`: the JSON path of the field, Kubernetes style: `metadata.name`,
 *   `spec.template.spec.containers[0].name`, `metadata.labels` (map keys are written as
 *   `[key]` by `keyPath`).
 * - `badValue`: the offending value, when the error type shows it (Invalid, NotSupported,
 *   Duplicate).
 * - `message`: the detail (Kubernetes' `Detail`); may be empty, e.g. for a bare Required.
 *   `fieldErrorBody` / `fieldErrorString` give the full sentence Kubernetes prints.
 */
export interface FieldError {
  type: FieldErrorType;
  field: string;
  badValue?: unknown;
  message: string;
}

/** `childPath('spec', 'template', 'spec')` → `spec.template.spec`; an empty parent is the root. */
export function childPath(parent: string, ...names: string[]): string {
  let out = parent;
  for (const n of names) out = out === '' ? n : `${out}.${n}`;
  return out;
}

/** `indexPath('spec.containers', 0)` → `spec.containers[0]`. */
export function indexPath(parent: string, index: number): string {
  return `${parent}[${index}]`;
}

/** `keyPath('metadata.labels', 'app')` → `metadata.labels[app]` (Kubernetes' Path.Key). */
export function keyPath(parent: string, key: string): string {
  return `${parent}[${key}]`;
}

/** FieldValueRequired: a value that must be given is empty or missing. */
export function required(field: string, message = ''): FieldError {
  return { type: 'FieldValueRequired', field, message };
}

/** FieldValueInvalid: a malformed value (failed pattern, out of range, ...). */
export function invalid(field: string, badValue: unknown, message: string): FieldError {
  return { type: 'FieldValueInvalid', field, badValue, message };
}

/**
 * FieldValueNotSupported: a value outside an enumeration. The message lists the supported
 * values as Kubernetes does: `supported values: "Always", "IfNotPresent", "Never"`.
 */
export function notSupported(field: string, badValue: unknown, supported: readonly string[]): FieldError {
  const message =
    supported.length > 0 ? `supported values: ${supported.map((v) => JSON.stringify(v)).join(', ')}` : '';
  return { type: 'FieldValueNotSupported', field, badValue, message };
}

/** FieldValueDuplicate: a value that must be unique appears again. */
export function duplicate(field: string, badValue: unknown): FieldError {
  return { type: 'FieldValueDuplicate', field, badValue, message: '' };
}

/**
 * FieldValueTooLong: `may not be more than <maxLength> bytes` (the value itself is not
 * repeated, as in Kubernetes). A negative maxLength gives `value is too long`.
 */
export function tooLong(field: string, maxLength: number): FieldError {
  const message =
    maxLength >= 0
      ? `may not be more than ${maxLength} ${maxLength === 1 ? 'byte' : 'bytes'}`
      : 'value is too long';
  return { type: 'FieldValueTooLong', field, message };
}

/** FieldValueForbidden: a well-formed value that is not allowed here. */
export function forbidden(field: string, message: string): FieldError {
  return { type: 'FieldValueForbidden', field, message };
}

const typeWords: Record<FieldErrorType, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueTooLong: 'Too long',
  FieldValueForbidden: 'Forbidden',
};

function renderBadValue(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(v);
    case 'undefined':
      return 'null';
    default:
      try {
        return JSON.stringify(v) ?? String(v);
      } catch {
        return String(v);
      }
  }
}

/**
 * The error without its field, as Kubernetes' ErrorBody prints it and as it goes into
 * `details.causes[].message`: `Invalid value: "Foo": a lowercase RFC 1123 label ...`.
 * Required, Forbidden and TooLong do not show the value.
 */
export function fieldErrorBody(e: FieldError): string {
  let s = typeWords[e.type];
  if (
    e.type === 'FieldValueInvalid' ||
    e.type === 'FieldValueNotSupported' ||
    e.type === 'FieldValueDuplicate'
  ) {
    s += `: ${renderBadValue(e.badValue)}`;
  }
  if (e.message !== '') s += `: ${e.message}`;
  return s;
}

/** `metadata.name: Invalid value: "Foo": ...` (Kubernetes' field.Error.Error()). */
export function fieldErrorString(e: FieldError): string {
  return `${e.field}: ${fieldErrorBody(e)}`;
}

/**
 * The errors as one message, as Kubernetes aggregates them: duplicates dropped, a single
 * error as itself, several as `[a, b]`, none as ''.
 */
export function aggregateFieldErrors(errs: readonly FieldError[]): string {
  const seen = new Set<string>();
  for (const e of errs) seen.add(fieldErrorString(e));
  const list = [...seen];
  if (list.length === 0) return '';
  return list.length === 1 ? list[0]! : `[${list.join(', ')}]`;
}

/** `metav1.StatusCause` entries for an Invalid status: `{ reason: type, message: body, field }`. */
export function toStatusCauses(
  errs: readonly FieldError[],
): { reason: FieldErrorType; message: string; field: string }[] {
  return errs.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field }));
}
