import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ContainerStatus } from '../../../api/types.js';
import { hashContainer } from './labels.js';
import type { ContainerRuntimeStatus, PodRuntimeStatus } from './runtime-status.js';
import { generateAPIPodStatus, podPhase, statusChanged, type StatusInput } from './status.js';
import type { KubeletContainer, KubeletPod } from './types.js';

const T0 = Date.UTC(2026, 0, 1);
const app: KubeletContainer = {
  name: 'app',
  image: 'spring-server:1.0',
  readinessProbe: { exec: { command: ['true'] } },
};

const pod = (restartPolicy: 'Always' | 'OnFailure' | 'Never' = 'Always'): KubeletPod => ({
  metadata: { name: 'p', namespace: 'default', uid: 'u1' },
  spec: { containers: [app], restartPolicy },
  status: { phase: 'Pending', qosClass: 'BestEffort' },
});

function ctr(id: string, over: Partial<ContainerRuntimeStatus>): ContainerRuntimeStatus {
  return {
    id,
    podSandboxId: 'sb',
    name: 'app',
    state: 'CONTAINER_RUNNING',
    createdAt: T0,
    startedAt: T0,
    finishedAt: 0,
    exitCode: 0,
    reason: '',
    message: '',
    image: 'spring-server:1.0',
    imageRef: 'sha256:abc',
    hash: hashContainer(app),
    restartCount: 0,
    ...over,
  };
}

function input(
  p: KubeletPod,
  containers: ContainerRuntimeStatus[],
  over: Partial<StatusInput> = {},
): StatusInput {
  const runtime: PodRuntimeStatus = {
    uid: 'u1',
    sandboxes: [{ id: 'sb', state: 'SANDBOX_READY', attempt: 0, createdAt: T0, ip: '10.1.0.5' }],
    containers,
  };
  return {
    pod: p,
    runtime,
    nodeIP: '127.0.0.2',
    runtimeName: 'docker',
    now: T0 + 5000,
    failures: new Map(),
    ready: () => true,
    started: () => true,
    ...over,
  };
}

describe('generateAPIPodStatus', () => {
  it('a running, ready container: Running, Ready, IPs, containerID docker://', () => {
    const s = generateAPIPodStatus(input(pod(), [ctr('c1', {})]));
    assert.equal(s.phase, 'Running');
    assert.equal(s.podIP, '10.1.0.5');
    assert.deepEqual(s.podIPs, [{ ip: '10.1.0.5' }]);
    assert.equal(s.hostIP, '127.0.0.2');
    const cs = s.containerStatuses![0]!;
    assert.equal(cs.containerID, 'docker://c1');
    assert.equal(cs.ready, true);
    assert.equal(cs.started, true);
    assert.equal(cs.imageID, 'sha256:abc');
    assert.deepEqual(cs.state, { running: { startedAt: '2026-01-01T00:00:00Z' } });
    const types = Object.fromEntries(s.conditions!.map((c) => [c.type, c.status]));
    assert.deepEqual(types, {
      PodReadyToStartContainers: 'True',
      Initialized: 'True',
      Ready: 'True',
      ContainersReady: 'True',
      PodScheduled: 'True',
    });
  });

  it('PodReadyToStartContainers: True only while the newest sandbox is ready with an IP; upstream order', () => {
    const withSandboxes = (sandboxes: PodRuntimeStatus['sandboxes']) => {
      const i = input(pod(), []);
      return generateAPIPodStatus({ ...i, runtime: { ...i.runtime, sandboxes } });
    };
    const ready = (s: ReturnType<typeof withSandboxes>) =>
      s.conditions!.find((c) => c.type === 'PodReadyToStartContainers')!.status;
    const sb = { id: 'sb', state: 'SANDBOX_READY' as const, attempt: 0, createdAt: T0, ip: '10.1.0.5' };
    assert.equal(ready(withSandboxes([])), 'False', 'no sandbox yet');
    assert.equal(ready(withSandboxes([sb])), 'True');
    assert.equal(
      ready(withSandboxes([{ ...sb, state: 'SANDBOX_NOTREADY', ip: '' }])),
      'False',
      'the sandbox died',
    );
    assert.equal(ready(withSandboxes([{ ...sb, ip: '' }])), 'False', 'no IP');
    const s = generateAPIPodStatus(input(pod(), [ctr('c1', {})]));
    assert.deepEqual(
      s.conditions!.map((c) => c.type),
      ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'],
    );
    const terminal = generateAPIPodStatus({
      ...input(pod(), []),
      runtime: { uid: 'u1', sandboxes: [{ ...sb, state: 'SANDBOX_NOTREADY', ip: '' }], containers: [] },
      podIsTerminal: true,
    });
    assert.equal(ready(terminal), 'False', "a finished pod's stopped sandbox");
  });

  it('readiness failing: ContainersNotReady with the unready names', () => {
    const s = generateAPIPodStatus(input(pod(), [ctr('c1', {})], { ready: () => false }));
    const ready = s.conditions!.find((c) => c.type === 'Ready')!;
    assert.equal(ready.status, 'False');
    assert.equal(ready.reason, 'ContainersNotReady');
    assert.equal(ready.message, 'containers with unready status: [app]');
  });

  it('a terminal pod: Ready and ContainersReady False with PodFailed (no message) or PodCompleted', () => {
    const exited = (exitCode: number) =>
      ctr('c1', {
        state: 'CONTAINER_EXITED',
        exitCode,
        reason: exitCode ? 'Error' : 'Completed',
        finishedAt: T0 + 1,
      });
    for (const [exitCode, phase, reason] of [
      [1, 'Failed', 'PodFailed'],
      [0, 'Succeeded', 'PodCompleted'],
    ] as const) {
      const s = generateAPIPodStatus(input(pod('Never'), [exited(exitCode)]));
      assert.equal(s.phase, phase);
      for (const type of ['Ready', 'ContainersReady']) {
        const c = s.conditions!.find((x) => x.type === type)!;
        assert.deepEqual([c.status, c.reason, c.message], ['False', reason, undefined], `${phase} ${type}`);
      }
    }
  });

  it('readiness gates: Ready waits for their conditions (ReadinessGatesNotReady); ContainersReady does not', () => {
    const gated = (conditions: { type: string; status: 'True' | 'False' }[]): KubeletPod => ({
      ...pod(),
      spec: {
        ...pod().spec,
        readinessGates: [{ conditionType: 'example.com/lb' }, { conditionType: 'example.com/dns' }],
      },
      status: { phase: 'Running', conditions },
    });
    const verdict = (p: KubeletPod) => {
      const s = generateAPIPodStatus(input(p, [ctr('c1', {})]));
      const c = (type: string) => s.conditions!.find((x) => x.type === type)!;
      return {
        ready: [c('Ready').status, c('Ready').reason, c('Ready').message],
        containers: c('ContainersReady').status,
      };
    };
    assert.deepEqual(verdict(gated([{ type: 'example.com/lb', status: 'False' }])), {
      ready: [
        'False',
        'ReadinessGatesNotReady',
        'the status of pod readiness gate "example.com/lb" is not "True", but False, corresponding condition of pod readiness gate "example.com/dns" does not exist.',
      ],
      containers: 'True',
    });
    assert.deepEqual(
      verdict(
        gated([
          { type: 'example.com/lb', status: 'True' },
          { type: 'example.com/dns', status: 'True' },
        ]),
      ),
      { ready: ['True', undefined, undefined], containers: 'True' },
    );
  });

  it('no container yet: waiting ContainerCreating, Pending', () => {
    const s = generateAPIPodStatus(input(pod(), []));
    assert.equal(s.phase, 'Pending');
    assert.deepEqual(s.containerStatuses![0]!.state, { waiting: { reason: 'ContainerCreating' } });
    assert.equal(s.containerStatuses![0]!.restartCount, 0);
  });

  it('a failed pull: waiting with the reason and message', () => {
    const failures = new Map([['app', { reason: 'ErrImagePull', message: 'pull failed' }]]);
    const s = generateAPIPodStatus(input(pod(), [], { failures }));
    assert.deepEqual(s.containerStatuses![0]!.state, {
      waiting: { reason: 'ErrImagePull', message: 'pull failed' },
    });
    assert.equal(s.phase, 'Pending');
  });

  it('crash loop: waiting CrashLoopBackOff, lastState terminated, restartCount, phase Running', () => {
    const failures = new Map([['app', { reason: 'CrashLoopBackOff', message: 'back-off 10s ...' }]]);
    const containers = [
      ctr('c2', {
        state: 'CONTAINER_EXITED',
        exitCode: 1,
        reason: 'Error',
        finishedAt: T0 + 2000,
        restartCount: 1,
      }),
      ctr('c1', { state: 'CONTAINER_EXITED', exitCode: 1, reason: 'Error', finishedAt: T0 + 1000 }),
    ];
    const s = generateAPIPodStatus(input(pod(), containers, { failures }));
    const cs = s.containerStatuses![0]!;
    assert.deepEqual(cs.state, { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s ...' } });
    assert.equal(
      (cs.lastState as { terminated: { exitCode: number; containerID: string } }).terminated.exitCode,
      1,
    );
    assert.equal(
      (cs.lastState as { terminated: { containerID: string } }).terminated.containerID,
      'docker://c2',
    );
    assert.equal(cs.restartCount, 1);
    assert.equal(cs.ready, false);
    assert.equal(s.phase, 'Running');
  });

  it('restarted container: running, lastState from the previous one', () => {
    const containers = [
      ctr('c2', { restartCount: 1 }),
      ctr('c1', { state: 'CONTAINER_EXITED', exitCode: 137, reason: 'OOMKilled', finishedAt: T0 + 1000 }),
    ];
    const cs = generateAPIPodStatus(input(pod(), containers)).containerStatuses![0]!;
    assert.ok(cs.state?.running);
    assert.deepEqual(cs.lastState, {
      terminated: {
        exitCode: 137,
        reason: 'OOMKilled',
        startedAt: '2026-01-01T00:00:00Z',
        finishedAt: '2026-01-01T00:00:01Z',
        containerID: 'docker://c1',
      },
    });
  });

  describe("a container the runtime no longer has (removed behind the kubelet's back): the status before as oldStatuses", () => {
    const lastState = {
      terminated: {
        exitCode: 1,
        reason: 'Error',
        startedAt: '2026-01-01T00:00:00Z',
        finishedAt: '2026-01-01T00:00:01Z',
        containerID: 'docker://c4',
      },
    };
    const before = (
      state: Record<string, unknown>,
      restartPolicy: 'Always' | 'Never' = 'Always',
    ): KubeletPod => ({
      ...pod(restartPolicy),
      status: {
        phase: 'Running',
        containerStatuses: [
          {
            name: 'app',
            state,
            lastState,
            ready: false,
            started: false,
            restartCount: 4,
            image: 'spring-server:1.0',
            imageID: 'sha256:abc',
            containerID: 'docker://c5',
          },
        ],
      },
    });

    it('in back-off: restartCount and lastState kept, the start failure shown, phase Running', () => {
      const failures = new Map([['app', { reason: 'CrashLoopBackOff', message: 'back-off 40s ...' }]]);
      const waiting = { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s ...' } };
      const s = generateAPIPodStatus(input(before(waiting), [], { failures }));
      const cs = s.containerStatuses![0]!;
      assert.deepEqual(cs.state, waiting);
      assert.equal(cs.restartCount, 4);
      assert.deepEqual(cs.lastState, lastState);
      assert.equal(s.phase, 'Running');
      // No start failure known: the default waiting reason, the same count and last state.
      const plain = generateAPIPodStatus(input(before(waiting), [])).containerStatuses![0]!;
      assert.deepEqual(
        [plain.state, plain.restartCount, plain.lastState],
        [{ waiting: { reason: 'ContainerCreating' } }, 4, lastState],
      );
    });

    it('running before: lastState ContainerStatusUnknown 137, one restart more (none for a deleted pod)', () => {
      const running = { running: { startedAt: '2026-01-01T00:00:02Z' } };
      const p = before(running);
      p.status!.containerStatuses![0]!.lastState = {};
      const cs = generateAPIPodStatus(input(p, [])).containerStatuses![0]!;
      assert.deepEqual(cs.state, { waiting: { reason: 'ContainerCreating' } });
      assert.deepEqual(cs.lastState, {
        terminated: {
          exitCode: 137,
          reason: 'ContainerStatusUnknown',
          message:
            'The container could not be located when the pod was deleted.  The container used to be Running',
        },
      });
      assert.equal(cs.restartCount, 5);
      const deleting = { ...p, metadata: { ...p.metadata, deletionTimestamp: '2026-01-01T00:00:03Z' } };
      assert.equal(generateAPIPodStatus(input(deleting, [])).containerStatuses![0]!.restartCount, 4);
    });

    it('terminated before: the old status whole (a Never pod stays Failed)', () => {
      const terminated = { terminated: { exitCode: 2, reason: 'Error', containerID: 'docker://c5' } };
      const s = generateAPIPodStatus(input(before(terminated, 'Never'), []));
      const cs = s.containerStatuses![0]!;
      assert.deepEqual(
        [cs.state, cs.lastState, cs.restartCount, cs.containerID],
        [terminated, lastState, 4, 'docker://c5'],
      );
      assert.equal(s.phase, 'Failed');
    });
  });

  it('keeps lastTransitionTime while a condition stays, moves it when it flips', () => {
    const first = generateAPIPodStatus(input(pod(), [ctr('c1', {})]));
    const p2 = { ...pod(), status: first };
    const same = generateAPIPodStatus(input(p2, [ctr('c1', {})], { now: T0 + 60_000 }));
    assert.deepEqual(same.conditions, first.conditions);
    assert.equal(statusChanged(first, same), false);
    const flipped = generateAPIPodStatus(
      input(p2, [ctr('c1', {})], { now: T0 + 60_000, ready: () => false }),
    );
    const ready = flipped.conditions!.find((c) => c.type === 'Ready')!;
    assert.equal(ready.lastTransitionTime, '2026-01-01T00:01:00Z');
    const init = flipped.conditions!.find((c) => c.type === 'Initialized')!;
    assert.equal(init.lastTransitionTime, '2026-01-01T00:00:05Z');
    assert.equal(statusChanged(first, flipped), true);
  });

  it('keeps conditions others own and an existing PodScheduled and startTime', () => {
    const p = pod();
    p.status = {
      phase: 'Pending',
      startTime: '2025-12-31T00:00:00Z',
      conditions: [
        { type: 'PodScheduled', status: 'True', lastTransitionTime: '2025-12-31T00:00:00Z' },
        { type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI' },
      ],
    };
    const s = generateAPIPodStatus(input(p, [ctr('c1', {})]));
    assert.equal(s.startTime, '2025-12-31T00:00:00Z');
    assert.ok(s.conditions!.some((c) => c.type === 'DisruptionTarget'));
    assert.equal(
      s.conditions!.find((c) => c.type === 'PodScheduled')!.lastTransitionTime,
      '2025-12-31T00:00:00Z',
    );
  });
});

describe('generateAPIPodStatus of a terminal pod (podIsTerminal: stopped for good)', () => {
  const exited = (exitCode: number) =>
    ctr('c1', {
      state: 'CONTAINER_EXITED',
      exitCode,
      reason: exitCode ? 'Error' : 'Completed',
      finishedAt: T0 + 1000,
    });
  for (const [what, containers, want] of [
    ['every container exited 0 under Always: Succeeded', [exited(0)], 'Succeeded'],
    ['SIGTERM (143) under Always: Failed', [exited(143)], 'Failed'],
    ['a container never created: Failed, ContainerStatusUnknown 137', [], 'Failed'],
  ] as const) {
    it(what, () => {
      const s = generateAPIPodStatus(input(pod(), [...containers], { podIsTerminal: true }));
      assert.equal(s.phase, want);
      assert.equal(s.conditions!.find((c) => c.type === 'Ready')!.status, 'False');
      const t = s.containerStatuses![0]!.state!.terminated as { exitCode: number; reason: string };
      if (containers.length === 0) assert.deepEqual([t.exitCode, t.reason], [137, 'ContainerStatusUnknown']);
    });
  }

  it('a start failure no longer shows: the last termination is the state', () => {
    const failures = new Map([['app', { reason: 'CrashLoopBackOff', message: 'back-off 10s ...' }]]);
    const s = generateAPIPodStatus(input(pod(), [exited(1)], { failures, podIsTerminal: true }));
    assert.equal((s.containerStatuses![0]!.state!.terminated as { exitCode: number }).exitCode, 1);
    assert.equal(s.phase, 'Failed');
  });

  it('a terminal phase already posted stays', () => {
    const p = { ...pod(), status: { phase: 'Succeeded' as const } };
    assert.equal(generateAPIPodStatus(input(p, [exited(143)], { podIsTerminal: true })).phase, 'Succeeded');
  });
});

describe('podPhase', () => {
  const running: ContainerStatus = {
    name: 'a',
    ready: true,
    restartCount: 0,
    image: '',
    imageID: '',
    state: { running: {} },
  };
  const done = (exitCode: number): ContainerStatus => ({
    name: 'b',
    ready: false,
    restartCount: 0,
    image: '',
    imageID: '',
    state: { terminated: { exitCode } },
  });
  const waiting: ContainerStatus = {
    name: 'c',
    ready: false,
    restartCount: 0,
    image: '',
    imageID: '',
    state: { waiting: {} },
  };
  const restarting: ContainerStatus = { ...waiting, lastState: { terminated: { exitCode: 1 } } };
  const table: [string, 'Always' | 'OnFailure' | 'Never', ContainerStatus[], string][] = [
    ['a container not started yet', 'Always', [running, waiting], 'Pending'],
    ['one running', 'Never', [running, done(1)], 'Running'],
    ['all exited 0 / Never', 'Never', [done(0), done(0)], 'Succeeded'],
    ['one failed / Never', 'Never', [done(0), done(1)], 'Failed'],
    ['all exited 0 / OnFailure', 'OnFailure', [done(0)], 'Succeeded'],
    ['failed, to be restarted / OnFailure', 'OnFailure', [done(1)], 'Running'],
    ['all exited / Always', 'Always', [done(0)], 'Running'],
    ['crash looping / Always', 'Always', [restarting], 'Running'],
  ];
  for (const [name, policy, statuses, want] of table) {
    it(`${name} → ${want}`, () => assert.equal(podPhase(pod(policy), statuses), want));
  }
});

describe('generateAPIPodStatus with init containers', () => {
  const init: KubeletContainer = { name: 'init', image: 'k8ts/busybox:1.0', command: ['sh', '-c', 'true'] };
  const ipod = (restartPolicy: 'Always' | 'OnFailure' | 'Never' = 'Always'): KubeletPod => ({
    ...pod(restartPolicy),
    spec: { ...pod(restartPolicy).spec, initContainers: [init] },
  });
  const ictr = (id: string, over: Partial<ContainerRuntimeStatus>) =>
    ctr(id, { name: 'init', image: 'k8ts/busybox:1.0', hash: hashContainer(init), ...over });
  const inits = (s: ReturnType<typeof generateAPIPodStatus>) => s.initContainerStatuses as ContainerStatus[];
  const cond = (s: ReturnType<typeof generateAPIPodStatus>, type: string) =>
    s.conditions!.find((c) => c.type === type)!;

  it('initializing: Pending, Initialized False ContainersNotInitialized, apps waiting PodInitializing', () => {
    for (const containers of [[], [ictr('i1', {})]]) {
      const s = generateAPIPodStatus(input(ipod(), containers));
      assert.equal(s.phase, 'Pending');
      const c = cond(s, 'Initialized');
      assert.equal(c.status, 'False');
      assert.equal(c.reason, 'ContainersNotInitialized');
      assert.equal(c.message, 'containers with incomplete status: [init]');
      assert.deepEqual(s.containerStatuses![0]!.state, { waiting: { reason: 'PodInitializing' } });
      assert.equal(inits(s).length, 1);
    }
    const waiting = generateAPIPodStatus(input(ipod(), []));
    assert.deepEqual(inits(waiting)[0]!.state, { waiting: { reason: 'PodInitializing' } });
    const running = generateAPIPodStatus(input(ipod(), [ictr('i1', {})]));
    const st = inits(running)[0]!;
    assert.equal(st.containerID, 'docker://i1');
    assert.equal(st.image, 'k8ts/busybox:1.0');
    assert.equal(st.imageID, 'sha256:abc');
    assert.equal(st.ready, false, 'a running init container is not ready');
  });

  it('done: Initialized True; the init status stays terminated Completed', () => {
    const s = generateAPIPodStatus(
      input(ipod(), [
        ctr('a1', {}),
        ictr('i1', { state: 'CONTAINER_EXITED', exitCode: 0, finishedAt: T0 + 1 }),
      ]),
    );
    assert.equal(s.phase, 'Running');
    assert.equal(cond(s, 'Initialized').status, 'True');
    assert.equal(cond(s, 'Initialized').reason, undefined);
    const t = inits(s)[0]!.state!.terminated as { exitCode: number; reason: string };
    assert.equal(t.exitCode, 0);
    assert.equal(t.reason, 'Completed');
    assert.equal(inits(s)[0]!.ready, true, 'ready once it exited 0');
  });

  it('failed: Failed under Never; Pending with CrashLoopBackOff and lastState under OnFailure', () => {
    const failed = [ictr('i1', { state: 'CONTAINER_EXITED', exitCode: 2, finishedAt: T0 + 1 })];
    const never = generateAPIPodStatus(input(ipod('Never'), failed));
    assert.equal(never.phase, 'Failed');
    assert.equal((inits(never)[0]!.state!.terminated as { reason: string }).reason, 'Error');
    assert.equal(cond(never, 'Initialized').status, 'False');

    const failures = new Map([['init', { reason: 'CrashLoopBackOff', message: 'back-off 10s restarting' }]]);
    const retry = generateAPIPodStatus(input(ipod('OnFailure'), failed, { failures }));
    assert.equal(retry.phase, 'Pending');
    const st = inits(retry)[0]!;
    assert.deepEqual(st.state, {
      waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s restarting' },
    });
    assert.equal((st.lastState!.terminated as { exitCode: number }).exitCode, 2);
    // Under Never a start failure is not shown as waiting: the container will not run again.
    const neverShown = generateAPIPodStatus(input(ipod('Never'), failed, { failures }));
    assert.ok(inits(neverShown)[0]!.state!.terminated);
  });

  it('Succeeded: Initialized True with reason PodCompleted', () => {
    const s = generateAPIPodStatus(
      input(ipod('OnFailure'), [
        ctr('a1', { state: 'CONTAINER_EXITED', exitCode: 0, finishedAt: T0 + 2 }),
        ictr('i1', { state: 'CONTAINER_EXITED', exitCode: 0, finishedAt: T0 + 1 }),
      ]),
    );
    assert.equal(s.phase, 'Succeeded');
    assert.equal(cond(s, 'Initialized').reason, 'PodCompleted');
  });
});
