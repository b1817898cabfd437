/**
 * The CRI log files the runtime writes for its containers, read as the kubelet reads them
 * (pkg/kubelet/kuberuntime/logs/logs.go, ReadLogs): one line per write,
 * `<RFC3339Nano> <stdout|stderr> <P|F> <text>`, P a partial line the next ones continue.
 * Lines that do not parse are skipped.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { PassThrough } from 'node:stream';
import type { ContainerLogOptions } from '../api.js';

/** Formats nanoseconds since the epoch as RFC 3339 with nanoseconds (the kubelet's timestamps). */
function rfc3339Nano(ns: bigint): string {
  const ms = Number(ns / 1_000_000n);
  const frac = String(ns % 1_000_000_000n).padStart(9, '0');
  return `${new Date(ms).toISOString().slice(0, 19)}.${frac}Z`;
}

/** Parses an RFC 3339 timestamp (up to nanoseconds) to nanoseconds since the epoch. */
function parseRfc3339Nano(ts: string): bigint | undefined {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/.exec(ts);
  if (!m) return undefined;
  const secs = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(secs)) return undefined;
  return BigInt(secs) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'));
}

/** One line of a CRI log file: `<RFC3339Nano> <stream> <P|F> <text>`. */
interface LogLine {
  time: bigint;
  timestamp: string;
  partial: boolean;
  text: string;
}

function parseLogLine(line: string): LogLine | undefined {
  const m = /^(\S+) (stdout|stderr) ([PF]) (.*)$/s.exec(line);
  if (!m) return undefined;
  const time = parseRfc3339Nano(m[1] ?? '');
  if (time === undefined) return undefined;
  return { time, timestamp: rfc3339Nano(time), partial: m[3] === 'P', text: m[4] ?? '' };
}

/**
 * Copies the CRI log file at `path` to `out` as the kubelet shows it: partial lines
 * joined and written as they come (a last line without its newline, which containerd
 * writes as P when the container exits, is shown as the kubelet shows it: without a
 * newline), `sinceTime` (ns) and `tailLines` applied (a started line counts as one),
 * timestamps prefixed at the start of each line when asked; with
 * `follow`, polls every 200 ms for more until `running()` resolves false (the container
 * stopped; read once more) or `out` is destroyed. Ends `out`; a missing file reads as empty,
 * a file that shrank (rotated) is read from its start.
 */
export async function pumpLog(
  path: string,
  opts: ContainerLogOptions,
  out: PassThrough,
  running: () => Promise<boolean>,
): Promise<void> {
  let offset = 0;
  let carry = '';
  // The last line written ended with a P entry: what comes next continues it.
  let midLine = false;
  const emit = (lines: string[]): void => {
    for (const l of lines) out.write(l);
  };
  // The lines of `chunk` as shown: each ends with '\n' except the last one when it is
  // still partial (the kubelet writes a P entry's text at once, without a newline).
  const take = (chunk: string): string[] => {
    const done: string[] = [];
    let current: string | undefined;
    const parts = (carry + chunk).split('\n');
    carry = parts.pop() ?? '';
    for (const raw of parts) {
      const line = parseLogLine(raw);
      if (!line) continue;
      if (opts.sinceTime !== undefined && line.time < opts.sinceTime) continue;
      current ??= !midLine && opts.timestamps ? `${line.timestamp} ` : '';
      current += line.text;
      midLine = line.partial;
      if (!line.partial) {
        done.push(`${current}\n`);
        current = undefined;
      }
    }
    if (current !== undefined) done.push(current);
    return done;
  };
  const readMore = async (): Promise<string> => {
    const size = await stat(path).then(
      (s) => s.size,
      () => 0,
    );
    if (size < offset) offset = 0; // rotated
    if (size === offset) return '';
    const chunks: Buffer[] = [];
    for await (const c of createReadStream(path, { start: offset, end: size - 1 })) chunks.push(c as Buffer);
    offset = size;
    return Buffer.concat(chunks).toString('utf8');
  };
  let lines = take(await readMore());
  if (opts.tailLines !== undefined) lines = opts.tailLines > 0 ? lines.slice(-opts.tailLines) : [];
  emit(lines);
  while (opts.follow && !out.destroyed) {
    await new Promise((r) => setTimeout(r, 200));
    emit(take(await readMore()));
    if (!(await running())) {
      emit(take(await readMore()));
      break;
    }
  }
  out.end();
}
