// The high-availability drill of issue 20 (item 4) at CI size (test/support/ha-drill.ts;
// the full size is `npm run bench:ha`): a 3-member etcd, two k8ts servers, hollow nodes
// with both servers' URLs, a Deployment of HA_PODS pods (default 120) in a rolling update
// during which the control process holding the scheduler and controller-manager Leases
// gets kill -9; then one etcd member is killed, then a second, then one comes back.
// A second part runs a real agent (Docker) given both servers through the same kill.
// Timings are printed, never asserted.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resources } from '../api/client/resource.js';
import { RestClient } from '../api/client/rest.js';
import type { Lease, Node, Pod } from '../api/types.js';
import { freeClusterCIDR } from './support/cluster-cidr.js';
import { startEtcd, type EtcdMember } from './support/etcd.js';
import { HADrill, type RolloutResult } from './support/ha-drill.js';
import { removeNodeFromDocker, startK8tsAgent, type K8tsAgent } from './support/k8ts-agent.js';
import { cleanUp, startK8tsServer, type K8tsServer } from './support/k8ts-server.js';
import { until as waitUntil } from './support/wait.js';

const PODS = Number(process.env.HA_PODS ?? 120);
const NODES = Number(process.env.HA_NODES ?? 10);
const say = (line: string) => process.stdout.write(`${line}\n`);

describe('HA drill: kill -9 of the leader mid-rollout, then etcd members', { timeout: 900_000 }, () => {
  let drill: HADrill | undefined;
  let roll: RolloutResult | undefined;

  before(async () => {
    drill = await HADrill.start({ pods: PODS, nodes: NODES, leaseDurationSeconds: 10, log: say });
  });
  after(async () => {
    await drill?.stop();
  });

  it('the survivor takes both Leases and completes the rollout; every client fails over by itself', async () => {
    roll = await drill!.rollAndKillLeader();
    assert.ok(roll.atKill.old > 0, 'the leader was killed mid-rollout (old pods left)');
    assert.deepEqual(
      roll.heldAtKill,
      { scheduler: true, controllerManager: true },
      `A held both Leases when killed:\n${roll.leadership.join('\n')}`,
    );
    assert.ok(roll.takeover.scheduler > 0 && roll.takeover.controllerManager > 0);
    // kubectl: A's kubeconfig pointed at B (one cluster CA) follows the rollout to its end.
    assert.equal(roll.kubectl.code, 0, roll.kubectl.stderr);
    assert.match(roll.kubectl.stdout, /successfully rolled out/);
    // kubectl through a TCP load balancer in front of both servers (CI installs haproxy),
    // watching from before the kill: it reconnects through the balancer to B by itself.
    if (roll.kubectlThroughLB) {
      assert.equal(roll.kubectlThroughLB.code, 0, roll.kubectlThroughLB.stderr);
      assert.match(roll.kubectlThroughLB.stdout, /successfully rolled out/);
    }
    say(
      `# HA: takeover scheduler ${roll.takeover.scheduler} ms, controller manager ${roll.takeover.controllerManager} ms; ` +
        `rollout ${roll.rolloutMs} ms (${roll.afterKillMs} ms after the kill); writer gap ${roll.writeGapMs} ms, ${roll.failedWrites} failed ${JSON.stringify(roll.failedWriteErrors)}`,
    );
  });

  it('no pod is bound twice, the surge is never exceeded, no acknowledged write is lost', async () => {
    const c = await drill!.checks();
    say(
      `# checks: ${c.boundPods} pods bound, ${c.reboundPods.length} rebound, ${c.twiceScheduled.length} scheduled twice; ` +
        `most active pods ${c.maxActivePods} (${c.maxActiveAfterKillMs} ms after the kill: ${c.maxActiveBreakdown}), most ReplicaSet replicas ${c.maxReplicaSum} (limit ${c.surgeLimit}); ` +
        `${c.acknowledged} acknowledged writes, ${c.lost.length} lost`,
    );
    assert.deepEqual(c.reboundPods, []);
    assert.deepEqual(c.twiceScheduled, []);
    assert.ok(c.boundPods >= 2 * PODS * 0.9, `pods of both ReplicaSets were bound (${c.boundPods})`);
    assert.deepEqual(c.overCreated, [], 'no ReplicaSet made more pods than it was asked for');
    assert.ok(c.maxReplicaSum <= c.surgeLimit, `ReplicaSet replicas ${c.maxReplicaSum} > ${c.surgeLimit}`);
    assert.deepEqual(c.overcommittedNodes, []);
    assert.ok(c.acknowledged > 0);
    assert.deepEqual(c.lost, []);
  });

  it('with one etcd member down writes go on; with two they fail with a 503 Status; one back, they succeed', async () => {
    const one = await drill!.etcdOneMemberDown();
    assert.deepEqual(one.failures, []);
    const lost = await drill!.etcdQuorumLost();
    assert.equal(lost.otherError, undefined, 'answered with a Status, not a broken connection or a timeout');
    assert.equal(lost.code, 503);
    assert.equal(lost.status?.kind, 'Status');
    assert.equal(lost.status?.reason, 'ServiceUnavailable');
    assert.match(lost.status?.message ?? '', /storage is unavailable/);
    const back = await drill!.etcdRecovered();
    assert.deepEqual(back.failuresAfter, []);
    const c = await drill!.checks();
    assert.deepEqual(c.lost, [], 'acknowledged writes survive the loss and return of quorum');
  });
});

describe('HA drill: a real agent given both servers', { timeout: 300_000 }, () => {
  const NODE = `ha-agent-${process.pid}`;
  let etcd: EtcdMember | undefined;
  const servers: K8tsServer[] = [];
  let agent: K8tsAgent | undefined;

  before(async () => {
    etcd = await startEtcd();
    const args = [
      '--datastore',
      'etcd',
      '--etcd-endpoints',
      etcd.endpoints.join(','),
      '--cluster-cidr',
      await freeClusterCIDR(),
      '--leader-elect-lease-duration',
      '5s',
      '--leader-elect-renew-deadline',
      '3s',
      '--leader-elect-retry-period',
      '1s',
    ];
    servers.push(await startK8tsServer({ args, readyTimeoutMs: 60_000 }));
    servers.push(await startK8tsServer({ args, readyTimeoutMs: 60_000 }));
    agent = await startK8tsAgent({
      server: servers[0]!.url,
      token: servers[0]!.nodeToken(),
      nodeName: NODE,
      nodeIP: '127.0.0.1',
      args: ['--server', servers[1]!.url],
    });
  });
  after(async () => {
    await cleanUp([
      () => agent?.stop(),
      () => removeNodeFromDocker(NODE),
      ...servers.map((s) => () => s.stop()),
      () => etcd?.stop(),
    ]);
  });

  it('after kill -9 of the first server its Node stays Ready, kubectl logs reach it through the other, and new pods run', async () => {
    const [a, b] = servers as [K8tsServer, K8tsServer];
    const pod = (name: string) =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: 'default' },
        spec: {
          nodeName: NODE,
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'c',
              image: 'k8ts/busybox:1.0',
              imagePullPolicy: 'IfNotPresent',
              command: ['sh', '-c', `echo hello from ${name}; sleep 3600`],
            },
          ],
        },
      });
    const logs = async (through: K8tsServer, name: string) =>
      waitUntil(
        `kubectl logs ${name} through ${through.url}`,
        async () => {
          const r = await through.kubectl('logs', name);
          return r.code === 0 && r.stdout.includes(`hello from ${name}`) ? true : undefined;
        },
        60_000,
        250,
      );
    assert.equal((await b.kubectlIn(pod('before'), 'apply', '-f', '-')).code, 0);
    // Both servers reach the kubelet: the agent keeps a tunnel to each.
    await logs(a, 'before');
    await logs(b, 'before');

    const killedAt = Date.now();
    process.kill(a.pid, 'SIGKILL');
    const c = RestClient.fromKubeconfig(b.kubeconfig);
    try {
      await waitUntil(
        'the node Lease renewed through B after the kill',
        async () => {
          const l = await c.get<Lease>(resources.leases, 'kube-node-lease', NODE);
          return Date.parse(l.spec?.renewTime ?? '') > killedAt + 1000 ? true : undefined;
        },
        60_000,
        250,
      );
      const node = await c.get<Node>(resources.nodes, undefined, NODE);
      assert.equal(node.status?.conditions?.find((x) => x.type === 'Ready')?.status, 'True');
      await logs(b, 'before');
      // The agent's pod watch follows to B: a pod created now runs and reports its status.
      assert.equal((await b.kubectlIn(pod('after'), 'apply', '-f', '-')).code, 0);
      await waitUntil(
        'the pod created after the kill Running',
        async () =>
          (await c.get<Pod>(resources.pods, 'default', 'after')).status?.phase === 'Running'
            ? true
            : undefined,
        90_000,
        250,
      );
      await logs(b, 'after');
      process.stdout.write(
        `# real agent: followed to B; pod after the kill Running after ${Date.now() - killedAt} ms\n`,
      );
    } finally {
      c.close();
    }
  });
});
