/**
 * SPDY/3.1 framing (draft-mbelshe-httpbis-spdy-00 and the 3.1 flow-control amendment), the
 * parts both ends of a session share: frame layout, header blocks and their compression.
 * The kubelet's streaming server (agent/kubelet/server/spdy.ts, the server end) and the
 * containerd adapter's client of the runtime's streaming server (cri/containerd/spdy-client.ts)
 * both use it, as k8s.io/apimachinery's pkg/util/httpstream/spdy serves both over moby/spdystream.
 *
 * Header blocks are zlib-compressed with the SPDY/3 dictionary, one compression context
 * per direction for the session's life, each block ended with a sync flush.
 *
 * Frame layout (all big-endian):
 *   control: 1 bit 1 | 15 bits version (3) | 16 bits type | 8 bits flags | 24 bits length | data
 *   data:    1 bit 0 | 31 bits stream id   | 8 bits flags | 24 bits length | data
 */
import { EventEmitter } from 'node:events';
import { constants, createDeflate, createInflate, type Deflate, type Inflate } from 'node:zlib';

export const SPDY_VERSION = 3;
export const FLAG_FIN = 0x01;
export const FLAG_UNIDIRECTIONAL = 0x02;

export const FRAME_TYPES = {
  SYN_STREAM: 1,
  SYN_REPLY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PING: 6,
  GOAWAY: 7,
  HEADERS: 8,
  WINDOW_UPDATE: 9,
} as const;

/** RST_STREAM status codes used here. */
export const RST_STATUS = {
  PROTOCOL_ERROR: 1,
  INVALID_STREAM: 2,
  REFUSED_STREAM: 3,
  CANCEL: 5,
  INTERNAL_ERROR: 6,
} as const;

/** Longest frame payload accepted (bytes); SPDY allows 2^24 − 1. */
export const MAX_FRAME = (1 << 24) - 1;
/** DATA frames sent are cut to this size (bytes). */
export const MAX_DATA_CHUNK = 32 * 1024;

/**
 * The SPDY/3 header-compression dictionary (the spec's section 2.6.10.1): these header
 * names, each preceded by its length as a 32-bit big-endian integer, then the tail text.
 */
const DICTIONARY_WORDS = [
  'options',
  'head',
  'post',
  'put',
  'delete',
  'trace',
  'accept',
  'accept-charset',
  'accept-encoding',
  'accept-language',
  'accept-ranges',
  'age',
  'allow',
  'authorization',
  'cache-control',
  'connection',
  'content-base',
  'content-encoding',
  'content-language',
  'content-length',
  'content-location',
  'content-md5',
  'content-range',
  'content-type',
  'date',
  'etag',
  'expect',
  'expires',
  'from',
  'host',
  'if-match',
  'if-modified-since',
  'if-none-match',
  'if-range',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'pragma',
  'proxy-authenticate',
  'proxy-authorization',
  'range',
  'referer',
  'retry-after',
  'server',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'user-agent',
  'vary',
  'via',
  'warning',
  'www-authenticate',
  'method',
  'get',
  'status',
  '200 OK',
  'version',
  'HTTP/1.1',
  'url',
  'public',
  'set-cookie',
  'keep-alive',
  'origin',
];
const DICTIONARY_TAIL =
  '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505' +
  '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized' +
  '403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable' +
  'Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT' +
  'chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,' +
  'text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';

/** The dictionary's bytes (1423 of them). */
export const SPDY3_DICTIONARY: Buffer = Buffer.concat([
  ...DICTIONARY_WORDS.flatMap((w) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(w.length);
    return [len, Buffer.from(w, 'latin1')];
  }),
  Buffer.from(DICTIONARY_TAIL, 'latin1'),
]);

/** A header block's name/value pairs (names lower case; several values joined by NUL). */
export type SpdyHeaders = Record<string, string>;

/** Encodes an uncompressed header block. */
export function encodeHeaderBlock(headers: SpdyHeaders): Buffer {
  const parts: Buffer[] = [u32(Object.keys(headers).length)];
  for (const [name, value] of Object.entries(headers)) {
    const n = Buffer.from(name.toLowerCase());
    const v = Buffer.from(value);
    parts.push(u32(n.length), n, u32(v.length), v);
  }
  return Buffer.concat(parts);
}

/**
 * Decodes an uncompressed header block.
 * @throws Error when it is truncated.
 */
export function decodeHeaderBlock(block: Buffer): SpdyHeaders {
  const out: SpdyHeaders = {};
  let at = 0;
  const take = (): Buffer => {
    if (at + 4 > block.length) throw new Error('SPDY header block truncated');
    const len = block.readUInt32BE(at);
    at += 4;
    if (at + len > block.length) throw new Error('SPDY header block truncated');
    const b = block.subarray(at, at + len);
    at += len;
    return b;
  };
  if (block.length < 4) throw new Error('SPDY header block truncated');
  const count = block.readUInt32BE(0);
  at = 4;
  for (let i = 0; i < count; i++) {
    const name = take().toString('latin1').toLowerCase();
    out[name] = take().toString('utf8');
  }
  return out;
}

/** A control frame. */
export function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt16BE(0x8000 | SPDY_VERSION, 0);
  head.writeUInt16BE(type, 2);
  head.writeUInt32BE(payload.length, 4);
  head[4] = flags;
  return Buffer.concat([head, payload]);
}

/** A DATA frame. */
export function dataFrame(streamId: number, flags: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(streamId & 0x7fffffff, 0);
  head.writeUInt32BE(payload.length, 4);
  head[4] = flags;
  return Buffer.concat([head, payload]);
}

/** `n` as 4 bytes, big-endian. */
export function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

/** One zlib context used block by block (each block ends with a sync flush). */
export class BlockCodec {
  private readonly z: Inflate | Deflate;
  private out: Buffer[] = [];
  private queue: Promise<unknown> = Promise.resolve();

  constructor(kind: 'inflate' | 'deflate') {
    this.z =
      kind === 'inflate'
        ? createInflate({ dictionary: SPDY3_DICTIONARY })
        : createDeflate({ dictionary: SPDY3_DICTIONARY });
    this.z.on('data', (b: Buffer) => this.out.push(b));
  }

  /** Runs `block` through the context and resolves with what came out. */
  process(block: Buffer): Promise<Buffer> {
    const next = this.queue.then(
      () =>
        new Promise<Buffer>((resolve, reject) => {
          const onError = (err: Error) => reject(err);
          this.z.once('error', onError);
          this.z.write(block);
          this.z.flush(constants.Z_SYNC_FLUSH, () => {
            this.z.removeListener('error', onError);
            const b = Buffer.concat(this.out);
            this.out = [];
            resolve(b);
          });
        }),
    );
    this.queue = next.catch(() => undefined);
    return next;
  }

  close(): void {
    this.z.close();
  }
}

/** What both ends of a session emit (each end adds its own stream-opening event). */
export interface SpdyCommonEvents {
  data: [id: number, data: Buffer];
  /** The peer half-closed the stream. */
  fin: [id: number];
  rst: [id: number, status: number];
  /** The session ended (GOAWAY from the peer, a protocol error, or close()). */
  close: [reason: string];
}

/**
 * What the two ends of one SPDY/3.1 session over a byte transport share, as moby/spdystream
 * serves both: receive() cuts frames from what arrives and handles them one at a time in
 * arrival order (the peer's header blocks share one inflate context); frames are sent in
 * the order they are queued, each handed to `write` (which calls `done` once the transport
 * took it); DATA, HEADERS, RST_STREAM, PING (the peer's are echoed) and GOAWAY are handled
 * here, SYN_STREAM and SYN_REPLY by the end (handleSyn).
 */
export abstract class SpdySessionCore<
  E extends SpdyCommonEvents & Record<keyof E, unknown[]>,
> extends EventEmitter<E> {
  private buffered: Buffer = Buffer.alloc(0);
  protected readonly inflater = new BlockCodec('inflate');
  protected readonly deflater = new BlockCodec('deflate');
  private inbound: Promise<void> = Promise.resolve();
  private outbound: Promise<void> = Promise.resolve();
  protected closed = false;

  /**
   * @param peer which end the other side is: its PINGs are echoed (a client's have odd ids,
   *   a server's even) and its GOAWAY is named in the close reason.
   */
  constructor(
    private readonly write: (bytes: Buffer, done: () => void) => void,
    private readonly peer: 'client' | 'server',
  ) {
    super();
  }

  /** The common events, emitted through the subclass's typed emitter. */
  private get common(): EventEmitter<SpdyCommonEvents> {
    return this as unknown as EventEmitter<SpdyCommonEvents>;
  }

  /** Bytes from the peer. */
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
   * Sends data on a stream in frames of at most MAX_DATA_CHUNK, with FIN when `fin` (an
   * empty payload with `fin` only half-closes); resolves once the transport took the last.
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

  /** Tells the peer that `bytes` of stream `id` (and of the session) were consumed. */
  windowUpdate(id: number, bytes: number): void {
    if (bytes <= 0) return;
    void this.send(() => controlFrame(FRAME_TYPES.WINDOW_UPDATE, 0, Buffer.concat([u32(id), u32(bytes)])));
    void this.send(() => controlFrame(FRAME_TYPES.WINDOW_UPDATE, 0, Buffer.concat([u32(0), u32(bytes)])));
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
    this.common.emit('close', reason);
  }

  /** Queues the frame `build` gives; resolves once the transport took it (or it was dropped). */
  protected send(build: () => Buffer | Promise<Buffer>): Promise<void> {
    if (this.closed) return Promise.resolve();
    const sent = this.outbound.then(async () => {
      const bytes = await build();
      if (this.closed) return;
      await new Promise<void>((resolve) => this.write(bytes, resolve));
    });
    this.outbound = sent.catch((err: unknown) => this.close(`send failed: ${(err as Error).message}`));
    return this.outbound;
  }

  /** Called for every DATA frame with a payload, after the data event. */
  protected consumed(_id: number, _bytes: number): void {}

  /** SYN_STREAM and SYN_REPLY, which each end treats its own way. */
  protected abstract handleSyn(type: number, flags: number, payload: Buffer): Promise<void>;

  private async handle(frame: Buffer): Promise<void> {
    if (this.closed) return;
    const flags = frame[4]!;
    const payload = frame.subarray(8);
    if ((frame[0]! & 0x80) === 0) {
      const id = frame.readUInt32BE(0) & 0x7fffffff;
      if (payload.length > 0) {
        this.common.emit('data', id, payload);
        this.consumed(id, payload.length);
      }
      if (flags & FLAG_FIN) this.common.emit('fin', id);
      return;
    }
    const version = frame.readUInt16BE(0) & 0x7fff;
    if (version !== SPDY_VERSION) throw new Error(`unsupported SPDY version ${version}`);
    const type = frame.readUInt16BE(2);
    switch (type) {
      case FRAME_TYPES.SYN_STREAM:
      case FRAME_TYPES.SYN_REPLY:
        return this.handleSyn(type, flags, payload);
      case FRAME_TYPES.HEADERS:
        // Decompressed to keep the shared context in step; the headers are not used.
        if (payload.length > 4) await this.inflater.process(payload.subarray(4));
        return;
      case FRAME_TYPES.RST_STREAM:
        if (payload.length >= 8)
          this.common.emit('rst', payload.readUInt32BE(0) & 0x7fffffff, payload.readUInt32BE(4));
        return;
      case FRAME_TYPES.PING: {
        // Pings the peer started are echoed; ours are never sent.
        const peerParity = this.peer === 'client' ? 1 : 0;
        if (payload.length >= 4 && (payload.readUInt32BE(0) & 1) === peerParity)
          void this.send(() => controlFrame(FRAME_TYPES.PING, 0, payload.subarray(0, 4)));
        return;
      }
      case FRAME_TYPES.GOAWAY:
        this.close(`GOAWAY from the ${this.peer}`);
        return;
      default:
        // SETTINGS, WINDOW_UPDATE and unknown types.
        return;
    }
  }
}
