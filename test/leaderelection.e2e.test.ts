// Leader election against a real `k8ts server`, with real timers and short durations:
// two candidates on one Lease, exactly one leads at any time, and when the leader dies
// without releasing, the other takes over, but not before the lease has run out. How soon
// it takes over is timed exactly with a fake clock in api/leaderelection's unit tests;
// here, on a shared machine, only order (renewals advance, the takeover comes after the
// last renewal plus the lease) and liveness with generous deadlines are checked.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { httpLeaseClient } from '../api/leaderelection/http.js';
import { LeaderElector } from '../api/leaderelection/leaderelection.js';
import type { Lease } from '../api/leaderelection/lease.js';
import { startK8tsServer, type K8tsServer } from './support/k8ts-server.js';
import { until as pollUntil } from './support/wait.js';

const NS = 'kube-system';
const NAME = 'k8ts-e2e-election';
const LEASE_S = 2;
const RENEW_S = 1.5;
const RETRY_S = 0.2;

async function eventually<T>(what: string, check: () => T | undefined, deadlineMs: number): Promise<T> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const v = check();
    if (v !== undefined) return v;
    if (Date.now() > until) assert.fail(`timed out after ${deadlineMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Candidate {
  id: string;
  leadingSince: number | undefined;
  stop: AbortController;
  done: Promise<void>;
}

describe('leader election against k8ts', () => {
  let k: K8tsServer;
  const candidates: Candidate[] = [];
  /** Every moment two candidates believed they led (should stay empty). */
  const overlaps: string[] = [];

  const start = (id: string): Candidate => {
    const c: Candidate = {
      id,
      leadingSince: undefined,
      stop: new AbortController(),
      done: Promise.resolve(),
    };
    const elector = new LeaderElector({
      client: httpLeaseClient(k.url, { fetch: k.fetch }),
      namespace: NS,
      name: NAME,
      identity: id,
      leaseDurationSeconds: LEASE_S,
      renewDeadlineSeconds: RENEW_S,
      retryPeriodSeconds: RETRY_S,
      callbacks: {
        onStartedLeading: (signal) => {
          const others = candidates.filter((o) => o !== c && o.leadingSince !== undefined);
          if (others.length > 0) overlaps.push(`${id} started while ${others.map((o) => o.id)} led`);
          c.leadingSince = Date.now();
          signal.addEventListener('abort', () => (c.leadingSince = undefined));
        },
        onStoppedLeading: () => (c.leadingSince = undefined),
      },
    });
    c.done = elector.run(c.stop.signal);
    candidates.push(c);
    return c;
  };
  const leaders = () => candidates.filter((c) => c.leadingSince !== undefined);
  const readLease = () => httpLeaseClient(k.url, { fetch: k.fetch }).get(NS, NAME);
  /** Reads the Lease every 50 ms until `check` holds (10 s deadline); resolves with it. */
  const untilLease = (what: string, check: (l: Lease) => boolean): Promise<Lease> =>
    pollUntil(
      what,
      async () => {
        const l = await readLease();
        return check(l) ? l : undefined;
      },
      10_000,
      50,
    );

  before(async () => {
    k = await startK8tsServer({ args: ['--datastore', 'memory'] });
  });

  after(async () => {
    for (const c of candidates) c.stop.abort();
    await Promise.all(candidates.map((c) => c.done));
    await k?.stop();
  });

  it('two candidates: exactly one leads, and the Lease names it', async () => {
    start('candidate-a');
    start('candidate-b');
    const leader = await eventually('a leader', () => leaders()[0], 10_000);
    // Watch for a few lease durations: the leader keeps renewing, nobody else leads.
    const until = Date.now() + 3 * LEASE_S * 1000;
    while (Date.now() < until) {
      assert.deepEqual(
        leaders().map((c) => c.id),
        [leader.id],
      );
      await new Promise((r) => setTimeout(r, 20));
    }
    const lease: Lease = await readLease();
    assert.equal(lease.spec?.holderIdentity, leader.id);
    assert.equal(lease.spec?.leaseDurationSeconds, LEASE_S);
    assert.equal(lease.spec?.leaseTransitions, 0);
    assert.match(lease.spec?.renewTime ?? '', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    // It keeps renewing: a later read shows a later renewTime, the same holder and acquireTime.
    const renewed = await untilLease(
      'a later renewal',
      (l) => Date.parse(l.spec?.renewTime ?? '') > Date.parse(lease.spec!.renewTime!),
    );
    assert.equal(renewed.spec?.holderIdentity, leader.id);
    assert.equal(renewed.spec?.acquireTime, lease.spec?.acquireTime);
    // kubectl sees the same holder.
    const r = await k.kubectl('get', 'lease', NAME, '-n', NS, '-o', 'jsonpath={.spec.holderIdentity}');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, leader.id);
    assert.deepEqual(overlaps, []);
  });

  it('when the leader dies without releasing, the other leads, once the lease has run out', async () => {
    const [old] = leaders();
    assert.ok(old);
    const successor = candidates.find((c) => c !== old)!;
    const before = await readLease();
    // A crash: the process stops renewing and never releases (releaseOnCancel is off).
    old.stop.abort();
    await old.done;
    const last = await readLease();
    assert.equal(last.spec?.holderIdentity, old.id, 'the Lease still names the dead leader');

    // Taking over takes the lease duration plus up to two jittered retries (about 2.9 s);
    // the deadline is for a hang, not a speed target.
    await eventually('the successor to lead', () => successor.leadingSince, 30_000);
    // Not early: the successor saw the last renewal no sooner than it was written, and
    // waits the lease out from then on its own clock (both candidates read this host's
    // Date.now(), so the two times compare).
    const lastRenewal = Date.parse(last.spec!.renewTime!);
    assert.ok(
      successor.leadingSince! >= lastRenewal + LEASE_S * 1000,
      `led ${successor.leadingSince! - lastRenewal} ms after the last renewal, before the ${LEASE_S} s lease ran out`,
    );

    const lease = await readLease();
    assert.equal(lease.spec?.holderIdentity, successor.id);
    assert.equal(lease.spec?.leaseTransitions, (before.spec?.leaseTransitions ?? 0) + 1);
    assert.notEqual(lease.spec?.acquireTime, before.spec?.acquireTime);
    assert.deepEqual(
      leaders().map((c) => c.id),
      [successor.id],
    );
    assert.deepEqual(overlaps, []);
  });
});
