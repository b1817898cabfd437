import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { resources } from '../api/client/resource.js';
import type { Condition, Lease, Node } from '../api/types.js';
import { startTestApi, type TestApi } from '../test/support/api.js';
import { startAgent, type AgentConfig } from './main.js';
import { captureLogger, StubMachine, StubRuntime } from './testing.js';

const HOUR = 3_600_000;

describe('startAgent', () => {
  let api: TestApi;
  let dir: string;
  before(async () => {
    api = await startTestApi();
    dir = mkdtempSync(join(tmpdir(), 'k8ts-agent-test-'));
  });
  after(async () => {
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  let seq = 0;
  /** An agent on a stub runtime whose periodic status updates are an hour apart: whatever happens sooner was pushed. */
  async function agent(overrides: Partial<AgentConfig> = {}) {
    const nodeName = overrides.nodeName ?? `agent-${++seq}`;
    const runtime = new StubRuntime();
    const logs = captureLogger();
    const a = await startAgent({
      server: api.url,
      token: 'test-token',
      nodeName,
      nodeIP: '127.0.0.5',
      dataDir: join(dir, nodeName),
      runtime: runtime.asRuntime(),
      machine: new StubMachine(),
      logger: logs.logger,
      nodeStatusUpdateFrequencyMs: HOUR,
      ...overrides,
    });
    return { agent: a, runtime, nodeName, lines: logs.lines };
  }

  /** Polls `get` until it gives a value (10 s deadline). */
  async function until<T>(what: string, get: () => Promise<T | undefined>): Promise<T> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const v = await get();
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  /** Polls the Node until `ok` holds. */
  const nodeWhen = (name: string, what: string, ok: (n: Node) => boolean): Promise<Node> =>
    until(what, async () => {
      const n = await api.client.get<Node>(resources.nodes, undefined, name).catch(() => undefined);
      return n && ok(n) ? n : undefined;
    });
  const ready = (n: Node): Condition | undefined => n.status?.conditions?.find((c) => c.type === 'Ready');

  it('registers NotReady, creates the pod network once the Node has a podCIDR, then posts Ready at once', async () => {
    const { agent: a, runtime, nodeName } = await agent();
    try {
      assert.equal(a.node.metadata.name, nodeName);
      assert.equal(ready(a.node)?.status, 'False');
      assert.match(ready(a.node)!.message!, /waiting for the node's spec.podCIDR/);
      const lease = await until('the node Lease', () =>
        api.client.get<Lease>(resources.leases, 'kube-node-lease', nodeName).catch(() => undefined),
      );
      assert.equal(lease.spec!.holderIdentity, nodeName);

      // What the control process's node IPAM controller does.
      await api.client.patch(resources.nodes, undefined, nodeName, 'merge', {
        spec: { podCIDR: '10.42.9.0/24' },
      });
      const node = await nodeWhen(nodeName, 'Ready=True', (n) => ready(n)?.status === 'True');
      assert.equal(ready(node)!.reason, 'KubeletReady');
      assert.deepEqual(runtime.networkCalls[0], {
        name: `k8ts-${nodeName}`,
        subnet: '10.42.9.0/24',
        labels: { 'io.k8ts.node': nodeName },
      });
      assert.equal(a.podNetwork.name, `k8ts-${nodeName}`);
    } finally {
      await a.stop();
    }
  });

  it('re-posts Ready at once when the stored condition was set Unknown', async () => {
    const { agent: a, nodeName } = await agent();
    try {
      await api.client.patch(resources.nodes, undefined, nodeName, 'merge', {
        spec: { podCIDR: '10.42.10.0/24' },
      });
      await nodeWhen(nodeName, 'Ready=True', (n) => ready(n)?.status === 'True');
      // What the node lifecycle controller writes when the Lease lapsed.
      const stored = await api.client.get<Node>(resources.nodes, undefined, nodeName);
      await api.client.updateStatus(resources.nodes, {
        ...stored,
        status: {
          ...stored.status,
          conditions: stored.status!.conditions!.map((c) =>
            c.type === 'Ready'
              ? {
                  ...c,
                  status: 'Unknown' as const,
                  reason: 'NodeStatusUnknown',
                  message: 'Kubelet stopped posting node status.',
                }
              : c,
          ),
        },
      });
      const back = await nodeWhen(nodeName, 'Ready=True again', (n) => ready(n)?.status === 'True');
      assert.equal(ready(back)!.reason, 'KubeletReady');
    } finally {
      await a.stop();
    }
  });

  it('restarts onto the existing Node and leaves the runtime open', async () => {
    const first = await agent();
    await first.agent.stop();
    const second = await agent({ nodeName: first.nodeName, runtime: first.runtime.asRuntime() });
    try {
      assert.equal(second.agent.node.metadata.uid, first.agent.node.metadata.uid);
      assert.equal(first.runtime.closed, false);
    } finally {
      await second.agent.stop();
    }
    const owned = new StubRuntime();
    const third = await agent({ nodeName: first.nodeName, runtime: owned.asRuntime(), ownsRuntime: true });
    await third.agent.stop();
    assert.equal(owned.closed, true);
  });

  it('reports NotReady while the runtime is down and Ready when it is back', async () => {
    const runtime = new StubRuntime();
    const { agent: a, nodeName } = await agent({
      runtime: runtime.asRuntime(),
      nodeStatusUpdateFrequencyMs: 50,
    });
    try {
      await api.client.patch(resources.nodes, undefined, nodeName, 'merge', {
        spec: { podCIDR: '10.42.11.0/24' },
      });
      await nodeWhen(nodeName, 'Ready=True', (n) => ready(n)?.status === 'True');
      runtime.down = 'connect ENOENT /var/run/docker.sock';
      const down = await nodeWhen(nodeName, 'Ready=False', (n) => ready(n)?.status === 'False');
      assert.equal(ready(down)!.reason, 'KubeletNotReady');
      assert.equal(ready(down)!.message, 'container runtime is down: connect ENOENT /var/run/docker.sock');
      runtime.down = undefined;
      await nodeWhen(nodeName, 'Ready=True again', (n) => ready(n)?.status === 'True');
    } finally {
      await a.stop();
    }
  });

  it('runtime containerd with nothing at its endpoint: NotReady naming the socket; the conflist from the podCIDR', async () => {
    const sock = join(dir, 'no-containerd.sock');
    const bin = join(dir, 'cni-bin');
    mkdirSync(bin, { recursive: true });
    for (const p of ['bridge', 'host-local', 'portmap', 'loopback']) writeFileSync(join(bin, p), '');
    const confDir = join(dir, 'net.d');
    const { agent: a, nodeName } = await agent({
      runtime: 'containerd',
      runtimeEndpoint: `unix://${sock}`,
      cni: { confDir, binDir: bin },
      nodeStatusUpdateFrequencyMs: 50,
    });
    try {
      const down = await nodeWhen(nodeName, 'Ready=False naming the socket', (n) =>
        (ready(n)?.message ?? '').includes(`CRI runtime at ${sock} is unavailable`),
      );
      assert.equal(ready(down)!.status, 'False');
      assert.match(ready(down)!.message!, /^container runtime is down: /);
      // The podCIDR is set once (an API rule); the conflist is written from it though the
      // runtime is not there to confirm it.
      await api.client.patch(resources.nodes, undefined, nodeName, 'merge', {
        spec: { podCIDR: '10.42.12.0/24' },
      });
      const conflist = await until('the conflist', async () => {
        const text = await readFile(join(confDir, '00-k8ts.conflist'), 'utf8').catch(() => '');
        return text.includes('"subnet": "10.42.12.0/24"') ? text : undefined;
      });
      assert.match(conflist, new RegExp(`"name": "k8ts-${nodeName}"`));
      // Still running, still retrying: the runtime may come up later.
      assert.equal(ready(await nodeWhen(nodeName, 'still NotReady', () => true))!.status, 'False');
    } finally {
      await a.stop();
    }
  });

  it('gives up registering when its signal aborts', async () => {
    const ac = new AbortController();
    const starting = startAgent({
      server: 'http://127.0.0.1:1',
      nodeName: 'never',
      nodeIP: '127.0.0.5',
      dataDir: join(dir, 'never'),
      runtime: new StubRuntime().asRuntime(),
      machine: new StubMachine(),
      logger: captureLogger().logger,
      signal: ac.signal,
    });
    ac.abort(new Error('interrupted'));
    await assert.rejects(starting, /interrupted/);
  });
});
