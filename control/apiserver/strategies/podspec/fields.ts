/** Small validation rules the PodSpec files share (Kubernetes' validation helpers). */
import type { FieldError } from '../../../../api/meta/validation.js';
import {
  invalid,
  isDNS1123Label,
  isDNS1123Subdomain,
  notSupported,
  required,
} from '../../../../api/meta/validation.js';
import { problems, str } from '../meta.js';

/** An enum field: Required when empty, NotSupported when unknown (Kubernetes' pattern). */
export function enumField(value: unknown, field: string, supported: readonly string[]): FieldError[] {
  const s = str(value);
  if (s === '') return [required(field)];
  return supported.includes(s) ? [] : [notSupported(field, value, supported)];
}

export const dnsLabel = (v: string, f: string): FieldError[] => problems(f, v, isDNS1123Label(v));
export const dnsSubdomain = (v: string, f: string): FieldError[] => problems(f, v, isDNS1123Subdomain(v));

/** validateLocalDescendingPath: relative, no `..` element. */
export function localDescendingPath(value: string, field: string): FieldError[] {
  const errs: FieldError[] = [];
  if (value.startsWith('/')) errs.push(invalid(field, value, 'must be a relative path'));
  if (value.split(/[\\/]/).includes('..')) errs.push(invalid(field, value, "must not contain '..'"));
  return errs;
}

/** validateLocalNonReservedPath: a descending path that does not start with `..`. */
export function localNonReservedPath(value: string, field: string): FieldError[] {
  const errs = localDescendingPath(value, field);
  if (value.startsWith('..')) errs.push(invalid(field, value, "must not start with '..'"));
  return errs;
}
