/**
 * The client end of a SPDY/3.1 session (the framing is api/spdy.ts), as client-go's
 * remotecommand SPDY executor opens it to a CRI streaming server (k8s.io/apimachinery,
 * pkg/util/httpstream/spdy, over moby/spdystream): the client opens streams with odd ids
 * (SYN_STREAM with a header block) and waits for each SYN_REPLY; both sides send DATA and
 * half-close with FIN; RST_STREAM aborts a stream; the server's PINGs are echoed; GOAWAY
 * ends the session. No WINDOW_UPDATE is sent and no window is enforced, as client-go's
 * spdystream does neither (nor do the servers, all spdystream: the kubelet's, containerd's,
 * CRI-O's). Giving consumed bytes back is not only useless but harmful here: an update that
 * reaches the server after its last write lies unread in its socket when it closes, so
 * the kernel resets the connection instead of ending it, and the reset can take the error
 * stream's final Status with it (an exec's exit code then read as 0: 4 execs in 300 on
 * containerd 1.6 while updates were sent).
 *
 * zlib is asynchronous in Node: frames are handled one at a time in arrival order (the
 * server's header blocks share one inflate context) and sent in the order they are queued.
 */
import { EventEmitter } from 'node:events';
import {
  BlockCodec,
  controlFrame,
  dataFrame,
  encodeHeaderBlock,
  FLAG_FIN,
  FRAME_TYPES,
  MAX_DATA_CHUNK,
  MAX_FRAME,
  RST_STATUS,
  SPDY_VERSION,
  u32,
  type SpdyHeaders,
} from '../../api/spdy.js';

/** Events of a SpdyClientSession. */
export interface SpdyClientEvents {
  /** The server accepted stream `id` (SYN_REPLY). */
  reply: [id: number];
  data: [id: number, data: Buffer];
  /** The server half-closed the stream. */
  fin: [id: number];
  rst: [id: number, status: number];
  /** The session ended (GOAWAY from the server, a protocol error, or close()). */
  close: [reason: string];
}

/**
 * The client end of one SPDY/3.1 session over a byte transport: feed it what arrives
 * with receive(); it calls `write` with the bytes to send (and `done` once the transport
 * took them).
 */
export class SpdyClientSession extends EventEmitter<SpdyClientEvents> {
  private buffered: Buffer = Buffer.alloc(0);
  private readonly inflater = new BlockCodec('inflate');
  private readonly deflater = new BlockCodec('deflate');
  private inbound: Promise<void> = Promise.resolve();
  private outbound: Promise<void> = Promise.resolve();
  private nextId = 1;
  private closed = false;

  constructor(private readonly write: (bytes: Buffer, done: () => void) => void) {
    super();
  }

  /** Bytes from the server. */
  receive(chunk: Buffer): void {
    if (this.closed) return;
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    while (this.buffered.length >= 8) {
      const length = this.buffered.readUInt32BE(4) & 0xffffff;
      if (length > MAX_FRAME) return this.close('frame too large');
      if (this.buffered.length < 8 + length) break;
      const frame = this.buffered.subarray(0, 8 + length);
      this.buffered = this.buffered.subarray(8 + length);
      this.inbound = this.inbound
        .then(() => this.handle(frame))
        .catch((err: unknown) => this.close(`protocol error: ${(err as Error).message}`));
    }
  }

  /**
   * Resolves once every frame received so far has been handled: frames wait their turn
   * behind the header inflater, so the transport's end can come before the last of them.
   */
  drained(): Promise<void> {
    return this.inbound;
  }

  /**
   * Opens a stream with `headers` (SYN_STREAM, priority 0); resolves with its id once the
   * server accepted it (SYN_REPLY).
   * @throws Error when the server resets the stream or the session ends first.
   */
  openStream(headers: SpdyHeaders): Promise<number> {
    const id = this.nextId;
    this.nextId += 2;
    const accepted = new Promise<number>((resolve, reject) => {
      const off = () => {
        this.off('reply', onReply);
        this.off('rst', onRst);
        this.off('close', onClose);
      };
      const onReply = (r: number) => {
        if (r !== id) return;
        off();
        resolve(id);
      };
      const onRst = (r: number, status: number) => {
        if (r !== id) return;
        off();
        reject(new Error(`the server reset stream ${headers['streamtype'] ?? id} (status ${status})`));
      };
      const onClose = (reason: string) => {
        off();
        reject(new Error(`the session ended before stream ${headers['streamtype'] ?? id} opened: ${reason}`));
      };
      this.on('reply', onReply);
      this.on('rst', onRst);
      this.on('close', onClose);
    });
    if (this.closed) return Promise.reject(new Error('the session is closed'));
    const compressed = this.deflater.process(encodeHeaderBlock(headers));
    compressed.catch(() => undefined);
    // stream id | associated-to stream id (none) | priority (3 bits) and unused | slot
    void this.send(async () =>
      controlFrame(
        FRAME_TYPES.SYN_STREAM,
        0,
        Buffer.concat([u32(id), u32(0), Buffer.from([0, 0]), await compressed]),
      ),
    );
    return accepted;
  }

  /**
   * Sends data on a stream, with FIN when `fin` (an empty payload with `fin` only
   * half-closes); resolves once the transport took the last frame.
   */
  data(id: number, payload: Buffer, fin = false): Promise<void> {
    if (payload.length === 0) return this.send(() => dataFrame(id, fin ? FLAG_FIN : 0, payload));
    let last: Promise<void> = Promise.resolve();
    for (let at = 0; at < payload.length; at += MAX_DATA_CHUNK) {
      const part = payload.subarray(at, at + MAX_DATA_CHUNK);
      const end = at + MAX_DATA_CHUNK >= payload.length;
      last = this.send(() => dataFrame(id, fin && end ? FLAG_FIN : 0, part));
    }
    return last;
  }

  /** Ends the session (idempotent). */
  close(reason = 'closed'): void {
    if (this.closed) return;
    this.closed = true;
    this.inflater.close();
    void this.outbound.finally(() => this.deflater.close());
    this.emit('close', reason);
  }

  private send(build: () => Buffer | Promise<Buffer>): Promise<void> {
    if (this.closed) return Promise.resolve();
    const sent = this.outbound.then(async () => {
      const bytes = await build();
      if (this.closed) return;
      await new Promise<void>((resolve) => this.write(bytes, resolve));
    });
    this.outbound = sent.catch((err: unknown) => this.close(`send failed: ${(err as Error).message}`));
    return this.outbound;
  }

  private async handle(frame: Buffer): Promise<void> {
    if (this.closed) return;
    const flags = frame[4]!;
    const payload = frame.subarray(8);
    if ((frame[0]! & 0x80) === 0) {
      const id = frame.readUInt32BE(0) & 0x7fffffff;
      if (payload.length > 0) this.emit('data', id, payload);
      if (flags & FLAG_FIN) this.emit('fin', id);
      return;
    }
    const version = frame.readUInt16BE(0) & 0x7fff;
    if (version !== SPDY_VERSION) throw new Error(`unsupported SPDY version ${version}`);
    switch (frame.readUInt16BE(2)) {
      case FRAME_TYPES.SYN_REPLY: {
        if (payload.length < 4) throw new Error('short SYN_REPLY');
        const id = payload.readUInt32BE(0) & 0x7fffffff;
        // Decompressed to keep the shared context in step; the headers are not used.
        if (payload.length > 4) await this.inflater.process(payload.subarray(4));
        this.emit('reply', id);
        if (flags & FLAG_FIN) this.emit('fin', id);
        return;
      }
      case FRAME_TYPES.SYN_STREAM: {
        // remotecommand's server opens no streams: refused, after keeping the context in step.
        if (payload.length < 10) throw new Error('short SYN_STREAM');
        await this.inflater.process(payload.subarray(10));
        const id = payload.readUInt32BE(0) & 0x7fffffff;
        void this.send(() =>
          controlFrame(FRAME_TYPES.RST_STREAM, 0, Buffer.concat([u32(id), u32(RST_STATUS.REFUSED_STREAM)])),
        );
        return;
      }
      case FRAME_TYPES.HEADERS:
        if (payload.length > 4) await this.inflater.process(payload.subarray(4));
        return;
      case FRAME_TYPES.RST_STREAM:
        if (payload.length >= 8)
          this.emit('rst', payload.readUInt32BE(0) & 0x7fffffff, payload.readUInt32BE(4));
        return;
      case FRAME_TYPES.PING:
        // The server's pings (even ids) are echoed; ours are never sent.
        if (payload.length >= 4 && (payload.readUInt32BE(0) & 1) === 0)
          void this.send(() => controlFrame(FRAME_TYPES.PING, 0, payload.subarray(0, 4)));
        return;
      case FRAME_TYPES.GOAWAY:
        this.close('GOAWAY from the server');
        return;
      default:
        // SETTINGS, WINDOW_UPDATE and unknown types.
        return;
    }
  }
}
