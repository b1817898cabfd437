// DockerDemux: Docker's framed stdout/stderr stream split into two targets, frames cut
// anywhere, and no more input accepted while a target is full.
import assert from 'node:assert/strict';
import { PassThrough, Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { DockerDemux, dockerFrame } from './streams.js';

function collect(stream: PassThrough): () => string {
  let s = '';
  stream.on('data', (d: Buffer) => (s += d.toString()));
  return () => s;
}

describe('DockerDemux', () => {
  it('splits frames to stdout and stderr, whatever the chunking', async () => {
    const input = Buffer.concat([
      dockerFrame(1, 'out one\n'),
      dockerFrame(2, 'err one\n'),
      dockerFrame(1, ''),
      dockerFrame(1, 'out two\n'),
    ]);
    for (const size of [1, 3, 8, 9, input.length]) {
      const out = new PassThrough();
      const err = new PassThrough();
      const o = collect(out);
      const e = collect(err);
      const demux = new DockerDemux(out, err);
      for (let at = 0; at < input.length; at += size) demux.write(input.subarray(at, at + size));
      demux.end();
      await new Promise((r) => out.on('end', r));
      assert.equal(o(), 'out one\nout two\n', `chunks of ${size}`);
      assert.equal(e(), 'err one\n', `chunks of ${size}`);
    }
  });

  it('interleaves both into one target', async () => {
    const both = new PassThrough();
    const all = collect(both);
    const demux = new DockerDemux(both, both);
    demux.end(Buffer.concat([dockerFrame(1, 'a'), dockerFrame(2, 'b'), dockerFrame(1, 'c')]));
    await new Promise((r) => both.on('end', r));
    assert.equal(all(), 'abc');
  });

  it('waits for a full target before taking more', async () => {
    const pending: (() => void)[] = [];
    let received = 0;
    const slow = new Writable({
      highWaterMark: 4,
      write(chunk: Buffer, _enc, done) {
        received += chunk.length;
        pending.push(done);
      },
    });
    const releaseOne = () => pending.shift()!();
    const demux = new DockerDemux(slow, slow);
    let accepted = 0;
    const frame = dockerFrame(1, 'x'.repeat(16));
    demux.write(frame, () => accepted++);
    demux.write(frame, () => accepted++);
    await new Promise((r) => setImmediate(r));
    assert.equal(accepted, 0, 'the first frame waits for the slow target to drain');
    assert.equal(received, 16, 'the second frame is not taken meanwhile');
    releaseOne();
    await new Promise((r) => setImmediate(r));
    assert.equal(accepted, 1);
    assert.equal(received, 32);
    releaseOne();
    await new Promise((r) => setImmediate(r));
    assert.equal(accepted, 2);
  });
});
