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
