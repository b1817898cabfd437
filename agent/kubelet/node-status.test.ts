import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../api/clock.js';
import { waitFor } from '../../api/client/testing.js';
import { EventRecorder } from '../../api/client/events.js';
import { resources } from '../../api/client/resource.js';
import { RestClient } from '../../api/client/rest.js';
import type { KubeObject } from '../../api/object.js';
import type { Condition, CoreEvent, Node } from '../../api/types.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';
import { captureLogger, StubMachine, StubRuntime } from '../testing.js';
import {
  conditionEventReason,
  nodeConditions,
  nodeLabels,
  nodeResources,
  nodeStatusChanged,
  NodeStatusManager,
  pressureOf,
} from './node-status.js';

const GI = 1024 ** 3;
const MI = 1024 ** 2;

describe('node status (pure)', () => {
  it('labels the node with hostname, os and arch (and their beta twins)', () => {
    assert.deepEqual(nodeLabels('n1', 'arm64'), {
      'kubernetes.io/hostname': 'n1',
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'arm64',
      'beta.kubernetes.io/os': 'linux',
      'beta.kubernetes.io/arch': 'arm64',
    });
  });

  it('reports capacity in cores and Ki, allocatable minus the hard eviction thresholds', () => {
    const r = nodeResources({ cpuCores: 2, memoryCapacityBytes: 4 * GI, fsCapacityBytes: 10 * GI });
    assert.deepEqual(r.capacity, {
      cpu: '2',
      memory: '4Gi',
      'ephemeral-storage': '10Gi',
      pods: '110',
    });
    assert.deepEqual(r.allocatable, {
      cpu: '2',
      memory: '3996Mi',
      'ephemeral-storage': '9Gi',
      pods: '110',
    });
    assert.equal(
      nodeResources({ cpuCores: 1, memoryCapacityBytes: 50 * MI, fsCapacityBytes: 0 }).allocatable.memory,
      '0',
    );
  });

  const healthy = {
    memoryAvailableBytes: 2 * GI,
    fsAvailableBytes: 50 * GI,
    fsCapacityBytes: 100 * GI,
    pidsInUse: 100,
    pidMax: 32768,
  };
  for (const [name, usage, want] of [
    ['healthy', healthy, { memory: false, disk: false, pid: false }],
    [
      'memory just above 100Mi',
      { ...healthy, memoryAvailableBytes: 100 * MI },
      { memory: false, disk: false, pid: false },
    ],
    [
      'memory below 100Mi',
      { ...healthy, memoryAvailableBytes: 100 * MI - 1 },
      { memory: true, disk: false, pid: false },
    ],
    ['disk below 10%', { ...healthy, fsAvailableBytes: 9 * GI }, { memory: false, disk: true, pid: false }],
    ['pids above 90%', { ...healthy, pidsInUse: 29500 }, { memory: false, disk: false, pid: true }],
  ] as const) {
    it(`pressure: ${name}`, () => assert.deepEqual(pressureOf(usage), want));
  }

  it('words conditions as the kubelet and keeps transition times while a status holds', () => {
    const t0 = '2026-01-01T00:00:00Z';
    const t1 = '2026-01-01T00:00:10Z';
    const first = nodeConditions(
      { notReady: [], memoryPressure: false, diskPressure: false, pidPressure: false },
      undefined,
      t0,
    );
    assert.deepEqual(
      first.map((c) => [c.type, c.status, c.reason, c.message]),
      [
        ['MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
        ['DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
        ['PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
        ['Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'],
      ],
    );
    const second = nodeConditions(
      {
        notReady: ['container runtime is down: gone'],
        memoryPressure: true,
        diskPressure: false,
        pidPressure: false,
      },
      first,
      t1,
    );
    const byType = (cs: Condition[], t: string) => cs.find((c) => c.type === t)!;
    assert.deepEqual(byType(second, 'Ready'), {
      type: 'Ready',
      status: 'False',
      reason: 'KubeletNotReady',
      message: 'container runtime is down: gone',
      lastHeartbeatTime: t1,
      lastTransitionTime: t1,
    });
    assert.equal(byType(second, 'MemoryPressure').reason, 'KubeletHasInsufficientMemory');
    assert.equal(byType(second, 'MemoryPressure').lastTransitionTime, t1);
    assert.equal(byType(second, 'DiskPressure').lastTransitionTime, t0);
    assert.equal(byType(second, 'DiskPressure').lastHeartbeatTime, t1);
  });

  it('names the events of condition transitions', () => {
    assert.deepEqual(
      [
        ['Ready', 'True'],
        ['Ready', 'False'],
        ['MemoryPressure', 'True'],
        ['DiskPressure', 'False'],
        ['PIDPressure', 'True'],
        ['Other', 'True'],
      ].map(([t, s]) => conditionEventReason(t!, s!)),
      [
        'NodeReady',
        'NodeNotReady',
        'NodeHasInsufficientMemory',
        'NodeHasNoDiskPressure',
        'NodeHasInsufficientPID',
        undefined,
      ],
    );
  });

  it('sees a change in anything but heartbeat times', () => {
    const conds = nodeConditions(
      { notReady: [], memoryPressure: false, diskPressure: false, pidPressure: false },
      undefined,
      '2026-01-01T00:00:00Z',
    );
    const a = { capacity: { cpu: '2' }, conditions: conds };
    const beat = conds.map((c) => ({ ...c, lastHeartbeatTime: '2026-01-01T00:01:00Z' }));
    assert.equal(nodeStatusChanged(a, { ...a, conditions: beat }), false);
    assert.equal(nodeStatusChanged(a, { ...a, capacity: { cpu: '3' } }), true);
    assert.equal(
      nodeStatusChanged(a, {
        ...a,
        conditions: beat.map((c) => (c.type === 'Ready' ? { ...c, status: 'Unknown' } : c)),
      }),
      true,
    );
  });
});

describe('NodeStatusManager against the API server', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.stop());

  let seq = 0;
  function setup(podNetworkError: () => string | undefined = () => undefined) {
    const nodeName = `status-${++seq}`;
    const clock = new FakeClock();
    const runtime = new StubRuntime();
    const machine = new StubMachine();
    const { logger, lines } = captureLogger();
    const recorder = new EventRecorder({ client: api.client, component: 'kubelet', host: nodeName, clock });
    const manager = new NodeStatusManager({
      client: api.client,
      runtime,
      machine,
      nodeName,
      nodeIP: '127.0.0.9',
      podNetworkError,
      logger,
      recorder,
      clock,
    });
    const getNode = () => api.client.get<Node>(resources.nodes, undefined, nodeName);
    return { nodeName, clock, runtime, machine, manager, lines, recorder, getNode };
  }
  const cond = (n: Node, type: string) => n.status!.conditions!.find((c) => c.type === type)!;

  it('registers the Node with labels, capacity, allocatable, nodeInfo, addresses and conditions', async () => {
    const { nodeName, manager, getNode, recorder } = setup();
    await manager.register(AbortSignal.timeout(10_000));
    const node = await getNode();
    assert.equal(node.metadata.labels!['kubernetes.io/hostname'], nodeName);
    assert.equal(node.metadata.labels!['kubernetes.io/os'], 'linux');
    assert.equal(node.metadata.labels!['kubernetes.io/arch'], 'amd64');
    assert.deepEqual(node.status!.capacity, {
      cpu: '4',
      memory: '8Gi',
      'ephemeral-storage': '100Gi',
      pods: '110',
    });
    assert.equal(node.status!.allocatable!.memory, '8092Mi');
    assert.deepEqual(node.status!.nodeInfo, {
      machineID: '3d1219c7c4c5404aaa1f6d2a48adfda4',
      systemUUID: 'ec2d3c4e-0000-4000-8000-000000000001',
      bootID: 'c0ffee00-0000-4000-8000-000000000002',
      kernelVersion: '6.1.0-18-amd64',
      osImage: 'Debian GNU/Linux 12 (bookworm)',
      containerRuntimeVersion: 'docker://20.10.24',
      kubeletVersion: 'v1.32.0+k8ts',
      kubeProxyVersion: 'v1.32.0+k8ts',
      operatingSystem: 'linux',
      architecture: 'amd64',
    });
    assert.deepEqual(node.status!.addresses, [
      { type: 'InternalIP', address: '127.0.0.9' },
      { type: 'Hostname', address: nodeName },
    ]);
    assert.deepEqual(node.status!.daemonEndpoints, { kubeletEndpoint: { Port: 10250 } });
    assert.deepEqual(
      node.status!.conditions!.map((c) => [c.type, c.status, c.lastHeartbeatTime]),
      [
        ['MemoryPressure', 'False', '2026-01-01T00:00:00Z'],
        ['DiskPressure', 'False', '2026-01-01T00:00:00Z'],
        ['PIDPressure', 'False', '2026-01-01T00:00:00Z'],
        ['Ready', 'True', '2026-01-01T00:00:00Z'],
      ],
    );
    await recorder.flush();
    const events = await api.client.list<CoreEvent>(resources.events, {
      namespace: 'default',
      fieldSelector: `involvedObject.name=${nodeName}`,
    });
    assert.deepEqual(events.items.map((e) => e.reason).sort(), [
      'NodeHasNoDiskPressure',
      'NodeHasSufficientMemory',
      'NodeHasSufficientPID',
      'NodeReady',
    ]);
  });

  it('posts a heartbeat only every report period, a change at once', async () => {
    const { manager, getNode, clock, machine, recorder, nodeName } = setup();
    await manager.register(AbortSignal.timeout(10_000));
    const registered = await getNode();
    await clock.advance(10_000);
    await manager.syncNodeStatus();
    assert.equal((await getNode()).metadata.resourceVersion, registered.metadata.resourceVersion);

    await clock.advance(50_000);
    await manager.syncNodeStatus();
    const beat = await getNode();
    assert.notEqual(beat.metadata.resourceVersion, registered.metadata.resourceVersion);
    assert.equal(cond(beat, 'Ready').lastHeartbeatTime, '2026-01-01T00:01:00Z');
    assert.equal(cond(beat, 'Ready').lastTransitionTime, '2026-01-01T00:00:00Z');

    await clock.advance(10_000);
    machine.usage_.memoryAvailableBytes = 50 * MI;
    await manager.syncNodeStatus();
    const pressed = await getNode();
    assert.equal(cond(pressed, 'MemoryPressure').status, 'True');
    assert.equal(cond(pressed, 'MemoryPressure').reason, 'KubeletHasInsufficientMemory');
    assert.equal(cond(pressed, 'MemoryPressure').lastTransitionTime, '2026-01-01T00:01:10Z');
    await recorder.flush();
    const events = await api.client.list<CoreEvent>(resources.events, {
      namespace: 'default',
      fieldSelector: `involvedObject.name=${nodeName}`,
    });
    assert.ok(events.items.some((e) => e.reason === 'NodeHasInsufficientMemory'));
  });

  const notReadyCases: [string, (r: StubRuntime) => void, string | undefined, RegExp][] = [
    [
      'the runtime is down',
      (r) => (r.down = 'connect ENOENT /var/run/docker.sock'),
      undefined,
      /^container runtime is down: connect ENOENT/,
    ],
    [
      'the runtime reports RuntimeReady=false',
      (r) =>
        (r.status_.conditions[0] = {
          type: 'RuntimeReady',
          status: false,
          reason: 'DockerDaemonNotReady',
          message: 'starting',
        }),
      undefined,
      /^container runtime not ready: RuntimeReady=false reason:DockerDaemonNotReady message:starting$/,
    ],
    [
      'the pod network is missing',
      () => {},
      'container runtime network not ready: waiting',
      /^container runtime network not ready: waiting$/,
    ],
  ];
  for (const [name, breakIt, networkError, message] of notReadyCases) {
    it(`reports NotReady when ${name}, and Ready again once it is fixed`, async () => {
      let netErr = networkError;
      const { manager, getNode, runtime } = setup(() => netErr);
      const fresh = new StubRuntime();
      breakIt(runtime);
      await manager.register(AbortSignal.timeout(10_000));
      const broken = cond(await getNode(), 'Ready');
      assert.equal(broken.status, 'False');
      assert.equal(broken.reason, 'KubeletNotReady');
      assert.match(broken.message!, message);
      runtime.down = undefined;
      runtime.status_ = fresh.status_;
      netErr = undefined;
      await manager.syncNodeStatus();
      const fixed = cond(await getNode(), 'Ready');
      assert.equal(fixed.status, 'True');
      assert.equal(fixed.reason, 'KubeletReady');
    });
  }

  it('on a restart updates the existing Node, keeping its uid, spec and user labels', async () => {
    const { manager, getNode, nodeName } = setup();
    await manager.register(AbortSignal.timeout(10_000));
    const first = await getNode();
    await api.client.patch(resources.nodes, undefined, nodeName, 'merge', {
      metadata: { labels: { team: 'a', 'kubernetes.io/arch': 'wrong' } },
      spec: { unschedulable: true, podCIDR: '10.42.7.0/24' },
    });
    await api.client.patch(
      resources.nodes,
      undefined,
      nodeName,
      'merge',
      { status: { conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }] } },
      { subresource: 'status' },
    );
    const again = setup();
    const restartLog = captureLogger();
    const restarted = new NodeStatusManager({
      client: api.client,
      runtime: again.runtime,
      machine: again.machine,
      nodeName,
      nodeIP: '127.0.0.9',
      podNetworkError: () => undefined,
      logger: restartLog.logger,
    });
    await restarted.register(AbortSignal.timeout(10_000));
    const node = await getNode();
    assert.equal(node.metadata.uid, first.metadata.uid);
    assert.equal(node.metadata.labels!.team, 'a');
    assert.equal(node.metadata.labels!['kubernetes.io/arch'], 'amd64');
    assert.equal(node.spec!.unschedulable, true);
    assert.equal(node.spec!.podCIDR, '10.42.7.0/24');
    assert.equal(cond(node, 'Ready').status, 'True');
    assert.ok(restartLog.lines.some((l) => /already registered/.test(l.message)));
  });

  it("computes the status against the informer's Node, GETting it only without one or after a failed cycle", async () => {
    // The kubelet's tryUpdateNodeStatus reads its nodeLister on the first try.
    const nodeGets: string[] = [];
    class CountingClient extends RestClient {
      override get<T extends KubeObject = KubeObject>(...args: Parameters<RestClient['get']>): Promise<T> {
        if (args[0] === resources.nodes) nodeGets.push(args[2]);
        return super.get<T>(...args);
      }
    }
    const client = new CountingClient({ server: api.url });
    after(() => client.close());
    const { nodeName, clock, runtime, machine } = setup();
    const { logger } = captureLogger();
    const manager = new NodeStatusManager({
      client,
      runtime,
      machine,
      nodeName,
      nodeIP: '127.0.0.9',
      podNetworkError: () => undefined,
      logger,
      clock,
    });
    await manager.register(AbortSignal.timeout(10_000));
    // No informer copy yet: the cycle GETs.
    await clock.advance(10_000);
    await manager.syncNodeStatus();
    assert.equal(nodeGets.length, 1);

    manager.observeNode(await api.client.get<Node>(resources.nodes, undefined, nodeName));
    await clock.advance(10_000);
    await manager.syncNodeStatus();
    machine.usage_.memoryAvailableBytes = 50 * MI;
    await clock.advance(10_000);
    await manager.syncNodeStatus();
    assert.equal(nodeGets.length, 1, 'no GET while the informer has the Node');
    const pressed = await api.client.get<Node>(resources.nodes, undefined, nodeName);
    assert.equal(cond(pressed, 'MemoryPressure').status, 'True');
    assert.equal(cond(pressed, 'MemoryPressure').lastTransitionTime, '2026-01-01T00:00:30Z');

    // A failed cycle (the Node is gone): the next one reads it from the API server.
    manager.observeNode(pressed);
    await api.client.delete(resources.nodes, undefined, nodeName);
    await clock.advance(10_000);
    machine.usage_.memoryAvailableBytes = 2 * GI;
    await assert.rejects(manager.syncNodeStatus(), /not found/i);
    await assert.rejects(manager.syncNodeStatus(), /not found/i);
    assert.deepEqual(nodeGets, [nodeName, nodeName]);
  });

  it('retries registration until the API server answers, and stops when told', async () => {
    const { logger, lines } = captureLogger();
    const clock = new FakeClock();
    const manager = new NodeStatusManager({
      client: new RestClient({ server: 'http://127.0.0.1:1' }),
      runtime: new StubRuntime(),
      machine: new StubMachine(),
      nodeName: 'unreachable',
      nodeIP: '127.0.0.9',
      podNetworkError: () => undefined,
      logger,
      clock,
    });
    const ac = new AbortController();
    const registering = manager.register(ac.signal);
    await waitFor('a first failed attempt', () => lines.some((l) => l.level === 'warn'));
    assert.equal(lines[0]!.meta.retryInMs, 100);
    await clock.advance(100);
    await waitFor('a second failed attempt', () => lines.filter((l) => l.level === 'warn').length === 2);
    assert.equal(lines[1]!.meta.retryInMs, 200);
    ac.abort(new Error('stop'));
    await assert.rejects(registering, /stop/);
  });
});
