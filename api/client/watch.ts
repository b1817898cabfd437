/**
 * Watch events as the API server streams them: `GET ...?watch=true` answers 200 with
 * newline-delimited JSON, one `{"type": ..., "object": ...}` per line (metav1.WatchEvent),
 * until the server ends the response (its timeout), the client leaves, or the connection
 * breaks.
 */
import { StringDecoder } from 'node:string_decoder';
import type { KubeObject } from '../object.js';
import type { Status } from './errors.js';

/** metav1.WatchEvent types. */
export const WATCH_EVENT_TYPES = ['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'] as const;
export type WatchEventType = (typeof WATCH_EVENT_TYPES)[number];

/**
 * One watch event. ADDED/MODIFIED carry the object's new state, DELETED its last state,
 * BOOKMARK an object of the watched kind with only `metadata.resourceVersion` (and
 * annotations) set, ERROR a metav1.Status (`code: 410` when the resourceVersion asked for
 * is too old).
 */
export type WatchEvent<T extends KubeObject = KubeObject> =
  { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: T } | { type: 'ERROR'; object: Status };

/**
 * An open watch: iterate it for events (`for await (const ev of w)`). Iteration ends when
 * the server ends the stream or `stop()` is called; it throws when the connection breaks
 * or a line is not a watch event (`WatchDecodeError`). One iteration per stream.
 */
export interface WatchStream<T extends KubeObject = KubeObject> extends AsyncIterable<WatchEvent<T>> {
  /** Closes the connection; a pending or later iteration step ends without error. Idempotent. */
  stop(): void;
}

/** A line of a watch stream that is not a JSON watch event; `line` is its first 200 characters. */
export class WatchDecodeError extends Error {
  override readonly name = 'WatchDecodeError';
  constructor(
    message: string,
    readonly line: string,
  ) {
    super(message);
  }
}

/** Parses one line of a watch stream. @throws WatchDecodeError. */
export function parseWatchLine<T extends KubeObject>(line: string): WatchEvent<T> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (err) {
    throw new WatchDecodeError(`watch event is not JSON: ${(err as Error).message}`, line.slice(0, 200));
  }
  const ev = parsed as { type?: unknown; object?: unknown } | null;
  if (
    typeof ev !== 'object' ||
    ev === null ||
    !(WATCH_EVENT_TYPES as readonly unknown[]).includes(ev.type) ||
    typeof ev.object !== 'object' ||
    ev.object === null
  ) {
    throw new WatchDecodeError('not a watch event: want {"type":..., "object":{...}}', line.slice(0, 200));
  }
  return ev as WatchEvent<T>;
}

/**
 * The events of a newline-delimited JSON byte stream, in order. Blank lines are skipped;
 * a last line without a newline is parsed when the stream ends. Pull-based: the source
 * is read only as fast as events are consumed, so a slow consumer applies TCP
 * backpressure to the server instead of buffering without bound.
 * @throws WatchDecodeError for a line that is not a watch event; rethrows the source's errors.
 */
export async function* decodeWatchStream<T extends KubeObject>(
  source: AsyncIterable<Buffer | string>,
): AsyncGenerator<WatchEvent<T>, void, undefined> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  for await (const chunk of source) {
    pending += typeof chunk === 'string' ? chunk : decoder.write(chunk);
    let start = 0;
    let nl: number;
    while ((nl = pending.indexOf('\n', start)) >= 0) {
      const line = pending.slice(start, nl).trim();
      start = nl + 1;
      if (line !== '') yield parseWatchLine<T>(line);
    }
    pending = pending.slice(start);
  }
  pending += decoder.end();
  const rest = pending.trim();
  if (rest !== '') yield parseWatchLine<T>(rest);
}
