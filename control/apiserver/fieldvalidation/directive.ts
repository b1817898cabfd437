/**
 * The `fieldValidation` directive: read from the query of a create, update or patch
 * (Warn by default, 422 on anything but '', Ignore, Warn, Strict), and acted on once the
 * body's problems are known (nothing, `Warning` texts, or the Strict failure worded as
 * Kubernetes' handlers word it). Also the 422 a patched object that does not decode gets.
 */
import { goQuote } from '../encoding/go-format.js';
import { yamlUnmarshalErrors } from '../encoding/yaml-body.js';
import { ApiError } from '../status.js';
import { MAX_STRICT_ERRORS } from './unknown-fields.js';

/** The values of the `fieldValidation` query parameter (metav1.FieldValidation*). */
export const FIELD_VALIDATION_DIRECTIVES = ['Ignore', 'Warn', 'Strict'] as const;
export type FieldValidationDirective = (typeof FIELD_VALIDATION_DIRECTIVES)[number];

/** The writes that take `fieldValidation`; each names its options kind in errors. */
export type FieldValidationVerb = 'create' | 'update' | 'patch';

const OPTIONS_KIND: Readonly<Record<FieldValidationVerb, string>> = {
  create: 'CreateOptions',
  update: 'UpdateOptions',
  patch: 'PatchOptions',
};

/** Kubernetes' allowed set, sorted as its error lists it (the empty string included). */
const ALLOWED_DIRECTIVES = ['', 'Ignore', 'Strict', 'Warn'] as const;

function isDirective(v: string): v is FieldValidationDirective {
  return (FIELD_VALIDATION_DIRECTIVES as readonly string[]).includes(v);
}

/**
 * The directive of a create (POST), update (PUT) or patch request: `fieldValidation`
 * (its first value), Warn when absent or empty, as Kubernetes' handlers default it.
 * @throws ApiError 422 Invalid for any other value (matching is case-sensitive), worded as
 *   Kubernetes' options validation: `CreateOptions.meta.k8s.io "" is invalid:
 *   fieldValidation: Unsupported value: "strict": supported values: "", "Ignore",
 *   "Strict", "Warn"`.
 */
export function fieldValidationDirective(
  q: URLSearchParams,
  verb: FieldValidationVerb,
): FieldValidationDirective {
  const value = q.get('fieldValidation') ?? '';
  if (value === '') return 'Warn';
  if (isDirective(value)) return value;
  const kind = OPTIONS_KIND[verb];
  const body = `Unsupported value: ${goQuote(value)}: supported values: ${ALLOWED_DIRECTIVES.map(goQuote).join(', ')}`;
  return throwInvalid(`${kind}.meta.k8s.io "" is invalid: fieldValidation: ${body}`, {
    group: 'meta.k8s.io',
    kind,
    causes: [{ reason: 'FieldValueNotSupported', message: body, field: 'fieldValidation' }],
  });
}

function throwInvalid(message: string, details: ApiError['details']): never {
  throw new ApiError(422, 'Invalid', message, details);
}

/**
 * What Kubernetes' patch handler answers when the patched object does not decode: 422
 * Invalid on field `patch` with an empty kind and name,
 * ` "" is invalid: patch: Invalid value: "<badValue>": <detail>`.
 */
export function throwPatchInvalid(badValue: string, detail: string): never {
  const body = `Invalid value: ${goQuote(badValue)}: ${detail}`;
  return throwInvalid(` "" is invalid: patch: ${body}`, {
    causes: [{ reason: 'FieldValueInvalid', message: body, field: 'patch' }],
  });
}

/** What strict decoding found, as paths (from duplicateFields and pruneUnknownFields). */
export interface StrictFieldProblems {
  unknown: readonly string[];
  duplicate?: readonly string[];
  /**
   * A YAML body's go-yaml v2 strict errors (`line 7: key "a" already set in map`,
   * encoding/yaml-body.ts), which the serializer reports before the JSON ones as one
   * error, `yaml: unmarshal errors:\n  line 7: ...`; a warning each under Warn (the
   * handlers' parseYAMLWarnings).
   */
  yaml?: readonly string[];
}

/**
 * Where the object came from, for the wording of a Strict failure.
 * - create / update: the kind and version (without group: `v1`) of the decoded body.
 * - patch (JSON, merge, strategic merge): `badValue`, what Kubernetes echoes as the
 *   invalid value of `patch`: the patched object as JSON for JSON and merge patches,
 *   the patch as Go prints it (`formatGoValue(patch)`) for strategic merge patches.
 */
export type StrictDecodeTarget =
  { verb: 'create' | 'update'; kind: string; version: string } | { verb: 'patch'; badValue: string };

/** Each problem worded as Kubernetes' strict decoder: duplicates first, each once, at most 100. */
export function strictDecodingErrors(problems: StrictFieldProblems): string[] {
  const out = new Set<string>();
  for (const p of problems.duplicate ?? []) out.add(`duplicate field ${goQuote(p)}`);
  for (const p of problems.unknown) out.add(`unknown field ${goQuote(p)}`);
  return [...out].slice(0, MAX_STRICT_ERRORS);
}

/**
 * Acts on the directive, as Kubernetes' create, update and patch handlers do after a
 * strict decode:
 * - no problems, or Ignore: `{ warnings: [] }`;
 * - Warn: `{ warnings }`, one text per problem (`unknown field "spec.foo"`, a YAML body's
 *   `line 7: key "a" already set in map` first), for `Warning` headers (warningHeaders);
 * - Strict: throws.
 * @throws ApiError on Strict with problems — create/update: 400 BadRequest
 *   `Deployment in version "v1" cannot be handled as a Deployment: strict decoding error:
 *   unknown field "spec.foo", unknown field "spec.bar"`; patch: 422 Invalid
 *   ` "" is invalid: patch: Invalid value: "<badValue>": strict decoding error: ...`
 *   (Kubernetes' empty kind and name included) with the cause on field `patch`.
 */
export function applyFieldValidation(
  directive: FieldValidationDirective,
  problems: StrictFieldProblems,
  target: StrictDecodeTarget,
): { warnings: string[] } {
  if (directive === 'Ignore') return { warnings: [] };
  const yaml = problems.yaml ?? [];
  const errors = strictDecodingErrors(problems);
  if (errors.length === 0 && yaml.length === 0) return { warnings: [] };
  if (directive === 'Warn') return { warnings: [...yaml, ...errors] };
  const strict = `strict decoding error: ${[...(yaml.length > 0 ? [yamlUnmarshalErrors(yaml)] : []), ...errors].join(', ')}`;
  if (target.verb !== 'patch') {
    const { kind, version } = target;
    throw new ApiError(
      400,
      'BadRequest',
      `${kind} in version ${goQuote(version)} cannot be handled as a ${kind}: ${strict}`,
    );
  }
  return throwPatchInvalid(target.badValue, strict);
}
