/**
 * Kubernetes' shared validation rules (k8s.io/apimachinery pkg/util/validation,
 * pkg/util/validation/field, pkg/api/validation and pkg/apis/meta/v1/validation), as
 * the API server, controllers and agent use them.
 *
 * Two layers, as in Kubernetes:
 * - `is*` checks take a value and return a list of human-readable problems (`string[]`,
 *   empty when valid). They never throw. Their wording is Kubernetes 1.34's, so kubectl
 *   users see the messages they know.
 * - `validate*` functions (and the IP/CIDR checks, which Kubernetes also writes this way)
 *   take a field path and return `FieldError[]`, the list that becomes a 422 Invalid
 *   `metav1.Status` with one `details.causes[]` entry per error (see `toStatusCauses`).
 *
 * Lengths are counted in UTF-8 bytes, as Go's `len(string)` does.
 */
import type { LabelSelectorObject } from './labels.js';

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

/** A Kubernetes ValidateNameFunc: `prefix` is true when the name is a generateName prefix. */
export type NameValidator = (name: string, prefix: boolean) => string[];

// ---------------------------------------------------------------------------------------
// Field paths and field errors
// ---------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------
// Message helpers (Kubernetes' MaxLenError, RegexError, EmptyError, InclusiveRangeError)
// ---------------------------------------------------------------------------------------

function byteLength(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let out = `${msg} (e.g. `;
  examples.forEach((ex, i) => {
    if (i > 0) out += ' or ';
    out += `'${ex}', `;
  });
  return `${out}regex used for validation is '${fmt}')`;
}

const emptyError = 'must be non-empty';

function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

function anchored(fmt: string): RegExp {
  return new RegExp(`^(?:${fmt})$`);
}

// ---------------------------------------------------------------------------------------
// Names: DNS labels and subdomains, qualified names, label values
// ---------------------------------------------------------------------------------------

/** Max length of a DNS-1123 label (bytes). */
export const DNS1123_LABEL_MAX_LENGTH = 63;
/** Max length of a DNS-1123 subdomain (bytes). */
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
/** Max length of a DNS-1035 label (bytes). */
export const DNS1035_LABEL_MAX_LENGTH = 63;
/** Max length of a label value, and of the name part of a qualified name (bytes). */
export const LABEL_VALUE_MAX_LENGTH = 63;
/** Max total size of an object's annotations, keys plus values (bytes): 256 KiB. */
export const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;

const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123LabelErrMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const dns1123LabelRe = anchored(dns1123LabelFmt);

const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const dns1123SubdomainErrMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const dns1123SubdomainRe = anchored(dns1123SubdomainFmt);

const dns1035LabelFmt = '[a-z]([-a-z0-9]*[a-z0-9])?';
const dns1035LabelErrMsg =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const dns1035LabelRe = anchored(dns1035LabelFmt);

const qualifiedNameFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const qualifiedNameErrMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const qualifiedNameRe = anchored(qualifiedNameFmt);

const labelValueFmt = `(${qualifiedNameFmt})?`;
const labelValueErrMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const labelValueRe = anchored(labelValueFmt);

/**
 * A DNS label as RFC 1123 defines it, lowercase: at most 63 bytes of `[a-z0-9-]`,
 * starting and ending with an alphanumeric. The rule for Namespace names and for names
 * inside objects such as container names. A valid subdomain with dots gets the shorter
 * `must not contain dots`.
 */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!dns1123LabelRe.test(value)) {
    if (dns1123SubdomainRe.test(value)) errs.push('must not contain dots');
    else errs.push(regexError(dns1123LabelErrMsg, dns1123LabelFmt, 'my-name', '123-abc'));
  }
  return errs;
}

/**
 * A DNS subdomain as RFC 1123 defines it, lowercase: dot-separated DNS-1123 labels, at
 * most 253 bytes in all. The rule for most object names (Pod, Deployment, ConfigMap, ...)
 * and for the prefix of a qualified name.
 */
export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!dns1123SubdomainRe.test(value))
    errs.push(regexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, 'example.com'));
  return errs;
}

/**
 * A DNS label as RFC 1035 defines it: like a DNS-1123 label but starting with a letter.
 * The rule for Service names (and port names of Services).
 */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1035_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1035_LABEL_MAX_LENGTH));
  if (!dns1035LabelRe.test(value))
    errs.push(regexError(dns1035LabelErrMsg, dns1035LabelFmt, 'my-name', 'abc-123'));
  return errs;
}

/**
 * What Kubernetes calls a "qualified name": label and annotation keys, finalizer names.
 * `[prefix/]name`, where the optional prefix is a DNS-1123 subdomain and the name is at
 * most 63 bytes of `[A-Za-z0-9_.-]`, starting and ending with an alphanumeric. More than
 * one `/` gives a single message describing the whole format.
 */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push(`prefix part ${emptyError}`);
    else for (const m of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${m}`);
  } else {
    return [
      `a qualified name ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')}` +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errs.push(`name part ${emptyError}`);
  else if (byteLength(name) > LABEL_VALUE_MAX_LENGTH)
    errs.push(`name part ${maxLenError(LABEL_VALUE_MAX_LENGTH)}`);
  if (!qualifiedNameRe.test(name)) {
    errs.push(
      `name part ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')}`,
    );
  }
  return errs;
}

/** A label value: empty, or at most 63 bytes of `[A-Za-z0-9_.-]` starting and ending alphanumeric. */
export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX_LENGTH) errs.push(maxLenError(LABEL_VALUE_MAX_LENGTH));
  if (!labelValueRe.test(value))
    errs.push(regexError(labelValueErrMsg, labelValueFmt, 'MyValue', 'my_value', '12345'));
  return errs;
}

const cIdentifierFmt = '[A-Za-z_][A-Za-z0-9_]*';
const cIdentifierRe = anchored(cIdentifierFmt);

/** A C identifier (`[A-Za-z_][A-Za-z0-9_]*`), no length limit. */
export function isCIdentifier(value: string): string[] {
  if (cIdentifierRe.test(value)) return [];
  return [
    regexError(
      "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_'",
      cIdentifierFmt,
      'my_name',
      'MY_NAME',
      'MyName',
    ),
  ];
}

function hasChDirPrefix(value: string): string[] {
  if (value === '.') return ["must not be '.'"];
  if (value === '..') return ["must not be '..'"];
  if (value.startsWith('..')) return ["must not start with '..'"];
  return [];
}

const envVarNameFmt = '[-._a-zA-Z][-._a-zA-Z0-9]*';
const envVarNameRe = anchored(envVarNameFmt);

/** A container environment variable name (`[-._a-zA-Z][-._a-zA-Z0-9]*`, not `.`/`..`). */
export function isEnvVarName(value: string): string[] {
  const errs: string[] = [];
  if (!envVarNameRe.test(value)) {
    errs.push(
      regexError(
        "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit",
        envVarNameFmt,
        'my.env-name',
        'MY_ENV.NAME',
        'MyEnvName1',
      ),
    );
  }
  return errs.concat(hasChDirPrefix(value));
}

const configMapKeyFmt = '[-._a-zA-Z0-9]+';
const configMapKeyRe = anchored(configMapKeyFmt);

/** A key of a ConfigMap's or Secret's data: at most 253 bytes of `[-._a-zA-Z0-9]`, not `.`/`..`. */
export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!configMapKeyRe.test(value)) {
    errs.push(
      regexError(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
        configMapKeyFmt,
        'key.name',
        'KEY_NAME',
        'key-name',
      ),
    );
  }
  return errs.concat(hasChDirPrefix(value));
}

const percentFmt = '[0-9]+%';
const percentRe = anchored(percentFmt);

/** A percentage string such as `25%` (maxSurge, maxUnavailable). */
export function isValidPercent(value: string): string[] {
  if (percentRe.test(value)) return [];
  return [
    regexError(
      "a valid percent string must be a numeric string followed by an ending '%'",
      percentFmt,
      '1%',
      '93%',
    ),
  ];
}

// ---------------------------------------------------------------------------------------
// Ports
// ---------------------------------------------------------------------------------------

/** A port number: an integer in 1..65535. */
export function isValidPortNum(port: number): string[] {
  if (Number.isInteger(port) && port >= 1 && port <= 65535) return [];
  return [inclusiveRangeError(1, 65535)];
}

/** An integer in `min..max` inclusive. */
export function isInRange(value: number, min: number, max: number): string[] {
  if (Number.isInteger(value) && value >= min && value <= max) return [];
  return [inclusiveRangeError(min, max)];
}

/**
 * A port name (RFC 6335 IANA_SVC_NAME, lowercase only as Kubernetes requires): 1 to 15
 * bytes of `[-a-z0-9]`, at least one letter, no leading/trailing or doubled hyphen.
 * Every rule that fails is reported.
 */
export function isValidPortName(port: string): string[] {
  const errs: string[] = [];
  if (byteLength(port) > 15) errs.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(port))
    errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(port)) errs.push('must contain at least one letter (a-z)');
  if (port.includes('--')) errs.push('must not contain consecutive hyphens');
  if (port.length > 0 && (port.startsWith('-') || port.endsWith('-')))
    errs.push('must not begin or end with a hyphen');
  return errs;
}

// ---------------------------------------------------------------------------------------
// IP addresses and CIDRs
// ---------------------------------------------------------------------------------------

interface ParsedIP {
  /** 4 bytes for dotted IPv4, 16 for IPv6. */
  bytes: number[];
  /** An IPv4 octet was written with a leading 0 (Kubernetes' "sloppy" parse accepts it). */
  leadingZeros: boolean;
}

function parseIPv4Sloppy(s: string): ParsedIP | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const bytes: number[] = [];
  let leadingZeros = false;
  for (const p of parts) {
    if (!/^[0-9]+$/.test(p)) return undefined;
    const n = Number.parseInt(p, 10);
    if (n > 255) return undefined;
    if (p.length > 1 && p.startsWith('0')) leadingZeros = true;
    bytes.push(n);
  }
  return { bytes, leadingZeros };
}

function parseIPv6Sloppy(s: string): ParsedIP | undefined {
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  let leadingZeros = false;
  const groupsOf = (part: string, isLast: boolean): number[] | undefined => {
    if (part === '') return [];
    const fields = part.split(':');
    const out: number[] = [];
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!;
      if (isLast && i === fields.length - 1 && f.includes('.')) {
        const v4 = parseIPv4Sloppy(f);
        if (!v4) return undefined;
        leadingZeros ||= v4.leadingZeros;
        out.push((v4.bytes[0]! << 8) | v4.bytes[1]!, (v4.bytes[2]! << 8) | v4.bytes[3]!);
        continue;
      }
      if (!/^[0-9A-Fa-f]{1,4}$/.test(f)) return undefined;
      out.push(Number.parseInt(f, 16));
    }
    return out;
  };
  let groups: number[];
  if (halves.length === 2) {
    const head = groupsOf(halves[0]!, false);
    const tail = groupsOf(halves[1]!, true);
    if (!head || !tail || head.length + tail.length > 7) return undefined;
    groups = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  } else {
    const all = groupsOf(s, true);
    if (!all || all.length !== 8) return undefined;
    groups = all;
  }
  const bytes: number[] = [];
  for (const g of groups) bytes.push(g >> 8, g & 0xff);
  return { bytes, leadingZeros };
}

/** Go's ParseIPSloppy: IPv4 octets may have leading zeros; no zones. */
function parseIPSloppy(s: string): ParsedIP | undefined {
  return s.includes(':') ? parseIPv6Sloppy(s) : parseIPv4Sloppy(s);
}

function is4In6(bytes: number[]): boolean {
  return (
    bytes.length === 16 &&
    bytes.slice(0, 10).every((b) => b === 0) &&
    bytes[10] === 0xff &&
    bytes[11] === 0xff
  );
}

/** Go's net.IP.String(): dotted quad for IPv4 (and IPv4-mapped), RFC 5952 for IPv6. */
function formatIP(bytes: number[]): string {
  if (bytes.length === 4) return bytes.join('.');
  if (is4In6(bytes)) return bytes.slice(12).join('.');
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i]! << 8) | bytes[i + 1]!);
  // The first longest run of two or more zero groups becomes "::".
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i >= 2 && j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (gs: number[]): string => gs.map((g) => g.toString(16)).join(':');
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLen))}`;
}

function maskBytes(bytes: number[], ones: number): number[] {
  return bytes.map((b, i) => {
    const bits = Math.max(0, Math.min(8, ones - i * 8));
    return b & ((0xff << (8 - bits)) & 0xff);
  });
}

/**
 * The canonical text form of an IP address (IPv4 dotted quad without leading zeros, IPv6
 * as RFC 5952: lowercase, longest zero run compressed), or undefined if `value` is not an
 * IP address. Accepts the forms Kubernetes' "sloppy" parser accepts.
 */
export function canonicalIP(value: string): string | undefined {
  const ip = parseIPSloppy(value);
  return ip ? formatIP(ip.bytes) : undefined;
}

function ipErrors(field: string, value: string): { ip?: ParsedIP; errs: FieldError[] } {
  const ip = parseIPSloppy(value);
  if (!ip)
    return { errs: [invalid(field, value, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)')] };
  const errs: FieldError[] = [];
  if (ip.leadingZeros) errs.push(invalid(field, value, 'must not have leading 0s'));
  else if (is4In6(ip.bytes)) errs.push(invalid(field, value, 'must not be an IPv4-mapped IPv6 address'));
  return { ip, errs };
}

/**
 * An IP address as Kubernetes validates new IP fields (IsValidIP): IPv4 or IPv6, no
 * leading zeros in IPv4 octets, not IPv4-mapped IPv6, and in canonical form
 * (`must be in canonical form ("2001:db8::1")`).
 */
export function isValidIP(field: string, value: string): FieldError[] {
  const { ip, errs } = ipErrors(field, value);
  if (!ip || errs.length > 0) return errs;
  const canonical = formatIP(ip.bytes);
  if (canonical !== value)
    return [invalid(field, value, `must be in canonical form (${JSON.stringify(canonical)})`)];
  return [];
}

/**
 * An IP address in a field that predates strict validation (IsValidIPForLegacyField with
 * strict checks on, e.g. `spec.clusterIP`, `status.podIP`): like `isValidIP` but a
 * non-canonical spelling such as `2001:DB8::1` is accepted.
 */
export function isValidIPForLegacyField(field: string, value: string): FieldError[] {
  return ipErrors(field, value).errs;
}

/**
 * A subnet in CIDR notation as Kubernetes validates it (IsValidCIDR): `10.0.0.0/8` or
 * `fd00::/64`, no leading zeros in the address or prefix length, not IPv4-mapped, no
 * bits set past the prefix length, and in canonical form.
 */
export function isValidCIDR(field: string, value: string): FieldError[] {
  const bad = [invalid(field, value, 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)')];
  const slash = value.indexOf('/');
  if (slash < 0) return bad;
  const ip = parseIPSloppy(value.slice(0, slash));
  const len = value.slice(slash + 1);
  if (!ip || !/^[0-9]+$/.test(len)) return bad;
  const ones = Number.parseInt(len, 10);
  if (ones > ip.bytes.length * 8) return bad;
  if (ip.leadingZeros || (len.length > 1 && len.startsWith('0'))) {
    return [invalid(field, value, 'must not have leading 0s in IP or prefix length')];
  }
  if (is4In6(ip.bytes)) return [invalid(field, value, 'must not have an IPv4-mapped IPv6 address')];
  const masked = maskBytes(ip.bytes, ones);
  if (masked.some((b, i) => b !== ip.bytes[i])) {
    return [invalid(field, value, 'must not have bits set beyond the prefix length')];
  }
  const canonical = `${formatIP(masked)}/${ones}`;
  if (canonical !== value)
    return [invalid(field, value, `must be in canonical form (${JSON.stringify(canonical)})`)];
  return [];
}

// ---------------------------------------------------------------------------------------
// Object names and generateName
// ---------------------------------------------------------------------------------------

/**
 * When a name is a generateName prefix, random characters will follow it, so a trailing
 * '-' is fine: validate as if it were a letter.
 */
function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -1)}a` : name;
}

/** Names that must be DNS-1123 subdomains (most resources: Pod, Deployment, ConfigMap, Node, ...). */
export const nameIsDNSSubdomain: NameValidator = (name, prefix) =>
  isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);

/** Names that must be DNS-1123 labels (Namespace, and e.g. container names). */
export const nameIsDNSLabel: NameValidator = (name, prefix) =>
  isDNS1123Label(prefix ? maskTrailingDash(name) : name);

/** Names that must be DNS-1035 labels (Service). */
export const nameIsDNS1035Label: NameValidator = (name, prefix) =>
  isDNS1035Label(prefix ? maskTrailingDash(name) : name);

/**
 * Names that only need to be safe as one URL path segment (RBAC roles and bindings, and
 * the fallback for custom resources): not `.` or `..` (unless a prefix), no `/` or `%`.
 */
export const validatePathSegmentName: NameValidator = (name, prefix) => {
  if (!prefix && (name === '.' || name === '..')) return [`may not be '${name}'`];
  const errs: string[] = [];
  for (const c of ['/', '%']) if (name.includes(c)) errs.push(`may not contain '${c}'`);
  return errs;
};

/** Max length of the base kept by `generateName` (63 minus the 5 random characters). */
export const MAX_GENERATED_NAME_BASE_LENGTH = 58;
const randomNameAlphabet = 'bcdfghjklmnpqrstvwxz2456789';

/**
 * The name the API server gives an object created with only `metadata.generateName`
 * (apiserver's SimpleNameGenerator): the base cut to 58 characters, then 5 random
 * characters from Kubernetes' vowel-free alphabet `bcdfghjklmnpqrstvwxz2456789`.
 * `random` returns numbers in [0, 1) (injectable for tests). Validate the result with the
 * resource's name rule afterwards, as Kubernetes does.
 */
export function generateName(base: string, random: () => number = Math.random): string {
  let out =
    base.length > MAX_GENERATED_NAME_BASE_LENGTH ? base.slice(0, MAX_GENERATED_NAME_BASE_LENGTH) : base;
  for (let i = 0; i < 5; i++) {
    out += randomNameAlphabet[Math.floor(random() * randomNameAlphabet.length) % randomNameAlphabet.length];
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Labels, annotations, label selectors
// ---------------------------------------------------------------------------------------

/** Each invalid key of a labels map, then each invalid value; errors are on `field` itself, as in Kubernetes. */
export function validateLabels(
  labels: Record<string, string> | undefined | null,
  field: string,
): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(labels ?? {})) {
    for (const m of isQualifiedName(k)) errs.push(invalid(field, k, m));
    for (const m of isValidLabelValue(v)) errs.push(invalid(field, v, m));
  }
  return errs;
}

/**
 * Annotation keys must be qualified names (compared in lowercase, so `Example.com/Key`
 * passes); keys plus values together may not exceed 256 KiB (TooLong).
 */
export function validateAnnotations(
  annotations: Record<string, string> | undefined | null,
  field: string,
): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  for (const [k, v] of Object.entries(annotations ?? {})) {
    for (const m of isQualifiedName(k.toLowerCase())) errs.push(invalid(field, k, m));
    total += byteLength(k) + byteLength(v);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES) errs.push(tooLong(field, TOTAL_ANNOTATION_SIZE_LIMIT_BYTES));
  return errs;
}

/**
 * A metav1.LabelSelector in an object (e.g. `spec.selector` of a Deployment), as
 * Kubernetes' ValidateLabelSelector: matchLabels as labels; each matchExpression needs a
 * known operator, values for In/NotIn (Required), none for Exists/DoesNotExist
 * (Forbidden), a qualified-name key and label-value values. A null selector is valid here
 * (whether it is required is the resource's rule).
 */
export function validateLabelSelector(
  sel: LabelSelectorObject | undefined | null,
  field: string,
): FieldError[] {
  if (!sel) return [];
  const errs = validateLabels(sel.matchLabels, childPath(field, 'matchLabels'));
  (sel.matchExpressions ?? []).forEach((expr, i) => {
    const p = indexPath(childPath(field, 'matchExpressions'), i);
    const values = expr.values ?? [];
    switch (expr.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) {
          errs.push(required(childPath(p, 'values'), "must be specified when `operator` is 'In' or 'NotIn'"));
        }
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) {
          errs.push(
            forbidden(
              childPath(p, 'values'),
              "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            ),
          );
        }
        break;
      default:
        errs.push(invalid(childPath(p, 'operator'), expr.operator, 'not a valid selector operator'));
    }
    for (const m of isQualifiedName(expr.key)) errs.push(invalid(childPath(p, 'key'), expr.key, m));
    values.forEach((v, j) => {
      for (const m of isValidLabelValue(v)) errs.push(invalid(indexPath(childPath(p, 'values'), j), v, m));
    });
  });
  return errs;
}

// ---------------------------------------------------------------------------------------
// ObjectMeta
// ---------------------------------------------------------------------------------------

/** The owner reference fields validation looks at (structurally a V1OwnerReference). */
export interface OwnerReferenceLike {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
}

/**
 * The ObjectMeta fields validation looks at: structurally a client-node V1ObjectMeta, with
 * timestamps as Date or RFC 3339 strings.
 */
export interface ObjectMetaLike {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: Date | string | null;
  deletionTimestamp?: Date | string | null;
  deletionGracePeriodSeconds?: number | null;
  labels?: Record<string, string> | null;
  annotations?: Record<string, string> | null;
  finalizers?: string[] | null;
  ownerReferences?: OwnerReferenceLike[] | null;
}

/** How a resource's names and namespace are checked by `validateObjectMeta`. */
export interface ObjectMetaRules {
  /** True for namespaced resources (namespace required), false for cluster-scoped (namespace forbidden). */
  namespaced: boolean;
  /** The resource's name rule; `nameIsDNSSubdomain` for most. */
  nameFn: NameValidator;
}

const FIELD_IMMUTABLE = 'field is immutable';

function validateOwnerReferences(refs: readonly OwnerReferenceLike[], field: string): FieldError[] {
  const errs: FieldError[] = [];
  let firstController = '';
  refs.forEach((ref, i) => {
    const p = indexPath(field, i);
    const apiVersion = ref.apiVersion ?? '';
    const slashes = apiVersion.split('/');
    const version = slashes[slashes.length - 1] ?? '';
    if (apiVersion === '') errs.push(required(childPath(p, 'apiVersion'), 'must not be empty'));
    else if (slashes.length > 2 || version === '') {
      errs.push(invalid(childPath(p, 'apiVersion'), apiVersion, 'must be <group>/<version> or <version>'));
    }
    if (!ref.kind) errs.push(required(childPath(p, 'kind'), 'must not be empty'));
    if (!ref.name) errs.push(required(childPath(p, 'name'), 'must not be empty'));
    if (!ref.uid) errs.push(required(childPath(p, 'uid'), 'must not be empty'));
    if (apiVersion === 'v1' && ref.kind === 'Event') {
      errs.push(invalid(p, ref, '/v1, Kind=Event is disallowed from being an owner'));
    }
    if (ref.controller === true) {
      const name = `${ref.kind ?? ''}/${ref.name ?? ''}`;
      if (firstController !== '') {
        errs.push(
          invalid(
            field,
            refs,
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${name}`,
          ),
        );
      } else firstController = name;
    }
  });
  return errs;
}

function validateFinalizers(finalizers: readonly string[], field: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of finalizers) for (const m of isQualifiedName(f)) errs.push(invalid(field, f, m));
  if (finalizers.includes('orphan') && finalizers.includes('foregroundDeletion')) {
    errs.push(invalid(field, finalizers, 'finalizer orphan and foregroundDeletion cannot be both set'));
  }
  return errs;
}

function validateMetaCommon(meta: ObjectMetaLike, field: string): FieldError[] {
  const errs: FieldError[] = [];
  if ((meta.generation ?? 0) < 0) {
    errs.push(invalid(childPath(field, 'generation'), meta.generation, 'must be greater than or equal to 0'));
  }
  errs.push(...validateLabels(meta.labels, childPath(field, 'labels')));
  errs.push(...validateAnnotations(meta.annotations, childPath(field, 'annotations')));
  errs.push(...validateOwnerReferences(meta.ownerReferences ?? [], childPath(field, 'ownerReferences')));
  return errs;
}

/**
 * ObjectMeta of an object being created (Kubernetes' ValidateObjectMetaAccessor). Call it
 * after name generation (see `generateName`): both `generateName` (as a prefix) and
 * `name` are checked with `rules.nameFn`; an empty name is `name or generateName is
 * required`. Then namespace (required or forbidden by `rules.namespaced`, a DNS label),
 * generation >= 0, labels, annotations, owner references (one controller at most) and
 * finalizers. `field` is the path of the metadata, `metadata` by default.
 */
export function validateObjectMeta(
  meta: ObjectMetaLike,
  rules: ObjectMetaRules,
  field = 'metadata',
): FieldError[] {
  const errs: FieldError[] = [];
  const generate = meta.generateName ?? '';
  if (generate !== '') {
    for (const m of rules.nameFn(generate, true))
      errs.push(invalid(childPath(field, 'generateName'), generate, m));
  }
  const name = meta.name ?? '';
  if (name === '') errs.push(required(childPath(field, 'name'), 'name or generateName is required'));
  else for (const m of rules.nameFn(name, false)) errs.push(invalid(childPath(field, 'name'), name, m));

  const ns = meta.namespace ?? '';
  if (rules.namespaced) {
    if (ns === '') errs.push(required(childPath(field, 'namespace')));
    else for (const m of nameIsDNSLabel(ns, false)) errs.push(invalid(childPath(field, 'namespace'), ns, m));
  } else if (ns !== '') {
    errs.push(forbidden(childPath(field, 'namespace'), 'not allowed on this type'));
  }
  errs.push(...validateMetaCommon(meta, field));
  errs.push(...validateFinalizers(meta.finalizers ?? [], childPath(field, 'finalizers')));
  return errs;
}

function timeKey(t: Date | string | null | undefined): string | number | null {
  if (t === null || t === undefined || t === '') return null;
  const ms = t instanceof Date ? t.getTime() : Date.parse(t);
  return Number.isNaN(ms) ? String(t) : Math.floor(ms / 1000);
}

/**
 * ObjectMeta of an update (Kubernetes' ValidateObjectMetaAccessorUpdate): resourceVersion
 * must be given; name, namespace, uid, creationTimestamp, deletionTimestamp and
 * deletionGracePeriodSeconds are immutable (`field is immutable`); generation may not go
 * down; no new finalizers once deletion started; then labels, annotations and owner
 * references as on create. Timestamps compare at one-second precision (RFC 3339).
 */
export function validateObjectMetaUpdate(
  newMeta: ObjectMetaLike,
  oldMeta: ObjectMetaLike,
  field = 'metadata',
): FieldError[] {
  const errs: FieldError[] = [];
  if (timeKey(oldMeta.deletionTimestamp) !== null) {
    const old = new Set(oldMeta.finalizers ?? []);
    const extra = [...new Set((newMeta.finalizers ?? []).filter((f) => !old.has(f)))].sort();
    if (extra.length > 0) {
      errs.push(
        forbidden(
          childPath(field, 'finalizers'),
          `no new finalizers can be added if the object is being deleted, found new finalizers []string{${extra.map((f) => JSON.stringify(f)).join(', ')}}`,
        ),
      );
    }
  }
  if (!newMeta.resourceVersion) {
    errs.push(
      invalid(
        childPath(field, 'resourceVersion'),
        newMeta.resourceVersion ?? '',
        'must be specified for an update',
      ),
    );
  }
  if ((newMeta.generation ?? 0) < (oldMeta.generation ?? 0)) {
    errs.push(invalid(childPath(field, 'generation'), newMeta.generation ?? 0, 'must not be decremented'));
  }
  // [field, new (compared), old (compared), new (shown)]
  const immutable: [string, unknown, unknown, unknown][] = [
    ['name', newMeta.name ?? '', oldMeta.name ?? '', newMeta.name ?? ''],
    ['namespace', newMeta.namespace ?? '', oldMeta.namespace ?? '', newMeta.namespace ?? ''],
    ['uid', newMeta.uid ?? '', oldMeta.uid ?? '', newMeta.uid ?? ''],
    [
      'creationTimestamp',
      timeKey(newMeta.creationTimestamp),
      timeKey(oldMeta.creationTimestamp),
      newMeta.creationTimestamp ?? null,
    ],
    [
      'deletionTimestamp',
      timeKey(newMeta.deletionTimestamp),
      timeKey(oldMeta.deletionTimestamp),
      newMeta.deletionTimestamp ?? null,
    ],
    [
      'deletionGracePeriodSeconds',
      newMeta.deletionGracePeriodSeconds ?? null,
      oldMeta.deletionGracePeriodSeconds ?? null,
      newMeta.deletionGracePeriodSeconds ?? null,
    ],
  ];
  for (const [name, now, before, shown] of immutable) {
    if (now !== before) errs.push(invalid(childPath(field, name), shown, FIELD_IMMUTABLE));
  }
  errs.push(...validateMetaCommon(newMeta, field));
  return errs;
}
