/**
 * `npm run bench:ha -- --pods 5000`: the high-availability drill of issue 20 (item 4) at
 * full size, printing its numbers (test/ha.e2e.test.ts runs the same drill,
 * test/support/ha-drill.ts, at CI size and asserts its checks). On this machine: a real
 * 3-member etcd (Debian's etcd-server) on loopback, two `k8ts server` processes over it
 * (the built CLI), HAProxy in front of both when installed, and `k8ts hollow-nodes` with
 * both servers' URLs.
 *
 * Phases:
 *  1. start: A takes the kube-scheduler and kube-controller-manager Leases, B starts;
 *     the nodes join; a Deployment of --pods pods becomes available;
 *  2. roll: a rolling update (25 % surge and unavailable); once --kill-at of the new pods
 *     are available, A gets kill -9; until the rollout is complete;
 *  3. etcd: a follower member killed (writes go on), a second (writes refused), the first
 *     restarted (writes again).
 *
 * Printed: the takeover time of each Lease, the rollout's time (in all and after the
 * kill), the write availability gap (the longest time between two acknowledged writes of a
 * writer creating a ConfigMap every 100 ms through a client of A then B), how long the
 * clients took to follow (the A-first informer, every hollow node's Lease, a join through
 * --server A,B), the etcd phases, and the checks: pods bound twice, the ReplicaSets'
 * spec.replicas summed against replicas + maxSurge (upstream's bound; the most active pods
 * at once are printed beside it), a ReplicaSet with more pods than it was asked for,
 * acknowledged writes lost; and which Leases A held when killed, with both servers'
 * leader-election log lines.
 *
 * Flags: --pods (5000), --nodes (default: enough for the surge at 100 pods a node),
 * --lease-duration seconds (15, k8ts's default; renew deadline 2/3 of it, retry period
 * 1/6), --kill-at (0.3), --timeout seconds per wait (1800). Exits 1 when a check fails.
 * Not a test: the times depend on the machine and on what else runs on it.
 */
import { parseArgs } from 'node:util';
import { HADrill } from '../test/support/ha-drill.js';
import { table } from './lib/stats.js';

const { values: flags } = parseArgs({
  options: {
    pods: { type: 'string', default: '5000' },
    nodes: { type: 'string' },
    'lease-duration': { type: 'string', default: '15' },
    'kill-at': { type: 'string', default: '0.3' },
    timeout: { type: 'string', default: '1800' },
  },
});
const PODS = Number(flags.pods);
const NODES = Number(flags.nodes ?? Math.max(4, Math.ceil((PODS * 1.25) / 100)));
const LEASE = Number(flags['lease-duration']);
if (!(PODS >= 4 && NODES >= 1 && LEASE >= 1))
  throw new Error('--pods must be ≥ 4, --nodes ≥ 1, --lease-duration ≥ 1');

const log = (line: string) => process.stdout.write(`${line}\n`);
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

log(`HA drill: ${PODS} pods on ${NODES} hollow nodes, leases ${LEASE} s, 3-member etcd, 2 control processes`);
const t0 = Date.now();
const drill = await HADrill.start({
  pods: PODS,
  nodes: NODES,
  leaseDurationSeconds: LEASE,
  killAtAvailableFraction: Number(flags['kill-at']),
  rolloutTimeoutMs: Number(flags.timeout) * 1000,
  log,
});
let failed = false;
try {
  const startMs = Date.now() - t0;
  const roll = await drill.rollAndKillLeader();
  const checks = await drill.checks();
  const one = await drill.etcdOneMemberDown();
  const lost = await drill.etcdQuorumLost();
  const back = await drill.etcdRecovered();
  const final = await drill.checks();

  log('');
  log(
    table([
      ['measure', 'value'],
      ['start (etcd, servers, nodes, Deployment available)', s(startMs)],
      [
        'leader killed at',
        `${roll.atKill.available}/${PODS} new pods available, ${roll.atKill.old} old pods left`,
      ],
      [
        'takeover: kube-scheduler Lease held by B',
        `${s(roll.takeover.scheduler)} after the kill (lease ${LEASE} s)`,
      ],
      [
        'takeover: kube-controller-manager Lease held by B',
        `${s(roll.takeover.controllerManager)} after the kill`,
      ],
      ['rollout', `${s(roll.rolloutMs)} in all, ${s(roll.afterKillMs)} after the kill`],
      [
        'write availability gap (leader kill → rollout done)',
        `${roll.writeGapMs} ms; ${roll.failedWrites} writes failed`,
      ],
      ['A-first informer has a write made after the kill', s(roll.informerFollowedMs)],
      [`every hollow node's Lease renewed through B`, s(roll.nodesRenewedMs)],
      ['2 nodes joined with --server A(dead),B', s(roll.lateJoinMs)],
      [
        'kubectl rollout status, --server B',
        roll.kubectl.code === 0 ? 'completed' : `exit ${roll.kubectl.code}`,
      ],
      [
        'kubectl rollout status through HAProxy (since before the kill)',
        roll.kubectlThroughLB === undefined
          ? 'no haproxy'
          : roll.kubectlThroughLB.code === 0
            ? 'completed'
            : `exit ${roll.kubectlThroughLB.code}`,
      ],
      [
        'etcd follower killed: writes through B',
        `${one.writes - one.failures.length}/${one.writes} succeeded; writer gap ${one.writeGapMs} ms`,
      ],
      [
        'etcd quorum lost: a write',
        lost.otherError ??
          `${lost.code} ${lost.status?.reason} in ${lost.answeredInMs} ms: ${lost.status?.message}`,
      ],
      [
        'etcd member back: writes succeed after',
        `${back.recoveredMs} ms (${back.failuresAfter.length} failures after)`,
      ],
    ]),
  );
  log(
    `most active pods at once: ${checks.maxActivePods} (the limit ${checks.surgeLimit} bounds spec.replicas, as upstream's), ` +
      `${checks.maxActiveAfterKillMs} ms after the kill: ${checks.maxActiveBreakdown}`,
  );
  log(
    `Leases held by A at the kill: scheduler ${roll.heldAtKill.scheduler}, controller manager ${roll.heldAtKill.controllerManager}`,
  );
  for (const l of roll.leadership) log(`  ${l}`);
  log('');
  const rows: [string, string, boolean][] = [
    ['pods bound', String(checks.boundPods), checks.boundPods > 0],
    ['pods bound to a second node', String(checks.reboundPods.length), checks.reboundPods.length === 0],
    [
      'pods with two Scheduled events',
      String(checks.twiceScheduled.length),
      checks.twiceScheduled.length === 0,
    ],
    [
      'ReplicaSets with more pods than asked for',
      checks.overCreated.length === 0 ? '0' : checks.overCreated.join('; '),
      checks.overCreated.length === 0,
    ],
    [
      'most ReplicaSet replicas (≤ replicas + maxSurge)',
      `${checks.maxReplicaSum} ≤ ${checks.surgeLimit}`,
      checks.maxReplicaSum <= checks.surgeLimit,
    ],
    [
      'nodes above max-pods',
      String(checks.overcommittedNodes.length),
      checks.overcommittedNodes.length === 0,
    ],
    [
      'acknowledged writes lost (after the etcd phases)',
      `${final.lost.length} of ${final.acknowledged}`,
      final.lost.length === 0,
    ],
    ['kubectl followed', roll.kubectl.code === 0 ? 'yes' : 'no', roll.kubectl.code === 0],
    [
      'writes with one etcd member down',
      one.failures.length === 0 ? 'all succeeded' : one.failures.join('; '),
      one.failures.length === 0,
    ],
    ['no quorum: 503 Status', `${lost.code} ${lost.status?.reason ?? lost.otherError}`, lost.code === 503],
  ];
  log(table([['check', 'found', 'ok'], ...rows.map(([a, b, ok]) => [a, b, ok ? 'ok' : 'FAILED'])]));
  failed = rows.some(([, , ok]) => !ok);
} finally {
  await drill.stop();
}
log(`\ndone in ${s(Date.now() - t0)}`);
process.exitCode = failed ? 1 : 0;
