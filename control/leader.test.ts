import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestApi, type TestApi } from '../test/support/api.js';
import { silentLogger } from './controllers/context.js';
import { runWhileLeading } from './leader.js';

let api: TestApi;
before(async () => {
  api = await startTestApi();
});
after(() => api.stop());

async function until(what: string, check: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('of two candidates only one works; stopping it hands the work to the other', async () => {
  const working = new Set<string>();
  const overlaps: string[] = [];
  const ran: string[] = [];
  const candidate = (identity: string) => {
    const ac = new AbortController();
    const done = runWhileLeading({
      connection: { server: api.url },
      leaseName: 'test-component',
      identity,
      timings: { leaseDurationSeconds: 2, renewDeadlineSeconds: 1.5, retryPeriodSeconds: 0.2 },
      logger: silentLogger,
      signal: ac.signal,
      work: async (signal) => {
        if (working.size > 0) overlaps.push(`${identity} started while ${[...working]} worked`);
        working.add(identity);
        ran.push(identity);
        await new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => resolve(), { once: true }),
        );
        working.delete(identity);
      },
    });
    return { ac, done };
  };
  const a = candidate('a');
  const b = candidate('b');
  await until('one leader working', () => working.size === 1);
  const first = [...working][0]!;
  const [leader, other] = first === 'a' ? [a, b] : [b, a];
  leader.ac.abort();
  await leader.done;
  await until('the other takes over', () => working.size === 1 && !working.has(first));
  other.ac.abort();
  await other.done;
  assert.deepEqual(overlaps, []);
  assert.equal(ran.length, 2);
  assert.notEqual(ran[0], ran[1]);
});
