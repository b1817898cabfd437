/**
 * What Go's encoding/json says of a body that is not valid JSON: its scanner
 * (encoding/json/scanner.go, checkValid) run over the body's bytes, stopping at the first
 * error with its words (`invalid character 'a' looking for beginning of value`,
 * `unexpected end of JSON input`). Kubernetes' JSON serializer reads every request body
 * with it first (SimpleMetaFactory.Interpret), so these are the texts its errors quote.
 */
import { goQuote } from './go-format.js';

/** encoding/json's quoteChar: `'a'`, `'\''`, `'"'`, `'\n'`, `'\x01'`, a byte ≥ 0x80 as the rune it is. */
function quoteChar(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return `'"'`;
  const q = goQuote(String.fromCharCode(c));
  return `'${q.slice(1, -1)}'`;
}

const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isHex = (c: number): boolean => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

/** encoding/json's maxNestingDepth. */
const MAX_NESTING_DEPTH = 10000;

type Step = (c: number) => boolean;

/** One pass of the scanner; `error` is set at the first syntax error. */
class Scanner {
  error: string | undefined;
  private step: Step = (c) => this.beginValue(c);
  private readonly parseState: ('objectKey' | 'objectValue' | 'arrayValue')[] = [];
  private endTop = false;

  /** Feeds one byte; false once an error was found. */
  feed(c: number): boolean {
    return this.step(c);
  }

  /** The end of input: checkValid's eof(). */
  eof(): void {
    if (this.error !== undefined || this.endTop) return;
    this.step(0x20);
    if (this.endTop || this.error !== undefined) return;
    this.error = 'unexpected end of JSON input';
  }

  private fail(c: number, context: string): false {
    this.error = `invalid character ${quoteChar(c)} ${context}`;
    this.step = () => false;
    return false;
  }

  private push(c: number, state: 'objectKey' | 'arrayValue'): boolean {
    this.parseState.push(state);
    return this.parseState.length <= MAX_NESTING_DEPTH ? true : this.fail(c, 'exceeded max depth');
  }

  private pop(): void {
    this.parseState.pop();
    if (this.parseState.length === 0) {
      this.step = (c) => this.endTopState(c);
      this.endTop = true;
    } else {
      this.step = (c) => this.endValue(c);
    }
  }

  private beginValueOrEmpty(c: number): boolean {
    if (isSpace(c)) return true;
    if (c === 0x5d) return this.endValue(c);
    return this.beginValue(c);
  }

  private beginValue(c: number): boolean {
    if (isSpace(c)) return true;
    switch (c) {
      case 0x7b: // {
        this.step = (x) => this.beginStringOrEmpty(x);
        return this.push(c, 'objectKey');
      case 0x5b: // [
        this.step = (x) => this.beginValueOrEmpty(x);
        return this.push(c, 'arrayValue');
      case 0x22:
        this.step = (x) => this.inString(x);
        return true;
      case 0x2d: // -
        this.step = (x) => this.neg(x);
        return true;
      case 0x30:
        this.step = (x) => this.zero(x);
        return true;
      case 0x74:
        return this.literal('true', 1);
      case 0x66:
        return this.literal('false', 1);
      case 0x6e:
        return this.literal('null', 1);
    }
    if (c >= 0x31 && c <= 0x39) {
      this.step = (x) => this.one(x);
      return true;
    }
    return this.fail(c, 'looking for beginning of value');
  }

  private beginStringOrEmpty(c: number): boolean {
    if (isSpace(c)) return true;
    if (c === 0x7d) {
      this.parseState[this.parseState.length - 1] = 'objectValue';
      return this.endValue(c);
    }
    return this.beginString(c);
  }

  private beginString(c: number): boolean {
    if (isSpace(c)) return true;
    if (c === 0x22) {
      this.step = (x) => this.inString(x);
      return true;
    }
    return this.fail(c, 'looking for beginning of object key string');
  }

  private endValue(c: number): boolean {
    const n = this.parseState.length;
    if (n === 0) {
      this.step = (x) => this.endTopState(x);
      this.endTop = true;
      return this.endTopState(c);
    }
    if (isSpace(c)) {
      this.step = (x) => this.endValue(x);
      return true;
    }
    switch (this.parseState[n - 1]) {
      case 'objectKey':
        if (c === 0x3a) {
          this.parseState[n - 1] = 'objectValue';
          this.step = (x) => this.beginValue(x);
          return true;
        }
        return this.fail(c, 'after object key');
      case 'objectValue':
        if (c === 0x2c) {
          this.parseState[n - 1] = 'objectKey';
          this.step = (x) => this.beginString(x);
          return true;
        }
        if (c === 0x7d) {
          this.pop();
          return true;
        }
        return this.fail(c, 'after object key:value pair');
      default:
        if (c === 0x2c) {
          this.step = (x) => this.beginValue(x);
          return true;
        }
        if (c === 0x5d) {
          this.pop();
          return true;
        }
        return this.fail(c, 'after array element');
    }
  }

  private endTopState(c: number): boolean {
    return isSpace(c) ? true : this.fail(c, 'after top-level value');
  }

  private inString(c: number): boolean {
    if (c === 0x22) {
      this.step = (x) => this.endValue(x);
      return true;
    }
    if (c === 0x5c) {
      this.step = (x) => this.inStringEsc(x);
      return true;
    }
    if (c < 0x20) return this.fail(c, 'in string literal');
    return true;
  }

  private inStringEsc(c: number): boolean {
    if ('bfnrt\\/"'.includes(String.fromCharCode(c))) {
      this.step = (x) => this.inString(x);
      return true;
    }
    if (c === 0x75) {
      this.step = (x) => this.escU(x, 1);
      return true;
    }
    return this.fail(c, 'in string escape code');
  }

  private escU(c: number, i: number): boolean {
    if (!isHex(c)) return this.fail(c, 'in \\u hexadecimal character escape');
    this.step = i === 4 ? (x) => this.inString(x) : (x) => this.escU(x, i + 1);
    return true;
  }

  private neg(c: number): boolean {
    if (c === 0x30) {
      this.step = (x) => this.zero(x);
      return true;
    }
    if (c >= 0x31 && c <= 0x39) {
      this.step = (x) => this.one(x);
      return true;
    }
    return this.fail(c, 'in numeric literal');
  }

  private one(c: number): boolean {
    if (isDigit(c)) return true;
    return this.zero(c);
  }

  private zero(c: number): boolean {
    if (c === 0x2e) {
      this.step = (x) => this.dot(x);
      return true;
    }
    if (c === 0x65 || c === 0x45) {
      this.step = (x) => this.e(x);
      return true;
    }
    return this.endValue(c);
  }

  private dot(c: number): boolean {
    if (isDigit(c)) {
      this.step = (x) => this.dot0(x);
      return true;
    }
    return this.fail(c, 'after decimal point in numeric literal');
  }

  private dot0(c: number): boolean {
    if (isDigit(c)) return true;
    if (c === 0x65 || c === 0x45) {
      this.step = (x) => this.e(x);
      return true;
    }
    return this.endValue(c);
  }

  private e(c: number): boolean {
    if (c === 0x2b || c === 0x2d) {
      this.step = (x) => this.eSign(x);
      return true;
    }
    return this.eSign(c);
  }

  private eSign(c: number): boolean {
    if (isDigit(c)) {
      this.step = (x) => this.e0(x);
      return true;
    }
    return this.fail(c, 'in exponent of numeric literal');
  }

  private e0(c: number): boolean {
    return isDigit(c) ? true : this.endValue(c);
  }

  /** The states of true, false and null: `word[i]` is the byte expected next. */
  private literal(word: string, i: number): boolean {
    this.step = (c) => {
      const want = word.charCodeAt(i);
      if (c !== want) return this.fail(c, `in literal ${word} (expecting ${quoteChar(want)})`);
      if (i === word.length - 1) this.step = (x) => this.endValue(x);
      else this.literal(word, i + 1);
      return true;
    };
    return true;
  }
}

/**
 * The error encoding/json's checkValid reports for `body` (its UTF-8 bytes), or undefined
 * when it is valid JSON.
 */
export function goJsonSyntaxError(body: Buffer | string): string | undefined {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const scanner = new Scanner();
  for (const c of bytes) if (!scanner.feed(c)) return scanner.error;
  scanner.eof();
  return scanner.error;
}

/** The Go type of a JSON value's kind, as encoding/json names it in UnmarshalTypeError. */
function jsonValueKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'bool';
  return 'object';
}

/**
 * What SimpleMetaFactory.Interpret says of valid JSON that is not an object (null is
 * fine: it leaves apiVersion and kind empty): `json: cannot unmarshal array into Go value
 * of type struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string
 * "json:\"kind,omitempty\"" }`; undefined for an object or null.
 */
export function goTypeMetaError(value: unknown): string | undefined {
  if (value === null || (typeof value === 'object' && !Array.isArray(value))) return undefined;
  return `json: cannot unmarshal ${jsonValueKind(value)} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`;
}

/**
 * The handlers' summarizeData: the first 30 bytes of a request body, as text if it starts
 * with `{`, else in hex, ` ...` when there is more; `<empty>` for none.
 */
export function summarizeData(body: Buffer | string): string {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  if (bytes.length === 0) return '<empty>';
  const head = bytes.subarray(0, 30);
  const more = bytes.length > 30 ? ' ...' : '';
  return bytes[0] === 0x7b ? `${head.toString('utf8')}${more}` : `${head.toString('hex')}${more}`;
}
