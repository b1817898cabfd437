/**
 * The server side of a SPDY/3.1 session (draft-mbelshe-httpbis-spdy-00 and the 3.1
 * flow-control amendment), as far as Kubernetes' port-forward uses it: the client opens
 * streams (SYN_STREAM with a header block), both sides send DATA and half-close with FIN,
 * RST_STREAM aborts a stream, PING is echoed, GOAWAY ends the session. SETTINGS and
 * HEADERS are read and ignored; WINDOW_UPDATE is read and ignored too (moby/spdystream,
 * which client-go uses, does not enforce windows either) and sent back for every DATA
 * frame consumed, so a client that does enforce them never stalls.
 *
 * Header blocks are zlib-compressed with the SPDY/3 dictionary, one compression context
 * per direction for the session's life, each block ended with a sync flush. zlib is
 * asynchronous in Node, so frames are handled one at a time in arrival order and frames
 * are sent in the order they are queued.
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
const MAX_FRAME = (1 << 24) - 1;
/** DATA frames sent are cut to this size (bytes). */
const MAX_DATA_CHUNK = 32 * 1024;

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

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

/** One zlib context used block by block (each block ends with a sync flush); exported for tests that play the client. */
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
