import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../api/clock.js';
import { waitFor } from '../api/client/testing.js';
import { isCriError } from '../cri/index.js';
import { connectRuntime } from './runtime.js';
import { captureLogger } from './testing.js';

describe('connectRuntime', () => {
  it('answers Unavailable while the runtime cannot be opened, retrying with backoff', async () => {
    const saved = process.env.DOCKER_HOST;
    process.env.DOCKER_HOST = 'unix:///nonexistent/docker.sock';
    const { logger, lines } = captureLogger();
    const clock = new FakeClock();
    const c = connectRuntime('docker', 'n1', logger, clock);
    try {
      await waitFor('a failed attempt', () => lines.some((l) => l.level === 'warn'));
      await assert.rejects(c.runtime.status(), (err) => isCriError(err, 'Unavailable'));
      await clock.advance(1_000);
      await waitFor('a second attempt', () => lines.filter((l) => l.level === 'warn').length === 2);
      assert.deepEqual(
        lines.map((l) => l.meta.retryInMs),
        [1_000, 2_000],
      );
    } finally {
      await c.close();
      if (saved === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = saved;
    }
  });

  it('hands calls to the adapter once it is open', async () => {
    const { logger } = captureLogger();
    const c = connectRuntime('fake', 'n1', logger);
    await c.connected;
    assert.equal((await c.runtime.version()).runtimeName, 'fake');
    await c.close();
  });
});
