// The client of a CRI streaming server's exec session (SPDY/3.1, v4.channel.k8s.io)
// against a scripted server on loopback: the server ends the connection right after the
// error stream's status, as containerd's does, with header frames still to be inflated
// ahead of it on the client.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  BlockCodec,
  controlFrame,
  dataFrame,
  decodeHeaderBlock,
  encodeHeaderBlock,
  FLAG_FIN,
  FRAME_TYPES,
  u32,
} from '../../api/spdy.js';
import { openStreamSession } from './streams.js';

const EXIT_3 = JSON.stringify({
  metadata: {},
  status: 'Failure',
  message: 'command terminated with non-zero exit code: exit status 3',
  reason: 'NonZeroExitCode',
  details: { causes: [{ reason: 'ExitCode', message: '3' }] },
});

/**
 * Serves one scripted exec per connection: accepts the client's streams (SYN_REPLY each)
 * and, once `error` and `stdout` are open, writes in one go `headerFrames` HEADERS frames
 * on the error stream, "out\n" on stdout, the exit status on the error stream with FIN,
 * and ends the connection. With `pauseMs`, "out\n" goes first, then the server waits that
 * long and pushes onto `after` the type of each frame the client sent meanwhile (a DATA
 * frame is -1) before it writes the status.
 */
function scriptedServer(headerFrames: number, pauseMs = 0, afterOutput: number[] = []): Server {
  return createServer().on('upgrade', (_req, socket: Socket) => {
    socket.write(
      'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n' +
        'X-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n',
    );
    const inflater = new BlockCodec('inflate');
    const deflater = new BlockCodec('deflate');
    const ids = new Map<string, number>();
    let buffered = Buffer.alloc(0);
    let work = Promise.resolve();
    let outputSent = false;
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 8 && buffered.length >= 8 + (buffered.readUInt32BE(4) & 0xffffff)) {
        const frame = buffered.subarray(0, 8 + (buffered.readUInt32BE(4) & 0xffffff));
        buffered = buffered.subarray(frame.length);
        if (outputSent) afterOutput.push((frame[0]! & 0x80) === 0 ? -1 : frame.readUInt16BE(2));
        work = work.then(async () => {
          if ((frame[0]! & 0x80) === 0 || frame.readUInt16BE(2) !== FRAME_TYPES.SYN_STREAM) return;
          const id = frame.readUInt32BE(8) & 0x7fffffff;
          const headers = decodeHeaderBlock(await inflater.process(frame.subarray(18)));
          ids.set(headers['streamtype']!, id);
          const block = await deflater.process(encodeHeaderBlock({}));
          socket.write(controlFrame(FRAME_TYPES.SYN_REPLY, 0, Buffer.concat([u32(id), block])));
          if (!ids.has('error') || !ids.has('stdout')) return;
          const frames: Buffer[] = [];
          for (let i = 0; i < headerFrames; i++) {
            const h = await deflater.process(encodeHeaderBlock({ n: String(i) }));
            frames.push(controlFrame(FRAME_TYPES.HEADERS, 0, Buffer.concat([u32(ids.get('error')!), h])));
          }
          frames.push(dataFrame(ids.get('stdout')!, FLAG_FIN, Buffer.from('out\n')));
          if (pauseMs > 0) {
            socket.write(Buffer.concat(frames.splice(0)));
            outputSent = true;
            await new Promise((resolve) => setTimeout(resolve, pauseMs));
          }
          frames.push(dataFrame(ids.get('error')!, FLAG_FIN, Buffer.from(EXIT_3)));
          socket.end(Buffer.concat(frames));
        });
      }
    });
    socket.on('error', () => socket.destroy());
  });
}

describe('openStreamSession (CRI streaming client, SPDY)', () => {
  let server: Server;
  let url: string;
  before(async () => {
    server = scriptedServer(200);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/exec/x`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('reads the exit code and all output when the server closes the connection right after the status', async () => {
    for (let i = 0; i < 5; i++) {
      const session = await openStreamSession(
        url,
        { stdin: false, stdout: true, stderr: false, tty: false },
        'exec',
      );
      let out = '';
      session.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      assert.equal(await session.exitCode, 3, `run ${i + 1}`);
      assert.equal(out, 'out\n', `run ${i + 1}`);
    }
  });

  it('sends nothing once its streams are open and it only reads, as client-go (no WINDOW_UPDATE)', async () => {
    // An update that reaches a server after its last write lies unread when it closes, and
    // the kernel's reset then can take the status with it (containerd: exit code read as 0).
    const afterOutput: number[] = [];
    const quiet = scriptedServer(0, 100, afterOutput);
    await new Promise<void>((resolve) => quiet.listen(0, '127.0.0.1', resolve));
    try {
      const session = await openStreamSession(
        `http://127.0.0.1:${(quiet.address() as AddressInfo).port}/exec/x`,
        { stdin: false, stdout: true, stderr: false, tty: false },
        'exec',
      );
      session.stdout!.resume();
      assert.equal(await session.exitCode, 3);
      assert.deepEqual(afterOutput, [], 'frame types the client sent after the output');
    } finally {
      await new Promise<void>((resolve) => quiet.close(() => resolve()));
    }
  });
});
