/**
 * The token manager on a FakeClock with a fake TokenRequest: tokens are cached, asked
 * again past 80 % of their lifetime (or 24 h), kept while asking fails and they have not
 * expired, and forgotten with their pod.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../api/clock.js';
import { TokenManager, type TokenRequestSpec } from './manager.js';

const spec = (expirationSeconds: number, uid = 'pod-uid'): TokenRequestSpec => ({
  audiences: [],
  expirationSeconds,
  boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p', uid },
});

function setup() {
  const clock = new FakeClock();
  const calls: { ns: string; sa: string; spec: TokenRequestSpec }[] = [];
  let fail = false;
  const manager = new TokenManager({
    clock,
    random: () => 0,
    request: (ns, sa, s) => {
      calls.push({ ns, sa, spec: s });
      if (fail) return Promise.reject(new Error('API down'));
      return Promise.resolve({
        token: `t${calls.length}`,
        expirationTimestamp: new Date(clock.now() + s.expirationSeconds * 1000).toISOString(),
      });
    },
  });
  return { clock, calls, manager, setFail: (v: boolean) => (fail = v) };
}

describe('TokenManager', () => {
  it('caches a token until 80 % of its lifetime, then asks again', async () => {
    const { clock, calls, manager } = setup();
    const first = await manager.get('ns', 'default', spec(3600));
    assert.equal(first.token, 't1');
    assert.deepEqual(calls[0], { ns: 'ns', sa: 'default', spec: spec(3600) });
    assert.equal(first.refreshAt, clock.now() + 2880_000);
    await clock.advance(2879_000);
    assert.equal((await manager.get('ns', 'default', spec(3600))).token, 't1');
    await clock.advance(2_000);
    assert.equal((await manager.get('ns', 'default', spec(3600))).token, 't2');
    assert.equal(calls.length, 2);
  });

  it('refreshes a long-lived token after 24 h', async () => {
    const { clock, manager } = setup();
    const t = await manager.get('ns', 'default', spec(7 * 24 * 3600));
    assert.equal(t.refreshAt, clock.now() + 24 * 3600_000);
  });

  it('keeps the cached token while the API fails and it has not expired; then throws', async () => {
    const { clock, manager, setFail } = setup();
    await manager.get('ns', 'default', spec(600));
    setFail(true);
    await clock.advance(500_000);
    assert.equal((await manager.get('ns', 'default', spec(600))).token, 't1');
    await clock.advance(100_000);
    await assert.rejects(manager.get('ns', 'default', spec(600)), /API down/);
  });

  it('uses the lifetime the server answered, and never asks again sooner than 1 s', async () => {
    const clock = new FakeClock();
    const manager = new TokenManager({
      clock,
      random: () => 0.9,
      request: () =>
        Promise.resolve({
          token: 't',
          expirationTimestamp: new Date(clock.now() + 5_000).toISOString(),
          expirationSeconds: 5,
        }),
    });
    // 80 % of 5 s is 4 s, less a 9 s jitter: clamped to 1 s from now (not at once, on every sync).
    const t = await manager.get('ns', 'default', spec(3600));
    assert.equal(t.refreshAt, clock.now() + 1_000);
  });

  it('keys by pod: another pod gets its own token; a deleted pod loses its', async () => {
    const { calls, manager } = setup();
    await manager.get('ns', 'default', spec(3600, 'a'));
    await manager.get('ns', 'default', spec(3600, 'b'));
    assert.equal(calls.length, 2);
    manager.deleteForPod('a');
    await manager.get('ns', 'default', spec(3600, 'a'));
    await manager.get('ns', 'default', spec(3600, 'b'));
    assert.equal(calls.length, 3);
  });
});
