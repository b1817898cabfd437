/**
 * Polling with a deadline, for tests that wait on a condition instead of sleeping.
 *
 *   const pod = await until('the pod running', async () => running(await getPod()), 60_000);
 *   await untilTruthy('the node Ready', () => isReady(node), 30_000, 20);
 *
 * `check` may throw (a server not up yet, a 404): that is one more miss, and the last
 * error is in the timeout's message.
 */
import assert from 'node:assert/strict';

async function poll<T>(
  what: string,
  check: () => T | Promise<T>,
  done: (v: T) => boolean,
  timeoutMs: number,
  intervalMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (done(v)) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Calls `check` every `intervalMs` until it returns something other than undefined, and
 * resolves with that. Fails the test (AssertionError naming `what`) after `timeoutMs`.
 */
export function until<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 60_000,
  intervalMs = 100,
): Promise<T> {
  return poll(what, check, (v) => v !== undefined, timeoutMs, intervalMs) as Promise<T>;
}

/**
 * Calls `check` every `intervalMs` until it returns something truthy, and resolves with
 * that. Fails the test (AssertionError naming `what`) after `timeoutMs`.
 */
export function untilTruthy<T>(
  what: string,
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 60_000,
  intervalMs = 100,
): Promise<T> {
  return poll(what, check, (v) => !!v, timeoutMs, intervalMs) as Promise<T>;
}
