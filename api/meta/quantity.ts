/**
 * resource.Quantity, as k8s.io/apimachinery pkg/api/resource defines it: the fixed-point
 * numbers of `resources.requests.cpu: 100m`, `memory: 1.5Gi`, node capacity and quota.
 *
 * Syntax (Kubernetes' grammar):
 *
 *     quantity ::= [+-] number suffix
 *     number   ::= digits | digits "." digits | digits "." | "." digits
 *     suffix   ::= "" | n | u | m | k | M | G | T | P | E      (decimal SI, powers of 1000)
 *                | Ki | Mi | Gi | Ti | Pi | Ei                 (binary SI, powers of 1024)
 *                | (e | E) [+-] digits                         (decimal exponent)
 *
 * A Quantity is exact: a BigInt times a power of ten, never a float. As in Kubernetes,
 * anything finer than 1n (10^-9) is rounded up away from zero (`0.1n` → `1n`), binary-SI
 * quantities are capped at 2^63-1, and the quantity remembers its suffix family
 * (`format`) and prints itself in canonical form in that family: the largest suffix that
 * keeps an integer mantissa (`1.5Gi` → `1536Mi`, `0.1` → `100m`, `1000M` → `1G`).
 *
 * Quantities are immutable; arithmetic returns new ones.
 */

/** The suffix family of a quantity: `12e6`, `12Mi` (12 * 2^20), or `12M` (12 * 10^6). */
export type QuantityFormat = 'DecimalExponent' | 'BinarySI' | 'DecimalSI';

/** Why a quantity string was rejected. */
export type QuantityErrorReason = 'FormatWrong' | 'Numeric' | 'Suffix' | 'OutOfRange';

const splitRE = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';
const reasonMessages: Record<QuantityErrorReason, string> = {
  FormatWrong: `quantities must match the regular expression '${splitRE}'`,
  Numeric: 'unable to parse numeric part of quantity',
  Suffix: "unable to parse quantity's suffix",
  OutOfRange: 'quantity is out of range: its magnitude must be below 10^1000',
};

/**
 * A malformed quantity. `message` is Kubernetes' own wording for the reason (what an API
 * client sees in a 400 response, e.g. `quantities must match the regular expression
 * '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`); `input` is the rejected text.
 */
export class QuantityParseError extends Error {
  override readonly name = 'QuantityParseError';
  constructor(
    readonly reason: QuantityErrorReason,
    readonly input: string,
  ) {
    super(reasonMessages[reason]);
  }
}

/** Quantities whose magnitude would reach 10^MAX_DIGITS are refused (Kubernetes cannot use them either). */
const MAX_DIGITS = 1000;
/** The smallest step a quantity keeps: 10^-9 (1n). */
const NANO = -9;
const INT64_MAX = 2n ** 63n - 1n;

const pow10Cache = new Map<number, bigint>();
function pow10(n: number): bigint {
  let p = pow10Cache.get(n);
  if (p === undefined) {
    p = 10n ** BigInt(n);
    if (n <= 64) pow10Cache.set(n, p);
  }
  return p;
}

function abs(n: bigint): bigint {
  return n < 0n ? -n : n;
}

function digitCount(n: bigint): number {
  return n === 0n ? 0 : abs(n).toString().length;
}

/** |n| / 10^k rounded up (away from zero), with n's sign. */
function divPow10Up(n: bigint, k: number): bigint {
  if (k <= 0) return n * pow10(-k);
  if (n === 0n) return 0n;
  if (k > digitCount(n)) return n > 0n ? 1n : -1n;
  const d = pow10(k);
  const q = abs(n) / d;
  const r = abs(n) % d;
  const up = r === 0n ? q : q + 1n;
  return n < 0n ? -up : up;
}

interface Scanned {
  positive: boolean;
  num: string;
  denom: string;
  suffix: string;
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const suffixChars = 'eEinumkKMGTP';

/** Kubernetes' parseQuantityString: sign, integer digits (leading zeros dropped), fraction, suffix. */
function scan(str: string): Scanned {
  let positive = true;
  let pos = 0;
  const end = str.length;
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') {
    pos++;
  }
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { positive, num: '0', denom: '', suffix: '' };

  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  let num = str.slice(pos, i);
  if (i >= end) return { positive, num, denom: '', suffix: '' };
  if (num === '') num = '0';
  pos = i;

  let denom = '';
  if (str[pos] === '.') {
    pos++;
    i = pos;
    while (i < end && isDigit(str[i])) i++;
    denom = str.slice(pos, i);
    if (i >= end) return { positive, num, denom, suffix: '' };
    pos = i;
  }

  const suffixStart = pos;
  while (pos < end && suffixChars.includes(str[pos]!)) pos++;
  if (pos < end && (str[pos] === '-' || str[pos] === '+')) pos++;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos < end) throw new QuantityParseError('FormatWrong', str);
  return { positive, num, denom, suffix: str.slice(suffixStart) };
}

interface Suffix {
  base: 2 | 10;
  exponent: number;
  format: QuantityFormat;
}

const decimalSuffixes: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const binarySuffixes: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

function interpretSuffix(s: string, input: string): Suffix {
  if (Object.hasOwn(decimalSuffixes, s))
    return { base: 10, exponent: decimalSuffixes[s]!, format: 'DecimalSI' };
  if (Object.hasOwn(binarySuffixes, s)) return { base: 2, exponent: binarySuffixes[s]!, format: 'BinarySI' };
  if (s.length > 1 && (s[0] === 'e' || s[0] === 'E') && /^[+-]?[0-9]+$/.test(s.slice(1))) {
    const exponent = BigInt(s.slice(1));
    // Kubernetes parses the exponent as an int64, then silently truncates it to int32.
    if (exponent < -(2n ** 63n) || exponent > INT64_MAX) throw new QuantityParseError('Suffix', input);
    if (exponent < -(2n ** 31n) || exponent >= 2n ** 31n) throw new QuantityParseError('OutOfRange', input);
    return { base: 10, exponent: Number(exponent), format: 'DecimalExponent' };
  }
  throw new QuantityParseError('Suffix', input);
}

/**
 * Whether Kubernetes would keep the input text as the quantity's serialized form: it does
 * so on its fast integer path when the text is already canonical, which preserves cosmetic
 * choices such as a leading '+', leading zeros, or `E` for the exponent (`+1`, `1E3`).
 */
function keepsInputText(sc: Scanned, suf: Suffix): boolean {
  if (suf.format === 'BinarySI') {
    if (sc.denom !== '') return false;
    const precision = 15 - sc.num.length - Math.trunc((suf.exponent * 3) / 10) - 1;
    return precision >= 0 && (BigInt(sc.num) & 7n) !== 0n;
  }
  const precision = 18 - (sc.num.length + sc.denom.length);
  const scale = suf.exponent - sc.denom.length;
  const shifted = sc.num + sc.denom;
  return precision >= 0 && scale >= NANO && scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
}

function toBigInt(n: bigint | number, what: string): bigint {
  if (typeof n === 'bigint') return n;
  if (!Number.isSafeInteger(n)) throw new RangeError(`${what} must be a safe integer, got ${n}`);
  return BigInt(n);
}

/**
 * An exact quantity: `unscaled * 10^scale`, with a suffix family (`format`) for printing.
 * Build one with `parseQuantity`, `Quantity.fromJSON`, `Quantity.fromValue`,
 * `Quantity.fromMilli` or `Quantity.fromScaled`.
 */
export class Quantity {
  private constructor(
    private readonly unscaled: bigint,
    private readonly scale: number,
    readonly format: QuantityFormat,
    private readonly text?: string,
  ) {}

  /** The zero quantity in the given format (prints as `0`). */
  static zero(format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(0n, 0, format);
  }

  /**
   * `value` units (bytes, cores, pods) exactly; `fromValue(1024n, 'BinarySI')` prints `1Ki`,
   * `fromValue(110)` prints `110` (Kubernetes' NewQuantity).
   * @throws RangeError for a number that is not a safe integer.
   */
  static fromValue(value: bigint | number, format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(toBigInt(value, 'value'), 0, format);
  }

  /**
   * `milli` thousandths (millicores for cpu); `fromMilli(2000)` prints `2`, `fromMilli(250)`
   * `250m` (Kubernetes' NewMilliQuantity).
   * @throws RangeError for a number that is not a safe integer.
   */
  static fromMilli(milli: bigint | number, format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(toBigInt(milli, 'milli'), -3, format);
  }

  /**
   * `value * 10^scale` in DecimalSI (Kubernetes' NewScaledQuantity); `scale` is an integer
   * from -9 (nano) to 1000.
   * @throws RangeError for a non-integer or out-of-range scale or value.
   */
  static fromScaled(value: bigint | number, scale: number): Quantity {
    if (!Number.isInteger(scale) || scale < NANO || scale > MAX_DIGITS) {
      throw new RangeError(`scale must be an integer from ${NANO} to ${MAX_DIGITS}, got ${scale}`);
    }
    return new Quantity(toBigInt(value, 'value'), scale, 'DecimalSI');
  }

  /**
   * A quantity as it appears in JSON: a string (surrounding whitespace ignored, as
   * Kubernetes' UnmarshalJSON does) or a number (`cpu: 0.5` in YAML).
   * @throws QuantityParseError for malformed text, TypeError for other types.
   */
  static fromJSON(v: unknown): Quantity {
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw new QuantityParseError('Numeric', String(v));
      return parseQuantity(String(v));
    }
    if (typeof v === 'string') return parseQuantity(v.trim());
    throw new TypeError(`a quantity must be a string or a number, got ${v === null ? 'null' : typeof v}`);
  }

  /** Same as `parseQuantity(str)`. */
  static parse(str: string): Quantity {
    if (str.length === 0) throw new QuantityParseError('FormatWrong', str);
    if (str === '0') return new Quantity(0n, 0, 'DecimalSI', '0');
    const sc = scan(str);
    const suf = interpretSuffix(sc.suffix, str);
    const digits = BigInt(sc.num + sc.denom);

    let unscaled = suf.base === 10 ? digits : digits << BigInt(suf.exponent);
    let scale = suf.base === 10 ? suf.exponent - sc.denom.length : -sc.denom.length;
    if (!sc.positive) unscaled = -unscaled;
    if (unscaled !== 0n && digitCount(unscaled) + scale > MAX_DIGITS)
      throw new QuantityParseError('OutOfRange', str);

    // Round anything finer than 1n up (away from zero): asking for some resource gets some.
    if (scale < NANO) {
      unscaled = divPow10Up(unscaled, NANO - scale);
      scale = NANO;
    }
    let format = suf.format;
    if (format === 'BinarySI') {
      const mag = abs(unscaled);
      const overMax = scale >= 0 ? mag * pow10(scale) > INT64_MAX : mag > INT64_MAX * pow10(-scale);
      if (overMax) {
        unscaled = unscaled < 0n ? -INT64_MAX : INT64_MAX;
        scale = 0;
      }
      // Binary suffixes cannot express a fraction of one: print such a value as DecimalSI.
      if (unscaled !== 0n && scale < 0 && abs(unscaled) < pow10(-scale)) format = 'DecimalSI';
    }
    return new Quantity(unscaled, scale, format, keepsInputText(sc, suf) ? str : undefined);
  }

  /** -1, 0 or 1. */
  get sign(): -1 | 0 | 1 {
    return this.unscaled === 0n ? 0 : this.unscaled < 0n ? -1 : 1;
  }

  /** True when the quantity is zero. */
  isZero(): boolean {
    return this.unscaled === 0n;
  }

  /**
   * `ceil(q / 10^scale)`, rounding away from zero (Kubernetes' ScaledValue): the integer
   * number of units of size 10^scale needed to hold the quantity. Exact (BigInt), so it
   * never overflows as Kubernetes' int64 can.
   * @throws RangeError when scale is not an integer or the result would be absurdly large.
   */
  scaledValue(scale: number): bigint {
    if (!Number.isInteger(scale)) throw new RangeError(`scale must be an integer, got ${scale}`);
    const shift = this.scale - scale;
    if (this.unscaled !== 0n && shift + digitCount(this.unscaled) > 2 * MAX_DIGITS) {
      throw new RangeError('quantity is too large for that scale');
    }
    return divPow10Up(this.unscaled, -shift);
  }

  /**
   * The value in whole units, rounded up away from zero (Kubernetes' Value): bytes for
   * memory and storage (`1.5Gi` → 1610612736n, `0.5` → 1n), cores for cpu, a count for pods.
   */
  value(): bigint {
    return this.scaledValue(0);
  }

  /** The value in thousandths, rounded up away from zero (Kubernetes' MilliValue): millicores for cpu (`0.5` → 500n). */
  milliValue(): bigint {
    return this.scaledValue(-3);
  }

  /** -1, 0 or 1 as this is less than, equal to or greater than `other` (formats are ignored). */
  cmp(other: Quantity): -1 | 0 | 1 {
    const s = Math.min(this.scale, other.scale);
    const a = this.unscaled * pow10(this.scale - s);
    const b = other.unscaled * pow10(other.scale - s);
    return a < b ? -1 : a > b ? 1 : 0;
  }

  /** Equal in value (`1Gi` equals `1024Mi` and `1073741824`). */
  equals(other: Quantity): boolean {
    return this.cmp(other) === 0;
  }

  /** this + other; a zero quantity takes the other's format, as in Kubernetes. */
  add(other: Quantity): Quantity {
    const s = Math.min(this.scale, other.scale);
    const sum = this.unscaled * pow10(this.scale - s) + other.unscaled * pow10(other.scale - s);
    return new Quantity(sum, s, this.isZero() ? other.format : this.format);
  }

  /** this - other; a zero quantity takes the other's format, as in Kubernetes. */
  sub(other: Quantity): Quantity {
    return this.add(other.neg());
  }

  /** -this, same format. */
  neg(): Quantity {
    return new Quantity(-this.unscaled, this.scale, this.format);
  }

  /**
   * this * n for an integer n (e.g. a pod's request times replicas).
   * @throws RangeError for a number that is not a safe integer.
   */
  mul(n: bigint | number): Quantity {
    return new Quantity(this.unscaled * toBigInt(n, 'multiplier'), this.scale, this.format);
  }

  /** The same value printed in another suffix family. */
  withFormat(format: QuantityFormat): Quantity {
    return format === this.format && this.text === undefined
      ? this
      : new Quantity(this.unscaled, this.scale, format);
  }

  /** The exact value in plain decimal (`1.5`, `-0.001`, `1073741824`), for logs and tests. */
  toDecimalString(): string {
    const digits = abs(this.unscaled).toString();
    const sign = this.unscaled < 0n ? '-' : '';
    if (this.scale >= 0) return this.unscaled === 0n ? '0' : `${sign}${digits}${'0'.repeat(this.scale)}`;
    const frac = -this.scale;
    const padded = digits.padStart(frac + 1, '0');
    const int = padded.slice(0, padded.length - frac);
    const dec = padded.slice(padded.length - frac).replace(/0+$/, '');
    return `${sign}${int}${dec ? `.${dec}` : ''}`;
  }

  /**
   * What Kubernetes serializes: the input text when it was already canonical (Kubernetes
   * keeps it verbatim, so `+1` stays `+1` and `1E3` stays `1E3`), otherwise the canonical
   * form (`formatQuantity`).
   */
  toString(): string {
    return this.text ?? this.canonical();
  }

  /** The serialized form, so JSON.stringify writes quantities as Kubernetes does. */
  toJSON(): string {
    return this.toString();
  }

  /** The canonical form, whatever the input text was: see `formatQuantity`. */
  canonical(): string {
    if (this.unscaled === 0n) return '0';
    const sign = this.unscaled < 0n ? '-' : '';
    const mag = abs(this.unscaled);
    if (this.format === 'BinarySI') {
      // Integers of 1024 and more print in powers of 1024; anything smaller or fractional as DecimalSI.
      const isInteger = this.scale >= 0 || mag % pow10(-this.scale) === 0n;
      const whole = this.scale >= 0 ? mag * pow10(this.scale) : mag / pow10(-this.scale);
      if (isInteger && whole >= 1024n) {
        let m = whole;
        let e = 0;
        while (m >= 1024n && m % 1024n === 0n) {
          m /= 1024n;
          e++;
        }
        const names = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
        if (e >= names.length) {
          m *= 1024n ** BigInt(e - (names.length - 1));
          e = names.length - 1;
        }
        return `${sign}${m}${names[e]}`;
      }
    }
    // Move factors of ten into the exponent, then lower it to a multiple of three.
    let m = mag;
    let e = this.scale;
    while (m % 10n === 0n) {
      m /= 10n;
      e++;
    }
    const down = ((e % 3) + 3) % 3;
    m *= pow10(down);
    e -= down;
    if (this.format === 'DecimalExponent') return `${sign}${m}${e === 0 ? '' : `e${e}`}`;
    const names: Record<number, string> = {
      [-9]: 'n',
      [-6]: 'u',
      [-3]: 'm',
      0: '',
      3: 'k',
      6: 'M',
      9: 'G',
      12: 'T',
      15: 'P',
      18: 'E',
    };
    if (e > 18) {
      m *= pow10(e - 18);
      e = 18;
    } else if (e < NANO) {
      // Not reachable for quantities built by this module (all are multiples of 1n).
      return `${sign}${m}e${e}`;
    }
    return `${sign}${m}${names[e]}`;
  }
}

/**
 * Parses a quantity string exactly as Kubernetes' ParseQuantity does: `100m`, `0.5`,
 * `1Gi`, `128974848`, `129e6`, `123Mi`, `1k`, `2E`, `-1.5`, `.5`, `1.`. No surrounding
 * whitespace (see `Quantity.fromJSON`). Kubernetes' oddities are kept: `.` and a lone
 * sign parse as 0, a value finer than 1n is rounded up to 1n, and BinarySI values are
 * capped at 2^63-1 (`9Ei` → 9223372036854775807).
 *
 * @throws QuantityParseError `FormatWrong` (not number+suffix, e.g. `1 `, `1.1.M`, `aoeu`),
 *   `Suffix` (unknown suffix: `1i`, `0.1mi`, `5KB`), or `OutOfRange` (magnitude 10^1000
 *   or more, or an exponent beyond int32, which Kubernetes accepts but cannot compute with).
 */
export function parseQuantity(str: string): Quantity {
  return Quantity.parse(str);
}

/**
 * Kubernetes' canonical form of a quantity, in its format's suffix family, with the
 * largest suffix that keeps an integer mantissa and no fractional digits:
 * `1.5Gi` → `1536Mi`, `0.1` → `100m`, `1000M` → `1G`, `1.5` → `1500m`, `129e6` → `129e6`.
 * BinarySI values below 1024 in magnitude, or fractional, print as DecimalSI
 * (`0.5Ki` → `512`, `0.5` BinarySI → `500m`); integers that are not a multiple of 1024 print
 * plain (`1.5Ki` → `1536`). Unlike `toString()`, never echoes the input text.
 * DecimalSI values of 1000E and more print with an `E` suffix (`1000E`), where Kubernetes
 * would drop the suffix.
 */
export function formatQuantity(q: Quantity): string {
  return q.canonical();
}

/** -1, 0 or 1 as a is less than, equal to or greater than b (for sorting). */
export function compareQuantities(a: Quantity, b: Quantity): -1 | 0 | 1 {
  return a.cmp(b);
}

/**
 * A byte count as the kubelet reports memory and storage capacity (Kubernetes'
 * NewQuantity(bytes, BinarySI)): 17179869184 → `16Gi`, 16777478144 → `16384256Ki`,
 * 1536 → `1536` (a multiple of 1024 gets the largest binary suffix that keeps it whole;
 * other integers print plain). Below 1024, Kubernetes switches to DecimalSI, so 1000 →
 * `1k` and 1023 → `1023`.
 * @throws RangeError for a number that is not a safe integer.
 */
export function formatBytes(bytes: bigint | number): string {
  return Quantity.fromValue(bytes, 'BinarySI').toString();
}

/**
 * Millicores as the kubelet reports cpu (DecimalSI): 2000 → `2`, 1500 → `1500m`,
 * 250 → `250m`, 0 → `0`.
 * @throws RangeError for a number that is not a safe integer.
 */
export function formatMillicores(millicores: bigint | number): string {
  return Quantity.fromMilli(millicores, 'DecimalSI').toString();
}
