import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import type { PullProgress } from '../api.js';
import { isCriError } from '../errors.js';
import { followPull } from './pull.js';

/** A stream of `chunks` as docker sends them (lines may be split across chunks). */
const streamOf = (chunks: string[]): Readable => Readable.from(chunks.map((c) => Buffer.from(c)));

describe('followPull', () => {
  it('reports progress per message, across chunk boundaries', async () => {
    const seen: PullProgress[] = [];
    await followPull(
      streamOf([
        '{"status":"Pulling from k8ts/busybox","id":"1.0"}\n{"status":"Downloa',
        'ding","progressDetail":{"current":512,"total":2048},"id":"abc"}\n\n',
        '{"status":"Status: Downloaded newer image for k8ts/busybox:1.0"}',
      ]),
      'pull k8ts/busybox:1.0',
      (p) => seen.push(p),
    );
    assert.deepEqual(seen, [
      { status: 'Pulling from k8ts/busybox 1.0' },
      { status: 'Downloading abc', current: 512, total: 2048 },
      { status: 'Status: Downloaded newer image for k8ts/busybox:1.0' },
    ]);
  });

  it('an error line inside the 200 response rejects ImagePullFailed with docker’s message', async () => {
    await assert.rejects(
      followPull(
        streamOf([
          '{"status":"Pulling fs layer","id":"abc"}\n',
          '{"errorDetail":{"message":"manifest unknown"},"error":"manifest unknown"}\n',
        ]),
        'pull a:1',
      ),
      (e: unknown) => isCriError(e, 'ImagePullFailed') && e.message === 'pull a:1: manifest unknown',
    );
  });

  it('a stream that breaks off rejects ImagePullFailed', async () => {
    const broken = new Readable({
      read() {
        this.destroy(new Error('socket hang up'));
      },
    });
    await assert.rejects(followPull(broken, 'pull a:1'), (e: unknown) => isCriError(e, 'ImagePullFailed'));
  });
});
