// Nodes as users meet them: a real `k8ts server` with its local agent, a second real
// `k8ts agent` process on another loopback address, a real dockerd and the real kubectl.
// The CLI runs from source (cli.ts through tsx) so that no build is needed.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Lease, Node } from '../api/types.js';
import { freeClusterCIDR } from './support/cluster-cidr.js';
import { removeNodeFromDocker, startK8tsAgent, type K8tsAgent } from './support/k8ts-agent.js';
import { run, startK8tsServer, type K8tsServer } from './support/k8ts-server.js';

const unique = `e2e-${process.pid}-${Date.now().toString(36)}`;
const nodeA = `${unique}-a`;
const nodeB = `${unique}-b`;

describe('k8ts agent: nodes on one host', { timeout: 180_000 }, () => {
  let k: K8tsServer;
  let agentB: K8tsAgent | undefined;

  before(async () => {
    const started = await run('bash', ['scripts/start-dockerd.sh'], { timeoutMs: 60_000 });
    assert.equal(started.code, 0, `dockerd did not start: ${started.stderr}`);
    k = await startK8tsServer({
      agent: true,
      fromSource: true,
      args: ['--node-name', nodeA, '--node-ip', '127.0.0.1', '--cluster-cidr', await freeClusterCIDR()],
      readyTimeoutMs: 60_000,
    });
  });

  after(async () => {
    await agentB?.stop();
    await k?.stop();
    await removeNodeFromDocker(nodeA);
    await removeNodeFromDocker(nodeB);
  });

  /** Polls `kubectl get nodes -o json` until `ok` holds for the listed nodes (60 s deadline). */
  async function nodesWhen(
    what: string,
    ok: (nodes: Map<string, Node>) => boolean,
  ): Promise<Map<string, Node>> {
    const deadline = Date.now() + 60_000;
    let last = '';
    for (;;) {
      const r = await k.kubectl('get', 'nodes', '-o', 'json');
      if (r.code === 0) {
        const nodes = new Map(
          (JSON.parse(r.stdout) as { items: Node[] }).items.map((n) => [n.metadata.name!, n]),
        );
        if (ok(nodes)) return nodes;
        // What a failure needs: each node's Ready condition (why it is not Ready).
        last = [...nodes.values()]
          .map((n) => {
            const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
            return `${n.metadata.name}: Ready=${ready?.status} ${ready?.reason ?? ''} ${ready?.message ?? ''}`;
          })
          .join('\n');
      } else {
        last = r.stderr;
      }
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}; last:\n${last.slice(0, 3000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const isReady = (n: Node | undefined) =>
    n?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
  const kibibytes = (q: string) => {
    const m = /^(\d+)(Ki|Mi|Gi)?$/.exec(q);
    assert.ok(m, `unexpected quantity ${q}`);
    return Number(m[1]) * { Ki: 1, Mi: 1024, Gi: 1024 * 1024, '': 1 / 1024 }[m[2] ?? '']!;
  };

  it('the server registers its own node Ready, with the capacity of this host', async () => {
    const nodes = await nodesWhen(`${nodeA} Ready`, (ns) => isReady(ns.get(nodeA)));
    const a = nodes.get(nodeA)!;
    assert.deepEqual(a.status!.addresses, [
      { type: 'InternalIP', address: '127.0.0.1' },
      { type: 'Hostname', address: nodeA },
    ]);
    const free = await run('free', ['-k']);
    const totalKi = Number(/^Mem:\s+(\d+)/m.exec(free.stdout)![1]);
    const memoryKi = kibibytes(a.status!.capacity!.memory!);
    assert.ok(Math.abs(memoryKi - totalKi) <= totalKi * 0.1, `memory ${memoryKi}Ki vs free's ${totalKi}Ki`);
    assert.ok(Number(a.status!.capacity!.cpu) >= 1);
    assert.equal(a.status!.capacity!.pods, '110');
    assert.match(
      String((a.status!.nodeInfo as { containerRuntimeVersion: string }).containerRuntimeVersion),
      /^docker:\/\//,
    );
    const wide = await k.kubectl('get', 'node', nodeA, '-o', 'wide');
    assert.match(wide.stdout, new RegExp(`${nodeA}\\s+Ready\\s`));
    const net = await run('docker', [
      'network',
      'inspect',
      `k8ts-${nodeA}`,
      '--format',
      '{{index .Labels "io.k8ts.node"}} {{(index .IPAM.Config 0).Subnet}}',
    ]);
    assert.equal(net.stdout.trim(), `${nodeA} ${a.spec!.podCIDR}`);
  });

  it('a second agent joins: two nodes Ready, each with its own address and pod network', async () => {
    const token = readFileSync(join(k.dataDir, 'node-token'), 'utf8').trim();
    agentB = await startK8tsAgent({
      server: k.url,
      token,
      nodeName: nodeB,
      nodeIP: '127.0.0.2',
      fromSource: true,
    });
    const nodes = await nodesWhen(
      'two nodes Ready',
      (ns) => isReady(ns.get(nodeA)) && isReady(ns.get(nodeB)),
    );
    const b = nodes.get(nodeB)!;
    assert.equal(b.status!.addresses!.find((x) => x.type === 'InternalIP')?.address, '127.0.0.2');
    assert.notEqual(b.spec!.podCIDR, nodes.get(nodeA)!.spec!.podCIDR);
    const net = await run('docker', ['network', 'ls', '-q', '--filter', `label=io.k8ts.node=${nodeB}`]);
    assert.equal(net.stdout.trim().split('\n').filter(Boolean).length, 1);
  });

  it('a stopped agent exits cleanly and its Lease is no longer renewed', async () => {
    assert.ok(agentB, 'the second agent did not start');
    assert.equal(await agentB.stop(), 0, agentB.logs().slice(-2000));
    const lease = async (name: string) => {
      const r = await k.kubectl('get', 'lease', '-n', 'kube-node-lease', name, '-o', 'json');
      assert.equal(r.code, 0, r.stderr);
      return (JSON.parse(r.stdout) as Lease).spec!.renewTime!;
    };
    const lastB = await lease(nodeB);
    // The local agent renews every 10 s: two renewals of its Lease after B's last one
    // prove that more than one renew interval has passed.
    const deadline = Date.now() + 60_000;
    let renewalsOfA = 0;
    let seen = await lease(nodeA);
    while (renewalsOfA < 2) {
      if (Date.now() > deadline) throw new Error(`the local agent's Lease was not renewed twice within 60 s`);
      await new Promise((r) => setTimeout(r, 500));
      const now = await lease(nodeA);
      if (now !== seen && Date.parse(now) > Date.parse(lastB)) renewalsOfA++;
      seen = now;
    }
    assert.equal(await lease(nodeB), lastB);
  });
});
