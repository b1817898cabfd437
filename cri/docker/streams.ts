/**
 * Byte-stream helpers of the docker adapter's streaming calls (logs, exec, attach): the
 * demultiplexer of Docker's framed stdout/stderr stream, with back-pressure.
 *
 * Docker frames the output of containers without a TTY (logs, attach, exec): an 8-byte
 * header — stream type (0 stdin, 1 stdout, 2 stderr), three zero bytes, a big-endian
 * uint32 payload length — then the payload (Docker Engine API, "Attach to a container:
 * Stream format"). dockerode's `modem.demuxStream` writes without waiting for its targets
 * to drain, so a slow reader of `kubectl logs -f` would make it buffer without bound;
 * DockerDemux waits for every target it wrote to before it accepts more input.
 */
import { Writable } from 'node:stream';

const HEADER_BYTES = 8;

/**
 * A Writable that splits Docker's framed stream into `stdout` and `stderr` targets (the
 * same target for both to interleave them). Ends both targets when it is ended. Frames
 * of unknown type are dropped.
 */
export class DockerDemux extends Writable {
  private pending: Buffer = Buffer.alloc(0);

  constructor(
    private readonly stdout: NodeJS.WritableStream | undefined,
    private readonly stderr: NodeJS.WritableStream | undefined,
  ) {
    super();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const waits = new Set<NodeJS.WritableStream>();
    while (this.pending.length >= HEADER_BYTES) {
      const size = this.pending.readUInt32BE(4);
      if (this.pending.length < HEADER_BYTES + size) break;
      const type = this.pending[0];
      const payload = this.pending.subarray(HEADER_BYTES, HEADER_BYTES + size);
      this.pending = this.pending.subarray(HEADER_BYTES + size);
      const target = type === 1 ? this.stdout : type === 2 ? this.stderr : undefined;
      if (target && payload.length > 0 && !target.write(payload)) waits.add(target);
    }
    if (waits.size === 0) {
      done();
      return;
    }
    let left = waits.size;
    for (const t of waits) t.once('drain', () => --left === 0 && done());
  }

  override _final(done: (err?: Error | null) => void): void {
    this.stdout?.end();
    if (this.stderr !== this.stdout) this.stderr?.end();
    done();
  }
}

/** One Docker frame (for tests and fakes): `type` 1 stdout, 2 stderr. */
export function dockerFrame(type: 1 | 2, payload: Buffer | string): Buffer {
  const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  const header = Buffer.alloc(HEADER_BYTES);
  header[0] = type;
  header.writeUInt32BE(body.length, 4);
  return Buffer.concat([header, body]);
}
