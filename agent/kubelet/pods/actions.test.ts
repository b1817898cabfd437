import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { computePodActions, shouldContainerBeRestarted, type ProbeVerdicts } from './actions.js';
import { hashContainer } from './labels.js';
import type { ContainerRuntimeStatus, PodRuntimeStatus, SandboxStatus } from './runtime-status.js';
import type { KubeletContainer, KubeletPod } from './types.js';

const containers: KubeletContainer[] = [
  { name: 'app', image: 'spring-server:1.0' },
  { name: 'side', image: 'k8ts/busybox:1.0', command: ['sleep', '3600'] },
];

function pod(restartPolicy: 'Always' | 'OnFailure' | 'Never' = 'Always'): KubeletPod {
  return {
    metadata: { name: 'p', namespace: 'default', uid: 'u1' },
    spec: { containers, restartPolicy },
  };
}

const sandbox = (over: Partial<SandboxStatus> = {}): SandboxStatus => ({
  id: 'sb1',
  state: 'SANDBOX_READY',
  attempt: 0,
  createdAt: 1,
  ip: '10.0.0.2',
  ...over,
});

function ctr(name: string, over: Partial<ContainerRuntimeStatus> = {}): ContainerRuntimeStatus {
  const spec = containers.find((c) => c.name === name)!;
  return {
    id: `${name}-1`,
    podSandboxId: 'sb1',
    name,
    state: 'CONTAINER_RUNNING',
    createdAt: 2,
    startedAt: 2,
    finishedAt: 0,
    exitCode: 0,
    reason: '',
    message: '',
    image: spec.image!,
    imageRef: 'sha256:x',
    hash: hashContainer(spec),
    restartCount: 0,
    ...over,
  };
}

const status = (sandboxes: SandboxStatus[], cs: ContainerRuntimeStatus[]): PodRuntimeStatus => ({
  uid: 'u1',
  sandboxes,
  containers: cs,
});

const exited = (code: number) => ({ state: 'CONTAINER_EXITED' as const, exitCode: code, finishedAt: 3 });

interface Case {
  name: string;
  pod: KubeletPod;
  status: PodRuntimeStatus;
  probes?: ProbeVerdicts;
  want: {
    killPod: boolean;
    createSandbox: boolean;
    attempt: number;
    start: string[];
    kill: string[];
    killMessages?: string[];
  };
}

const livenessFails: ProbeVerdicts = {
  liveness: (name) => (name === 'app' ? 'Failure' : 'Unknown'),
  startup: () => 'Unknown',
};

const cases: Case[] = [
  {
    name: 'new pod: sandbox attempt 0, start every container',
    pod: pod(),
    status: status([], []),
    want: { killPod: true, createSandbox: true, attempt: 0, start: ['app', 'side'], kill: [] },
  },
  {
    name: 'all running: nothing to do',
    pod: pod(),
    status: status([sandbox()], [ctr('app'), ctr('side')]),
    want: { killPod: false, createSandbox: false, attempt: 0, start: [], kill: [] },
  },
  {
    name: 'sandbox not ready: new sandbox with the next attempt, restart all',
    pod: pod(),
    status: status(
      [sandbox({ state: 'SANDBOX_NOTREADY', ip: '' })],
      [ctr('app', exited(137)), ctr('side', exited(137))],
    ),
    want: { killPod: true, createSandbox: true, attempt: 1, start: ['app', 'side'], kill: [] },
  },
  {
    name: 'sandbox without an IP: recreated',
    pod: pod(),
    status: status([sandbox({ ip: '' })], [ctr('app'), ctr('side')]),
    want: { killPod: true, createSandbox: true, attempt: 1, start: ['app', 'side'], kill: [] },
  },
  {
    name: 'two ready sandboxes: recreated',
    pod: pod(),
    status: status([sandbox({ id: 'sb2', attempt: 1 }), sandbox()], [ctr('app'), ctr('side')]),
    want: { killPod: true, createSandbox: true, attempt: 2, start: ['app', 'side'], kill: [] },
  },
  {
    name: 'Never pod whose sandbox died after running: not recreated',
    pod: pod('Never'),
    status: status(
      [sandbox({ state: 'SANDBOX_NOTREADY', ip: '' })],
      [ctr('app', exited(0)), ctr('side', exited(1))],
    ),
    want: { killPod: true, createSandbox: false, attempt: 1, start: [], kill: [] },
  },
  {
    name: 'OnFailure pod with a dead sandbox: succeeded containers are not started again',
    pod: pod('OnFailure'),
    status: status(
      [sandbox({ state: 'SANDBOX_NOTREADY', ip: '' })],
      [ctr('app', exited(0)), ctr('side', exited(2))],
    ),
    want: { killPod: true, createSandbox: true, attempt: 1, start: ['side'], kill: [] },
  },
  {
    name: 'Always: an exited container (code 0) is restarted',
    pod: pod('Always'),
    status: status([sandbox()], [ctr('app', exited(0)), ctr('side')]),
    want: { killPod: false, createSandbox: false, attempt: 0, start: ['app'], kill: [] },
  },
  {
    name: 'OnFailure: exit 0 stays, exit 1 restarts',
    pod: pod('OnFailure'),
    status: status([sandbox()], [ctr('app', exited(0)), ctr('side', exited(1))]),
    want: { killPod: false, createSandbox: false, attempt: 0, start: ['side'], kill: [] },
  },
  {
    name: 'Never: nothing restarts; all dead → kill the pod (sandbox)',
    pod: pod('Never'),
    status: status([sandbox()], [ctr('app', exited(0)), ctr('side', exited(1))]),
    want: { killPod: true, createSandbox: false, attempt: 0, start: [], kill: [] },
  },
  {
    name: 'a container only created (start failed) is started',
    pod: pod(),
    status: status([sandbox()], [ctr('app', { state: 'CONTAINER_CREATED' }), ctr('side')]),
    want: { killPod: false, createSandbox: false, attempt: 0, start: ['app'], kill: [] },
  },
  {
    name: 'a container missing from the runtime is started',
    pod: pod(),
    status: status([sandbox()], [ctr('side')]),
    want: { killPod: false, createSandbox: false, attempt: 0, start: ['app'], kill: [] },
  },
  {
    name: 'spec hash changed: killed and restarted',
    pod: pod(),
    status: status([sandbox()], [ctr('app', { hash: 'deadbeef' }), ctr('side')]),
    want: {
      killPod: false,
      createSandbox: false,
      attempt: 0,
      start: ['app'],
      kill: ['app'],
      killMessages: ['Container app definition changed, will be restarted'],
    },
  },
  {
    name: 'liveness failure: killed and restarted',
    pod: pod(),
    status: status([sandbox()], [ctr('app'), ctr('side')]),
    probes: livenessFails,
    want: {
      killPod: false,
      createSandbox: false,
      attempt: 0,
      start: ['app'],
      kill: ['app'],
      killMessages: ['Container app failed liveness probe, will be restarted'],
    },
  },
  {
    name: 'liveness failure under Never: killed, not restarted',
    pod: pod('Never'),
    status: status([sandbox()], [ctr('app'), ctr('side')]),
    probes: livenessFails,
    want: {
      killPod: false,
      createSandbox: false,
      attempt: 0,
      start: [],
      kill: ['app'],
      killMessages: ['Container app failed liveness probe'],
    },
  },
  {
    name: 'startup failure: killed and restarted',
    pod: pod(),
    status: status([sandbox()], [ctr('app'), ctr('side')]),
    probes: { liveness: () => 'Unknown', startup: (n) => (n === 'side' ? 'Failure' : 'Unknown') },
    want: {
      killPod: false,
      createSandbox: false,
      attempt: 0,
      start: ['side'],
      kill: ['side'],
      killMessages: ['Container side failed startup probe, will be restarted'],
    },
  },
];

describe('computePodActions', () => {
  for (const c of cases) {
    it(c.name, () => {
      const a = computePodActions(c.pod, c.status, c.probes);
      assert.deepEqual(
        {
          killPod: a.killPod,
          createSandbox: a.createSandbox,
          attempt: a.attempt,
          start: a.containersToStart,
          kill: a.containersToKill.map((k) => k.name),
        },
        {
          killPod: c.want.killPod,
          createSandbox: c.want.createSandbox,
          attempt: c.want.attempt,
          start: c.want.start,
          kill: c.want.kill,
        },
      );
      if (c.want.killMessages)
        assert.deepEqual(
          a.containersToKill.map((k) => k.message),
          c.want.killMessages,
        );
    });
  }
});

describe('shouldContainerBeRestarted', () => {
  const table: [
    string,
    'Always' | 'OnFailure' | 'Never',
    Partial<ContainerRuntimeStatus> | undefined,
    boolean,
  ][] = [
    ['never started', 'Never', undefined, true],
    ['running', 'Always', {}, false],
    ['exited 0 / Always', 'Always', exited(0), true],
    ['exited 0 / OnFailure', 'OnFailure', exited(0), false],
    ['exited 1 / OnFailure', 'OnFailure', exited(1), true],
    ['exited 1 / Never', 'Never', exited(1), false],
    ['unknown / Never', 'Never', { state: 'CONTAINER_UNKNOWN' }, true],
  ];
  for (const [name, policy, over, want] of table) {
    it(name, () => {
      const st = status([sandbox()], over ? [ctr('app', over)] : []);
      assert.equal(shouldContainerBeRestarted(containers[0]!, pod(policy), st), want);
    });
  }
});

describe('computePodActions with init containers', () => {
  const inits: KubeletContainer[] = [
    { name: 'init1', image: 'k8ts/busybox:1.0', command: ['sh', '-c', 'true'] },
    { name: 'init2', image: 'k8ts/busybox:1.0', command: ['sh', '-c', 'true'] },
    { name: 'sidecar', image: 'k8ts/busybox:1.0', restartPolicy: 'Always' },
  ];
  const ipod = (restartPolicy: 'Always' | 'OnFailure' | 'Never' = 'Always'): KubeletPod => ({
    ...pod(restartPolicy),
    spec: { ...pod(restartPolicy).spec, initContainers: inits },
  });
  const ictr = (name: string, over: Partial<ContainerRuntimeStatus> = {}): ContainerRuntimeStatus => ({
    ...ctr('app'),
    id: `${name}-1`,
    name,
    image: 'k8ts/busybox:1.0',
    hash: hashContainer(inits.find((c) => c.name === name)!),
    ...over,
  });
  const summary = (a: ReturnType<typeof computePodActions>) => ({
    killPod: a.killPod,
    createSandbox: a.createSandbox,
    init: a.initContainerToStart,
    start: a.containersToStart,
    kill: a.containersToKill.map((k) => k.name),
  });

  it('a new pod: sandbox, then only the first init container', () => {
    assert.deepEqual(summary(computePodActions(ipod(), status([], []))), {
      killPod: true,
      createSandbox: true,
      init: 'init1',
      start: [],
      kill: [],
    });
  });

  it('one at a time, in order: nothing while one runs, the next after one exited 0, then the apps', () => {
    const sb = [sandbox()];
    assert.deepEqual(summary(computePodActions(ipod(), status(sb, [ictr('init1')]))), {
      killPod: false,
      createSandbox: false,
      init: undefined,
      start: [],
      kill: [],
    });
    assert.equal(
      computePodActions(ipod(), status(sb, [ictr('init1', exited(0))])).initContainerToStart,
      'init2',
    );
    const done = computePodActions(ipod(), status(sb, [ictr('init2', exited(0)), ictr('init1', exited(0))]));
    assert.equal(done.initContainerToStart, undefined);
    assert.deepEqual(done.containersToStart, ['app', 'side']);
    assert.equal(done.killPod, false);
  });

  it('a failed init container is restarted under Always and OnFailure; under Never the pod is killed', () => {
    const failed = status([sandbox()], [ictr('init2', exited(1)), ictr('init1', exited(0))]);
    for (const policy of ['Always', 'OnFailure'] as const) {
      const a = computePodActions(ipod(policy), failed);
      assert.equal(a.initContainerToStart, 'init2', policy);
      assert.equal(a.killPod, false, policy);
      assert.deepEqual(a.containersToStart, [], policy);
    }
    const never = computePodActions(ipod('Never'), failed);
    assert.equal(never.killPod, true);
    assert.equal(never.createSandbox, false);
    assert.equal(never.initContainerToStart, undefined);
    const oom = computePodActions(
      ipod('OnFailure'),
      status([sandbox()], [ictr('init1', { ...exited(0), reason: 'OOMKilled' })]),
    );
    assert.equal(oom.initContainerToStart, 'init1', 'OOMKilled counts as failed');
  });

  it('a new sandbox runs them all again; containers of an older sandbox are no progress', () => {
    const old = [ictr('init2', exited(0)), ictr('init1', exited(0)), ctr('app', exited(137))];
    const a = computePodActions(ipod(), status([sandbox({ state: 'SANDBOX_NOTREADY', ip: '' })], old));
    assert.equal(a.createSandbox, true);
    assert.equal(a.initContainerToStart, 'init1');
    assert.deepEqual(a.containersToStart, []);
    const next = computePodActions(
      ipod(),
      status([sandbox({ id: 'sb2', attempt: 1 }), sandbox({ state: 'SANDBOX_NOTREADY', ip: '' })], old),
    );
    assert.equal(next.initContainerToStart, 'init1', 'old-sandbox init containers do not count');
  });

  it('an app container of the sandbox has run: initialized, whatever became of the init containers', () => {
    const a = computePodActions(ipod(), status([sandbox()], [ctr('app'), ctr('side')]));
    assert.equal(a.initContainerToStart, undefined);
    assert.equal(a.killPod, false);
  });

  it('sidecar init containers (restartPolicy Always) are skipped', () => {
    const a = computePodActions(
      ipod(),
      status([sandbox()], [ictr('init2', exited(0)), ictr('init1', exited(0))]),
    );
    assert.deepEqual(a.containersToStart, ['app', 'side']);
  });
});
