/**
 * Clients of the CRI streaming server (the URL a runtime's Exec, Attach or PortForward
 * returns).
 *
 * Exec and attach go over SPDY/3.1 with `X-Stream-Protocol-Version: v4.channel.k8s.io`,
 * as the kubelet's client-go remotecommand executor dials the runtime (spdy-client.ts):
 * one SPDY stream per channel, named by its `streamType` header (`error`, then `stdin`,
 * `stdout`, `stderr` as asked, `resize` with a tty); the caller's end of stdin half-closes
 * the stdin stream (FIN), so the process sees EOF; the error stream carries the final
 * metav1.Status as JSON. WebSocket `v4.channel.k8s.io` cannot close stdin alone (only
 * v5.channel.k8s.io can, which containerd 1.6's server predates), so `echo hi | kubectl
 * exec -i … -- cat` never ended over it.
 *
 * Port-forward stays on WebSocket `v4.channel.k8s.io` (k8s.io/apiserver's wsstream): every
 * binary message starts with its channel, and the first on each is the port.
 */
import { request } from 'node:http';
import type { Socket } from 'node:net';
import { Duplex, PassThrough, Writable } from 'node:stream';
import WebSocket from 'ws';
import type { StreamOptions, StreamSession } from '../api.js';
import { CriError } from '../errors.js';
import { SpdyClientSession } from './spdy-client.js';

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

/** The remotecommand protocol asked for (the only one containerd 1.6 and the kubelet share that has an error stream with a Status). */
export const STREAM_PROTOCOL = 'v4.channel.k8s.io';

/** The streams a client asking for `opts` opens, in client-go's order. */
export function streamTypes(opts: StreamOptions): string[] {
  const types = ['error'];
  if (opts.stdin) types.push('stdin');
  if (opts.stdout || opts.tty) types.push('stdout');
  if (opts.stderr && !opts.tty) types.push('stderr');
  if (opts.tty) types.push('resize');
  return types;
}

/** Upgrades `url` to SPDY/3.1 (POST, as client-go's SPDY round tripper) and resolves with the socket and the bytes after the 101. */
function upgradeToSpdy(url: string, what: string): Promise<{ socket: Socket; head: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'SPDY/3.1',
        'X-Stream-Protocol-Version': STREAM_PROTOCOL,
      },
    });
    req.once('upgrade', (res, socket: Socket, head: Buffer) => {
      const chosen = res.headers['x-stream-protocol-version'];
      if (chosen !== STREAM_PROTOCOL) {
        socket.destroy();
        reject(
          new CriError(
            'Internal',
            `${what}: the streaming server chose protocol ${JSON.stringify(chosen ?? '')}, not ${STREAM_PROTOCOL}`,
          ),
        );
        return;
      }
      resolve({ socket, head });
    });
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        reject(
          new CriError(
            'Internal',
            `${what}: the streaming server answered ${res.statusCode}: ${Buffer.concat(chunks).toString('utf8').trim()}`,
          ),
        ),
      );
    });
    req.once('error', (err) =>
      reject(new CriError('Unavailable', `${what}: ${err.message}`, { cause: err })),
    );
    req.end();
  });
}

/**
 * Opens the exec or attach session at `url` (http://… as the runtime returned it) over
 * SPDY/3.1, `v4.channel.k8s.io`. Ending the returned `stdin` half-closes the stdin stream
 * (the process reads EOF). `exitCode` settles when the error stream ends (FIN or reset),
 * the server sends GOAWAY or the connection closes: 0 for a Success status (or none),
 * the cause's code for NonZeroExitCode; the connection is closed then, as client-go's
 * executor does once the error stream is read.
 * @throws CriError Unavailable when the server cannot be reached, Internal when it refuses
 *   the upgrade, the protocol or a stream.
 */
export async function openStreamSession(
  url: string,
  opts: StreamOptions,
  what: string,
): Promise<StreamSession> {
  const { socket, head } = await upgradeToSpdy(url, what);
  const spdy = new SpdyClientSession((bytes, done) => {
    if (socket.destroyed) return done();
    socket.write(bytes, () => done());
  });
  const stdout = opts.stdout || opts.tty ? new PassThrough() : undefined;
  const stderr = opts.stderr && !opts.tty ? new PassThrough() : undefined;
  const ids = new Map<string, number>();
  const typeOf = new Map<number, string>();
  let status = '';
  let ended = false;
  let settle: (() => void) | undefined;
  const exitCode = new Promise<number>((resolve, reject) => {
    settle = () => {
      if (ended) return;
      ended = true;
      stdout?.end();
      stderr?.end();
      spdy.close('session ended');
      socket.destroy();
      try {
        resolve(exitCodeOfStatus(status));
      } catch (err) {
        reject(err as Error);
      }
    };
  });
  exitCode.catch(() => undefined);
  const end = () => settle?.();
  // Frames that came with the 101 are handled only after the listeners are on.
  spdy.on('data', (id, data) => {
    const type = typeOf.get(id);
    if (type === 'stdout') stdout?.write(data);
    else if (type === 'stderr') stderr?.write(data);
    else if (type === 'error') status += data.toString('utf8');
  });
  const streamEnded = (id: number) => {
    const type = typeOf.get(id);
    if (type === 'error') end();
    else if (type === 'stdout') stdout?.end();
    else if (type === 'stderr') stderr?.end();
  };
  spdy.on('fin', streamEnded);
  spdy.on('rst', streamEnded);
  spdy.on('close', end);
  socket.on('data', (d: Buffer) => spdy.receive(d));
  // The server closes the connection right after the error stream's status; the frames
  // still queued behind the inflater (that status, the last output) are handled first,
  // or the exit code would read 0 and output would be cut.
  socket.on('close', () => void spdy.drained().then(end));
  socket.on('error', () => socket.destroy());
  if (head.length > 0) spdy.receive(head);
  try {
    for (const type of streamTypes(opts)) {
      // client-go opens the streams one after another, each once the last was accepted.
      const id = await spdy.openStream({ streamtype: type });
      ids.set(type, id);
      typeOf.set(id, type);
    }
  } catch (err) {
    socket.destroy();
    throw new CriError('Internal', `${what}: ${(err as Error).message}`, { cause: err });
  }
  let stdin: Writable | undefined;
  const stdinId = ids.get('stdin');
  if (stdinId !== undefined) {
    stdin = new Writable({
      write: (chunk: Buffer, _enc, done) => {
        if (ended) return done();
        void spdy.data(stdinId, chunk).then(() => done());
      },
      final: (done) => {
        if (ended) return done();
        void spdy.data(stdinId, Buffer.alloc(0), true).then(() => done());
      },
    });
    stdin.on('error', () => undefined);
  }
  const resizeId = ids.get('resize');
  return {
    ...(stdin ? { stdin } : {}),
    ...(stdout ? { stdout } : {}),
    ...(stderr ? { stderr } : {}),
    resize: (size) =>
      resizeId !== undefined && !ended
        ? spdy.data(resizeId, Buffer.from(JSON.stringify({ Width: size.width, Height: size.height })))
        : Promise.resolve(),
    exitCode,
    close: end,
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
