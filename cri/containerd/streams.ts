/**
 * A client of the CRI streaming server (the URL a runtime's Exec or Attach returns), over
 * WebSocket with the `v4.channel.k8s.io` subprotocol of k8s.io/apiserver's wsstream, as
 * `kubectl exec` speaks it to an API server: every binary message starts with its channel
 * (0 stdin, 1 stdout, 2 stderr, 3 error: the final Status as JSON, 4 resize), and the
 * session ends when the server closes the connection.
 *
 * v4 has no way to close only stdin (v5.channel.k8s.io has, but containerd 1.6's server
 * predates it): ending `stdin` here stops sending; the process's stdin closes when the
 * session does.
 */
import { Duplex, PassThrough, Writable } from 'node:stream';
import WebSocket from 'ws';
import type { StreamOptions, StreamSession } from '../api.js';
import { CriError } from '../errors.js';

const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const ERROR = 3;
const RESIZE = 4;

/** The exit code in the v4 error channel's Status (`Success`: 0; `NonZeroExitCode`: its cause). */
export function exitCodeOfStatus(text: string): number {
  if (text.trim() === '') return 0;
  let st: {
    status?: string;
    reason?: string;
    message?: string;
    details?: { causes?: { reason?: string; message?: string }[] };
  };
  try {
    st = JSON.parse(text) as typeof st;
  } catch {
    throw new CriError('Internal', `streaming: malformed status ${JSON.stringify(text)}`);
  }
  if (st.status === 'Success') return 0;
  const cause = st.details?.causes?.find((c) => c.reason === 'ExitCode');
  if (st.reason === 'NonZeroExitCode' && cause?.message !== undefined && /^\d+$/.test(cause.message))
    return Number(cause.message);
  throw new CriError('Internal', `streaming: ${st.message ?? text}`);
}

/**
 * Keeps the messages of `ws` from its creation on, for a handler attached later: ws emits
 * the frames that came in the same read as the 101 response in the tick of 'open', before
 * an `await` of it returns (the port-forward's port prefix, a short command's output).
 */
function messagesFrom(ws: WebSocket): (handler: (data: Buffer, isBinary: boolean) => void) => void {
  let early: [Buffer, boolean][] | undefined = [];
  let handle: ((data: Buffer, isBinary: boolean) => void) | undefined;
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (handle) handle(data, isBinary);
    else early?.push([data, isBinary]);
  });
  return (handler) => {
    handle = handler;
    for (const [data, isBinary] of early ?? []) handler(data, isBinary);
    early = undefined;
  };
}

/** Opens the session at `url` (http://… as the runtime returned it). */
export async function openStreamSession(
  url: string,
  opts: StreamOptions,
  what: string,
): Promise<StreamSession> {
  const ws = new WebSocket(url.replace(/^http/, 'ws'), ['v4.channel.k8s.io']);
  const onMessage = messagesFrom(ws);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', (err) => reject(new CriError('Unavailable', `${what}: ${err.message}`, { cause: err })));
    ws.once('unexpected-response', (_req, res) =>
      reject(new CriError('Internal', `${what}: the streaming server answered ${res.statusCode}`)),
    );
  });
  const stdout = opts.stdout || opts.tty ? new PassThrough() : undefined;
  const stderr = opts.stderr && !opts.tty ? new PassThrough() : undefined;
  let status = '';
  const exitCode = new Promise<number>((resolve, reject) => {
    onMessage((data: Buffer, isBinary: boolean) => {
      const buf = isBinary ? data : Buffer.from(data);
      if (buf.length === 0) return;
      const channel = buf[0];
      const payload = buf.subarray(1);
      if (payload.length === 0) return;
      if (channel === STDOUT) stdout?.write(payload);
      else if (channel === STDERR) stderr?.write(payload);
      else if (channel === ERROR) status += payload.toString('utf8');
    });
    ws.once('close', () => {
      stdout?.end();
      stderr?.end();
      try {
        resolve(exitCodeOfStatus(status));
      } catch (err) {
        reject(err as Error);
      }
    });
    ws.once('error', (err) => reject(new CriError('Internal', `${what}: ${err.message}`, { cause: err })));
  });
  exitCode.catch(() => undefined);
  const send = (channel: number, payload: Buffer, done: (err?: Error | null) => void): void => {
    if (ws.readyState !== WebSocket.OPEN) return done();
    ws.send(Buffer.concat([Buffer.from([channel]), payload]), { binary: true }, (err) => done(err ?? null));
  };
  let stdin: Writable | undefined;
  if (opts.stdin) {
    stdin = new Writable({ write: (chunk: Buffer, _enc, done) => send(STDIN, chunk, done) });
    stdin.on('error', () => undefined);
  }
  return {
    ...(stdin ? { stdin } : {}),
    ...(stdout ? { stdout } : {}),
    ...(stderr ? { stderr } : {}),
    resize: (size) =>
      opts.tty
        ? new Promise<void>((resolve) =>
            send(RESIZE, Buffer.from(JSON.stringify({ Width: size.width, Height: size.height })), () =>
              resolve(),
            ),
          )
        : Promise.resolve(),
    exitCode,
    close: () => ws.close(),
  };
}

/**
 * A byte stream to `port` through the CRI streaming server's port-forward URL (WebSocket,
 * `v4.channel.k8s.io`, `?port=N`): channel 0 carries the data both ways, channel 1 the
 * server's error; the first frame on each is the port (2 bytes, little-endian). A refused
 * connection (nothing listens on the port in the pod) arrives on the error channel: the
 * stream is destroyed with CriError Unavailable and the runtime's words.
 */
export async function openPortForward(url: string, port: number, what: string): Promise<Duplex> {
  const target = new URL(url.replace(/^http/, 'ws'));
  target.searchParams.set('port', String(port));
  const ws = new WebSocket(target, ['v4.channel.k8s.io']);
  const onMessage = messagesFrom(ws);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', (err) => reject(new CriError('Unavailable', `${what}: ${err.message}`, { cause: err })));
    ws.once('unexpected-response', (_req, res) =>
      reject(new CriError('Internal', `${what}: the streaming server answered ${res.statusCode}`)),
    );
  });
  const prefixSeen = new Set<number>();
  const stream = new Duplex({
    read: () => undefined,
    write: (chunk: Buffer, _enc, done) => {
      if (ws.readyState !== WebSocket.OPEN) return done(new CriError('Unavailable', `${what}: closed`));
      ws.send(Buffer.concat([Buffer.from([0]), chunk]), { binary: true }, (err) => done(err ?? null));
    },
    final: (done) => {
      ws.close();
      done();
    },
    destroy: (err, done) => {
      ws.close();
      done(err);
    },
  });
  onMessage((data: Buffer) => {
    if (data.length === 0) return;
    const channel = data[0] ?? -1;
    let payload = data.subarray(1);
    if (!prefixSeen.has(channel)) {
      prefixSeen.add(channel);
      payload = payload.subarray(2);
    }
    if (payload.length === 0) return;
    if (channel === 0) stream.push(payload);
    else if (channel === 1)
      stream.destroy(new CriError('Unavailable', `${what}: ${payload.toString('utf8')}`));
  });
  ws.once('close', () => stream.push(null));
  ws.on('error', (err) =>
    stream.destroy(new CriError('Unavailable', `${what}: ${err.message}`, { cause: err })),
  );
  return stream;
}
