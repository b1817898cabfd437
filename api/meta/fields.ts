/**
 * Field selectors, as k8s.io/apimachinery pkg/fields defines them: the `?fieldSelector=`
 * of list and watch requests (`spec.nodeName=node-1,status.phase!=Succeeded`).
 *
 * Only `=`, `==` (the same thing) and `!=` exist, ANDed with ','. There is no whitespace
 * trimming: everything before the operator is the field name, everything after it the
 * value. In values, `\,` `\=` and `\\` stand for ',' '=' and '\'; any other backslash
 * sequence, or a bare ',' or '=' in a value, is an error. Which fields exist is up to
 * each resource: the API server checks `FieldSelector.fields` against its list and
 * answers BadRequest `field label not supported: <field>` for others.
 */
import { SelectorParseError } from './labels.js';

export { SelectorParseError };

/** One term: `field` `=` / `!=` `value` (`==` is parsed as `=`). `value` is unescaped. */
export interface FieldRequirement {
  readonly field: string;
  readonly operator: '=' | '!=';
  readonly value: string;
}

/** Compares as Go compares strings (UTF-8 bytes), for Kubernetes' deterministic term order. */
function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * Escapes a literal value for use in a field selector (Kubernetes' EscapeValue): `\` → `\\`,
 * `,` → `\,`, `=` → `\=`.
 */
export function escapeFieldValue(s: string): string {
  return s.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/**
 * Undoes `escapeFieldValue` (Kubernetes' UnescapeValue).
 * @throws SelectorParseError `invalid field selector: invalid escape sequence: \x` for an
 *   unknown or dangling escape, or `invalid field selector: unescaped character in value: =`
 *   for a bare ',' or '='.
 */
export function unescapeFieldValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c !== '\\' && c !== ',' && c !== '=') {
        throw new SelectorParseError(`invalid field selector: invalid escape sequence: \\${c}`, s);
      }
      out += c;
      inSlash = false;
    } else if (c === '\\') {
      inSlash = true;
    } else if (c === ',' || c === '=') {
      throw new SelectorParseError(`invalid field selector: unescaped character in value: ${c}`, s);
    } else {
      out += c;
    }
  }
  if (inSlash) throw new SelectorParseError('invalid field selector: invalid escape sequence: \\', s);
  return out;
}

/** Splits on commas that are not escaped; escapes stay in the terms. */
function splitTerms(selector: string): string[] {
  if (selector === '') return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

/** The first operator in the term splits it: `!=` before `==` before `=` at each position. */
function splitTerm(term: string): { field: string; op: '=' | '==' | '!='; rawValue: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of ['!=', '==', '='] as const) {
      if (term.startsWith(op, i)) return { field: term.slice(0, i), op, rawValue: term.slice(i + op.length) };
    }
  }
  return undefined;
}

/**
 * A field selector: the AND of `requirements`. `FieldSelector.everything()` (the empty
 * selector) matches everything; `FieldSelector.nothing()` matches nothing.
 */
export class FieldSelector {
  private static readonly all = new FieldSelector([], false);
  private static readonly none = new FieldSelector([], true);

  readonly requirements: readonly FieldRequirement[];

  private constructor(
    requirements: readonly FieldRequirement[],
    /** True only for `nothing()`. */
    readonly matchesNothing: boolean,
  ) {
    this.requirements = Object.freeze(requirements.map((r) => Object.freeze({ ...r })));
  }

  /** Matches every object (the empty selector). */
  static everything(): FieldSelector {
    return FieldSelector.all;
  }

  /** Matches no object. Its `toString()` is '' and `empty` is false, as in Kubernetes. */
  static nothing(): FieldSelector {
    return FieldSelector.none;
  }

  /** Requirements as given (no validation: any field name and value are allowed). */
  static fromRequirements(requirements: readonly FieldRequirement[]): FieldSelector {
    return requirements.length === 0 ? FieldSelector.all : new FieldSelector(requirements, false);
  }

  /**
   * `field=value` for each entry (Kubernetes' fields.SelectorFromSet); `null`,
   * `undefined` and `{}` select everything.
   */
  static fromSet(set: Readonly<Record<string, string>> | undefined | null): FieldSelector {
    return FieldSelector.fromRequirements(
      Object.entries(set ?? {}).map(([field, value]) => ({ field, operator: '=' as const, value })),
    );
  }

  /** True when nothing is restricted. */
  get empty(): boolean {
    return !this.matchesNothing && this.requirements.length === 0;
  }

  /** The distinct field names the selector refers to, in order: what the API server must support. */
  get fields(): string[] {
    return [...new Set(this.requirements.map((r) => r.field))];
  }

  /**
   * The first field not in `supported`, or undefined when all are supported. The API
   * server turns it into BadRequest `fieldLabelNotSupportedMessage(field)`.
   */
  unsupportedField(supported: Iterable<string>): string | undefined {
    const ok = new Set(supported);
    return this.fields.find((f) => !ok.has(f));
  }

  /**
   * Whether an object is selected. `get(field)` returns the object's value of that field as
   * a string (e.g. `spec.nodeName`, `status.phase`); `undefined` counts as '', as in
   * Kubernetes, so `spec.nodeName=` selects unscheduled pods.
   */
  matches(get: (field: string) => string | undefined): boolean {
    if (this.matchesNothing) return false;
    return this.requirements.every((r) => ((get(r.field) ?? '') === r.value) === (r.operator === '='));
  }

  /**
   * If the selector requires `field` to equal exactly one value (`field=v`), that value;
   * else undefined. The kubelet's `spec.nodeName=<node>` watch uses this to index.
   */
  requiresExactMatch(field: string): string | undefined {
    return this.requirements.find((r) => r.field === field && r.operator === '=')?.value;
  }

  /**
   * Rewrites each requirement (Kubernetes' Transform, used to map legacy field names):
   * `fn` returns the new field and value; returning both empty drops the requirement.
   * Errors thrown by `fn` propagate.
   */
  transform(fn: (field: string, value: string) => [field: string, value: string]): FieldSelector {
    if (this.matchesNothing) return this;
    const out: FieldRequirement[] = [];
    for (const r of this.requirements) {
      const [field, value] = fn(r.field, r.value);
      if (field !== '' || value !== '') out.push({ field, operator: r.operator, value });
    }
    return FieldSelector.fromRequirements(out);
  }

  /** Kubernetes' string form: terms joined by ',', `=` for equality, values escaped. */
  toString(): string {
    return this.requirements.map((r) => `${r.field}${r.operator}${escapeFieldValue(r.value)}`).join(',');
  }

  /** The string form, so that JSON.stringify and template strings give it. */
  toJSON(): string {
    return this.toString();
  }
}

/** The message Kubernetes answers (BadRequest) for a field a resource cannot select on. */
export function fieldLabelNotSupportedMessage(field: string): string {
  return `field label not supported: ${field}`;
}

/**
 * Parses a `?fieldSelector=` string (Kubernetes' fields.ParseSelector). Terms are split on
 * unescaped ',', sorted (by their raw text, so the result is deterministic), empty terms
 * skipped; each term is split at its first `!=`, `==` or `=`, and the value unescaped.
 * `''` selects everything.
 *
 * @throws SelectorParseError `invalid selector: '<selector>'; can't understand '<term>'`
 *   for a term without an operator, or an unescaping error (see `unescapeFieldValue`).
 */
export function parseFieldSelector(s: string): FieldSelector {
  const terms = splitTerms(s).sort(compareBytes);
  const requirements: FieldRequirement[] = [];
  for (const term of terms) {
    if (term === '') continue;
    const parts = splitTerm(term);
    if (!parts) {
      throw new SelectorParseError(
        `invalid selector: '${s}'; can't understand '${term}'`,
        s,
        s.indexOf(term),
      );
    }
    let value: string;
    try {
      value = unescapeFieldValue(parts.rawValue);
    } catch (e) {
      throw new SelectorParseError((e as Error).message, s, s.indexOf(term));
    }
    requirements.push({ field: parts.field, operator: parts.op === '!=' ? '!=' : '=', value });
  }
  return FieldSelector.fromRequirements(requirements);
}
