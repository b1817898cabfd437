/**
 * Values written as Go writes them, for error messages that quote Kubernetes' wording:
 * a string as `strconv.Quote` (`%q`) quotes it, a decoded JSON value as `fmt`'s `%v`.
 */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

const GO_ESCAPES: Readonly<Record<string, string>> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '"': '\\"',
  '\\': '\\\\',
};

/**
 * A string quoted as Go's strconv.Quote (`%q`) quotes it: `"` and `\` escaped, \a \b \f
 * \n \r \t \v, other ASCII controls as \xNN, non-printable characters as \uNNNN or
 * \UNNNNNNNN; printable Unicode kept. (A lone UTF-16 surrogate, which has no UTF-8 form,
 * is written as U+FFFD, as Node would encode it.)
 */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c >= 0x20 && c < 0x7f && ch !== '"' && ch !== '\\') {
      out += ch;
      continue;
    }
    const escape = GO_ESCAPES[ch];
    if (escape !== undefined) out += escape;
    else if (c < 0x80) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if (c >= 0xd800 && c <= 0xdfff) out += '\ufffd';
    else if (PRINTABLE.test(ch)) out += ch;
    else if (c <= 0xffff) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += `\\U${c.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

/**
 * A float64 as Go's `%v` (and strconv.FormatFloat(f, 'g', -1, 64)) prints it: the
 * shortest `g`, which switches to exponent form below 1e-4 and from 1e6
 * (`1.2345675e+06`, `1e-05`, `1e+21`); `NaN`, `+Inf`, `-Inf`.
 */
export function goFloat(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  const exp = Math.floor(Math.log10(Math.abs(n)));
  if (exp >= -4 && exp < 6) return String(n);
  // JS writes 1e-7 and 1.5e+21; Go pads the exponent to two digits: 1e-07, 1.5e+21.
  return n.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
}

/**
 * A decoded JSON value as Go's `fmt` prints it with `%v`/`%+v` (how Kubernetes echoes a
 * strategic merge patch in errors): objects as `map[k1:v1 k2:v2]` with keys sorted,
 * arrays as `[a b]`, strings bare, null as `<nil>`, integers in decimal, other numbers as
 * float64.
 */
export function formatGoValue(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'number')
    return Number.isInteger(v) && Math.abs(v) < 2 ** 63 ? BigInt(v).toString() : goFloat(v);
  if (typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) return `[${v.map(formatGoValue).join(' ')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return `map[${keys.map((k) => `${k}:${formatGoValue(o[k])}`).join(' ')}]`;
  }
  return String(v);
}

const sortedKeys = (o: Record<string, unknown>): string[] =>
  Object.keys(o).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * A decoded JSON value held in an `interface {}` as Go's `fmt` prints it with `%#v`:
 * `map[string]interface {}{"a":"b", "n":1}` (keys sorted), `[]interface {}{"a", 1}`,
 * strings quoted as strconv.Quote does, null as `interface {}(nil)`, numbers as `%v`
 * prints them (Kubernetes' unstructured decoding keeps integers as int64).
 */
export function goSharpV(v: unknown): string {
  if (v === null || v === undefined) return 'interface {}(nil)';
  if (typeof v === 'string') return goQuote(v);
  if (Array.isArray(v)) return `[]interface {}{${v.map(goSharpV).join(', ')}}`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `map[string]interface {}{${sortedKeys(o)
      .map((k) => `${goQuote(k)}:${goSharpV(o[k])}`)
      .join(', ')}}`;
  }
  return formatGoValue(v);
}

/**
 * The Go type (`%T`) of a decoded JSON value in Kubernetes' unstructured form: string,
 * bool, int64 (an integer that fits), float64, `map[string]interface {}`,
 * `[]interface {}`, `<nil>`.
 */
export function goUnstructuredType(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) < 2 ** 63 ? 'int64' : 'float64';
  return Array.isArray(v) ? '[]interface {}' : 'map[string]interface {}';
}
