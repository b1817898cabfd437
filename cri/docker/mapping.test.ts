import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ContainerConfig, PodSandboxConfig } from '../api.js';
import {
  containerCreateOptions,
  containerStateFromInspect,
  imageUser,
  containerStateFromList,
  dockerUser,
  parseDockerTime,
  portBindings,
  resourcesToHostConfig,
  sandboxCreateOptions,
  statsFromDocker,
  type ContainerStateView,
  type DockerState,
} from './convert.js';
import { criCodeOf, toCriError } from './errors.js';
import {
  containerFromLabels,
  containerLabels,
  containerName,
  isOwned,
  sandboxFromLabels,
  sandboxLabels,
  sandboxName,
} from './labels.js';

const ZERO = '0001-01-01T00:00:00Z';
const T1 = '2026-11-30T12:00:00.123456789Z';
const T1NS = BigInt(Date.parse('2026-11-30T12:00:00Z')) * 1_000_000n + 123_456_789n;
const T2 = '2026-11-30T12:00:05.5Z';
const T2NS = BigInt(Date.parse('2026-11-30T12:00:05Z')) * 1_000_000n + 500_000_000n;
/** When the adapter created the container (its io.k8ts.created-at label), ns. */
const CREATED_NS = BigInt(Date.parse('2026-11-30T11:59:59Z')) * 1_000_000n;

describe('parseDockerTime', () => {
  const cases: [string | undefined, bigint][] = [
    [T1, T1NS],
    [T2, T2NS],
    ['2026-11-30T13:00:00+01:00', BigInt(Date.parse('2026-11-30T12:00:00Z')) * 1_000_000n],
    [ZERO, 0n],
    ['', 0n],
    [undefined, 0n],
    ['yesterday', 0n],
  ];
  for (const [s, want] of cases) it(String(s), () => assert.equal(parseDockerTime(s), want));
});

describe('docker state → CRI state', () => {
  const listCases: [string, string][] = [
    ['created', 'CONTAINER_CREATED'],
    ['running', 'CONTAINER_RUNNING'],
    ['paused', 'CONTAINER_RUNNING'],
    ['restarting', 'CONTAINER_RUNNING'],
    ['exited', 'CONTAINER_EXITED'],
    ['dead', 'CONTAINER_EXITED'],
    ['removing', 'CONTAINER_UNKNOWN'],
  ];
  for (const [docker, cri] of listCases)
    it(`list ${docker} → ${cri}`, () => assert.equal(containerStateFromList(docker), cri));

  const inspectCases: [string, DockerState, Partial<ContainerStateView>][] = [
    [
      'created',
      { Status: 'created', StartedAt: ZERO, FinishedAt: ZERO },
      { state: 'CONTAINER_CREATED', startedAt: 0n, reason: '' },
    ],
    [
      'running',
      { Running: true, StartedAt: T1, FinishedAt: ZERO },
      { state: 'CONTAINER_RUNNING', startedAt: T1NS, finishedAt: 0n, reason: '' },
    ],
    [
      'exited 0',
      { ExitCode: 0, StartedAt: T1, FinishedAt: T2 },
      { state: 'CONTAINER_EXITED', exitCode: 0, reason: 'Completed', startedAt: T1NS, finishedAt: T2NS },
    ],
    [
      'exited 3',
      { ExitCode: 3, StartedAt: T1, FinishedAt: T2 },
      { state: 'CONTAINER_EXITED', exitCode: 3, reason: 'Error' },
    ],
    [
      'OOM killed',
      { ExitCode: 137, OOMKilled: true, StartedAt: T1, FinishedAt: T2 },
      { state: 'CONTAINER_EXITED', exitCode: 137, reason: 'OOMKilled' },
    ],
    [
      'could not run',
      { ExitCode: 127, Error: 'exec: "nope": executable file not found', StartedAt: ZERO, FinishedAt: ZERO },
      {
        state: 'CONTAINER_EXITED',
        reason: 'ContainerCannotRun',
        message: 'exec: "nope": executable file not found',
        startedAt: CREATED_NS,
        finishedAt: CREATED_NS,
      },
    ],
    [
      'started after it finished (a process that exits at once)',
      { ExitCode: 0, StartedAt: T2, FinishedAt: T1 },
      { startedAt: T1NS, finishedAt: T1NS },
    ],
  ];
  for (const [what, docker, want] of inspectCases) {
    it(`inspect ${what}`, () => {
      const got = containerStateFromInspect(docker, CREATED_NS);
      for (const [k, v] of Object.entries(want)) assert.equal(got[k as keyof ContainerStateView], v, k);
    });
  }
});

describe('resources, ports and users → docker', () => {
  it('resources → HostConfig (memory also caps swap; zeros left to docker)', () => {
    assert.deepEqual(
      resourcesToHostConfig({
        cpuPeriod: 100_000,
        cpuQuota: 25_000,
        cpuShares: 256,
        memoryLimitInBytes: 1 << 27,
      }),
      { CpuPeriod: 100_000, CpuQuota: 25_000, CpuShares: 256, Memory: 1 << 27, MemorySwap: 1 << 27 },
    );
    assert.deepEqual(resourcesToHostConfig({ cpuShares: 2, cpuQuota: 0, memoryLimitInBytes: 0 }), {
      CpuShares: 2,
    });
    assert.deepEqual(resourcesToHostConfig(undefined), {});
  });

  it('port mappings with a hostPort are published; others are not', () => {
    assert.deepEqual(
      portBindings([
        { protocol: 'TCP', containerPort: 80, hostPort: 8080, hostIp: '127.0.0.2' },
        { protocol: 'UDP', containerPort: 53, hostPort: 5353, hostIp: '' },
        { protocol: 'TCP', containerPort: 80, hostPort: 8081, hostIp: '' },
        { protocol: 'TCP', containerPort: 9090, hostPort: 0, hostIp: '' },
      ]),
      {
        ExposedPorts: { '80/tcp': {}, '53/udp': {} },
        PortBindings: {
          '80/tcp': [
            { HostIp: '127.0.0.2', HostPort: '8080' },
            { HostIp: '', HostPort: '8081' },
          ],
          '53/udp': [{ HostIp: '', HostPort: '5353' }],
        },
      },
    );
  });

  const users: [{ runAsUser?: number; runAsGroup?: number } | undefined, string | undefined][] = [
    [undefined, undefined],
    [{}, undefined],
    [{ runAsUser: 1000 }, '1000'],
    [{ runAsUser: 0, runAsGroup: 0 }, '0:0'],
    [{ runAsGroup: 5 }, undefined],
  ];
  for (const [sc, want] of users)
    it(`user ${JSON.stringify(sc)} → ${want}`, () => assert.equal(dockerUser(sc), want));
});

const sandbox: PodSandboxConfig = {
  metadata: { name: 'web-0', namespace: 'default', uid: '1234-abcd', attempt: 1 },
  hostname: 'web-0',
  portMappings: [{ protocol: 'TCP', containerPort: 80, hostPort: 30080, hostIp: '' }],
  labels: { app: 'web', 'io.k8ts.node': 'spoofed' },
  annotations: { 'kubernetes.io/config.seen': '2026-11-30T12:00:00Z', weird: 'a "quoted"\nvalue' },
  network: 'k8ts-node-a',
  linux: { cgroupParent: '/kubepods', sysctls: { 'net.ipv4.ip_forward': '1' } },
};

const container: ContainerConfig = {
  metadata: { name: 'nginx', attempt: 2 },
  image: { image: 'spring-server:1.0' },
  command: ['/bin/server'],
  args: ['--port', '80'],
  workingDir: '/srv',
  envs: [{ key: 'A', value: 'x=y' }],
  mounts: [
    { hostPath: '/data', containerPath: '/var/data', readonly: false },
    { hostPath: '/cfg', containerPath: '/etc/cfg', readonly: true },
  ],
  labels: { 'io.kubernetes.container.name': 'nginx' },
  annotations: { 'io.kubernetes.container.hash': 'abc' },
  linux: { resources: { cpuShares: 102 }, securityContext: { runAsUser: 1000, readonlyRootfs: true } },
};

describe('create options', () => {
  it('sandbox: pause image, hostname, network, ports, shareable IPC, cgroup parent, sysctls', () => {
    const body = sandboxCreateOptions(sandbox, 'k8ts/pause:1.0', 'name', { l: 'v' });
    assert.equal(body.Image, 'k8ts/pause:1.0');
    assert.equal(body.Hostname, 'web-0');
    assert.deepEqual(body.Labels, { l: 'v' });
    assert.deepEqual(body.ExposedPorts, { '80/tcp': {} });
    assert.deepEqual(body.HostConfig, {
      NetworkMode: 'k8ts-node-a',
      PortBindings: { '80/tcp': [{ HostIp: '', HostPort: '30080' }] },
      IpcMode: 'shareable',
      RestartPolicy: { Name: 'no' },
      CgroupParent: '/kubepods',
      Sysctls: { 'net.ipv4.ip_forward': '1' },
    });
    assert.equal(
      (
        sandboxCreateOptions({ ...sandbox, network: undefined }, 'p', 'n', {}).HostConfig as {
          NetworkMode: string;
        }
      ).NetworkMode,
      'bridge',
    );
  });

  it('container: joins the sandbox, command → Entrypoint, args → Cmd, env, binds, user, resources', () => {
    const body = containerCreateOptions('sb1', container, sandbox, 'name', {});
    assert.deepEqual(body.Entrypoint, ['/bin/server']);
    assert.deepEqual(body.Cmd, ['--port', '80']);
    assert.deepEqual(body.Env, ['A=x=y']);
    assert.equal(body.WorkingDir, '/srv');
    assert.equal(body.User, '1000');
    assert.deepEqual(body.HostConfig, {
      NetworkMode: 'container:sb1',
      IpcMode: 'container:sb1',
      Binds: ['/data:/var/data', '/cfg:/etc/cfg:ro'],
      ReadonlyRootfs: true,
      Privileged: false,
      RestartPolicy: { Name: 'no' },
      CpuShares: 102,
      CgroupParent: '/kubepods',
    });
    const bare = containerCreateOptions(
      'sb1',
      { ...container, command: [], args: undefined },
      sandbox,
      'n',
      {},
    );
    assert.equal('Entrypoint' in bare, false, "no command: the image's entrypoint");
    assert.equal('Cmd' in bare, false, "no args: the image's cmd");
  });
});

describe('namespaces and capabilities → docker (dockershim’s modify*NamespaceOptions)', () => {
  const host = { network: 'NODE', pid: 'NODE', ipc: 'NODE' } as const;
  const hostSandbox: PodSandboxConfig = {
    ...sandbox,
    linux: { securityContext: { namespaceOptions: host } },
  };

  it('a sandbox in the node’s namespaces: NetworkMode/PidMode/IpcMode host, no hostname, no published ports', () => {
    const body = sandboxCreateOptions(hostSandbox, 'p', 'n', {});
    const hc = body.HostConfig as Record<string, unknown>;
    assert.deepEqual([hc.NetworkMode, hc.PidMode, hc.IpcMode], ['host', 'host', 'host']);
    assert.equal('Hostname' in body, false);
    assert.deepEqual([body.ExposedPorts, hc.PortBindings], [{}, {}]);
  });

  const cases: [string, ContainerConfig['linux'], Record<string, unknown>][] = [
    [
      'no options: the sandbox’s network and IPC, a PID namespace of its own',
      {},
      { NetworkMode: 'container:sb1', IpcMode: 'container:sb1' },
    ],
    [
      'pid POD (shareProcessNamespace): the sandbox’s',
      { securityContext: { namespaceOptions: { network: 'POD', pid: 'POD', ipc: 'POD' } } },
      { NetworkMode: 'container:sb1', IpcMode: 'container:sb1', PidMode: 'container:sb1' },
    ],
    [
      'NODE: the host’s (network through the host-network sandbox, so its resolv.conf; UTS the host’s)',
      { securityContext: { namespaceOptions: host } },
      { NetworkMode: 'container:sb1', UTSMode: 'host', IpcMode: 'host', PidMode: 'host' },
    ],
    [
      'capabilities add/drop',
      { securityContext: { capabilities: { addCapabilities: ['NET_ADMIN'], dropCapabilities: ['ALL'] } } },
      { CapAdd: ['NET_ADMIN'], CapDrop: ['ALL'] },
    ],
    ['privileged', { securityContext: { privileged: true } }, { Privileged: true }],
    ['noNewPrivs', { securityContext: { noNewPrivs: true } }, { SecurityOpt: ['no-new-privileges'] }],
  ];
  for (const [what, linux, want] of cases) {
    it(`container: ${what}`, () => {
      const hc = containerCreateOptions('sb1', { ...container, linux }, sandbox, 'n', {})
        .HostConfig as Record<string, unknown>;
      for (const [k, v] of Object.entries(want)) assert.deepEqual(hc[k], v, k);
      for (const k of ['PidMode', 'CapAdd', 'CapDrop', 'SecurityOpt'])
        if (!(k in want)) assert.equal(k in hc, false, k);
    });
  }
});

describe('imageUser (dockershim’s getUserFromImageUser)', () => {
  const cases: [string | undefined, { uid?: number; username?: string }][] = [
    [undefined, {}],
    ['', {}],
    ['0', { uid: 0 }],
    ['65534:65534', { uid: 65534 }],
    ['nobody', { username: 'nobody' }],
    ['app:staff', { username: 'app' }],
  ];
  for (const [user, want] of cases)
    it(`${JSON.stringify(user)} → ${JSON.stringify(want)}`, () => assert.deepEqual(imageUser(user), want));
});

describe('labels', () => {
  it('a sandbox is rebuilt from its labels exactly; internal keys win over CRI labels', () => {
    const labels = sandboxLabels('node-a', sandbox, 42n);
    assert.equal(labels['io.k8ts.node'], 'node-a');
    assert.equal(labels.app, 'web');
    assert.ok(isOwned(labels, 'node-a', 'podsandbox'));
    assert.ok(!isOwned(labels, 'node-b', 'podsandbox'));
    assert.ok(!isOwned(labels, 'node-a', 'container'));
    assert.deepEqual(sandboxFromLabels(labels), {
      metadata: sandbox.metadata,
      labels: sandbox.labels,
      annotations: sandbox.annotations,
      createdAt: 42n,
      network: 'k8ts-node-a',
    });
  });

  it("stamps dockershim's type label itself, over a CRI label of that key", () => {
    const spoofed = { ...sandbox, labels: { 'io.kubernetes.docker.type': 'container' } };
    assert.equal(sandboxLabels('node-a', spoofed, 1n)['io.kubernetes.docker.type'], 'podsandbox');
    const labels = containerLabels('node-a', 'sb1', sandbox, container, 1n);
    assert.equal(labels['io.kubernetes.docker.type'], 'container');
  });

  it('a container is rebuilt from its labels exactly', () => {
    const labels = containerLabels('node-a', 'sb1', sandbox, container, 7n);
    assert.equal(labels['io.kubernetes.pod.name'], 'web-0');
    assert.ok(isOwned(labels, 'node-a', 'container'));
    assert.deepEqual(containerFromLabels(labels), {
      podSandboxId: 'sb1',
      metadata: container.metadata,
      image: 'spring-server:1.0',
      labels: container.labels,
      annotations: container.annotations,
      createdAt: 7n,
    });
  });

  it('labels edited by hand decode as empty, not as a failure', () => {
    const v = containerFromLabels({
      'io.k8ts.labels': '{not json',
      'io.k8ts.annotations': '[1]',
      'io.k8ts.attempt': 'x',
    });
    assert.deepEqual([v.labels, v.annotations, v.metadata.attempt, v.createdAt], [{}, {}, 0, 0n]);
  });

  it('docker names as dockershim: k8ts_POD_<pod>_<ns>_<uid>_<attempt>', () => {
    assert.equal(sandboxName(sandbox.metadata), 'k8ts_POD_web-0_default_1234-abcd_1');
    assert.equal(containerName(sandbox.metadata, container.metadata), 'k8ts_nginx_web-0_default_1234-abcd_2');
  });
});

describe('stats', () => {
  const now = 99n;
  const cases: [string, Parameters<typeof statsFromDocker>[1], bigint, number, bigint][] = [
    [
      'cgroup v1: usage - total_inactive_file',
      {
        read: T1,
        cpu_stats: { cpu_usage: { total_usage: 5_000 } },
        memory_stats: { usage: 1000, stats: { total_inactive_file: 300, cache: 500 } },
      },
      5_000n,
      700,
      T1NS,
    ],
    [
      'cgroup v2: usage - inactive_file',
      { memory_stats: { usage: 1000, stats: { inactive_file: 100 } } },
      0n,
      900,
      now,
    ],
    ['old engines: usage - cache', { memory_stats: { usage: 1000, stats: { cache: 400 } } }, 0n, 600, now],
    [
      'never negative',
      { read: ZERO, memory_stats: { usage: 10, stats: { inactive_file: 100 } } },
      0n,
      0,
      now,
    ],
  ];
  for (const [what, s, cpu, mem, ts] of cases) {
    it(what, () => {
      assert.deepEqual(statsFromDocker('c1', s, now), {
        id: 'c1',
        timestamp: ts,
        cpuUsageCoreNanoSeconds: cpu,
        memoryWorkingSetBytes: mem,
      });
    });
  }
});

describe('docker errors → CriError codes', () => {
  const cases: [string, object, string][] = [
    ['404', { statusCode: 404, json: { message: 'No such container: x' } }, 'NotFound'],
    [
      '409 name in use',
      { statusCode: 409, json: { message: 'Conflict. The container name "/a" is already in use' } },
      'AlreadyExists',
    ],
    [
      '409 not running',
      { statusCode: 409, json: { message: 'Container x is not running' } },
      'FailedPrecondition',
    ],
    ['400', { statusCode: 400, json: { message: 'invalid reference format' } }, 'InvalidArgument'],
    [
      '403',
      { statusCode: 403, json: { message: 'error while removing network: has active endpoints' } },
      'FailedPrecondition',
    ],
    ['500', { statusCode: 500, json: { message: 'boom' } }, 'Internal'],
    [
      'socket refused',
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      'Unavailable',
    ],
    ['no socket', Object.assign(new Error('connect ENOENT'), { code: 'ENOENT' }), 'Unavailable'],
  ];
  for (const [what, err, code] of cases) {
    it(what, () => {
      const e = toCriError(err, 'do it');
      assert.equal(e.code, code);
      assert.match(e.message, /^do it: /);
    });
  }
  it('keeps docker’s message', () => {
    assert.equal(
      toCriError({ statusCode: 404, json: { message: 'No such image: a:b' } }, 'x').message,
      'x: No such image: a:b',
    );
    assert.equal(criCodeOf({ message: '' }), 'Internal');
  });
});
