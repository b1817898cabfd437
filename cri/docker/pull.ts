/**
 * Reading the progress stream of Docker's image create (pull): one JSON message per line,
 * `{status, id?, progressDetail: {current, total}}` while layers arrive, and — since the
 * HTTP status is already 200 by then — a failure as a line with `error`/`errorDetail`.
 */
import type { Readable } from 'node:stream';
import type { PullProgress } from '../api.js';
import { CriError } from '../errors.js';
import { errorMessage } from '../../api/errors.js';

interface PullMessage {
  status?: string;
  id?: string;
  error?: string;
  errorDetail?: { message?: string };
  progressDetail?: { current?: number; total?: number };
}

/** The progress a message reports (`status` prefixed to the layer id), or undefined for none. */
export function pullProgressOf(msg: PullMessage): PullProgress | undefined {
  if (msg.status === undefined) return undefined;
  const p: PullProgress = { status: msg.id ? `${msg.status} ${msg.id}` : msg.status };
  if (msg.progressDetail?.current !== undefined) p.current = msg.progressDetail.current;
  if (msg.progressDetail?.total !== undefined) p.total = msg.progressDetail.total;
  return p;
}

/**
 * Follows a pull stream to its end, calling `onProgress` per progress message.
 * @throws CriError ImagePullFailed with docker's message when the stream reports an error
 *   or breaks off (`what` starts the message, e.g. `pull spring-server:1.0`).
 */
export async function followPull(
  stream: Readable,
  what: string,
  onProgress?: (p: PullProgress) => void,
): Promise<void> {
  let failure: string | undefined;
  let buf = '';
  const onLine = (line: string): void => {
    if (line.trim() === '') return;
    let msg: PullMessage;
    try {
      msg = JSON.parse(line) as PullMessage;
    } catch {
      return;
    }
    if (msg.error !== undefined || msg.errorDetail?.message !== undefined) {
      failure ??= msg.errorDetail?.message ?? msg.error;
      return;
    }
    const p = pullProgressOf(msg);
    if (p && onProgress) onProgress(p);
  };
  try {
    for await (const chunk of stream) {
      buf += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        onLine(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
    }
  } catch (err) {
    throw new CriError('ImagePullFailed', `${what}: ${errorMessage(err)}`, {
      cause: err,
    });
  }
  onLine(buf);
  if (failure !== undefined) throw new CriError('ImagePullFailed', `${what}: ${failure}`);
}
