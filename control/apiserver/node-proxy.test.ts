// pods/log, pods/exec and metrics.k8s.io through the tunnel, in one process: the real
// ApiServer (memory store) with a node token, an agent's TunnelClient and KubeletServer
// over the fake runtime, and the real kubectl. Checks the API server's validation (what
// kube-apiserver answers before it reaches a kubelet) and the proxying itself.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import winston from 'winston';
import { resources } from '../../api/client/resource.js';
import type { Node, Pod } from '../../api/types.js';
import { StubMachine } from '../../agent/testing.js';
import { containerLabels, sandboxLabels } from '../../agent/kubelet/pods/labels.js';
import { KubeletServer } from '../../agent/kubelet/server/server.js';
import { StatsProvider } from '../../agent/kubelet/server/stats.js';
import { TunnelClient } from '../../agent/kubelet/tunnel.js';
import { FakeRuntime } from '../../cri/fake/runtime.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';

const TOKEN = 'K10node-proxy-test';
const silent = winston.createLogger({ silent: true });

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });
}

describe('pod subresources and metrics through the agent tunnel', { timeout: 60_000 }, () => {
  let api: TestApi;
  const runtime = new FakeRuntime({ images: ['k8ts/pause:1.0', 'k8ts/busybox:1.0'] });
  const stop = new AbortController();
  let tunnel: Promise<void>;
  let kubelet: KubeletServer;
  const machine = new StubMachine();

  before(async () => {
    api = await startTestApi();
    await api.client.create(resources.nodes, { metadata: { name: 'n1' } } as Node);
    const pod = (await api.client.create(resources.pods, {
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        nodeName: 'n1',
        containers: [
          { name: 'app', image: 'k8ts/busybox:1.0' },
          { name: 'side', image: 'k8ts/busybox:1.0' },
        ],
      },
    } as Pod)) as Pod;
    await api.client.create(resources.pods, {
      metadata: { name: 'pending', namespace: 'default' },
      spec: { containers: [{ name: 'app', image: 'k8ts/busybox:1.0' }] },
    } as Pod);
    await api.client.create(resources.pods, {
      metadata: { name: 'elsewhere', namespace: 'default' },
      spec: { nodeName: 'n2', containers: [{ name: 'app', image: 'k8ts/busybox:1.0' }] },
    } as Pod);
    // The containers the kubelet would have made, labelled as it labels them.
    const sandboxConfig = {
      metadata: { name: 'web', namespace: 'default', uid: pod.metadata.uid!, attempt: 0 },
      hostname: 'web',
      portMappings: [],
      labels: sandboxLabels(pod, 'n1'),
      annotations: {},
    };
    const sandbox = await runtime.runPodSandbox(sandboxConfig);
    for (const [name, script] of [
      ['app', 'echo hello from app; echo second line; sleep infinity'],
      ['side', 'echo side; sleep infinity'],
    ] as const) {
      const id = await runtime.createContainer(
        sandbox,
        {
          metadata: { name, attempt: 0 },
          image: { image: 'k8ts/busybox:1.0' },
          command: ['sh', '-c', script],
          labels: containerLabels(pod, name, 'n1'),
          annotations: {},
        },
        sandboxConfig,
      );
      await runtime.startContainer(id);
      runtime.setContainerStats(id, { cpuUsageCoreNanoSeconds: 0n, memoryWorkingSetBytes: 3 * 1024 * 1024 });
    }
    kubelet = new KubeletServer({
      runtime,
      stats: new StatsProvider({ runtime, machine, nodeName: 'n1', minWindowMs: 50 }),
      logger: silent,
    });
    const client = new TunnelClient({
      server: api.url,
      token: TOKEN,
      nodeName: 'n1',
      onStream: (s) => kubelet.serveConnection(s),
      logger: silent,
    });
    tunnel = client.run(stop.signal);
    const deadline = Date.now() + 10_000;
    while (!client.connected) {
      if (Date.now() > deadline) assert.fail('tunnel not connected');
      await new Promise((r) => setTimeout(r, 10));
    }
  });

  after(async () => {
    stop.abort();
    await tunnel;
    kubelet?.close();
    await api?.stop();
    await runtime.close();
  });

  it('kubectl logs reads the container through the tunnel (--tail, --limit-bytes)', async () => {
    const all = await api.kubectl('logs', 'web', '-c', 'app');
    assert.equal(all.code, 0, all.stderr);
    assert.equal(all.stdout, 'hello from app\nsecond line\n');
    const tail = await api.kubectl('logs', 'web', '-c', 'app', '--tail=1');
    assert.equal(tail.stdout, 'second line\n');
    const limited = await api.kubectl('logs', 'web', '-c', 'app', '--limit-bytes=5');
    assert.equal(limited.stdout, 'hello');
  });

  it('kubectl exec returns output and exit code', async () => {
    const r = await api.kubectl(
      'exec',
      'web',
      '-c',
      'app',
      '--',
      'sh',
      '-c',
      'echo out; echo err >&2; exit 3',
    );
    assert.equal(r.code, 3);
    assert.equal(r.stdout, 'out\n');
    assert.match(r.stderr, /err/);
  });

  const refusals: [string, string, number, RegExp][] = [
    [
      'no container named in a two-container pod',
      'web/log',
      400,
      /a container name must be specified for pod web, choose one of: \[app side\]/,
    ],
    [
      'a container the pod does not have',
      'web/log?container=nope',
      400,
      /container nope is not valid for pod web/,
    ],
    ['a pod not bound to a node', 'pending/log', 400, /pod pending does not have a host assigned/],
    ['a negative tailLines', 'web/log?container=app&tailLines=-1', 400, /tailLines: Invalid value/],
    [
      'sinceSeconds with sinceTime',
      'web/log?container=app&sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z',
      400,
      /at most one of `sinceTime` or `sinceSeconds`/,
    ],
    ['a bad sinceTime', 'web/log?container=app&sinceTime=yesterday', 400, /sinceTime: Invalid value/],
    ['a missing pod', 'nope/log', 404, /pods "nope" not found/],
    ['a node whose agent is not connected', 'elsewhere/log', 503, /no tunnel to node "n2"/],
    [
      'exec without an upgrade',
      'web/exec?container=app&command=true&stdout=true',
      400,
      /Upgrade request required/,
    ],
    [
      'a previous instance that does not exist',
      'web/log?container=app&previous=true',
      400,
      /previous terminated container "app" in pod "web" not found/,
    ],
  ];
  for (const [what, path, code, message] of refusals) {
    it(`refuses ${what} with ${code}`, async () => {
      const r = await get(`${api.url}/api/v1/namespaces/default/pods/${path}`);
      assert.equal(r.status, code, r.body);
      const status = JSON.parse(r.body) as { kind: string; code: number; message: string };
      assert.equal(status.kind, 'Status');
      assert.equal(status.code, code);
      assert.match(status.message, message);
    });
  }

  it('serves NodeMetrics and PodMetrics from the agent', async () => {
    const nodes = JSON.parse((await get(`${api.url}/apis/metrics.k8s.io/v1beta1/nodes`)).body) as {
      kind: string;
      items: { metadata: { name: string }; usage: { cpu: string; memory: string }; window: string }[];
    };
    assert.equal(nodes.kind, 'NodeMetricsList');
    assert.deepEqual(
      nodes.items.map((i) => i.metadata.name),
      ['n1'],
    );
    const want = (machine.info_.memoryCapacityBytes - machine.usage_.memoryAvailableBytes) / 1024;
    assert.equal(nodes.items[0]!.usage.memory, `${want}Ki`);
    assert.match(nodes.items[0]!.usage.cpu, /^\d+n$/);
    const pod = JSON.parse(
      (await get(`${api.url}/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web`)).body,
    ) as {
      kind: string;
      containers: { name: string; usage: { cpu: string; memory: string } }[];
    };
    assert.equal(pod.kind, 'PodMetrics');
    assert.deepEqual(pod.containers.map((c) => [c.name, c.usage.memory]).sort(), [
      ['app', '3072Ki'],
      ['side', '3072Ki'],
    ]);
    const missing = await get(`${api.url}/apis/metrics.k8s.io/v1beta1/nodes/n2`);
    assert.equal(missing.status, 404);
    const top = await api.kubectl('top', 'pod', 'web', '--containers', '--no-headers');
    assert.equal(top.code, 0, top.stderr);
    assert.match(top.stdout, /^web\s+app\s+\d+m\s+3Mi/m);
  });

  it('the tunnel path is no resource, and a node without a tunnel answers 503', async () => {
    const r = await get(`${api.url}/k8ts/v1/tunnel?node=n9`);
    // A plain GET is no upgrade: the tunnel path is not a resource.
    assert.equal(r.status, 404);
    const elsewhere = await get(`${api.url}/api/v1/namespaces/default/pods/elsewhere/log`);
    assert.equal(elsewhere.status, 503);
  });
});
