/**
 * `Warning: 299` headers: each warning text escaped, quoted and truncated as the
 * apiserver's warning recorder does, so that kubectl prints `Warning: <text>`.
 */

/** The apiserver's warning recorder: past this many runes in all, each text is cut to TRUNCATE_ITEM_RUNES. */
const TRUNCATE_AT_TOTAL_RUNES = 4 * 1024;
const TRUNCATE_ITEM_RUNES = 256;

// Go's unicode.IsControl: C0, DEL and C1.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * The value of one `Warning` header, as Kubernetes writes it (RFC 7234 warn-code 299,
 * no agent): `299 - "unknown field \"spec.foo\""` — `"` and `\` escaped, nothing else.
 * Non-ASCII text is returned as the latin1 rendering of its UTF-8 bytes, which is how
 * Node's `setHeader`/`appendHeader` put a string's bytes on the wire (Go sends UTF-8 and
 * kubectl reads UTF-8). undefined for text Kubernetes will not send (control characters).
 */
export function warningHeader(text: string): string | undefined {
  if (CONTROL.test(text)) return undefined;
  const value = `299 - "${text.replace(/["\\]/g, '\\$&')}"`;
  // eslint-disable-next-line no-control-regex
  return /[^\u0000-\u007f]/.test(value) ? Buffer.from(value, 'utf8').toString('latin1') : value;
}

function runes(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function truncateRunes(s: string, max: number): string {
  let out = '';
  let n = 0;
  for (const ch of s) {
    if (n++ === max) break;
    out += ch;
  }
  return out;
}

/**
 * The `Warning` header values for all the warnings of one request, as the apiserver's
 * warning recorder emits them: empty texts skipped, repeats dropped, and once the texts
 * pass 4096 runes in all, every text (those already emitted included) cut to 256 runes
 * and further texts dropped once 4096 runes are written again. Set them with
 * `res.appendHeader('Warning', v)` for each (or `setHeader('Warning', values)`).
 */
export function warningHeaders(texts: Iterable<string>): string[] {
  const recorded = new Set<string>();
  const ordered: string[] = [];
  let headers: string[] = [];
  let written = 0;
  let truncating = false;
  for (const text of texts) {
    if (text === '') continue;
    if (truncating && written >= TRUNCATE_AT_TOTAL_RUNES) break;
    if (recorded.has(text)) continue;
    recorded.add(text);
    ordered.push(text);
    let t = text;
    let length = runes(t);
    if (truncating && length > TRUNCATE_ITEM_RUNES) {
      t = truncateRunes(t, TRUNCATE_ITEM_RUNES);
      length = TRUNCATE_ITEM_RUNES;
    }
    const header = warningHeader(t);
    if (header === undefined) continue;
    if (truncating || written + length <= TRUNCATE_AT_TOTAL_RUNES) {
      written += length;
      headers.push(header);
      continue;
    }
    // Over the limit: start again with every text so far cut to the per-item limit.
    truncating = true;
    written = 0;
    headers = [];
    for (const w of ordered) {
      const cut = truncateRunes(w, TRUNCATE_ITEM_RUNES);
      const h = warningHeader(cut);
      if (h === undefined) continue;
      written += runes(cut);
      headers.push(h);
    }
  }
  return headers;
}

/** Where ResponseWarnings writes: the response's headers (a ServerResponse). */
export interface WarningHeaderSink {
  readonly headersSent: boolean;
  setHeader(name: string, value: string[]): unknown;
}

/**
 * The warning recorder of one request (kube-apiserver's endpoints/filters/warning.go
 * recorder, which every part of the request shares: field validation, the kind's
 * strategy, admission): each warning becomes a `Warning` header as soon as it is added,
 * with `warningHeaders`' rules across all of the request's warnings (repeats dropped, the
 * 4096-rune budget and its truncation), so headers already set may be rewritten when
 * truncation starts. Warnings added once the headers are sent are dropped.
 */
export class ResponseWarnings {
  private readonly texts: string[] = [];

  constructor(private readonly res: WarningHeaderSink) {}

  /** Adds `text` (a warning's message, without the `299 -` framing). */
  add(text: string): void {
    if (this.res.headersSent) return;
    this.texts.push(text);
    const headers = warningHeaders(this.texts);
    if (headers.length > 0) this.res.setHeader('Warning', headers);
  }
}
