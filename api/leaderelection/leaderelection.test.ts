import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, flushPromises } from '../clock.js';
import type { LeaderElectionConfig } from './leaderelection.js';
import { LeaderElector } from './leaderelection.js';
import { formatMicroTime } from './lease.js';
import type { FakeLeaseClient } from './testing.js';
import { MemoryLeaseStore } from './testing.js';

const NS = 'kube-system';
const NAME = 'k8ts-controller-manager';

/** One candidate with its own client, recording what its callbacks saw and when. */
interface Candidate {
  id: string;
  elector: LeaderElector;
  client: FakeLeaseClient;
  events: string[];
  /** Clock times at which it started leading. */
  startedAt: number[];
  leading(): boolean;
  stop(): void;
  done: Promise<void>;
}

function candidate(
  store: MemoryLeaseStore,
  clock: FakeClock,
  id: string,
  extra: Partial<LeaderElectionConfig> = {},
): Candidate {
  const client = store.client();
  const events: string[] = [];
  const startedAt: number[] = [];
  let leading = false;
  const elector = new LeaderElector({
    client,
    namespace: NS,
    name: NAME,
    identity: id,
    clock,
    random: () => 0,
    callbacks: {
      onStartedLeading: (signal) => {
        leading = true;
        startedAt.push(clock.now());
        events.push('started');
        signal.addEventListener('abort', () => {
          leading = false;
          events.push('signal aborted');
        });
      },
      onStoppedLeading: () => events.push('stopped'),
      onNewLeader: (who) => events.push(`leader ${who}`),
    },
    ...extra,
  });
  const ctl = new AbortController();
  const done = elector.run(ctl.signal);
  return { id, elector, client, events, startedAt, leading: () => leading, stop: () => ctl.abort(), done };
}

/** Advances `ms` in 100 ms steps, asserting after each that at most one candidate leads. */
async function advanceChecking(clock: FakeClock, ms: number, cands: Candidate[]): Promise<void> {
  for (let t = 0; t < ms; t += 100) {
    await clock.advance(Math.min(100, ms - t));
    const leaders = cands.filter((c) => c.leading()).map((c) => c.id);
    assert.ok(leaders.length <= 1, `two leaders at ${clock.now()}: ${leaders.join(', ')}`);
  }
}

const leaderOf = (cands: Candidate[]) => cands.filter((c) => c.leading()).map((c) => c.id);
const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

describe('LeaderElector config', () => {
  const base = (): LeaderElectionConfig => ({
    client: new MemoryLeaseStore().client(),
    namespace: NS,
    name: NAME,
    identity: 'a',
    callbacks: { onStartedLeading: () => {}, onStoppedLeading: () => {} },
  });
  const cases: Array<[string, Partial<LeaderElectionConfig>, RegExp]> = [
    ['empty identity', { identity: '' }, /identity must not be empty/],
    ['lease not longer than renew deadline', { leaseDurationSeconds: 10 }, /greater than renewDeadline/],
    ['renew deadline within the jittered retry', { retryPeriodSeconds: 9 }, /retryPeriodSeconds × 1.2/],
    ['fractional lease duration', { leaseDurationSeconds: 15.5 }, /whole number/],
    ['zero retry period', { retryPeriodSeconds: 0 }, /greater than zero/],
    ['no lease name', { name: '' }, /namespace and name/],
  ];
  for (const [what, patch, want] of cases) {
    it(`rejects ${what}`, () => {
      assert.throws(() => new LeaderElector({ ...base(), ...patch }), want);
    });
  }

  it('accepts client-go defaults and short test durations, and leads with them', async () => {
    const cases: Array<[string, Partial<LeaderElectionConfig>, number, number]> = [
      ['defaults', {}, 15, 2000],
      ['short', { leaseDurationSeconds: 2, renewDeadlineSeconds: 1.5, retryPeriodSeconds: 0.2 }, 2, 200],
    ];
    for (const [what, patch, leaseSeconds, retryMs] of cases) {
      const clock = new FakeClock();
      const store = new MemoryLeaseStore();
      const t0 = clock.now();
      const a = candidate(store, clock, 'a', patch);
      await clock.advance(0);
      assert.equal(a.leading(), true, what);
      assert.equal(store.peek(NS, NAME)!.spec!.leaseDurationSeconds, leaseSeconds, what);
      await clock.advance(retryMs - 1);
      assert.equal(store.peek(NS, NAME)!.spec!.renewTime, formatMicroTime(t0), `${what}: not renewed yet`);
      await clock.advance(1);
      assert.equal(store.peek(NS, NAME)!.spec!.renewTime, formatMicroTime(t0 + retryMs), `${what}: renewed`);
      a.stop();
      await a.done;
    }
  });
});

describe('LeaderElector', () => {
  it('a single candidate creates the Lease, leads, and renews it every retryPeriod', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const t0 = clock.now();
    const a = candidate(store, clock, 'a');
    await clock.advance(0);
    assert.equal(a.leading(), true);
    assert.deepEqual(a.events, ['leader a', 'started']);
    assert.equal(a.elector.isLeader(), true);
    const lease = store.peek(NS, NAME)!;
    assert.equal(lease.apiVersion, 'coordination.k8s.io/v1');
    assert.equal(lease.kind, 'Lease');
    assert.deepEqual(lease.spec, {
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      acquireTime: formatMicroTime(t0),
      renewTime: formatMicroTime(t0),
      leaseTransitions: 0,
    });
    assert.match(lease.spec!.renewTime!, MICRO_TIME);

    a.client.calls.length = 0;
    await clock.advance(2000);
    const renewed = store.peek(NS, NAME)!;
    assert.equal(renewed.spec!.renewTime, formatMicroTime(t0 + 2000));
    assert.equal(renewed.spec!.acquireTime, formatMicroTime(t0), 'acquireTime kept on renewal');
    assert.equal(renewed.spec!.leaseTransitions, 0);
    assert.deepEqual(a.client.calls, ['update'], 'the leader renews on the fast path, without a read');

    a.stop();
    await a.done;
    assert.deepEqual(a.events, ['leader a', 'started', 'signal aborted', 'stopped']);
    assert.equal(store.peek(NS, NAME)!.spec!.holderIdentity, 'a', 'no release unless releaseOnCancel');
  });

  it('of two candidates exactly one leads; the other sees it as leader', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const cands = [candidate(store, clock, 'a'), candidate(store, clock, 'b')];
    await advanceChecking(clock, 60_000, cands);
    assert.deepEqual(leaderOf(cands), ['a']);
    assert.deepEqual(cands[1]!.events, ['leader a'], 'b never led and was told who leads');
    assert.ok(cands[1]!.client.calls.includes('create 409'), 'b lost the race to create the Lease');
    assert.equal(store.peek(NS, NAME)!.spec!.leaseTransitions, 0);
    for (const c of cands) c.stop();
    await Promise.all(cands.map((c) => c.done));
  });

  it('when the leader stops renewing (crash), the other takes over leaseDuration after the last change it saw', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = candidate(store, clock, 'a');
    await clock.advance(0);
    const b = candidate(store, clock, 'b');
    await advanceChecking(clock, 7_000, [a, b]);
    const lastRenew = Date.parse(store.peek(NS, NAME)!.spec!.renewTime!);
    a.stop(); // a crash: no release, the Lease still names a
    await a.done;
    await advanceChecking(clock, lastRenew + 15_000 - clock.now(), [a, b]);
    assert.equal(b.leading(), false, 'not before leaseDurationSeconds have passed on b’s clock');
    await advanceChecking(clock, 10_000, [a, b]);
    assert.equal(b.leading(), true);
    const tookOver = b.startedAt[0]!;
    assert.ok(tookOver > lastRenew + 15_000, `took over at +${tookOver - lastRenew} ms`);
    assert.ok(tookOver <= lastRenew + 15_000 + 2 * 2_000, `took over at +${tookOver - lastRenew} ms`);
    const lease = store.peek(NS, NAME)!.spec!;
    assert.equal(lease.holderIdentity, 'b');
    assert.equal(lease.leaseTransitions, 1);
    assert.equal(lease.acquireTime, formatMicroTime(tookOver));
    assert.deepEqual(b.events, ['leader a', 'leader b', 'started']);
    b.stop();
    await b.done;
  });

  // The remote renewTime is never compared with the local clock: a holder whose clock is
  // an hour off either way is given exactly leaseDurationSeconds after the change was seen.
  for (const [what, skewMs] of [
    ['an hour behind', -3_600_000],
    ['an hour ahead', 3_600_000],
  ] as const) {
    it(`judges expiry by the local observation time, not the holder’s renewTime (${what})`, async () => {
      const clock = new FakeClock();
      const store = new MemoryLeaseStore();
      const skewed = formatMicroTime(clock.now() + skewMs);
      store.put({
        metadata: { name: NAME, namespace: NS },
        spec: {
          holderIdentity: 'ghost',
          leaseDurationSeconds: 15,
          acquireTime: skewed,
          renewTime: skewed,
          leaseTransitions: 4,
        },
      });
      const b = candidate(store, clock, 'b');
      await clock.advance(14_000);
      assert.equal(b.leading(), false);
      await clock.advance(4_000);
      assert.deepEqual(b.startedAt, [clock.now() - 2_000], 'took over at its first retry after 15 s (16 s)');
      assert.equal(store.peek(NS, NAME)!.spec!.leaseTransitions, 5);
      b.stop();
      await b.done;
    });
  }

  for (const mode of ['failing', 'hanging'] as const) {
    it(`a leader whose renewals are ${mode} stops leading at renewDeadline, before the other takes over`, async () => {
      const clock = new FakeClock();
      const store = new MemoryLeaseStore();
      const a = candidate(store, clock, 'a');
      await clock.advance(0);
      const b = candidate(store, clock, 'b');
      await advanceChecking(clock, 4_000, [a, b]);
      const lastRenew = Date.parse(store.peek(NS, NAME)!.spec!.renewTime!);
      a.client.mode = mode; // partitioned from the API server
      let stoppedAt = 0;
      void a.done.then(() => (stoppedAt = clock.now()));
      await advanceChecking(clock, 25_000, [a, b]);
      assert.ok(stoppedAt > 0, 'a gave up');
      // The round that fails starts at the first renewal after the cut and lasts renewDeadline.
      assert.ok(stoppedAt <= lastRenew + 2_000 + 10_000, `a stopped at +${stoppedAt - lastRenew} ms`);
      assert.deepEqual(a.events.slice(-2), ['signal aborted', 'stopped']);
      assert.equal(a.elector.isLeader(), false);
      assert.equal(b.leading(), true);
      assert.ok(b.startedAt[0]! > lastRenew + 15_000);
      b.stop();
      await b.done;
    });
  }

  it('a 409 on the fast-path renewal (someone else wrote) falls back to a read and still renews', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = candidate(store, clock, 'a');
    await clock.advance(0);
    // e.g. `kubectl label lease …`: a new resourceVersion, the same election record.
    const current = store.peek(NS, NAME)!;
    store.put({ ...current, metadata: { ...current.metadata, labels: { touched: 'yes' } } });
    a.client.calls.length = 0;
    await clock.advance(2_000);
    assert.deepEqual(a.client.calls, ['update 409', 'get', 'update']);
    assert.equal(a.leading(), true);
    const lease = store.peek(NS, NAME)!;
    assert.equal(lease.spec!.renewTime, formatMicroTime(clock.now()));
    assert.deepEqual(lease.metadata.labels, { touched: 'yes' }, 'the other writer’s change is kept');
    a.stop();
    await a.done;
  });

  it('two candidates racing for a free Lease: the 409 loser does not lead', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    store.put({
      metadata: { name: NAME, namespace: NS },
      spec: { holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 2 },
    });
    const cands = [candidate(store, clock, 'a'), candidate(store, clock, 'b')];
    await advanceChecking(clock, 10_000, cands);
    assert.deepEqual(leaderOf(cands), ['a']);
    assert.ok(cands[1]!.client.calls.includes('update 409'));
    assert.equal(store.peek(NS, NAME)!.spec!.leaseTransitions, 3);
    for (const c of cands) c.stop();
    await Promise.all(cands.map((c) => c.done));
  });

  it('a write between read and update (409) fails that attempt only', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    store.put({ metadata: { name: NAME, namespace: NS }, spec: { holderIdentity: '' } });
    let interfere = true;
    store.beforeUpdate = (lease) => {
      if (!interfere) return;
      interfere = false;
      store.put({ ...lease, spec: { ...lease.spec, holderIdentity: 'intruder', leaseDurationSeconds: 3 } });
    };
    const a = candidate(store, clock, 'a');
    await clock.advance(0);
    assert.equal(a.leading(), false);
    assert.deepEqual(a.client.calls, ['get', 'update 409']);
    await clock.advance(6_000);
    assert.equal(a.leading(), true, 'the intruder never renewed; its 3 s lease expired');
    assert.deepEqual(a.events, ['leader intruder', 'leader a', 'started']);
    a.stop();
    await a.done;
  });

  it('releaseOnCancel: stopping hands the Lease over at once, after the leader’s work has finished', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    let workFinished = false;
    const a = candidate(store, clock, 'a', {
      releaseOnCancel: true,
      callbacks: {
        onStartedLeading: async (signal) => {
          await new Promise<void>((r) => signal.addEventListener('abort', () => r()));
          await clock.advance(0);
          workFinished = true;
        },
        onStoppedLeading: () => {},
      },
    });
    await clock.advance(0);
    const b = candidate(store, clock, 'b');
    await clock.advance(5_000);
    assert.equal(store.peek(NS, NAME)!.spec!.holderIdentity, 'a');
    a.stop();
    await a.done;
    assert.equal(workFinished, true);
    const released = store.peek(NS, NAME)!.spec!;
    assert.equal(released.holderIdentity, '');
    assert.equal(released.leaseDurationSeconds, 1);
    assert.equal(released.leaseTransitions, 0);
    assert.equal(released.renewTime, formatMicroTime(clock.now()));
    const stoppedAt = clock.now();
    await clock.advance(2_000);
    assert.equal(b.leading(), true);
    assert.ok(b.startedAt[0]! - stoppedAt <= 2_000, 'at b’s next retry, not after leaseDuration');
    assert.equal(store.peek(NS, NAME)!.spec!.leaseTransitions, 1);
    b.stop();
    await b.done;
  });

  it('releaseOnCancel does not touch a Lease someone else holds', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = candidate(store, clock, 'a', { releaseOnCancel: true });
    await clock.advance(0);
    const lease = store.peek(NS, NAME)!;
    store.put({ ...lease, spec: { ...lease.spec, holderIdentity: 'usurper' } });
    a.stop();
    await a.done;
    assert.equal(store.peek(NS, NAME)!.spec!.holderIdentity, 'usurper');
  });

  it('stopping while still campaigning calls onStoppedLeading without onStartedLeading', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = candidate(store, clock, 'a');
    await clock.advance(0);
    const b = candidate(store, clock, 'b');
    await clock.advance(3_000);
    b.stop();
    await b.done;
    assert.deepEqual(b.events, ['leader a', 'stopped']);
    await assert.rejects(a.elector.run(), /already active/);
    a.stop();
    await a.done;
    await flushPromises();
  });
});
