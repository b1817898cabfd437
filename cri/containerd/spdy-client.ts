/**
 * The client end of a SPDY/3.1 session (the framing is api/spdy.ts), as client-go's
 * remotecommand SPDY executor opens it to a CRI streaming server (k8s.io/apimachinery,
 * pkg/util/httpstream/spdy, over moby/spdystream): the client opens streams with odd ids
 * (SYN_STREAM with a header block) and waits for each SYN_REPLY; both sides send DATA and
 * half-close with FIN; RST_STREAM aborts a stream; the server's PINGs are echoed; GOAWAY
 * ends the session. Every DATA frame consumed is given back with WINDOW_UPDATE (stream and
 * session), so a server that enforces the 64 KiB initial window never stalls; windows are
 * not enforced on what is sent (spdystream does not either).
 *
 * zlib is asynchronous in Node: frames are handled one at a time in arrival order (the
 * server's header blocks share one inflate context) and sent in the order they are queued.
 */
import {
  controlFrame,
  encodeHeaderBlock,
  FLAG_FIN,
  FRAME_TYPES,
  RST_STATUS,
  SpdySessionCore,
  u32,
  type SpdyCommonEvents,
  type SpdyHeaders,
} from '../../api/spdy.js';

/** Events of a SpdyClientSession. */
export interface SpdyClientEvents extends SpdyCommonEvents {
  /** The server accepted stream `id` (SYN_REPLY). */
  reply: [id: number];
}

/**
 * The client end of one SPDY/3.1 session over a byte transport: feed it what arrives
 * with receive(); it calls `write` with the bytes to send (and `done` once the transport
 * took them). The session's common part (framing, ordering, DATA, PING, GOAWAY) is
 * api/spdy.ts's SpdySessionCore.
 */
export class SpdyClientSession extends SpdySessionCore<SpdyClientEvents> {
  private nextId = 1;

  constructor(write: (bytes: Buffer, done: () => void) => void) {
    super(write, 'server');
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

  /** Every DATA frame consumed is given back at once (stream and session windows). */
  protected override consumed(id: number, bytes: number): void {
    this.windowUpdate(id, bytes);
  }

  /** A SYN_REPLY accepts our stream; remotecommand's server opens none, so a SYN_STREAM is refused. */
  protected async handleSyn(type: number, flags: number, payload: Buffer): Promise<void> {
    if (type === FRAME_TYPES.SYN_REPLY) {
      if (payload.length < 4) throw new Error('short SYN_REPLY');
      const id = payload.readUInt32BE(0) & 0x7fffffff;
      // Decompressed to keep the shared context in step; the headers are not used.
      if (payload.length > 4) await this.inflater.process(payload.subarray(4));
      this.emit('reply', id);
      if (flags & FLAG_FIN) this.emit('fin', id);
      return;
    }
    // Refused after keeping the context in step.
    if (payload.length < 10) throw new Error('short SYN_STREAM');
    await this.inflater.process(payload.subarray(10));
    const id = payload.readUInt32BE(0) & 0x7fffffff;
    void this.send(() =>
      controlFrame(FRAME_TYPES.RST_STREAM, 0, Buffer.concat([u32(id), u32(RST_STATUS.REFUSED_STREAM)])),
    );
  }
}
