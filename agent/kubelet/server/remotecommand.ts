/**
 * The websocket protocol of exec and attach (k8s.io/apimachinery/pkg/util/remotecommand,
 * the kubelet's streaming server, client-go's WebSocket executor): every binary message
 * starts with a channel byte — 0 stdin, 1 stdout, 2 stderr, 3 error (a metav1.Status
 * JSON, sent once when the command has ended), 4 resize (`{"Width":w,"Height":h}`) — and
 * `v5.channel.k8s.io` adds a close signal, `[255, channel]` (the client closed its stdin).
 * `v4.channel.k8s.io` is the same without it.
 */
import type { WebSocket } from 'ws';
import type { StreamSession, TerminalSize } from '../../../cri/index.js';

/** The subprotocols served, most preferred first. */
export const CHANNEL_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io'] as const;
export type ChannelProtocol = (typeof CHANNEL_PROTOCOLS)[number];

export const STDIN_CHANNEL = 0;
export const STDOUT_CHANNEL = 1;
export const STDERR_CHANNEL = 2;
export const ERROR_CHANNEL = 3;
export const RESIZE_CHANNEL = 4;
/** v5's close signal: `[CLOSE_CHANNEL, <channel closed>]`. */
export const CLOSE_CHANNEL = 255;

/** Sends that may be in flight on one websocket before its sources are paused. */
const MAX_IN_FLIGHT = 16;

/** The subprotocol to answer a client offering `offered` with (undefined: none we speak). */
export function selectChannelProtocol(offered: Iterable<string>): ChannelProtocol | undefined {
  const set = new Set(offered);
  return CHANNEL_PROTOCOLS.find((p) => set.has(p));
}

/** One message: the channel byte, then the payload. */
export function encodeChannelMessage(channel: number, payload: Buffer | string): Buffer {
  const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  return Buffer.concat([Buffer.from([channel]), body]);
}

/** A client message, read. */
export type ChannelMessage =
  | { kind: 'stdin'; data: Buffer }
  | { kind: 'resize'; size: TerminalSize }
  | { kind: 'close'; channel: number }
  | { kind: 'ignored' };

/**
 * Reads one message from the client. Malformed resize JSON and unknown channels are
 * `ignored` (the kubelet drops them too); close signals only count under v5.
 */
export function decodeChannelMessage(data: Buffer, protocol: ChannelProtocol): ChannelMessage {
  if (data.length === 0) return { kind: 'ignored' };
  const channel = data[0]!;
  const payload = data.subarray(1);
  if (channel === STDIN_CHANNEL) return { kind: 'stdin', data: payload };
  if (channel === RESIZE_CHANNEL) {
    const size = parseTerminalSize(payload.toString());
    return size ? { kind: 'resize', size } : { kind: 'ignored' };
  }
  if (channel === CLOSE_CHANNEL && protocol === 'v5.channel.k8s.io' && payload.length >= 1)
    return { kind: 'close', channel: payload[0]! };
  return { kind: 'ignored' };
}

/** A terminal size message `{"Width":w,"Height":h}`; undefined when malformed (dropped, as the kubelet drops it). */
export function parseTerminalSize(text: string): TerminalSize | undefined {
  try {
    const size = JSON.parse(text) as { Width?: unknown; Height?: unknown };
    if (typeof size.Width === 'number' && typeof size.Height === 'number')
      return { width: size.Width, height: size.Height };
  } catch {
    // malformed: undefined below
  }
  return undefined;
}

/**
 * The Status a session ends with: exitStatus() of its exit code once the process has ended
 * and its stdout and stderr are drained, or errorStatus() when the session failed. Call it
 * before output is read, so that the end of the streams is not missed.
 */
export function finalStatus(session: StreamSession, command: string[]): Promise<Record<string, unknown>> {
  const ended = [session.stdout, session.stderr]
    .filter((s): s is NodeJS.ReadableStream => !!s)
    .map(
      (s) =>
        new Promise<void>((r) => {
          s.once('end', r);
          s.once('close', r);
          s.once('error', () => r());
        }),
    );
  return (async () => {
    try {
      const code = await session.exitCode;
      await Promise.all(ended);
      return exitStatus(code, command);
    } catch (err) {
      return errorStatus((err as Error).message);
    }
  })();
}

/**
 * The error-channel Status for a finished command: Success for exit code 0, else
 * Failure/NonZeroExitCode with the code in `details.causes[0]` (reason ExitCode), which
 * kubectl turns into its own exit code.
 */
export function exitStatus(exitCode: number, command: string[]): Record<string, unknown> {
  if (exitCode === 0) return { metadata: {}, status: 'Success' };
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${command.join(' ')}], exit code ${exitCode}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(exitCode) }] },
  };
}

/** The error-channel Status for a session that failed (not a command's exit code). */
export function errorStatus(message: string): Record<string, unknown> {
  return { metadata: {}, status: 'Failure', message, reason: 'InternalError', code: 500 };
}

/**
 * Connects a runtime session to a client's websocket until the command ends (then the
 * Status goes out on the error channel and the websocket closes normally) or the client
 * goes away (then the session is closed). Output is paused while more than a few sends
 * are unacknowledged, and the websocket is paused while the process's stdin is full, so
 * neither a slow client nor a slow process makes the agent buffer without bound.
 */
export function serveChannels(
  ws: WebSocket,
  protocol: ChannelProtocol,
  session: StreamSession,
  command: string[],
): Promise<void> {
  return new Promise<void>((resolve) => {
    let inFlight = 0;
    const sources = [session.stdout, session.stderr].filter((s): s is NodeJS.ReadableStream => !!s);
    const send = (channel: number, data: Buffer | string, cb?: () => void) => {
      if (ws.readyState !== ws.OPEN) return;
      inFlight++;
      if (inFlight > MAX_IN_FLIGHT) for (const s of sources) s.pause();
      ws.send(encodeChannelMessage(channel, data), { binary: true }, () => {
        inFlight--;
        if (inFlight <= MAX_IN_FLIGHT / 2) for (const s of sources) s.resume();
        cb?.();
      });
    };
    const status = finalStatus(session, command);
    session.stdout?.on('data', (d: Buffer) => send(STDOUT_CHANNEL, d));
    session.stderr?.on('data', (d: Buffer) => send(STDERR_CHANNEL, d));
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      const m = decodeChannelMessage(isBinary ? data : Buffer.from(data), protocol);
      // A process slow to read its stdin pauses the websocket rather than buffering.
      if (m.kind === 'stdin' && session.stdin && !session.stdin.write(m.data)) {
        ws.pause();
        session.stdin.once('drain', () => ws.resume());
      } else if (m.kind === 'resize') void session.resize(m.size).catch(() => undefined);
      else if (m.kind === 'close' && m.channel === STDIN_CHANNEL) session.stdin?.end();
    });
    let finished = false;
    ws.on('close', () => {
      if (!finished) session.close();
      resolve();
    });
    void status.then((s) => {
      finished = true;
      send(ERROR_CHANNEL, JSON.stringify(s), () => ws.close(1000));
    });
  });
}
