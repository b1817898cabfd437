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
 *
 * The field errors (field-errors.ts) and the IP/CIDR checks (ip.ts) have files of their
 * own and are re-exported here, so that callers import every rule from this one module.
 * The rest (about 600 lines) stays together: the name formats, label and annotation checks
 * and ObjectMeta validation share the message helpers and regexes below, as they do in
 * Kubernetes' pkg/util/validation and pkg/api/validation.
 */
import type { ObjectMeta } from '../object.js';
import { childPath, forbidden, indexPath, invalid, required, tooLong } from './field-errors.js';
import type { FieldError } from './field-errors.js';
import type { LabelSelectorObject } from './labels.js';

export * from './field-errors.js';
export * from './ip.js';

/** A Kubernetes ValidateNameFunc: `prefix` is true when the name is a generateName prefix. */
export type NameValidator = (name: string, prefix: boolean) => string[];
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
const cIdentifierErrMsg =
  "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_'";
const cIdentifierRe = anchored(cIdentifierFmt);

/** A C identifier (`[A-Za-z_][A-Za-z0-9_]*`), no length limit. */
export function isCIdentifier(value: string): string[] {
  if (cIdentifierRe.test(value)) return [];
  return [regexError(cIdentifierErrMsg, cIdentifierFmt, 'my_name', 'MY_NAME', 'MyName')];
}

function hasChDirPrefix(value: string): string[] {
  if (value === '.') return ["must not be '.'"];
  if (value === '..') return ["must not be '..'"];
  if (value.startsWith('..')) return ["must not start with '..'"];
  return [];
}

const envVarNameFmt = '[-._a-zA-Z][-._a-zA-Z0-9]*';
const envVarNameErrMsg =
  "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit";
const envVarNameRe = anchored(envVarNameFmt);

/** A container environment variable name (`[-._a-zA-Z][-._a-zA-Z0-9]*`, not `.`/`..`). */
export function isEnvVarName(value: string): string[] {
  const errs: string[] = [];
  if (!envVarNameRe.test(value)) {
    errs.push(regexError(envVarNameErrMsg, envVarNameFmt, 'my.env-name', 'MY_ENV.NAME', 'MyEnvName1'));
  }
  return errs.concat(hasChDirPrefix(value));
}

const configMapKeyFmt = '[-._a-zA-Z0-9]+';
const configMapKeyErrMsg = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";
const configMapKeyRe = anchored(configMapKeyFmt);

/** A key of a ConfigMap's or Secret's data: at most 253 bytes of `[-._a-zA-Z0-9]`, not `.`/`..`. */
export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!configMapKeyRe.test(value)) {
    errs.push(regexError(configMapKeyErrMsg, configMapKeyFmt, 'key.name', 'KEY_NAME', 'key-name'));
  }
  return errs.concat(hasChDirPrefix(value));
}

const percentFmt = '[0-9]+%';
const percentErrMsg = "a valid percent string must be a numeric string followed by an ending '%'";
const percentRe = anchored(percentFmt);

/** A percentage string such as `25%` (maxSurge, maxUnavailable). */
export function isValidPercent(value: string): string[] {
  if (percentRe.test(value)) return [];
  return [regexError(percentErrMsg, percentFmt, '1%', '93%')];
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
export interface ObjectMetaLike extends Pick<
  ObjectMeta,
  'name' | 'generateName' | 'namespace' | 'uid' | 'resourceVersion' | 'generation'
> {
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
