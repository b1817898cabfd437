/**
 * The server side of a SPDY/3.1 session (draft-mbelshe-httpbis-spdy-00 and the 3.1
 * flow-control amendment), as far as Kubernetes' port-forward uses it: the client opens
 * streams (SYN_STREAM with a header block), both sides send DATA and half-close with FIN,
 * RST_STREAM aborts a stream, PING is echoed, GOAWAY ends the session. SETTINGS and
 * HEADERS are read and ignored; WINDOW_UPDATE is read and ignored too (moby/spdystream,
 * which client-go uses, does not enforce windows either) and sent back for every DATA
 * frame consumed, so a client that does enforce them never stalls.
 *
 * The framing (frame layout, header blocks and their compression) is api/spdy.ts, shared
 * with the containerd adapter's client. zlib is asynchronous in Node, so frames are
 * handled one at a time in arrival order and frames are sent in the order they are queued.
 */
import { EventEmitter } from 'node:events';
import {
  BlockCodec,
  controlFrame,
  dataFrame,
  decodeHeaderBlock,
  encodeHeaderBlock,
  FLAG_FIN,
  FRAME_TYPES,
  MAX_DATA_CHUNK,
  MAX_FRAME,
  RST_STATUS,
  SPDY_VERSION,
  u32,
  type SpdyHeaders,
} from '../../../api/spdy.js';

export {
  BlockCodec,
  controlFrame,
  dataFrame,
  decodeHeaderBlock,
  encodeHeaderBlock,
  FLAG_FIN,
  FLAG_UNIDIRECTIONAL,
  FRAME_TYPES,
  RST_STATUS,
  SPDY3_DICTIONARY,
  SPDY_VERSION,
  type SpdyHeaders,
} from '../../../api/spdy.js';

/** Events of a SpdySession. */
export interface SpdySessionEvents {
  /** The client opened a stream (`fin`: it sends nothing more on it). */
  stream: [id: number, headers: SpdyHeaders, fin: boolean];
  data: [id: number, data: Buffer];
  /** The client half-closed the stream. */
  fin: [id: number];
  rst: [id: number, status: number];
  /** The session ended (GOAWAY, a protocol error, or close()). */
  close: [reason: string];
}

/**
 * The server end of one SPDY/3.1 session over a byte transport: feed it what arrives with
 * receive(); it calls `write` with the bytes to send.
 */
export class SpdySession extends EventEmitter<SpdySessionEvents> {
  private buffered: Buffer = Buffer.alloc(0);
  private readonly inflater = new BlockCodec('inflate');
  private readonly deflater = new BlockCodec('deflate');
  /** Frames are handled one after another (header blocks need the shared zlib context). */
  private inbound: Promise<void> = Promise.resolve();
  /** Frames are sent in the order they were queued (a SYN_REPLY waits for its compression). */
  private outbound: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly write: (bytes: Buffer) => void) {
    super();
  }

  /** Bytes from the client. */
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

  /** Accepts a stream (SYN_REPLY without headers). */
  reply(id: number, headers: SpdyHeaders = {}): void {
    // A closed session's deflater is closed too: a compression started now would fail with
    // nobody waiting for it (an unhandled rejection ends the agent).
    if (this.closed) return;
    const compressed = this.deflater.process(encodeHeaderBlock(headers));
    compressed.catch(() => undefined);
    this.send(async () => controlFrame(FRAME_TYPES.SYN_REPLY, 0, Buffer.concat([u32(id), await compressed])));
  }

  /** Sends data on a stream, with FIN when `fin` (an empty payload with `fin` only half-closes). */
  data(id: number, payload: Buffer, fin = false): void {
    if (payload.length === 0) {
      this.send(() => dataFrame(id, fin ? FLAG_FIN : 0, payload));
      return;
    }
    for (let at = 0; at < payload.length; at += MAX_DATA_CHUNK) {
      const part = payload.subarray(at, at + MAX_DATA_CHUNK);
      const last = at + MAX_DATA_CHUNK >= payload.length;
      this.send(() => dataFrame(id, fin && last ? FLAG_FIN : 0, part));
    }
  }

  /** Aborts a stream. */
  reset(id: number, status: number = RST_STATUS.CANCEL): void {
    this.send(() => controlFrame(FRAME_TYPES.RST_STREAM, 0, Buffer.concat([u32(id), u32(status)])));
  }

  /** Tells the client that `bytes` of stream `id` (and of the session) were consumed. */
  windowUpdate(id: number, bytes: number): void {
    if (bytes <= 0) return;
    this.send(() => controlFrame(FRAME_TYPES.WINDOW_UPDATE, 0, Buffer.concat([u32(id), u32(bytes)])));
    this.send(() => controlFrame(FRAME_TYPES.WINDOW_UPDATE, 0, Buffer.concat([u32(0), u32(bytes)])));
  }

  /** Resolves once every frame queued so far has been handed to the transport. */
  flushed(): Promise<void> {
    return this.outbound;
  }

  /** Ends the session (idempotent). */
  close(reason = 'closed'): void {
    if (this.closed) return;
    this.closed = true;
    this.inflater.close();
    void this.outbound.finally(() => this.deflater.close());
    this.emit('close', reason);
  }

  private send(build: () => Buffer | Promise<Buffer>): void {
    if (this.closed) return;
    this.outbound = this.outbound
      .then(async () => {
        const bytes = await build();
        if (!this.closed) this.write(bytes);
      })
      .catch((err: unknown) => this.close(`send failed: ${(err as Error).message}`));
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
    const type = frame.readUInt16BE(2);
    switch (type) {
      case FRAME_TYPES.SYN_STREAM: {
        if (payload.length < 10) throw new Error('short SYN_STREAM');
        const id = payload.readUInt32BE(0) & 0x7fffffff;
        const headers = decodeHeaderBlock(await this.inflater.process(payload.subarray(10)));
        this.emit('stream', id, headers, (flags & FLAG_FIN) !== 0);
        return;
      }
      case FRAME_TYPES.HEADERS:
        // Decompressed to keep the shared context in step; the headers are not used.
        if (payload.length > 4) await this.inflater.process(payload.subarray(4));
        return;
      case FRAME_TYPES.RST_STREAM:
        if (payload.length >= 8)
          this.emit('rst', payload.readUInt32BE(0) & 0x7fffffff, payload.readUInt32BE(4));
        return;
      case FRAME_TYPES.PING:
        // Pings the client started (odd ids) are echoed; ours are never sent.
        if (payload.length >= 4 && (payload.readUInt32BE(0) & 1) === 1)
          this.send(() => controlFrame(FRAME_TYPES.PING, 0, payload.subarray(0, 4)));
        return;
      case FRAME_TYPES.GOAWAY:
        this.close('GOAWAY from the client');
        return;
      default:
        // SETTINGS, WINDOW_UPDATE, SYN_REPLY (never expected from a client) and unknown types.
        return;
    }
  }
}
