/**
 * The errors of the Go parsers that Kubernetes' JSON decoding runs on values, with Go's
 * wording, for field validation (../fieldvalidation/field-types.ts):
 * - `metav1.Time` / `metav1.MicroTime`: `time.Parse(time.RFC3339, s)` and
 *   `time.Parse("2006-01-02T15:04:05.000000Z07:00", s)` (their UnmarshalJSON);
 * - `[]byte`: `base64.StdEncoding.Decode` (encoding/json decodes []byte from base64);
 * - number literals as the decoder echoes them (`number 1.5`).
 */

// ---------------------------------------------------------------------------------------
// time.Parse

/** time.RFC3339, the layout of metav1.Time. */
export const RFC3339 = '2006-01-02T15:04:05Z07:00';
/** metav1.RFC3339Micro, the layout of metav1.MicroTime. */
export const RFC3339_MICRO = '2006-01-02T15:04:05.000000Z07:00';

/** The layouts as time.Parse splits them: a literal prefix, then a layout element. */
type Chunk = readonly [prefix: string, element: string];
const TIME_CHUNKS: readonly Chunk[] = [
  ['', '2006'],
  ['-', '01'],
  ['-', '02'],
  ['T', '15'],
  [':', '04'],
  [':', '05'],
  ['', 'Z07:00'],
];
const MICRO_TIME_CHUNKS: readonly Chunk[] = [...TIME_CHUNKS.slice(0, 6), ['', '.000000'], ['', 'Z07:00']];

function isDigitAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c >= 0x30 && c <= 0x39;
}

/** time's getnum: one or two digits (`fixed`: exactly two); undefined when there are none. */
function getnum(s: string, fixed: boolean): [number, string] | undefined {
  if (!isDigitAt(s, 0)) return undefined;
  if (!isDigitAt(s, 1)) return fixed ? undefined : [s.charCodeAt(0) - 0x30, s.slice(1)];
  return [(s.charCodeAt(0) - 0x30) * 10 + (s.charCodeAt(1) - 0x30), s.slice(2)];
}

/** time's atoi: an optional sign, then digits only. */
function atoi(s: string): number | undefined {
  return /^[+-]?\d+$/.test(s) ? Number(s) : undefined;
}

function daysIn(month: number, year: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * A string quoted as the time package quotes it in errors: `"` and `\` escaped, bytes of
 * non-ASCII and control characters as `\xNN` (UTF-8).
 */
function timeQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c >= 0x80 || c < 0x20) {
      for (const b of Buffer.from(ch, 'utf8')) out += `\\x${b.toString(16).padStart(2, '0')}`;
    } else {
      out += ch === '"' || ch === '\\' ? `\\${ch}` : ch;
    }
  }
  return `${out}"`;
}

/**
 * The error of Go's `time.Parse(layout, value)` for the layout of metav1.Time
 * (`micro` false: RFC 3339) or metav1.MicroTime (`micro`: RFC 3339 with exactly six
 * fractional digits), worded as Go's ParseError:
 * `parsing time "2024-13-01T00:00:00Z": month out of range`,
 * `parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`.
 * undefined when Go accepts the value. Go's general parser is followed, not its RFC 3339
 * fast path (which accepts a subset): a one-digit hour, a fraction on a Time (any number
 * of digits, `.` or `,`), and zone offsets up to 24:60 are accepted, as in Go.
 */
export function timeParseError(input: string, micro: boolean): string | undefined {
  return isPlainTime(input, micro) ? undefined : parseTimeSlowly(input, micro);
}

function digitsAt(s: string, i: number, n: number): number {
  let v = 0;
  for (let k = i; k < i + n; k++) {
    const d = s.charCodeAt(k) - 0x30;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

/**
 * `2006-01-02T15:04:05Z`, `2006-01-02T15:04:05.123+01:00`: the form almost every client
 * sends, valid when its numbers are in range (a character-by-character look, for speed).
 */
function isPlainTime(s: string, micro: boolean): boolean {
  if (s.length < 20 || s[4] !== '-' || s[7] !== '-' || s[10] !== 'T' || s[13] !== ':' || s[16] !== ':')
    return false;
  const year = digitsAt(s, 0, 4);
  const month = digitsAt(s, 5, 2);
  const day = digitsAt(s, 8, 2);
  const hour = digitsAt(s, 11, 2);
  const minute = digitsAt(s, 14, 2);
  const second = digitsAt(s, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysIn(month, year)) return false;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return false;
  let i = 19;
  if (s[i] === '.' || s[i] === ',') {
    const start = ++i;
    while (isDigitAt(s, i)) i++;
    if (micro ? i - start !== 6 : i === start) return false;
  } else if (micro) {
    return false;
  }
  if (s[i] === 'Z') return i === s.length - 1;
  if ((s[i] !== '+' && s[i] !== '-') || s.length - i !== 6 || s[i + 3] !== ':') return false;
  const zh = digitsAt(s, i + 1, 2);
  const zm = digitsAt(s, i + 4, 2);
  return zh >= 0 && zh <= 24 && zm >= 0 && zm <= 60;
}

/** time.Parse's general parser, step by step, for its exact errors. */
function parseTimeSlowly(input: string, micro: boolean): string | undefined {
  const layout = micro ? RFC3339_MICRO : RFC3339;
  const chunks = micro ? MICRO_TIME_CHUNKS : TIME_CHUNKS;
  const cannotParse = (valueElem: string, layoutElem: string): string =>
    `parsing time ${timeQuote(input)} as ${timeQuote(layout)}: cannot parse ${timeQuote(valueElem)} as ${timeQuote(layoutElem)}`;
  const outOfRange = (what: string): string => `parsing time ${timeQuote(input)}: ${what} out of range`;
  let value = input;
  let year = 0;
  let month = -1;
  let day = -1;
  for (let c = 0; c < chunks.length; c++) {
    const [prefix, element] = chunks[c]!;
    if (prefix !== '') {
      if (value[0] !== prefix) return cannotParse(value, prefix);
      value = value.slice(1);
    }
    const hold = value;
    let bad = false;
    let range = '';
    switch (element) {
      case '2006': {
        const y = value.length >= 4 && isDigitAt(value, 0) ? atoi(value.slice(0, 4)) : undefined;
        value = value.slice(4);
        if (y === undefined) bad = true;
        else year = y;
        break;
      }
      case '01': {
        const r = getnum(value, true);
        if (!r) bad = true;
        else {
          [month, value] = r;
          if (month <= 0 || month > 12) range = 'month';
        }
        break;
      }
      case '02': {
        const r = getnum(value, true);
        if (!r) bad = true;
        else [day, value] = r;
        break;
      }
      case '15': {
        const r = getnum(value, false);
        if (!r) bad = true;
        else if (r[0] >= 24) range = 'hour';
        if (r) value = r[1];
        break;
      }
      case '04': {
        const r = getnum(value, true);
        if (!r) bad = true;
        else if (r[0] >= 60) range = 'minute';
        if (r) value = r[1];
        break;
      }
      case '05': {
        const r = getnum(value, true);
        if (!r) {
          bad = true;
          break;
        }
        value = r[1];
        if (r[0] >= 60) {
          range = 'second';
          break;
        }
        // A fraction the layout does not have is accepted (any number of digits).
        if (!micro && value.length >= 2 && (value[0] === '.' || value[0] === ',') && isDigitAt(value, 1)) {
          let n = 2;
          while (isDigitAt(value, n)) n++;
          value = value.slice(n);
        }
        break;
      }
      case '.000000': {
        // Exactly as many digits as the layout has; Go's atoi even takes a sign here.
        if (value.length < 7 || (value[0] !== '.' && value[0] !== ',')) bad = true;
        else {
          const ns = atoi(value.slice(1, 7));
          if (ns === undefined) bad = true;
          else if (ns < 0) range = 'fractional second';
        }
        value = value.slice(7);
        break;
      }
      case 'Z07:00': {
        if (value[0] === 'Z') {
          value = value.slice(1);
          break;
        }
        if (value.length < 6 || value[3] !== ':') {
          bad = true;
          break;
        }
        const sign = value[0];
        const hh = getnum(value.slice(1, 3), true);
        const mm = hh ? getnum(value.slice(4, 6), true) : undefined;
        value = value.slice(6);
        if (!hh || !mm) bad = true;
        if ((hh?.[0] ?? 0) > 24) range = 'time zone offset hour';
        if ((mm?.[0] ?? 0) > 60) range = 'time zone offset minute';
        if (sign !== '+' && sign !== '-') bad = true;
        break;
      }
    }
    if (range !== '') return outOfRange(range);
    if (bad) return cannotParse(hold, element);
  }
  if (value !== '') return `parsing time ${timeQuote(input)}: extra text: ${timeQuote(value)}`;
  if (day < 1 || day > daysIn(month, year)) return outOfRange('day');
  return undefined;
}

// ---------------------------------------------------------------------------------------
// base64

const BASE64_CANONICAL = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function isBase64Byte(b: number): boolean {
  return (
    (b >= 0x41 && b <= 0x5a) ||
    (b >= 0x61 && b <= 0x7a) ||
    (b >= 0x30 && b <= 0x39) ||
    b === 0x2b ||
    b === 0x2f
  );
}

/**
 * The error of Go's `base64.StdEncoding.Decode` (how encoding/json decodes a []byte from
 * a string): `illegal base64 data at input byte 4`, offsets counted in UTF-8 bytes;
 * undefined when Go accepts the string (padding required; `\r` and `\n` ignored).
 */
export function base64Error(s: string): string | undefined {
  if (BASE64_CANONICAL.test(s)) return undefined;
  const src = Buffer.from(s, 'utf8');
  const corrupt = (at: number): string => `illegal base64 data at input byte ${at}`;
  const skipNewlines = (i: number): number => {
    while (i < src.length && (src[i] === 0x0a || src[i] === 0x0d)) i++;
    return i;
  };
  let si = 0;
  while (si < src.length) {
    // One quantum of four characters (Go's decodeQuantum).
    for (let j = 0; j < 4; j++) {
      if (si === src.length) return j === 0 ? undefined : corrupt(si - j);
      const b = src[si++]!;
      if (isBase64Byte(b)) continue;
      if (b === 0x0a || b === 0x0d) {
        j--;
        continue;
      }
      if (b !== 0x3d || j < 2) return corrupt(si - 1);
      if (j === 2) {
        // "==" is expected; the first "=" is read.
        si = skipNewlines(si);
        if (si === src.length) return corrupt(src.length);
        if (src[si] !== 0x3d) return corrupt(si - 1);
        si++;
      }
      si = skipNewlines(si);
      return si < src.length ? corrupt(si) : undefined;
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------
// Numbers

/**
 * A JSON number as Go's decoder echoes it (`number 99999999999`): the literal of the
 * request. The literal itself is gone once parsed, so integers print in full decimal and
 * other numbers as JavaScript prints them (`1.5`; `1.0` was parsed as 1 and is accepted).
 */
export function goNumberLiteral(n: number): string {
  return Number.isInteger(n) && Math.abs(n) < 1e21 ? BigInt(n).toString() : String(n);
}
