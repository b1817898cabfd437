/**
 * Label selectors, as k8s.io/apimachinery pkg/labels and metav1.LabelSelector define them.
 *
 * Two sources, one type:
 * - the string syntax of `?labelSelector=` and `kubectl -l` (`parseLabelSelector`):
 *     app=web,tier!=db,env in (prod,staging),!canary,track
 * - the structured `metav1.LabelSelector` of Deployments, ReplicaSets, ...
 *   (`labelSelectorFromObject`), and the plain map of a Service's `spec.selector`
 *   (`labelSelectorFromSet`).
 *
 * A `LabelSelector` is immutable: an AND of requirements sorted by key, matched against an
 * object's labels. Its `toString()` is Kubernetes' canonical string, which parses back
 * to the same selector.
 *
 * Why one file of some 600 lines: the string parser (Kubernetes' lexer and parser of
 * selector.go) is most of it, and it, the structured form and the Service map all build
 * the one `LabelSelector` through the same requirement checks; a parser in a file of its
 * own would import the class from here while this file re-exported the parser.
 */
import { isQualifiedName, isValidLabelValue } from './validation.js';

/**
 * The operators of a requirement, spelled as Kubernetes' selection.Operator values:
 * `=` and `==` (equals), `!=`, `in`, `notin`, `exists`, `!` (does not exist), and `gt` /
 * `lt` (integer comparison, written `>` / `<` in the string syntax).
 */
export type SelectionOperator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

/**
 * One requirement: `key`, `operator` and `values` (one value for `=`, `==`, `!=`, `gt`,
 * `lt`; one or more for `in`/`notin`; none for `exists`/`!`). The empty string is a valid
 * value.
 */
export interface LabelRequirement {
  readonly key: string;
  readonly operator: SelectionOperator;
  readonly values: readonly string[];
}

/**
 * A malformed or invalid selector. The message is Kubernetes' own (`found ',', expected:
 * identifier after ','`, `unable to parse requirement: values[0][app]: Invalid value:
 * "a b": ...`), which names the offending token or field; `selector` is the input and
 * `position` the 0-based offset of the offending token in it, when there is one.
 */
export class SelectorParseError extends Error {
  override readonly name = 'SelectorParseError';
  constructor(
    message: string,
    readonly selector: string,
    readonly position?: number,
  ) {
    super(message);
  }
}

const allOperators: readonly SelectionOperator[] = [
  'in',
  'notin',
  '=',
  '==',
  '!=',
  'gt',
  'lt',
  'exists',
  '!',
];

/** The problem list of one invalid requirement, as Kubernetes' NewRequirement aggregates it. */
function requirementProblems(
  key: string,
  operator: SelectionOperator,
  values: readonly string[],
  keyField: string,
): string[] {
  const errs: string[] = [];
  const keyMsgs = isQualifiedName(key);
  if (keyMsgs.length > 0)
    errs.push(`${keyField}: Invalid value: ${JSON.stringify(key)}: ${keyMsgs.join('; ')}`);
  const shown = JSON.stringify(values);
  switch (operator) {
    case 'in':
    case 'notin':
      if (values.length === 0) {
        errs.push(`values: Invalid value: ${shown}: for 'in', 'notin' operators, values set can't be empty`);
      }
      break;
    case '=':
    case '==':
    case '!=':
      if (values.length !== 1) {
        errs.push(`values: Invalid value: ${shown}: exact-match compatibility requires one single value`);
      }
      break;
    case 'exists':
    case '!':
      if (values.length !== 0) {
        errs.push(`values: Invalid value: ${shown}: values set must be empty for exists and does not exist`);
      }
      break;
    case 'gt':
    case 'lt':
      if (values.length !== 1) {
        errs.push(`values: Invalid value: ${shown}: for 'Gt', 'Lt' operators, exactly one value is required`);
      }
      values.forEach((v, i) => {
        if (parseInt64(v) === undefined) {
          errs.push(
            `values[${i}]: Invalid value: ${JSON.stringify(v)}: for 'Gt', 'Lt' operators, the value must be an integer`,
          );
        }
      });
      break;
    default:
      errs.push(
        `operator: Unsupported value: ${JSON.stringify(operator)}: supported values: ` +
          allOperators.map((o) => JSON.stringify(o)).join(', '),
      );
  }
  values.forEach((v, i) => {
    const msgs = isValidLabelValue(v);
    if (msgs.length > 0)
      errs.push(`values[${i}][${key}]: Invalid value: ${JSON.stringify(v)}: ${msgs.join('; ')}`);
  });
  return [...new Set(errs)];
}

function aggregate(msgs: readonly string[]): string {
  return msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]`;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Go's strconv.ParseInt(s, 10, 64): optional sign, decimal digits, int64 range. */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

function hasLabel(labels: Readonly<Record<string, string>> | undefined, key: string): boolean {
  return labels !== undefined && Object.hasOwn(labels, key);
}

/** Whether one requirement holds for a label set (Kubernetes' Requirement.Matches). */
export function requirementMatches(
  r: LabelRequirement,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const present = hasLabel(labels, r.key);
  const value = present ? labels![r.key]! : undefined;
  switch (r.operator) {
    case '=':
    case '==':
    case 'in':
      return present && r.values.includes(value!);
    case '!=':
    case 'notin':
      // Absent keys satisfy "not equal" and "not in".
      return !present || !r.values.includes(value!);
    case 'exists':
      return present;
    case '!':
      return !present;
    case 'gt':
    case 'lt': {
      if (!present || r.values.length !== 1) return false;
      const have = parseInt64(value!);
      const want = parseInt64(r.values[0]!);
      if (have === undefined || want === undefined) return false;
      return r.operator === 'gt' ? have > want : have < want;
    }
    default:
      return false;
  }
}

function sortedValues(values: readonly string[]): string[] {
  return [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** One requirement in the string syntax: `a=b`, `a in (x,y)`, `!a`, `a>5` (values sorted). */
export function requirementToString(r: LabelRequirement): string {
  const vals = sortedValues(r.values).join(',');
  switch (r.operator) {
    case 'exists':
      return r.key;
    case '!':
      return `!${r.key}`;
    case 'in':
      return `${r.key} in (${vals})`;
    case 'notin':
      return `${r.key} notin (${vals})`;
    case 'gt':
      return `${r.key}>${vals}`;
    case 'lt':
      return `${r.key}<${vals}`;
    default:
      return `${r.key}${r.operator}${vals}`;
  }
}

/**
 * A label selector: the AND of `requirements`, kept sorted by key (stable for equal keys).
 *
 * - `LabelSelector.everything()` (no requirements) matches every object; `empty` is true.
 * - `LabelSelector.nothing()` matches no object: what a null metav1.LabelSelector means.
 *   Its `empty` is false and its `toString()` is '' (as in Kubernetes), so it does not
 *   survive a round trip through the string syntax; check `matchesNothing` first.
 */
export class LabelSelector {
  private static readonly all = new LabelSelector([], false);
  private static readonly none = new LabelSelector([], true);

  /** The requirements, sorted by key. */
  readonly requirements: readonly LabelRequirement[];

  private constructor(
    requirements: readonly LabelRequirement[],
    /** True only for `nothing()`. */
    readonly matchesNothing: boolean,
  ) {
    this.requirements = Object.freeze(
      [...requirements]
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
        .map((r) =>
          Object.freeze({ key: r.key, operator: r.operator, values: Object.freeze([...r.values]) }),
        ),
    );
  }

  /** The selector that matches every object (`''`, `{}`). */
  static everything(): LabelSelector {
    return LabelSelector.all;
  }

  /** The selector that matches no object (a null metav1.LabelSelector). */
  static nothing(): LabelSelector {
    return LabelSelector.none;
  }

  /**
   * A selector from requirements, each checked as Kubernetes' NewRequirement does (valid
   * qualified-name key, label-value values, operator/values counts).
   * @throws SelectorParseError naming each problem.
   */
  static fromRequirements(requirements: readonly LabelRequirement[]): LabelSelector {
    if (requirements.length === 0) return LabelSelector.all;
    for (const r of requirements) {
      const problems = requirementProblems(r.key, r.operator, r.values, 'key');
      if (problems.length > 0) throw new SelectorParseError(aggregate(problems), '');
    }
    return new LabelSelector(requirements, false);
  }

  /** True when the selector does not restrict anything (no requirements, and not `nothing()`). */
  get empty(): boolean {
    return !this.matchesNothing && this.requirements.length === 0;
  }

  /**
   * Whether an object with these labels is selected. `undefined` labels are an empty set:
   * `!a` and `a notin (x)` match them, `a` and `a=b` do not.
   */
  matches(labels: Readonly<Record<string, string>> | undefined): boolean {
    if (this.matchesNothing) return false;
    return this.requirements.every((r) => requirementMatches(r, labels));
  }

  /**
   * If the selector pins `key` to exactly one value (`key=v`, `key==v` or `key in (v)`, the
   * first requirement on that key deciding), that value; else undefined. Lets a cache use
   * an index instead of a scan.
   */
  requiresExactMatch(key: string): string | undefined {
    const r = this.requirements.find((x) => x.key === key);
    if (!r) return undefined;
    const exact = r.operator === '=' || r.operator === '==' || r.operator === 'in';
    return exact && r.values.length === 1 ? r.values[0] : undefined;
  }

  /** A new selector with more requirements ANDed in (validated as by `fromRequirements`). */
  add(...requirements: LabelRequirement[]): LabelSelector {
    if (this.matchesNothing) return this;
    return LabelSelector.fromRequirements([...this.requirements, ...requirements]);
  }

  /**
   * Kubernetes' canonical string: requirements joined by ',' in key order, values of each
   * requirement sorted, no spaces except around `in`/`notin`:
   * `app=web,env in (prod,staging),!canary`. '' for everything() and nothing().
   */
  toString(): string {
    return this.requirements.map(requirementToString).join(',');
  }

  /** The canonical string, so that JSON.stringify and template strings give it. */
  toJSON(): string {
    return this.toString();
  }
}

// ---------------------------------------------------------------------------------------
// The string syntax
// ---------------------------------------------------------------------------------------

type TokenKind =
  | 'end'
  | 'closedPar'
  | 'comma'
  | 'doesNotExist'
  | 'doubleEquals'
  | 'equals'
  | 'greaterThan'
  | 'identifier'
  | 'in'
  | 'lessThan'
  | 'notEquals'
  | 'notIn'
  | 'openPar';

interface Token {
  kind: TokenKind;
  literal: string;
  pos: number;
}

const symbolTokens: Readonly<Record<string, TokenKind>> = {
  ')': 'closedPar',
  ',': 'comma',
  '!': 'doesNotExist',
  '==': 'doubleEquals',
  '=': 'equals',
  '>': 'greaterThan',
  '<': 'lessThan',
  '!=': 'notEquals',
  '(': 'openPar',
};

const isWhitespace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isSpecial = (c: string): boolean => '=!(),><'.includes(c);

/**
 * Kubernetes' lexer: whitespace separates tokens; `=`, `!`, `(`, `)`, `,`, `>`, `<` are
 * symbols (the longest valid one wins: `!=`, `==`); every other run of characters is an
 * identifier, or the keyword `in` / `notin`.
 */
function lex(s: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  for (;;) {
    while (i < s.length && isWhitespace(s[i]!)) i++;
    if (i >= s.length) {
      tokens.push({ kind: 'end', literal: '', pos: s.length });
      return tokens;
    }
    const start = i;
    if (isSpecial(s[i]!)) {
      let best: TokenKind | undefined;
      let bestEnd = i;
      let buf = '';
      while (i < s.length && isSpecial(s[i]!)) {
        buf += s[i];
        const kind = symbolTokens[buf];
        if (kind) {
          best = kind;
          bestEnd = i + 1;
        } else if (best) break;
        i++;
      }
      // Every single symbol is a token, so `best` is always set here.
      i = bestEnd;
      tokens.push({ kind: best!, literal: s.slice(start, bestEnd), pos: start });
      continue;
    }
    while (i < s.length && !isSpecial(s[i]!) && !isWhitespace(s[i]!)) i++;
    const word = s.slice(start, i);
    const kind: TokenKind = word === 'in' ? 'in' : word === 'notin' ? 'notIn' : 'identifier';
    tokens.push({ kind, literal: word, pos: start });
  }
}

/** Where keywords may stand for values (`a in (in,notin)`, a key named `in`), they are identifiers. */
type Context = 'keyAndOperator' | 'values';

class Parser {
  private readonly tokens: Token[];
  private position = 0;

  constructor(private readonly input: string) {
    this.tokens = lex(input);
  }

  private fail(message: string, token?: Token): never {
    throw new SelectorParseError(message, this.input, token?.pos);
  }

  private kindIn(t: Token, ctx: Context): TokenKind {
    return ctx === 'values' && (t.kind === 'in' || t.kind === 'notIn') ? 'identifier' : t.kind;
  }

  private lookahead(ctx: Context): [TokenKind, Token] {
    const t = this.tokens[this.position]!;
    return [this.kindIn(t, ctx), t];
  }

  private consume(ctx: Context): [TokenKind, Token] {
    const t = this.tokens[this.position]!;
    // Never run past the end token.
    if (t.kind !== 'end') this.position++;
    return [this.kindIn(t, ctx), t];
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    for (;;) {
      const [kind, tok] = this.lookahead('values');
      if (kind === 'end') return requirements;
      if (kind !== 'identifier' && kind !== 'doesNotExist') {
        this.fail(`found '${tok.literal}', expected: !, identifier, or 'end of string'`, tok);
      }
      requirements.push(this.parseRequirement());
      const [next, nextTok] = this.consume('values');
      if (next === 'end') return requirements;
      if (next !== 'comma')
        this.fail(`found '${nextTok.literal}', expected: ',' or 'end of string'`, nextTok);
      const [after, afterTok] = this.lookahead('values');
      if (after !== 'identifier' && after !== 'doesNotExist') {
        this.fail(`found '${afterTok.literal}', expected: identifier after ','`, afterTok);
      }
    }
  }

  private requirementError(message: string, tok: Token): never {
    this.fail(`unable to parse requirement: ${message}`, tok);
  }

  private parseRequirement(): LabelRequirement {
    const [first, firstTok] = this.consume('values');
    let negated = false;
    let keyTok = firstTok;
    let keyKind = first;
    if (first === 'doesNotExist') {
      negated = true;
      [keyKind, keyTok] = this.consume('values');
    }
    if (keyKind !== 'identifier')
      this.requirementError(`found '${keyTok.literal}', expected: identifier`, keyTok);
    const key = keyTok.literal;
    const keyMsgs = isQualifiedName(key);
    if (keyMsgs.length > 0) {
      // Kubernetes reports the key with no field path, which prints as "<nil>".
      this.requirementError(`<nil>: Invalid value: ${JSON.stringify(key)}: ${keyMsgs.join('; ')}`, keyTok);
    }
    const [peek] = this.lookahead('values');
    if (negated) return this.checked(key, '!', [], keyTok);
    if (peek === 'end' || peek === 'comma') return this.checked(key, 'exists', [], keyTok);

    const [opKind, opTok] = this.consume('keyAndOperator');
    const operators: Partial<Record<TokenKind, SelectionOperator>> = {
      in: 'in',
      notIn: 'notin',
      equals: '=',
      doubleEquals: '==',
      notEquals: '!=',
      greaterThan: 'gt',
      lessThan: 'lt',
    };
    const op = operators[opKind];
    if (!op) this.requirementError(`found '${opTok.literal}', expected: in, notin, =, ==, !=, gt, lt`, opTok);
    const values = op === 'in' || op === 'notin' ? this.parseValues() : this.parseExactValue();
    return this.checked(key, op, values, keyTok);
  }

  private checked(key: string, operator: SelectionOperator, values: string[], at: Token): LabelRequirement {
    const problems = requirementProblems(key, operator, values, 'key');
    if (problems.length > 0) this.requirementError(aggregate(problems), at);
    return { key, operator, values };
  }

  /** `(a,b,,c)`: comma-separated, possibly empty identifiers; an empty slot is the value ''. */
  private parseValues(): string[] {
    const [open, openTok] = this.consume('values');
    if (open !== 'openPar') this.requirementError(`found '${openTok.literal}' expected: '('`, openTok);
    const [first, firstTok] = this.lookahead('values');
    if (first === 'closedPar') {
      this.consume('values');
      return [''];
    }
    if (first !== 'identifier' && first !== 'comma') {
      this.requirementError(`found '${firstTok.literal}', expected: ',', ')' or identifier`, firstTok);
    }
    const values = new Set<string>();
    for (;;) {
      const [kind, tok] = this.consume('values');
      if (kind === 'identifier') {
        values.add(tok.literal);
        const [next, nextTok] = this.lookahead('values');
        if (next === 'closedPar') break;
        if (next !== 'comma')
          this.requirementError(`found '${nextTok.literal}', expected: ',' or ')'`, nextTok);
      } else if (kind === 'comma') {
        if (values.size === 0) values.add('');
        const [next] = this.lookahead('values');
        if (next === 'closedPar') {
          values.add('');
          break;
        }
        if (next === 'comma') values.add('');
      } else {
        this.requirementError(`found '${tok.literal}', expected: ',', or identifier`, tok);
      }
    }
    this.consume('values'); // the ')' seen by lookahead
    return sortedValues([...values]);
  }

  /** The single value after `=`, `==`, `!=`, `>`, `<`; nothing before ',' or the end is ''. */
  private parseExactValue(): string[] {
    const [peek] = this.lookahead('values');
    if (peek === 'end' || peek === 'comma') return [''];
    const [kind, tok] = this.consume('values');
    if (kind !== 'identifier') this.requirementError(`found '${tok.literal}', expected: identifier`, tok);
    return [tok.literal];
  }
}

/**
 * Parses the string syntax of `?labelSelector=` and `kubectl -l` (Kubernetes' labels.Parse):
 *
 *     selector    ::= requirement ("," requirement)*
 *     requirement ::= ["!"] KEY [ ("in" | "notin") "(" VALUES ")" | ("=" | "==" | "!=" | ">" | "<") VALUE ]
 *
 * `k` alone means "k exists", `!k` "k does not exist"; `k=` matches an empty value;
 * `k in ()` is `k in ('')`; whitespace (space, tab, CR, LF) may surround tokens; the
 * empty string selects everything. `>`/`<` compare integers. KEY must be a qualified name
 * and each VALUE a valid label value. In/notin values come out sorted and de-duplicated.
 *
 * @throws SelectorParseError with Kubernetes' message, e.g. `found ',', expected:
 *   identifier after ','` or `unable to parse requirement: values[0][env]: Invalid value:
 *   "a b": a valid label must be ...`.
 */
export function parseLabelSelector(s: string): LabelSelector {
  const requirements = new Parser(s).parse();
  return requirements.length === 0
    ? LabelSelector.everything()
    : LabelSelector.fromRequirements(requirements);
}

// ---------------------------------------------------------------------------------------
// metav1.LabelSelector and label sets
// ---------------------------------------------------------------------------------------

/** The operators of a metav1.LabelSelectorRequirement. */
export type LabelSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

/** A metav1.LabelSelector as it arrives in an object (operator unchecked: it comes from JSON). */
export interface LabelSelectorObject {
  matchLabels?: Record<string, string> | null;
  matchExpressions?:
    { key: string; operator: LabelSelectorOperator | string; values?: string[] | null }[] | null;
}

const objectOperators: Readonly<Record<LabelSelectorOperator, SelectionOperator>> = {
  In: 'in',
  NotIn: 'notin',
  Exists: 'exists',
  DoesNotExist: '!',
};

/**
 * Converts a metav1.LabelSelector (Kubernetes' LabelSelectorAsSelector):
 *
 * - `null`/`undefined` selects NOTHING (`LabelSelector.nothing()`): a workload with no
 *   selector must never adopt every pod.
 * - `{}` (no matchLabels, no matchExpressions) selects EVERYTHING.
 * - otherwise each matchLabels entry is `key=value` and each matchExpression maps In →
 *   `in`, NotIn → `notin`, Exists → `exists`, DoesNotExist → `!`, all ANDed.
 *
 * @throws SelectorParseError for an unknown operator (`"Foo" is not a valid label selector
 *   operator`), In/NotIn without values, Exists/DoesNotExist with values, or an invalid
 *   key or value (Kubernetes' NewRequirement messages).
 */
export function labelSelectorFromObject(sel: LabelSelectorObject | undefined | null): LabelSelector {
  if (sel === null || sel === undefined) return LabelSelector.nothing();
  const matchLabels = Object.entries(sel.matchLabels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const exprs = sel.matchExpressions ?? [];
  if (matchLabels.length + exprs.length === 0) return LabelSelector.everything();
  const requirements: LabelRequirement[] = matchLabels.map(([key, value]) => ({
    key,
    operator: '=',
    values: [value],
  }));
  for (const e of exprs) {
    const operator = Object.hasOwn(objectOperators, e.operator)
      ? objectOperators[e.operator as LabelSelectorOperator]
      : undefined;
    if (!operator)
      throw new SelectorParseError(
        `${JSON.stringify(e.operator)} is not a valid label selector operator`,
        '',
      );
    requirements.push({ key: e.key, operator, values: [...(e.values ?? [])] });
  }
  return LabelSelector.fromRequirements(requirements);
}

/**
 * A selector matching exactly the given labels, `key=value` for each entry (Kubernetes'
 * SelectorFromSet; a Service's `spec.selector`). `null`, `undefined` and `{}` select
 * everything. Keys and values are validated.
 * @throws SelectorParseError for an invalid key or value.
 */
export function labelSelectorFromSet(
  set: Readonly<Record<string, string>> | undefined | null,
): LabelSelector {
  const entries = Object.entries(set ?? {});
  if (entries.length === 0) return LabelSelector.everything();
  return LabelSelector.fromRequirements(
    entries.map(([key, value]) => ({ key, operator: '=', values: [value] })),
  );
}
