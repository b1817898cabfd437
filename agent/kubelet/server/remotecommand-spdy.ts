/**
 * exec and attach over a plain SPDY/3.1 upgrade: what kubectl before 1.30 speaks (and
 * later ones with `KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false`), the kubelet streaming
 * server's httpstream path with protocol `v4.channel.k8s.io`.
 *
 * After the 101, the client opens one SPDY stream per channel, each named by its
 * `streamType` header: `error`, and `stdin`, `stdout`, `stderr` as asked in the query
 * (no `stderr` with a tty), plus `resize` with a tty. Once all have arrived (30 s at
 * most), the process's output goes out as data on `stdout`/`stderr`, the client's `stdin`
 * data goes to the process (its FIN closes the process's stdin), `resize` carries
 * `{"Width":w,"Height":h}` objects one after another. When the command ends, the error
 * stream gets the same metav1.Status JSON the websocket protocol sends, every stream is
 * finished, and the connection closes.
 */
import type { Duplex } from 'node:stream';
import type { StreamOptions, StreamSession } from '../../../cri/index.js';
import { finalStatus, parseTerminalSize } from './remotecommand.js';
import { RST_STATUS, SpdySession } from './spdy.js';

/** The one remotecommand protocol served over SPDY. */
export const SPDY_CHANNEL_PROTOCOL = 'v4.channel.k8s.io';

/** How long the client has to open all its streams, ms (the kubelet's streamCreationTimeout). */
export const STREAM_CREATION_TIMEOUT_MS = 30_000;

/** Output bytes queued on the connection before the process's output is paused. */
const MAX_BUFFERED = 1 << 20;

type StreamType = 'error' | 'stdin' | 'stdout' | 'stderr' | 'resize';

/** The streams a client asking for `opts` opens. */
export function expectedStreams(opts: StreamOptions): StreamType[] {
  const types: StreamType[] = ['error'];
  if (opts.stdin) types.push('stdin');
  if (opts.stdout) types.push('stdout');
  if (opts.stderr && !opts.tty) types.push('stderr');
  if (opts.tty) types.push('resize');
  return types;
}

/**
 * Serves one exec or attach session on an upgraded connection (the 101 already sent)
 * until the command ends or the client goes away (then the session is closed).
 * Resolves when the connection is done.
 */
export function serveChannelsOverSpdy(
  socket: Duplex,
  opts: StreamOptions,
  session: StreamSession,
  command: string[],
): Promise<void> {
  return new Promise<void>((resolve) => {
    const sources = [session.stdout, session.stderr].filter((s): s is NodeJS.ReadableStream => !!s);
    const spdy = new SpdySession((bytes) => {
      if (socket.destroyed) return;
      if (!socket.write(bytes) && socket.writableLength > MAX_BUFFERED) {
        for (const s of sources) s.pause();
        socket.once('drain', () => sources.forEach((s) => s.resume()));
      }
    });
    const expected = expectedStreams(opts);
    const ids = new Map<StreamType, number>();
    const typeOf = new Map<number, StreamType>();
    let finished = false;
    let resizeText = '';

    const timer = setTimeout(
      () => spdy.close('timed out waiting for the client to create streams'),
      STREAM_CREATION_TIMEOUT_MS,
    );
    socket.on('error', () => socket.destroy());
    socket.on('data', (d: Buffer) => spdy.receive(d));
    socket.on('close', () => spdy.close('connection closed'));
    spdy.on('close', () => {
      clearTimeout(timer);
      if (!finished) session.close();
      if (!socket.destroyed) socket.end();
      resolve();
    });

    spdy.on('stream', (id, headers, fin) => {
      const type = headers['streamtype'] as StreamType | undefined;
      if (!type || !expected.includes(type) || ids.has(type)) {
        spdy.reset(id, RST_STATUS.PROTOCOL_ERROR);
        return;
      }
      spdy.reply(id);
      ids.set(type, id);
      typeOf.set(id, type);
      if (type === 'stdin' && fin) session.stdin?.end();
      if (ids.size === expected.length) start();
    });
    spdy.on('data', (id, data) => {
      const type = typeOf.get(id);
      if (type === 'stdin' && session.stdin) {
        // The client's window is given back once the process has taken the bytes.
        session.stdin.write(data, () => spdy.windowUpdate(id, data.length));
        return;
      }
      if (type === 'resize') {
        resizeText += data.toString();
        for (let end = resizeText.indexOf('}'); end >= 0; end = resizeText.indexOf('}')) {
          const size = parseTerminalSize(resizeText.slice(0, end + 1));
          resizeText = resizeText.slice(end + 1);
          if (size) void session.resize(size).catch(() => undefined);
        }
      }
      spdy.windowUpdate(id, data.length);
    });
    spdy.on('fin', (id) => {
      if (typeOf.get(id) === 'stdin') session.stdin?.end();
    });

    const start = () => {
      clearTimeout(timer);
      const out = ids.get('stdout');
      const err = ids.get('stderr');
      const status = finalStatus(session, command);
      if (out !== undefined) session.stdout?.on('data', (d: Buffer) => spdy.data(out, d));
      if (err !== undefined) session.stderr?.on('data', (d: Buffer) => spdy.data(err, d));
      void status.then((s) => {
        finished = true;
        if (out !== undefined) spdy.data(out, Buffer.alloc(0), true);
        if (err !== undefined) spdy.data(err, Buffer.alloc(0), true);
        spdy.data(ids.get('error')!, Buffer.from(JSON.stringify(s)), true);
        // The frames above are queued in order; the connection ends after them.
        void spdy.flushed().then(() => spdy.close('command ended'));
      });
    };
  });
}
