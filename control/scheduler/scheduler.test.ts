/**
 * The scheduler against the real in-process API server, with FakeKubelet nodes: pods get
 * bound within capacity, spread, kept off tainted and non-matching nodes, and a pod that
 * fits nowhere is reported as Kubernetes does until a node that fits appears.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resources } from '../../api/client/resource.js';
import { getCondition } from '../../api/podutil.js';
import type { CoreEvent, Pod, Toleration } from '../../api/types.js';
import { startTestApi } from '../../test/support/api.js';
import type { TestApi } from '../../test/support/api.js';
import { FakeKubelet, makeNode } from '../../test/support/fake-nodes.js';
import { Scheduler } from './scheduler.js';

interface PodOpts {
  cpu?: string;
  memory?: string;
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
  hostPort?: number;
  schedulerName?: string;
}

function makePod(name: string, o: PodOpts = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { app: 'sched-test' } },
    spec: {
      containers: [
        {
          name: 'c',
          image: 'busybox:1.36',
          resources: { requests: { cpu: o.cpu ?? '100m', memory: o.memory ?? '64Mi' } },
          ...(o.hostPort ? { ports: [{ containerPort: 80, hostPort: o.hostPort }] } : {}),
        },
      ],
      ...(o.nodeSelector ? { nodeSelector: o.nodeSelector } : {}),
      ...(o.tolerations ? { tolerations: o.tolerations } : {}),
      ...(o.schedulerName ? { schedulerName: o.schedulerName } : {}),
    },
  };
}

async function getPod(api: TestApi, name: string): Promise<Pod> {
  return api.client.get<Pod>(resources.pods, 'default', name);
}

async function boundNode(api: TestApi, name: string): Promise<string> {
  return until(`pod ${name} bound`, async () => (await getPod(api, name)).spec.nodeName || undefined);
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function events(api: TestApi, pod: string, reason: string): Promise<CoreEvent[]> {
  const list = await api.client.list<CoreEvent>(resources.events, { namespace: 'default' });
  return list.items.filter((e) => e.involvedObject.name === pod && e.reason === reason);
}

describe('Scheduler (real API server, fake nodes)', () => {
  let api: TestApi;
  let kubelet: FakeKubelet;
  let scheduler: Scheduler;
  const ac = new AbortController();
  let running: Promise<void>;

  before(async () => {
    api = await startTestApi();
    kubelet = new FakeKubelet({
      client: api.client,
      nodes: [
        makeNode('node-a', { cpu: '2', memory: '4Gi', labels: { disk: 'ssd' } }),
        makeNode('node-b', { cpu: '2', memory: '4Gi', labels: { disk: 'hdd' } }),
        makeNode('node-tainted', {
          cpu: '8',
          memory: '16Gi',
          taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }],
        }),
      ],
    });
    await kubelet.start();
    scheduler = new Scheduler({
      client: api.client,
      podInitialBackoffMs: 100,
      podMaxBackoffMs: 200,
      // Shares the server's frozen objects, as in the control process: a write to one fails.
      informerTransform: api.server.informerTransform,
    });
    running = scheduler.run(ac.signal);
  });

  after(async () => {
    ac.abort();
    await running;
    await kubelet.stop();
    await api.stop();
  });

  it('binds 5 pods within capacity, spreading them over the untainted nodes', async () => {
    const names = ['spread-0', 'spread-1', 'spread-2', 'spread-3', 'spread-4'];
    await Promise.all(names.map((n) => api.client.create(resources.pods, makePod(n, { cpu: '300m' }))));
    const nodes = await Promise.all(names.map((n) => boundNode(api, n)));
    assert.ok(!nodes.includes('node-tainted'), `a pod landed on the tainted node: ${nodes.join(',')}`);
    assert.ok(nodes.includes('node-a') && nodes.includes('node-b'), `not spread: ${nodes.join(',')}`);
    const ev = await until('Scheduled event', async () => {
      const e = await events(api, 'spread-0', 'Scheduled');
      return e.length > 0 ? e : undefined;
    });
    assert.equal(ev[0]!.message, `Successfully assigned default/spread-0 to ${nodes[0]}`);
    assert.equal(ev[0]!.source?.component, 'default-scheduler');
  });

  it('a pod too big for every node stays Pending with PodScheduled=False and FailedScheduling', async () => {
    await api.client.create(resources.pods, makePod('too-big', { cpu: '3', memory: '1Gi' }));
    const want =
      '0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient cpu. ' +
      'preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, ' +
      '2 No preemption victims found for incoming pod..';
    const cond = await until('PodScheduled=False', async () => {
      const c = getCondition((await getPod(api, 'too-big')).status?.conditions, 'PodScheduled');
      return c?.status === 'False' ? c : undefined;
    });
    assert.equal(cond.reason, 'Unschedulable');
    assert.equal(cond.message, want);
    const ev = await until('FailedScheduling', async () => {
      const e = await events(api, 'too-big', 'FailedScheduling');
      return e.length > 0 ? e : undefined;
    });
    assert.equal(ev[0]!.type, 'Warning');
    assert.equal(ev[0]!.message, want);
    const described = await api.kubectl('describe', 'pod', 'too-big', '-n', 'default');
    assert.match(described.stdout, /FailedScheduling/);
    assert.ok(described.stdout.replace(/\s+/g, ' ').includes('2 Insufficient cpu'), described.stdout);
    assert.equal((await getPod(api, 'too-big')).spec.nodeName, undefined);
  });

  it('schedules the pending big pod once a node that fits is added', async () => {
    const big = new FakeKubelet({
      client: api.client,
      nodes: [makeNode('node-big', { cpu: '8', memory: '16Gi' })],
    });
    await big.start();
    try {
      assert.equal(await boundNode(api, 'too-big'), 'node-big');
    } finally {
      await big.stop();
    }
  });

  it('keeps pods off nodes whose taints they do not tolerate, and lets tolerating pods on', async () => {
    const tolerating = [
      { key: 'dedicated', operator: 'Equal' as const, value: 'gpu', effect: 'NoSchedule' as const },
    ];
    await api.client.create(
      resources.pods,
      makePod('tolerates', {
        cpu: '100m',
        tolerations: tolerating,
        nodeSelector: { 'kubernetes.io/hostname': 'node-tainted' },
      }),
    );
    assert.equal(await boundNode(api, 'tolerates'), 'node-tainted');
    await api.client.create(
      resources.pods,
      makePod('intolerant', { cpu: '100m', nodeSelector: { 'kubernetes.io/hostname': 'node-tainted' } }),
    );
    const cond = await until('intolerant rejected', async () => {
      const c = getCondition((await getPod(api, 'intolerant')).status?.conditions, 'PodScheduled');
      return c?.status === 'False' ? c : undefined;
    });
    assert.match(cond.message!, /1 node\(s\) had untolerated taint \{dedicated: gpu\}/);
    assert.match(cond.message!, /node\(s\) didn't match Pod's node affinity\/selector/);
  });

  it('honours nodeSelector', async () => {
    await api.client.create(resources.pods, makePod('wants-ssd', { nodeSelector: { disk: 'ssd' } }));
    await api.client.create(resources.pods, makePod('wants-hdd', { nodeSelector: { disk: 'hdd' } }));
    assert.equal(await boundNode(api, 'wants-ssd'), 'node-a');
    assert.equal(await boundNode(api, 'wants-hdd'), 'node-b');
  });

  it('never places two pods with the same hostPort on one node', async () => {
    const hp = { hostPort: 8080, cpu: '10m', nodeSelector: { disk: 'ssd' } };
    await api.client.create(resources.pods, makePod('port-1', hp));
    await api.client.create(resources.pods, makePod('port-2', hp));
    const first = await until('one port pod bound', async () => {
      const [a, b] = await Promise.all([getPod(api, 'port-1'), getPod(api, 'port-2')]);
      return a.spec.nodeName || b.spec.nodeName ? [a, b] : undefined;
    });
    const cond = await until('the other rejected', async () => {
      const other = first[0]!.spec.nodeName ? 'port-2' : 'port-1';
      const c = getCondition((await getPod(api, other)).status?.conditions, 'PodScheduled');
      return c?.status === 'False' ? c : undefined;
    });
    assert.match(cond.message!, /1 node\(s\) didn't have free ports for the requested pod ports/);
  });

  it('leaves pods of other schedulers alone', async () => {
    await api.client.create(resources.pods, makePod('other-sched', { schedulerName: 'someone-else' }));
    await boundNode(api, 'wants-ssd'); // the scheduler is alive
    await api.client.create(resources.pods, makePod('after-other', {}));
    await boundNode(api, 'after-other');
    assert.equal((await getPod(api, 'other-sched')).spec.nodeName, undefined);
  });

  it('binds every pod exactly once', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `once-${i}`);
    const before = scheduler.stats.bound;
    await Promise.all(
      names.map((n) => api.client.create(resources.pods, makePod(n, { cpu: '10m', memory: '8Mi' }))),
    );
    await Promise.all(names.map((n) => boundNode(api, n)));
    const list = await api.client.list<CoreEvent>(resources.events, { namespace: 'default' });
    for (const n of names) {
      const scheduled = list.items.filter((e) => e.involvedObject.name === n && e.reason === 'Scheduled');
      assert.ok(scheduled.length <= 1 && (scheduled[0]?.count ?? 1) === 1, `${n} scheduled twice`);
    }
    assert.equal(scheduler.stats.bound - before, names.length);
    assert.equal(scheduler.stats.bindingErrors, 0);
  });
});
