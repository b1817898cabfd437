/**
 * YAML request bodies decoded as kube-apiserver decodes them: sigs.k8s.io/yaml (v1.4) over
 * its copy of go-yaml v2 (goyaml.v2/decode.go, resolve.go), then to JSON. The `yaml`
 * package only parses here (its failsafe schema: every scalar a string, with its style
 * and tag); values are resolved and collections built the way go-yaml v2 builds them into
 * an `interface{}`:
 *
 * - Only the first document of a stream counts; later ones are not read.
 * - Plain scalars resolve as resolve.go: `y Y yes Yes YES true True TRUE on On ON` and the
 *   negatives are booleans, `'' ~ null Null NULL` null, `.inf .nan` and signed forms
 *   floats; a scalar starting with a digit or sign is an integer as strconv.ParseInt(s, 0,
 *   64) reads it with `_` removed (`0x1f`, `0o17`, `0b101`, `0777` octal, `+5`), else an
 *   unsigned one, else a float if it looks like one (`1e3`, `08`, `.5`), else a string, and
 *   so are timestamps (`2001-12-14`) and sexagesimal numbers (`22:22`), which go-yaml v2
 *   leaves as strings in an untyped value. Quoted and block scalars are strings.
 * - Explicit tags `!!str !!int !!float !!bool !!null !!timestamp` force that type (a
 *   value that does not fit fails: "cannot decode !!str `x` as a !!int"), `!!binary` is
 *   base64, and any other tag leaves the text a string.
 * - Merge keys (`<<: *anchor`, `<<: [*a, *b]`) copy the merged maps' keys into the map in
 *   the order the keys come: a later key overrides an earlier one, merged or not (a
 *   sequence of merges is applied last to first, so its first map wins).
 * - A repeated key keeps its last value; strict decoding (yaml.UnmarshalStrict, as the
 *   API server runs it for fieldValidation Warn and Strict) reports each key set twice,
 *   merged ones included, as `line <n>: key "a" already set in map`, n being the line of
 *   the repeated key's value.
 * - Keys become JSON strings as sigs.k8s.io/yaml's convertToJSONableObject writes them
 *   (`1` → "1", `true` → "true", `1.5` → "1.5"); a null key fails.
 * - An alias names the last anchor defined before it; an unknown one fails, and so does
 *   an alias inside the node it names and excessive aliasing (go-yaml's ratio limit).
 */

import { Buffer } from 'node:buffer';
import {
  Composer,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  Parser,
  type Node as YamlNode,
  type Pair,
  type Scalar,
} from 'yaml';
import { goFloat, goQuote, goSharpV } from './go-format.js';

/** A scalar as go-yaml v2 resolves it into an `interface{}`. */
type GoScalar =
  | { t: 'null' }
  | { t: 'bool'; v: boolean }
  | { t: 'int'; v: bigint }
  | { t: 'float'; v: number }
  | { t: 'str'; v: string };

/** A decoded value: go-yaml's map[interface{}]interface{} keeps typed keys. */
type GoValue = GoScalar | GoValue[] | GoMap;

class GoMap {
  /** By key identity (type and value), in insertion order. */
  readonly entries = new Map<string, { key: GoScalar; value: GoValue }>();
}

/** What decoding a body found: the value (as JSON would carry it) and strict decoding's complaints. */
export interface DecodedYaml {
  /** Plain JSON data: objects, arrays, strings, numbers, booleans, null. */
  value: unknown;
  /**
   * go-yaml v2's strict errors (`line 7: key "a" already set in map`), in the order it
   * meets them; empty when the body decodes strictly too.
   */
  strictErrors: string[];
}

/** A body go-yaml v2 refuses (malformed text, a bad tag or alias), worded as go-yaml words it. */
export class YamlDecodeError extends Error {
  override readonly name = 'YamlDecodeError';
}

const TAG = 'tag:yaml.org,2002:';
const STR = `${TAG}str`;
const BOOL = `${TAG}bool`;
const INT = `${TAG}int`;
const FLOAT = `${TAG}float`;
const NULL = `${TAG}null`;
const TIMESTAMP = `${TAG}timestamp`;
const BINARY = `${TAG}binary`;
const MERGE = `${TAG}merge`;
const RESOLVABLE = new Set(['', STR, BOOL, INT, FLOAT, NULL, TIMESTAMP]);

/** resolve.go's resolveMap: the words that are booleans, nulls and special floats. */
const WORDS: ReadonlyMap<string, GoScalar> = (() => {
  const m = new Map<string, GoScalar>();
  const add = (s: GoScalar, words: string) => {
    for (const w of words.split(' ')) m.set(w, s);
  };
  add({ t: 'bool', v: true }, 'y Y yes Yes YES true True TRUE on On ON');
  add({ t: 'bool', v: false }, 'n N no No NO false False FALSE off Off OFF');
  add({ t: 'null' }, '~ null Null NULL');
  m.set('', { t: 'null' });
  add({ t: 'float', v: NaN }, '.nan .NaN .NAN');
  add({ t: 'float', v: Infinity }, '.inf .Inf .INF +.inf +.Inf +.INF');
  add({ t: 'float', v: -Infinity }, '-.inf -.Inf -.INF');
  return m;
})();

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;

/** strconv.ParseInt(s, 0, 64) (signed: true) or ParseUint(s, 0, 64); undefined when it fails. */
function parseGoInt(s: string, signed: boolean): bigint | undefined {
  let body = s;
  let negative = false;
  if (signed && (body[0] === '+' || body[0] === '-')) {
    negative = body[0] === '-';
    body = body.slice(1);
  }
  let digits: RegExp;
  let prefix = '';
  if (/^0[xX]/.test(body)) [digits, prefix, body] = [/^[0-9a-fA-F]+$/, '0x', body.slice(2)];
  else if (/^0[oO]/.test(body)) [digits, prefix, body] = [/^[0-7]+$/, '0o', body.slice(2)];
  else if (/^0[bB]/.test(body)) [digits, prefix, body] = [/^[01]+$/, '0b', body.slice(2)];
  else if (/^0./.test(body)) [digits, prefix, body] = [/^[0-7]+$/, '0o', body.slice(1)];
  else digits = /^[0-9]+$/;
  if (!digits.test(body)) return undefined;
  let v = BigInt(`${prefix}${body}`);
  if (negative) v = -v;
  if (signed ? v < INT64_MIN || v > INT64_MAX : v > UINT64_MAX) return undefined;
  return v;
}

/**
 * strconv.ParseFloat(s, 64) for the decimal text YAML_STYLE_FLOAT lets through;
 * undefined when it is out of range (Go answers ±Inf with ErrRange, which resolve.go
 * treats as not a float).
 */
function parseGoFloat(s: string): number | undefined {
  const v = Number(s);
  return Number.isFinite(v) ? v : undefined;
}

/**
 * The formats resolve.go's parseTimestamp accepts (`2006-1-2T15:4:5.999999999Z07:00`, its
 * lower-case `t` form, `2006-1-2 15:4:5.999999999`, `2006-1-2`), as patterns.
 */
const TIMESTAMP_FORMS = [
  /^\d{4}-\d{1,2}-\d{1,2}[Tt]\d{1,2}:\d{1,2}:\d{1,2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
  /^\d{4}-\d{1,2}-\d{1,2} \d{1,2}:\d{1,2}:\d{1,2}(\.\d+)?$/,
  /^\d{4}-\d{1,2}-\d{1,2}$/,
];

function isTimestamp(s: string): boolean {
  return TIMESTAMP_FORMS.some((re) => re.test(s));
}

/** go-yaml's shortTag: `!!int` for `tag:yaml.org,2002:int`. */
function shortTag(tag: string): string {
  return tag.startsWith(TAG) ? `!!${tag.slice(TAG.length)}` : tag;
}

/** The tag resolve.go gives a resolved value. */
function tagOf(s: GoScalar, timestamp: boolean): string {
  if (timestamp) return TIMESTAMP;
  switch (s.t) {
    case 'null':
      return NULL;
    case 'bool':
      return BOOL;
    case 'int':
      return INT;
    case 'float':
      return FLOAT;
    case 'str':
      return STR;
  }
}

/** resolve.go's resolve(tag, in) for a scalar that is resolved (plain, or explicitly tagged). */
function resolve(tag: string, text: string): GoScalar {
  if (!RESOLVABLE.has(tag)) return { t: 'str', v: text };
  let timestamp = false;
  const found = ((): GoScalar => {
    if (tag === STR) return { t: 'str', v: text };
    const word = WORDS.get(text);
    if (word) return word;
    const c = text[0]!;
    if (c === '.') {
      if (/^\.[0-9]/.test(text) || /^\.[eE]/.test(text)) {
        const f = /^\.[0-9]*([eE][-+]?[0-9]+)?$/.test(text) ? parseGoFloat(text) : undefined;
        if (f !== undefined) return { t: 'float', v: f };
      }
      return { t: 'str', v: text };
    }
    if (c === '+' || c === '-' || (c >= '0' && c <= '9')) {
      if ((tag === '' || tag === TIMESTAMP) && isTimestamp(text)) {
        timestamp = true;
        return { t: 'str', v: text };
      }
      const plain = text.replaceAll('_', '');
      const i = parseGoInt(plain, true) ?? parseGoInt(plain, false);
      if (i !== undefined) return { t: 'int', v: i };
      if (YAML_STYLE_FLOAT.test(plain)) {
        const f = parseGoFloat(plain);
        if (f !== undefined) return { t: 'float', v: f };
      }
    }
    return { t: 'str', v: text };
  })();
  const rtag = tagOf(found, timestamp);
  if (tag === '' || tag === rtag) return found;
  if (tag === FLOAT && found.t === 'int') return { t: 'float', v: Number(found.v) };
  throw new YamlDecodeError(`yaml: cannot decode ${shortTag(rtag)} \`${text}\` as a ${shortTag(tag)}`);
}

// go-yaml v2's guard against alias expansion bombs (decode.go allowedAliasRatio).
const ALIAS_RATIO_RANGE_LOW = 400_000;
const ALIAS_RATIO_RANGE_HIGH = 4_000_000;

function allowedAliasRatio(decodeCount: number): number {
  if (decodeCount <= ALIAS_RATIO_RANGE_LOW) return 0.99;
  if (decodeCount >= ALIAS_RATIO_RANGE_HIGH) return 0.1;
  return (
    0.99 - (0.89 * (decodeCount - ALIAS_RATIO_RANGE_LOW)) / (ALIAS_RATIO_RANGE_HIGH - ALIAS_RATIO_RANGE_LOW)
  );
}

/** One decode of a document: go-yaml's decoder state. */
class Decoder {
  decodeCount = 0;
  aliasCount = 0;
  aliasDepth = 0;
  readonly strictErrors: string[] = [];
  /** The aliases being expanded (an alias inside its own anchor's node fails). */
  private readonly expanding = new Set<YamlNode>();

  constructor(
    private readonly lines: LineCounter,
    /** Each alias node's target: the last anchor of its name defined before it. */
    private readonly targets: ReadonlyMap<YamlNode, YamlNode>,
  ) {}

  /** The 1-based line a node starts on (go-yaml's n.line + 1). */
  line(node: YamlNode | null, fallback: number): number {
    const offset = node?.range?.[0];
    return offset === undefined ? fallback : this.lines.linePos(offset).line;
  }

  /** decode.go's unmarshal() bookkeeping: every node decoded counts, those under an alias twice. */
  private count(): void {
    this.decodeCount++;
    if (this.aliasDepth > 0) this.aliasCount++;
    if (
      this.aliasCount > 100 &&
      this.decodeCount > 1000 &&
      this.aliasCount / this.decodeCount > allowedAliasRatio(this.decodeCount)
    ) {
      throw new YamlDecodeError('yaml: document contains excessive aliasing');
    }
  }

  decode(node: YamlNode | null): GoValue {
    this.count();
    if (node === null) return { t: 'null' };
    if (isAlias(node)) return this.alias(node, (target) => this.decode(target));
    if (isScalar(node)) return this.scalar(node);
    if (isSeq(node)) return node.items.map((item) => this.decode(item as YamlNode | null));
    if (isMap(node)) {
      const out = new GoMap();
      this.mapping(node.items as Pair<YamlNode | null, YamlNode | null>[], out);
      return out;
    }
    return { t: 'null' };
  }

  private alias<T>(node: YamlNode, then: (target: YamlNode) => T): T {
    const target = this.targets.get(node)!;
    if (this.expanding.has(node)) {
      throw new YamlDecodeError(
        `yaml: anchor '${(node as { source?: string }).source ?? ''}' value contains itself`,
      );
    }
    this.expanding.add(node);
    this.aliasDepth++;
    try {
      return then(target);
    } finally {
      this.aliasDepth--;
      this.expanding.delete(node);
    }
  }

  private scalar(node: Scalar): GoScalar {
    const text = String(node.value ?? '');
    const tag = node.tag ?? '';
    const plain = node.type === 'PLAIN' || node.type === undefined;
    if (tag === '' && !plain) return { t: 'str', v: text };
    if (tag === BINARY) {
      const compact = text.replace(/[\r\n]/g, '');
      if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(compact)) {
        throw new YamlDecodeError('yaml: !!binary value contains invalid base64 data');
      }
      return { t: 'str', v: Buffer.from(compact, 'base64').toString('utf8') };
    }
    return resolve(tag, text);
  }

  /** decode.go's mapping(): pairs in order into `out`, `<<` merging into it. */
  private mapping(pairs: readonly Pair<YamlNode | null, YamlNode | null>[], out: GoMap): void {
    for (const pair of pairs) {
      const keyNode = pair.key;
      if (isMergeKey(keyNode)) {
        this.merge(pair.value, out);
        continue;
      }
      const key = this.decode(keyNode);
      if (key instanceof GoMap || Array.isArray(key)) {
        throw new YamlDecodeError(`yaml: invalid map key: ${goSharpKey(key)}`);
      }
      const value = this.decode(pair.value);
      const id = keyIdentity(key);
      if (out.entries.has(id)) {
        const line = this.line(pair.value, this.line(keyNode, 1));
        this.strictErrors.push(`line ${line}: key ${goSharpKey(key)} already set in map`);
      }
      out.entries.set(id, { key, value });
    }
  }

  /** decode.go's merge(): a map, an alias of one, or a sequence of them (last first). */
  private merge(node: YamlNode | null, out: GoMap): void {
    const wantMap = (): never => {
      throw new YamlDecodeError('yaml: map merge requires map or sequence of maps as the value');
    };
    const into = (n: YamlNode): void => {
      this.count();
      if (isAlias(n)) {
        this.alias(n, (target) => (isMap(target) ? into(target) : wantMap()));
        return;
      }
      if (!isMap(n)) wantMap();
      this.mapping((n as { items: Pair<YamlNode | null, YamlNode | null>[] }).items, out);
    };
    if (node === null) return wantMap();
    if (isSeq(node)) {
      const items = node.items as (YamlNode | null)[];
      for (let i = items.length - 1; i >= 0; i--) {
        const item = items[i] ?? wantMap();
        if (isAlias(item) ? !isMap(this.targets.get(item)) : !isMap(item)) wantMap();
        into(item);
      }
      return;
    }
    if (isAlias(node) ? !isMap(this.targets.get(node)) : !isMap(node)) wantMap();
    into(node);
  }
}

/** decode.go's isMerge: a plain `<<`, or one tagged !!merge. */
function isMergeKey(node: YamlNode | null): boolean {
  if (!node || !isScalar(node) || node.value !== '<<') return false;
  return node.tag === MERGE || ((node.type === 'PLAIN' || node.type === undefined) && node.tag === undefined);
}

/** The identity of a key in a Go map[interface{}]interface{} (type and value). */
function keyIdentity(k: GoScalar): string {
  switch (k.t) {
    case 'null':
      return 'n';
    case 'bool':
      return `b:${k.v}`;
    case 'int':
      return `i:${k.v}`;
    case 'float':
      return `f:${k.v}`;
    case 'str':
      return `s:${k.v}`;
  }
}

/** A key as Go's `%#v` prints it: strings quoted, numbers and booleans bare, nil `<nil>`. */
function goSharpKey(k: GoValue): string {
  if (k instanceof GoMap) return 'map[interface {}]interface {}{...}';
  if (Array.isArray(k)) return '[]interface {}{...}';
  switch (k.t) {
    case 'null':
      return '<nil>';
    case 'str':
      return goQuote(k.v);
    case 'float':
      return goFloat(k.v);
    default:
      return String(k.v);
  }
}

/** convertToJSONableObject's key strings (strconv.Itoa, FormatFloat 'g', "true"/"false"). */
function jsonKey(k: GoScalar, value: GoValue): string {
  switch (k.t) {
    case 'str':
      return k.v;
    case 'int':
      return k.v.toString();
    case 'float':
      return goFloat(k.v);
    case 'bool':
      return String(k.v);
    case 'null':
      throw new YamlDecodeError(
        `unsupported map key of type: <nil>, key: <nil>, value: ${goSharpV(toJson(value))}`,
      );
  }
}

/** The decoded value as JSON data (what json.Marshal then writes). */
function toJson(v: GoValue): unknown {
  if (v instanceof GoMap) {
    const out: Record<string, unknown> = {};
    for (const { key, value } of v.entries.values()) {
      Object.defineProperty(out, jsonKey(key, value), {
        value: toJson(value),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  if (Array.isArray(v)) return v.map(toJson);
  switch (v.t) {
    case 'null':
      return null;
    case 'int':
      return Number(v.v);
    case 'float':
      if (!Number.isFinite(v.v)) throw new YamlDecodeError(`json: unsupported value: ${goFloat(v.v)}`);
      return v.v;
    default:
      return v.v;
  }
}

/** Each alias node's target in document order (go-yaml's parser keeps the last anchor so far). */
function aliasTargets(root: YamlNode | null): Map<YamlNode, YamlNode> {
  const anchors = new Map<string, YamlNode>();
  const targets = new Map<YamlNode, YamlNode>();
  const visit = (n: YamlNode | null): void => {
    if (n === null) return;
    if (isAlias(n)) {
      const target = anchors.get(n.source);
      if (!target) throw new YamlDecodeError(`yaml: unknown anchor '${n.source}' referenced`);
      targets.set(n, target);
      return;
    }
    if (n.anchor) anchors.set(n.anchor, n);
    if (isMap(n)) {
      for (const p of n.items as Pair<YamlNode | null, YamlNode | null>[]) {
        visit(p.key);
        visit(p.value);
      }
    } else if (isSeq(n)) {
      for (const item of n.items as (YamlNode | null)[]) visit(item);
    }
  };
  visit(root);
  return targets;
}

/**
 * Decodes a request body as sigs.k8s.io/yaml decodes it (see the file comment): the first
 * document only, as plain JSON data, and what strict decoding reports about it.
 * @param body the body's text (YAML, or JSON, which is YAML).
 * @returns the value (null for an empty document) and the strict errors.
 * @throws YamlDecodeError for text go-yaml refuses: malformed YAML (`yaml: line 3: `
 *   and the `yaml` package's words for the problem), an unknown or self-containing alias, a bad tag, excessive aliasing, a null or
 *   collection key.
 */
export function decodeYamlBody(body: string): DecodedYaml {
  const lines = new LineCounter();
  const parser = new Parser(lines.addNewLine);
  const composer = new Composer({
    version: '1.1',
    schema: 'failsafe',
    merge: false,
    uniqueKeys: false,
  });
  let doc;
  for (const d of composer.compose(parser.parse(body), true)) {
    doc = d;
    break;
  }
  if (!doc) return { value: null, strictErrors: [] };
  const syntax = doc.errors[0];
  if (syntax) {
    // go-yaml's frame (`yaml: line 3: <problem>`); the problem in the yaml package's words.
    throw new YamlDecodeError(`yaml: line ${lines.linePos(syntax.pos[0]).line}: ${syntax.message}`);
  }
  const root = doc.contents as YamlNode | null;
  const decoder = new Decoder(lines, aliasTargets(root));
  const value = toJson(decoder.decode(root));
  return { value, strictErrors: decoder.strictErrors };
}

/**
 * The value of a request body decoded as `decodeYamlBody` does (repeated keys: the last
 * wins, as non-strict decoding).
 * @throws YamlDecodeError as decodeYamlBody
 */
export function parseYamlBody(body: string): unknown {
  return decodeYamlBody(body).value;
}

/**
 * go-yaml v2's strict errors as one error text, as its TypeError writes them
 * (`yaml: unmarshal errors:\n  line 7: key "a" already set in map`).
 */
export function yamlUnmarshalErrors(strictErrors: readonly string[]): string {
  return `yaml: unmarshal errors:\n  ${strictErrors.join('\n  ')}`;
}
