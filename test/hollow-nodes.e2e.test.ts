// `k8ts hollow-nodes --count 20` (agent/hollow/) against a real `k8ts server`, both run
// from source: the nodes join with their own credentials and turn Ready, their Leases renew
// at times spread over the interval, a Deployment's 40 pods run with pod IPs of their
// node's podCIDR, a deleted pod goes through its preStop hook and grace period before the
// kubelet's final delete, Jobs' pods end Succeeded or Failed as their commands say (and a
// command the fake runtime does not model ends after --job-pod-run-time), and the Node
// authorizer refuses one hollow node writing another's status or Lease.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ApiStatusError } from '../api/client/errors.js';
import { resources } from '../api/client/resource.js';
import { RestClient } from '../api/client/rest.js';
import type { Job } from '../api/batch.js';
import type { Lease, Node, Pod } from '../api/types.js';
import { startHollowNodesProcess, type HollowNodesProcess } from './support/hollow-nodes.js';
import { startK8tsServer, type K8tsServer } from './support/k8ts-server.js';
import { until, untilTruthy } from './support/wait.js';

const COUNT = 20;
const PREFIX = 'hollow-e2e-';
const NAMES = Array.from({ length: COUNT }, (_, i) => `${PREFIX}${i}`);

/** Whether IPv4 `ip` is inside `cidr` (`10.42.3.0/24`). */
function inCidr(ip: string, cidr: string): boolean {
  const num = (a: string) => a.split('.').reduce((n, o) => n * 256 + Number(o), 0);
  const [base, bits] = cidr.split('/') as [string, string];
  const size = 2 ** (32 - Number(bits));
  return Math.floor(num(ip) / size) === Math.floor(num(base) / size);
}

/** The exit code of the pod's first container's terminated state. */
const exitCodeOf = (p: Pod) =>
  (p.status?.containerStatuses?.[0]?.state?.terminated as { exitCode?: number } | undefined)?.exitCode;

const ready = (n: Node) => n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

describe('k8ts hollow-nodes', () => {
  let k: K8tsServer;
  let admin: RestClient;
  let hollow: HollowNodesProcess;

  before(async () => {
    k = await startK8tsServer({ fromSource: true, readyTimeoutMs: 90_000 });
    admin = RestClient.fromKubeconfig(k.kubeconfig);
    hollow = await startHollowNodesProcess({
      server: k.url,
      token: k.nodeToken(),
      count: COUNT,
      args: ['--prefix', PREFIX, '--job-pod-run-time', '1s', '--max-pods', '50', '--cpu', '8'],
    });
  });
  after(async () => {
    const code = await hollow?.stop();
    admin?.close();
    await k?.stop();
    assert.equal(code, 0, `hollow-nodes exited with ${code}:\n${hollow?.logs().slice(-3000)}`);
  });

  const nodes = async () =>
    (await admin.list<Node>(resources.nodes)).items.filter((n) => n.metadata.name!.startsWith(PREFIX));

  it('registers every node with its capacity; each turns Ready once it has its podCIDR', async () => {
    const all = await until(
      `${COUNT} Ready nodes`,
      async () => {
        const ns = await nodes();
        return ns.length === COUNT && ns.every((n) => ready(n) && n.spec?.podCIDR) ? ns : undefined;
      },
      60_000,
      250,
    );
    assert.deepEqual(all.map((n) => n.metadata.name).sort(), [...NAMES].sort());
    for (const n of all) {
      assert.equal(n.status?.capacity?.cpu, '8');
      assert.equal(n.status?.capacity?.memory, '16Gi');
      assert.equal(n.status?.capacity?.pods, '50');
      assert.equal(n.status?.allocatable?.memory, '16284Mi');
      assert.deepEqual(
        n.status?.conditions?.map((c) => `${c.type}=${c.status}`),
        ['MemoryPressure=False', 'DiskPressure=False', 'PIDPressure=False', 'Ready=True'],
      );
      assert.equal(
        (n.status?.nodeInfo as { containerRuntimeVersion?: string } | undefined)?.containerRuntimeVersion,
        'fake://0.1.0',
      );
    }
    assert.match(
      hollow.stdout(),
      new RegExp(`hollow-nodes: ${COUNT} nodes, 0 pods: RSS .* per node\\), heap`),
    );
    assert.match(await hollow.reportMemory(), new RegExp(`^hollow-nodes: ${COUNT} nodes, \\d+ pods: RSS`));
  });

  it('renews every Lease (40 s) at times spread over the renew interval', async () => {
    const leases = async () =>
      new Map(
        (await admin.list<Lease>(resources.leases, { namespace: 'kube-node-lease' })).items
          .filter((l) => l.metadata.name!.startsWith(PREFIX))
          .map((l) => [l.metadata.name!, l]),
      );
    const first = await until('a Lease of every node', async () => {
      const ls = await leases();
      return ls.size === COUNT ? ls : undefined;
    });
    for (const [name, l] of first) {
      assert.equal(l.spec?.holderIdentity, name);
      assert.equal(l.spec?.leaseDurationSeconds, 40);
      assert.equal(l.metadata.ownerReferences?.[0]?.kind, 'Node');
    }
    // Each renews within its random offset (< 10 s) plus one interval (10.4 s at most).
    const renewed = await until(
      'every Lease renewed',
      async () => {
        const ls = await leases();
        return [...first].every(([name, l]) => ls.get(name)!.spec!.renewTime! > l.spec!.renewTime!)
          ? ls
          : undefined;
      },
      45_000,
      500,
    );
    const times = [...renewed.values()].map((l) => Date.parse(l.spec!.renewTime!));
    // No second holds half of them (renewTime has the millisecond of Date, so two nodes may
    // share one: distinctness is not what jitter promises). 20 uniform offsets over 10 s put
    // 10 in one second with probability about 6e-5.
    const perSecond = new Map<number, number>();
    for (const t of times)
      perSecond.set(Math.floor(t / 1000), (perSecond.get(Math.floor(t / 1000)) ?? 0) + 1);
    assert.ok(
      Math.max(...perSecond.values()) < COUNT / 2,
      `renewals per second: ${[...perSecond.values()].join(', ')}`,
    );
    // Of a process's nodes started together, the renewals spread over the interval: 20
    // uniform offsets in 10 s all fall within 2 s with probability about 20 × 0.2^19.
    assert.ok(Math.max(...times) - Math.min(...times) > 2_000, `renew times spread: ${times.join(', ')}`);
  });

  it("runs a Deployment's 40 pods with pod IPs of their node's podCIDR", async () => {
    await k.kubectlOk(
      'create',
      'deployment',
      'web',
      '--image=k8ts/busybox:1.0',
      '--replicas=40',
      '--',
      'sleep',
      '3600',
    );
    const cidrs = new Map((await nodes()).map((n) => [n.metadata.name!, n.spec!.podCIDR!]));
    const running = await until(
      '40 Running pods',
      async () => {
        const ps = (await admin.list<Pod>(resources.pods, { namespace: 'default', labelSelector: 'app=web' }))
          .items;
        const up = ps.filter(
          (p) => p.status?.phase === 'Running' && p.status.podIP && !p.metadata.deletionTimestamp,
        );
        return up.length === 40 ? up : undefined;
      },
      90_000,
      500,
    );
    for (const p of running) {
      const node = p.spec.nodeName!;
      assert.ok(cidrs.has(node), `${p.metadata.name} is on a hollow node (${node})`);
      assert.ok(inCidr(p.status!.podIP!, cidrs.get(node)!), `${p.status!.podIP} in ${cidrs.get(node)}`);
      assert.equal(p.status?.hostIP, '127.0.0.1');
      assert.equal(p.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
      assert.deepEqual(Object.keys(p.status?.containerStatuses?.[0]?.state ?? {}), ['running']);
    }
    assert.equal(new Set(running.map((p) => p.status!.podIP)).size, 40, 'pod IPs are distinct');
    assert.ok(new Set(running.map((p) => p.spec.nodeName)).size > 1, 'the pods are spread over nodes');
  });

  it('honours a deleted pod’s preStop hook and grace period, then deletes it with grace 0', async () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'graceful', namespace: 'default' },
      spec: {
        nodeName: NAMES[3],
        terminationGracePeriodSeconds: 20,
        containers: [
          {
            name: 'c',
            image: 'k8ts/busybox:1.0',
            command: ['sleep', '3600'],
            lifecycle: { preStop: { sleep: { seconds: 3 } } },
          },
        ],
      },
    };
    await admin.create(resources.pods, pod);
    const running = await until('the pod Running', async () => {
      const p = await admin.get<Pod>(resources.pods, 'default', 'graceful');
      return p.status?.phase === 'Running' ? p : undefined;
    });
    // Every version of the pod from here to its deletion, from a watch: the terminated
    // status and the final delete can come within a few milliseconds of each other, which
    // polling misses.
    const seen: Pod[] = [];
    const stream = await admin.watch<Pod>(resources.pods, {
      namespace: 'default',
      fieldSelector: 'metadata.name=graceful',
      resourceVersion: running.metadata.resourceVersion!,
      timeoutSeconds: 30,
    });
    const deletedAt = Date.now();
    await admin.delete(resources.pods, 'default', 'graceful');
    let gone: number | undefined;
    for await (const ev of stream) {
      if (ev.type === 'MODIFIED' && ev.object.metadata?.deletionTimestamp) seen.push(ev.object as Pod);
      if (ev.type === 'DELETED') {
        gone = Date.now();
        break;
      }
    }
    stream.stop();
    assert.ok(gone !== undefined, 'the pod was deleted within 30 s');
    assert.ok(
      gone - deletedAt >= 2_500,
      `the pod stayed through its 3 s preStop hook (${gone - deletedAt} ms)`,
    );
    assert.ok(
      gone - deletedAt < 20_000,
      `and went before its 20 s grace period ran out (${gone - deletedAt} ms)`,
    );
    assert.equal(seen[0]?.metadata.deletionGracePeriodSeconds, 20);
    const last = seen.at(-1)!;
    assert.ok(last.metadata.deletionTimestamp);
    // The kubelet's terminal status before its delete: the container stopped by SIGTERM.
    const terminated = seen.find((p) => p.status?.containerStatuses?.[0]?.state?.terminated);
    assert.ok(terminated, 'the terminated status was posted before the final delete');
    assert.equal(exitCodeOf(terminated), 143);
  });

  it("ends Jobs' pods as their commands say, and after --job-pod-run-time for a command the fake does not model", async () => {
    const job = (name: string, command: string[]) => ({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name, namespace: 'default' },
      spec: {
        backoffLimit: 0,
        template: {
          spec: {
            restartPolicy: 'Never',
            containers: [{ name: 'c', image: 'k8ts/busybox:1.0', command }],
          },
        },
      },
    });
    await admin.create(resources.jobs, job('done', ['sh', '-c', 'sleep 1; exit 0']));
    await admin.create(resources.jobs, job('fails', ['sh', '-c', 'exit 3']));
    await admin.create(resources.jobs, job('perl', ['perl', '-Mbignum=bpi', '-wle', 'print bpi(2000)']));
    const phaseOf = async (jobName: string) => {
      const ps = (
        await admin.list<Pod>(resources.pods, { namespace: 'default', labelSelector: `job-name=${jobName}` })
      ).items;
      return ps.length === 1 ? ps[0]!.status?.phase : undefined;
    };
    await untilTruthy(
      'the done pod Succeeded',
      async () => (await phaseOf('done')) === 'Succeeded',
      60_000,
      250,
    );
    await untilTruthy(
      'the perl pod Succeeded',
      async () => (await phaseOf('perl')) === 'Succeeded',
      60_000,
      250,
    );
    await untilTruthy('the fails pod Failed', async () => (await phaseOf('fails')) === 'Failed', 60_000, 250);
    const failed = (
      await admin.list<Pod>(resources.pods, { namespace: 'default', labelSelector: 'job-name=fails' })
    ).items[0]!;
    assert.equal(exitCodeOf(failed), 3);
    const finished = async (name: string, type: 'Complete' | 'Failed') =>
      (await admin.get<Job>(resources.jobs, 'default', name)).status?.conditions?.some(
        (c) => c.type === type && c.status === 'True',
      );
    await untilTruthy(
      'the Jobs finished',
      async () =>
        (await finished('done', 'Complete')) &&
        (await finished('perl', 'Complete')) &&
        (await finished('fails', 'Failed')),
      60_000,
      250,
    );
  });

  it("lets a hollow node write its own status and Lease but not another node's", async () => {
    const tls = join(hollow.dataDir, NAMES[0]!, 'tls');
    const node0 = new RestClient({
      server: k.url,
      ca: readFileSync(join(tls, 'server-ca.crt'), 'utf8'),
      cert: readFileSync(join(tls, 'kubelet-client.crt'), 'utf8'),
      key: readFileSync(join(tls, 'kubelet-client.key'), 'utf8'),
    });
    try {
      const patch = { metadata: { annotations: { 'e2e.k8ts.io/touched': 'yes' } } };
      await node0.patch(resources.nodes, undefined, NAMES[0]!, 'merge', patch, { subresource: 'status' });
      const refused = await node0
        .patch(resources.nodes, undefined, NAMES[1]!, 'merge', patch, { subresource: 'status' })
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      assert.ok(refused instanceof ApiStatusError, String(refused));
      assert.equal(refused.code, 403);
      assert.match(
        refused.message,
        new RegExp(`node "${NAMES[0]}" is not allowed to modify node "${NAMES[1]}"`),
      );
      const lease = await node0.get<Lease>(resources.leases, 'kube-node-lease', NAMES[1]!).then(
        () => undefined,
        (err: unknown) => err,
      );
      assert.ok(lease instanceof ApiStatusError && lease.code === 403, String(lease));
    } finally {
      node0.close();
    }
  });
});
