// Leader election against a real `k8ts server`, with real timers and short durations:
// two candidates on one Lease, exactly one leads at any time, and when the leader dies
// without releasing, the other takes over within the lease duration plus a retry.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { httpLeaseClient } from '../api/leaderelection/http.js';
import { LeaderElector } from '../api/leaderelection/leaderelection.js';
import type { Lease } from '../api/leaderelection/lease.js';
import { startK8tsServer, type K8tsServer } from './support/k8ts-server.js';

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
    assert.ok(Date.now() - Date.parse(lease.spec!.renewTime!) < LEASE_S * 1000, 'renewed recently');
    // kubectl sees the same holder.
    const r = await k.kubectl('get', 'lease', NAME, '-n', NS, '-o', 'jsonpath={.spec.holderIdentity}');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, leader.id);
    assert.deepEqual(overlaps, []);
  });

  it('when the leader dies without releasing, the other leads within the lease duration plus a retry', async () => {
    const [old] = leaders();
    assert.ok(old);
    const successor = candidates.find((c) => c !== old)!;
    const before = await readLease();
    // A crash: the process stops renewing and never releases (releaseOnCancel is off).
    const stoppedAt = Date.now();
    old.stop.abort();
    await old.done;
    assert.equal((await readLease()).spec?.holderIdentity, old.id, 'the Lease still names the dead leader');

    // The successor sees the last renewal at its next poll (≤ one jittered retry, 0.44 s,
    // after the crash), waits the lease out from there, and takes over at the poll after
    // that (≤ another retry); 1 s more for requests and scheduling on a busy machine.
    const maxMs = LEASE_S * 1000 + 2 * RETRY_S * 1000 * 2.2 + 1000;
    await eventually('the successor to lead', () => successor.leadingSince, maxMs);
    const tookOverMs = successor.leadingSince! - stoppedAt;
    assert.ok(tookOverMs <= maxMs, `took over after ${tookOverMs} ms`);
    // It waited out the lease on its own clock (from its last observation, at most a retry
    // before the crash), rather than taking over early.
    assert.ok(tookOverMs >= LEASE_S * 1000 - RETRY_S * 1000 * 2.2 - 100, `took over after ${tookOverMs} ms`);

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
