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
import {
  controlFrame,
  decodeHeaderBlock,
  encodeHeaderBlock,
  FLAG_FIN,
  FRAME_TYPES,
  RST_STATUS,
  SpdySessionCore,
  u32,
  type SpdyCommonEvents,
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
export interface SpdySessionEvents extends SpdyCommonEvents {
  /** The client opened a stream (`fin`: it sends nothing more on it). */
  stream: [id: number, headers: SpdyHeaders, fin: boolean];
}

/**
 * The server end of one SPDY/3.1 session over a byte transport: feed it what arrives with
 * receive(); it calls `write` with the bytes to send. The session's common part (framing,
 * ordering, DATA, PING, GOAWAY) is api/spdy.ts's SpdySessionCore.
 */
export class SpdySession extends SpdySessionCore<SpdySessionEvents> {
  constructor(write: (bytes: Buffer) => void) {
    super((bytes, done) => {
      write(bytes);
      done();
    }, 'client');
  }

  /** Accepts a stream (SYN_REPLY without headers). */
  reply(id: number, headers: SpdyHeaders = {}): void {
    // A closed session's deflater is closed too: a compression started now would fail with
    // nobody waiting for it (an unhandled rejection ends the agent).
    if (this.closed) return;
    const compressed = this.deflater.process(encodeHeaderBlock(headers));
    compressed.catch(() => undefined);
    void this.send(async () =>
      controlFrame(FRAME_TYPES.SYN_REPLY, 0, Buffer.concat([u32(id), await compressed])),
    );
  }

  /** Aborts a stream. */
  reset(id: number, status: number = RST_STATUS.CANCEL): void {
    void this.send(() => controlFrame(FRAME_TYPES.RST_STREAM, 0, Buffer.concat([u32(id), u32(status)])));
  }

  /** A client's SYN_STREAM opens a stream; a SYN_REPLY is never expected from a client and is ignored. */
  protected async handleSyn(type: number, flags: number, payload: Buffer): Promise<void> {
    if (type !== FRAME_TYPES.SYN_STREAM) return;
    if (payload.length < 10) throw new Error('short SYN_STREAM');
    const id = payload.readUInt32BE(0) & 0x7fffffff;
    const headers = decodeHeaderBlock(await this.inflater.process(payload.subarray(10)));
    this.emit('stream', id, headers, (flags & FLAG_FIN) !== 0);
  }
}
