// One file because one fake: every test runs the Docker adapter on the in-memory FakeEngine defined here, which no other file uses.
/**
 * The Docker adapter's own logic on a fake engine (engine.ts's DockerEngine, in memory),
 * without dockerd: what it asks the engine for (create bodies, ownership filters), how it
 * rebuilds CRI's view from labels, which objects it refuses to see, and how the engine's
 * errors become CriErrors. docker.test.ts holds the same adapter to the real engine.
 */
import assert from 'node:assert/strict';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable, type Duplex, type Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import type Docker from 'dockerode';
import type { ContainerConfig, PodSandboxConfig } from '../api.js';
import { isCriError, type CriErrorCode } from '../errors.js';
import type { DockerStats } from './convert.js';
import type { DockerEngine, EngineVersion, ExecState } from './engine.js';
import type { BridgeNetwork, DockerPodInterfaces } from './pod-interfaces.js';
import { DockerRuntime } from './runtime.js';

/** A Docker error as dockerode throws it: an HTTP status and Docker's message. */
const httpError = (statusCode: number, message: string) =>
  Object.assign(new Error(`(HTTP code ${statusCode}) ${message}`), { statusCode, json: { message } });

/** A socket error as the engine's client throws it when dockerd is not there. */
const socketError = (code: string) =>
  Object.assign(new Error(`connect ${code} /var/run/docker.sock`), { code });

interface FakeContainer {
  id: string;
  body: Record<string, unknown>;
  labels: Record<string, string>;
  state: 'created' | 'running' | 'exited';
  exitCode: number;
}

/** An engine in memory: containers, images and networks, and a log of the calls made. */
class FakeEngine implements DockerEngine {
  readonly calls: string[] = [];
  readonly containers = new Map<string, FakeContainer>();
  readonly images = new Map<string, Docker.ImageInspectInfo>();
  readonly networks = new Map<string, Docker.NetworkInspectInfo>();
  /** Set to make the named call throw this error (once per call made). */
  readonly failures = new Map<string, unknown>();
  execs = new Map<string, ExecState & { output: Buffer }>();
  /** Every container's HostsPath in inspect ('' : none). */
  hostsPath = '';
  /** Every container's ResolvConfPath in inspect ('' : none). */
  resolvConfPath = '';
  private seq = 0;

  private fail(call: string): void {
    this.calls.push(call);
    const err = this.failures.get(call);
    if (err !== undefined) throw err;
  }

  private get(id: string): FakeContainer {
    const c = this.containers.get(id);
    if (!c) throw httpError(404, `No such container: ${id}`);
    return c;
  }

  async ping(): Promise<void> {
    this.fail('ping');
  }
  async version(): Promise<EngineVersion> {
    this.fail('version');
    return { Version: '99.0', ApiVersion: '1.99' };
  }
  async createContainer(body: Record<string, unknown>): Promise<string> {
    this.fail('createContainer');
    const id = `c${++this.seq}`.padEnd(12, '0');
    const labels = (body.Labels ?? {}) as Record<string, string>;
    this.containers.set(id, { id, body, labels, state: 'created', exitCode: 0 });
    return id;
  }
  async startContainer(id: string): Promise<void> {
    this.fail('startContainer');
    this.get(id).state = 'running';
  }
  async stopContainer(id: string): Promise<void> {
    this.fail('stopContainer');
    const c = this.get(id);
    if (c.state !== 'running') throw httpError(304, 'container already stopped');
    c.state = 'exited';
  }
  async removeContainer(id: string, opts: { force: boolean; v?: boolean }): Promise<void> {
    this.fail('removeContainer');
    this.get(id);
    this.calls.push(`removed ${id} force=${opts.force}`);
    this.containers.delete(id);
  }
  async inspectContainer(id: string): Promise<Docker.ContainerInspectInfo> {
    this.fail('inspectContainer');
    const c = this.get(id);
    const network = (c.labels['io.k8ts.network'] ?? '') || 'bridge';
    return {
      Id: c.id,
      Image: 'sha256:pause',
      LogPath: `/var/lib/docker/containers/${c.id}/${c.id}-json.log`,
      Config: { Labels: c.labels, Tty: false },
      State: {
        Status: c.state,
        Running: c.state === 'running',
        Pid: c.state === 'running' ? 4242 : 0,
        ExitCode: c.exitCode,
        StartedAt: c.state === 'created' ? '0001-01-01T00:00:00Z' : '2026-12-01T10:00:00.5Z',
        FinishedAt: c.state === 'exited' ? '2026-12-01T10:00:01Z' : '0001-01-01T00:00:00Z',
      },
      Name: `/${String(c.body.name ?? '')}`,
      HostsPath: this.hostsPath,
      ResolvConfPath: this.resolvConfPath,
      NetworkSettings: { IPAddress: '', Networks: { [network]: { IPAddress: '10.42.0.7' } } },
    } as unknown as Docker.ContainerInspectInfo;
  }
  async listContainers(filters: Record<string, string[]>): Promise<Docker.ContainerInfo[]> {
    this.fail('listContainers');
    this.calls.push(`list ${JSON.stringify(filters)}`);
    return [...this.containers.values()]
      .filter((c) => (filters.label ?? []).every((kv) => c.labels[kv.split('=')[0]!] === kv.split('=')[1]))
      .filter((c) => (filters.id ?? []).every((id) => c.id.startsWith(id)))
      .map(
        (c) =>
          ({
            Id: c.id,
            Names: [`/${String(c.body.name ?? '')}`],
            Labels: c.labels,
            State: c.state,
            ImageID: 'sha256:img',
          }) as Docker.ContainerInfo,
      );
  }
  async containerStats(): Promise<DockerStats> {
    this.fail('containerStats');
    return {
      read: '2026-12-01T10:00:02Z',
      cpu_stats: { cpu_usage: { total_usage: 5e9 } },
      memory_stats: { usage: 300, stats: { inactive_file: 100 } },
    };
  }
  async containerLogs(): Promise<Readable> {
    this.fail('containerLogs');
    return Readable.from([]);
  }
  async attachContainer(): Promise<Duplex> {
    this.fail('attachContainer');
    return new PassThrough();
  }
  async resizeContainer(): Promise<void> {
    this.fail('resizeContainer');
  }
  async createExec(containerId: string, opts: { Cmd: string[] }): Promise<string> {
    this.fail('createExec');
    this.get(containerId);
    const id = `exec-${++this.seq}`;
    this.execs.set(id, { Running: true, ExitCode: null, output: Buffer.from(opts.Cmd.join(' ')) });
    return id;
  }
  async startExec(execId: string): Promise<Duplex> {
    this.fail('startExec');
    const exec = this.execs.get(execId)!;
    const stream = new PassThrough();
    if (exec.output.length > 0) {
      stream.end(exec.output);
      exec.Running = false;
      exec.ExitCode = 3;
    }
    return stream;
  }
  async inspectExec(execId: string): Promise<ExecState> {
    this.fail('inspectExec');
    const { Running, ExitCode } = this.execs.get(execId)!;
    return { Running, ExitCode };
  }
  async resizeExec(): Promise<void> {
    this.fail('resizeExec');
  }
  demuxStream(stream: Readable, stdout: Writable): void {
    // The fake's exec output is unframed: all of it is stdout.
    stream.pipe(stdout);
  }
  async listImages(): Promise<Docker.ImageInfo[]> {
    this.fail('listImages');
    return [...this.images.values()].map(
      (i) =>
        ({
          Id: i.Id,
          RepoTags: [...(i.RepoTags ?? []), '<none>:<none>'],
          RepoDigests: [],
          Size: 1,
        }) as unknown as Docker.ImageInfo,
    );
  }
  async inspectImage(ref: string): Promise<Docker.ImageInspectInfo> {
    this.fail('inspectImage');
    const i = this.images.get(ref);
    if (!i) throw httpError(404, `No such image: ${ref}`);
    return i;
  }
  /** The authconfig of each pull, in order (undefined: none). */
  readonly pullAuths: (Docker.AuthConfigObject | undefined)[] = [];
  async pullImage(opts: {
    fromImage: string;
    tag: string;
    authconfig?: Docker.AuthConfigObject;
  }): Promise<Readable> {
    this.fail('pullImage');
    this.calls.push(`pull ${opts.fromImage}:${opts.tag}`);
    this.pullAuths.push(opts.authconfig);
    const ref = `${opts.fromImage}:${opts.tag}`;
    this.images.set(ref, {
      Id: `sha256:${opts.fromImage}`,
      RepoTags: [ref],
      RepoDigests: [],
      Size: 1,
    } as unknown as Docker.ImageInspectInfo);
    return Readable.from([JSON.stringify({ status: 'Downloaded newer image' }) + '\n']);
  }
  async removeImage(ref: string): Promise<void> {
    this.fail('removeImage');
    if (!this.images.delete(ref)) throw httpError(404, `No such image: ${ref}`);
  }
  async inspectNetwork(name: string): Promise<Docker.NetworkInspectInfo> {
    this.fail('inspectNetwork');
    const n = this.networks.get(name);
    if (!n) throw httpError(404, `network ${name} not found`);
    return n;
  }
  async createNetwork(body: Docker.NetworkCreateOptions): Promise<void> {
    this.fail('createNetwork');
    // As Docker's inspect: the gateway only when it was given.
    const config = body.IPAM?.Config ?? [];
    this.networks.set(body.Name, {
      Name: body.Name,
      Id: `${body.Name.length}0123456789abcdef`,
      Driver: body.Driver,
      Labels: body.Labels,
      Options: body.Options ?? {},
      IPAM: { ...body.IPAM, Config: config },
      Containers: {},
    } as unknown as Docker.NetworkInspectInfo);
  }
  async removeNetwork(name: string): Promise<void> {
    this.fail('removeNetwork');
    if (!this.networks.delete(name)) throw httpError(404, `network ${name} not found`);
  }
}

const sandboxConfig: PodSandboxConfig = {
  metadata: { name: 'web-0', namespace: 'shop', uid: 'u-1', attempt: 0 },
  hostname: 'web-0',
  portMappings: [],
  labels: { app: 'web', 'io.kubernetes.pod.uid': 'u-1' },
  annotations: { note: 'x' },
  network: 'k8ts-node-a',
};

const containerConfig: ContainerConfig = {
  metadata: { name: 'nginx', attempt: 1 },
  image: { image: 'nginx:1' },
  labels: { 'io.kubernetes.container.name': 'nginx' },
  annotations: {},
};

async function adapter(engine = new FakeEngine(), nodeName = 'node-a', podInterfaces?: DockerPodInterfaces) {
  engine.images.set('k8ts/pause:1.0', {
    Id: 'sha256:pause',
    RepoTags: ['k8ts/pause:1.0'],
    RepoDigests: [],
    Size: 1,
  } as unknown as Docker.ImageInspectInfo);
  return {
    engine,
    rt: await DockerRuntime.onEngine(engine, {
      nodeName,
      execExitWaitMs: 100,
      ...(podInterfaces ? { podInterfaces } : {}),
    }),
  };
}

async function rejectsWith(p: Promise<unknown>, code: CriErrorCode, message?: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(isCriError(err, code), `want CriError ${code}, got ${String(err)}`);
    if (message) assert.match((err as Error).message, message);
    return true;
  });
}

describe('docker adapter on a fake engine', () => {
  it('connect: nodeName required; an engine that does not answer is Unavailable', async () => {
    await assert.rejects(DockerRuntime.onEngine(new FakeEngine(), { nodeName: '' }), /nodeName is required/);
    const down = new FakeEngine();
    down.failures.set('ping', socketError('ECONNREFUSED'));
    await rejectsWith(
      DockerRuntime.onEngine(down, { nodeName: 'n' }),
      'Unavailable',
      /docker is not reachable/,
    );
  });

  it('runs a sandbox as the pause image, named and labelled for its node, and rebuilds it from labels', async () => {
    const { engine, rt } = await adapter();
    const id = await rt.runPodSandbox(sandboxConfig);
    const c = engine.containers.get(id)!;
    assert.equal(c.state, 'running');
    assert.equal(c.body.name, 'k8ts_POD_web-0_shop_u-1_0');
    assert.equal(c.body.Image, 'k8ts/pause:1.0');
    assert.equal(c.labels['io.k8ts.node'], 'node-a');
    assert.equal(c.labels['io.k8ts.type'], 'podsandbox');
    assert.equal(c.labels['io.kubernetes.docker.type'], 'podsandbox');
    assert.ok(!engine.calls.includes('pullImage'), 'the pause image is there: no pull');

    const [listed] = await rt.listPodSandbox();
    assert.deepEqual(
      { id: listed!.id, metadata: listed!.metadata, state: listed!.state },
      { id, metadata: sandboxConfig.metadata, state: 'SANDBOX_READY' },
    );
    assert.deepEqual(listed!.labels, sandboxConfig.labels, 'exactly the CRI labels, not the docker ones');
    assert.deepEqual(listed!.annotations, sandboxConfig.annotations);
    assert.ok(
      engine.calls.includes(
        `list ${JSON.stringify({ label: ['io.k8ts.node=node-a', 'io.k8ts.type=podsandbox'] })}`,
      ),
      "the engine is asked for this node's sandboxes only",
    );
    assert.deepEqual(await rt.listPodSandbox({ labelSelector: { app: 'db' } }), []);
    const status = await rt.podSandboxStatus(id);
    assert.equal(status.network.ip, '10.42.0.7', "the IP on the sandbox's own network");
  });

  it('a sandbox that does not start is removed, and the error names what failed', async () => {
    const { engine, rt } = await adapter();
    engine.failures.set('startContainer', httpError(500, 'cannot join network'));
    await rejectsWith(
      rt.runPodSandbox(sandboxConfig),
      'Internal',
      /^run pod sandbox shop\/web-0: cannot join network$/,
    );
    assert.equal(engine.containers.size, 0);
    assert.ok(engine.calls.some((c) => /^removed .* force=true$/.test(c)));
  });

  it('pulls a missing pause image first', async () => {
    const engine = new FakeEngine();
    const rt = await DockerRuntime.onEngine(engine, { nodeName: 'node-a', pauseImage: 'k8ts/pause:2.0' });
    await rt.runPodSandbox(sandboxConfig);
    assert.ok(
      engine.calls.includes('pull docker.io/k8ts/pause:2.0') || engine.calls.includes('pull k8ts/pause:2.0'),
    );
  });

  it("another node's objects, and a sandbox asked for as a container, do not exist", async () => {
    const engine = new FakeEngine();
    const { rt: a } = await adapter(engine, 'node-a');
    const { rt: b } = await adapter(engine, 'node-b');
    const sandbox = await a.runPodSandbox(sandboxConfig);
    await rejectsWith(b.podSandboxStatus(sandbox), 'NotFound');
    assert.deepEqual(await b.listPodSandbox(), []);
    await rejectsWith(a.containerStatus(sandbox), 'NotFound', /^container ".*" not found$/);
    await b.removePodSandbox(sandbox); // idempotent: nothing of b's to remove
    assert.ok(engine.containers.has(sandbox));
    await rejectsWith(a.podSandboxStatus(''), 'NotFound');
  });

  it('creates a container in its sandbox and reads its state back; stop and remove are idempotent', async () => {
    const { engine, rt } = await adapter();
    const sandbox = await rt.runPodSandbox(sandboxConfig);
    const id = await rt.createContainer(sandbox, containerConfig, sandboxConfig);
    const labels = engine.containers.get(id)!.labels;
    assert.equal(labels['io.kubernetes.sandbox.id'], sandbox);
    assert.equal(labels['io.kubernetes.docker.type'], 'container');
    assert.equal(engine.containers.get(id)!.body.name, 'k8ts_nginx_web-0_shop_u-1_1');
    assert.equal((await rt.containerStatus(id)).state, 'CONTAINER_CREATED');
    await rt.startContainer(id);
    await rejectsWith(rt.startContainer(id), 'FailedPrecondition', /is CONTAINER_RUNNING, not created/);
    const [c] = await rt.listContainers({ podSandboxId: sandbox });
    assert.deepEqual(
      [c!.id, c!.podSandboxId, c!.metadata, c!.image, c!.state],
      [id, sandbox, containerConfig.metadata, 'nginx:1', 'CONTAINER_RUNNING'],
    );
    await rt.stopContainer(id, 10);
    await rt.stopContainer(id, 10); // docker's 304
    const st = await rt.containerStatus(id);
    assert.deepEqual([st.state, st.reason, st.exitCode], ['CONTAINER_EXITED', 'Completed', 0]);
    await rt.removeContainer(id);
    await rt.removeContainer(id);
    await rejectsWith(rt.containerStatus(id), 'NotFound');
  });

  it("links the kubelet's log path to Docker's log at every start, also a failed one, and unlinks it on remove", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'k8ts-docker-logs-'));
    try {
      const { engine, rt } = await adapter();
      const logDirectory = join(dir, 'shop_web-0_u-1');
      const sb = { ...sandboxConfig, logDirectory };
      const sandbox = await rt.runPodSandbox(sb);
      const id = await rt.createContainer(sandbox, { ...containerConfig, logPath: 'nginx/1.log' }, sb);
      const link = join(logDirectory, 'nginx/1.log');
      assert.equal(engine.containers.get(id)!.labels['io.kubernetes.container.logpath'], link);
      assert.equal(
        (await rt.containerStatus(id)).logPath,
        link,
        "the kubelet's path, as cri-dockerd reports it",
      );
      mkdirSync(join(logDirectory, 'nginx'), { recursive: true });
      writeFileSync(link, 'left from before');
      await rt.startContainer(id);
      assert.equal(
        readlinkSync(link),
        `/var/lib/docker/containers/${id}/${id}-json.log`,
        'replaced by the link',
      );

      const failing = await rt.createContainer(
        sandbox,
        { ...containerConfig, metadata: { name: 'nginx', attempt: 2 }, logPath: 'nginx/2.log' },
        sb,
      );
      engine.failures.set('startContainer', httpError(400, 'exec: "nginx": executable file not found'));
      await rejectsWith(rt.startContainer(failing), 'InvalidArgument');
      engine.failures.delete('startContainer');
      assert.equal(
        readlinkSync(join(logDirectory, 'nginx/2.log')),
        `/var/lib/docker/containers/${failing}/${failing}-json.log`,
      );

      await rt.removeContainer(id);
      assert.deepEqual(readdirSync(join(logDirectory, 'nginx')), ['2.log']);
      await rt.removePodSandbox(sandbox);
      assert.deepEqual(
        readdirSync(join(logDirectory, 'nginx')),
        [],
        "the sandbox's containers are unlinked too",
      );

      // Without a logDirectory there is no kubelet path: Docker's own file is the logPath.
      const plain = await rt.runPodSandbox(sandboxConfig);
      const other = await rt.createContainer(
        plain,
        { ...containerConfig, logPath: 'nginx/0.log' },
        sandboxConfig,
      );
      assert.equal(engine.containers.get(other)!.labels['io.kubernetes.container.logpath'], undefined);
      await rt.startContainer(other);
      assert.equal(
        (await rt.containerStatus(other)).logPath,
        `/var/lib/docker/containers/${other}/${other}-json.log`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a container in a sandbox that is not running, and a malformed image', async () => {
    const { rt } = await adapter();
    const sandbox = await rt.runPodSandbox(sandboxConfig);
    await rejectsWith(
      rt.createContainer(sandbox, { ...containerConfig, image: { image: 'busybox:a b' } }, sandboxConfig),
      'InvalidArgument',
    );
    await rt.stopPodSandbox(sandbox);
    await rejectsWith(
      rt.createContainer(sandbox, containerConfig, sandboxConfig),
      'FailedPrecondition',
      /is not ready/,
    );
  });

  it('execSync collects output and the exit code; stats are CRI units', async () => {
    const { rt } = await adapter();
    const sandbox = await rt.runPodSandbox(sandboxConfig);
    const id = await rt.createContainer(sandbox, containerConfig, sandboxConfig);
    await rejectsWith(rt.execSync(id, ['true'], 1), 'FailedPrecondition', /not running/);
    await rt.startContainer(id);
    const r = await rt.execSync(id, ['echo', 'hi'], 5);
    assert.deepEqual([r.stdout.toString(), r.exitCode], ['echo hi', 3]);
    const s = await rt.containerStats(id);
    assert.deepEqual([s.cpuUsageCoreNanoSeconds, s.memoryWorkingSetBytes], [5_000_000_000n, 200]);
  });

  it('execSync of a command that never ends is DeadlineExceeded', async () => {
    const { engine, rt } = await adapter();
    const sandbox = await rt.runPodSandbox(sandboxConfig);
    const id = await rt.createContainer(sandbox, containerConfig, sandboxConfig);
    await rt.startContainer(id);
    const create = engine.createExec.bind(engine);
    engine.createExec = async (cid, opts) => {
      const execId = await create(cid, opts);
      engine.execs.get(execId)!.output = Buffer.alloc(0); // no output, no end
      return execId;
    };
    await rejectsWith(rt.execSync(id, ['sleep', '1000'], 0.05), 'DeadlineExceeded', /timed out after 0.05s/);
  });

  const errorCases: [what: string, err: unknown, code: CriErrorCode][] = [
    ['no such object', httpError(404, 'No such container: x'), 'NotFound'],
    ['a name in use', httpError(409, 'Conflict. The container name "/x" is already in use'), 'AlreadyExists'],
    ['another conflict', httpError(409, 'container is paused'), 'FailedPrecondition'],
    ['a bad request', httpError(400, 'invalid reference format'), 'InvalidArgument'],
    ['the engine unreachable', socketError('ECONNREFUSED'), 'Unavailable'],
    ['the engine failing', httpError(500, 'driver failed'), 'Internal'],
  ];
  for (const [what, err, code] of errorCases)
    it(`the engine's ${what} is ${code}`, async () => {
      const { engine, rt } = await adapter();
      engine.failures.set('createContainer', err);
      await rejectsWith(rt.runPodSandbox(sandboxConfig), code, /^run pod sandbox shop\/web-0: /);
    });

  it('pull failures are ImagePullFailed, except an unreachable engine; images list without placeholders', async () => {
    const { engine, rt } = await adapter();
    engine.failures.set('pullImage', httpError(404, 'pull access denied'));
    await rejectsWith(rt.pullImage('nope:1'), 'ImagePullFailed', /pull access denied/);
    engine.failures.set('pullImage', socketError('ENOENT'));
    await rejectsWith(rt.pullImage('nope:1'), 'Unavailable');
    engine.failures.delete('pullImage');
    assert.equal(await rt.pullImage('busybox:1'), 'sha256:busybox');
    assert.ok(engine.calls.includes('pull busybox:1'));
    assert.equal(engine.pullAuths.at(-1), undefined, 'no credentials, no X-Registry-Auth');
    await rt.pullImage('busybox:1', undefined, { auth: Buffer.from('ann:s3:cret').toString('base64') });
    assert.deepEqual(engine.pullAuths.at(-1), { username: 'ann', password: 's3:cret' }, 'auth split');
    await rt.pullImage('busybox:1', undefined, {
      username: 'bob',
      password: 'pw',
      serverAddress: 'r.example',
    });
    assert.deepEqual(engine.pullAuths.at(-1), {
      username: 'bob',
      password: 'pw',
      serveraddress: 'r.example',
    });
    assert.deepEqual(
      (await rt.listImages()).map((i) => i.repoTags),
      [['k8ts/pause:1.0'], ['busybox:1']],
    );
    assert.equal(await rt.imageStatus('absent:1'), undefined);
    await rt.removeImage('absent:1');
  });

  it('the pod network: made with subnet, labels and MTU; kept when it matches; refused when not ours', async () => {
    const { engine, rt } = await adapter();
    const net = {
      name: 'k8ts-node-a',
      subnet: '10.42.0.0/24',
      labels: { 'io.k8ts.node': 'node-a' },
      mtu: 1450,
    };
    await rt.ensurePodNetwork(net);
    assert.equal(engine.networks.get('k8ts-node-a')?.Options?.['com.docker.network.driver.mtu'], '1450');
    const before = engine.calls.filter((c) => c === 'createNetwork').length;
    await rt.ensurePodNetwork(net);
    assert.equal(engine.calls.filter((c) => c === 'createNetwork').length, before);
    await rejectsWith(
      rt.ensurePodNetwork({ ...net, subnet: '10.42.1.0/24', labels: { 'io.k8ts.node': 'node-b' } }),
      'FailedPrecondition',
      /is not this node's/,
    );
    await rt.removePodNetwork('k8ts-node-a');
    await rt.removePodNetwork('k8ts-node-a');
  });

  it('after close() every call is Unavailable', async () => {
    const { rt } = await adapter();
    await rt.close();
    await rejectsWith(rt.listPodSandbox(), 'Unavailable', /connection closed/);
    await rejectsWith(rt.pullImage('busybox:1'), 'Unavailable');
  });

  it('the pod network leaves the upper half of its subnet to the agent (IPRange); an unused one without it is made again', async () => {
    const { engine, rt } = await adapter();
    const net = { name: 'k8ts-node-a', subnet: '10.42.0.0/24', labels: { 'io.k8ts.node': 'node-a' } };
    engine.networks.set('k8ts-node-a', {
      Name: 'k8ts-node-a',
      Driver: 'bridge',
      Labels: net.labels,
      Options: {},
      IPAM: { Config: [{ Subnet: '10.42.0.0/24', Gateway: '10.42.0.1' }] },
      Containers: { x: {} },
    } as unknown as Docker.NetworkInspectInfo);
    await rt.ensurePodNetwork(net);
    assert.equal(engine.calls.filter((c) => c === 'createNetwork').length, 0, 'in use: kept');
    engine.networks.get('k8ts-node-a')!.Containers = {};
    await rt.ensurePodNetwork(net);
    assert.deepEqual(engine.networks.get('k8ts-node-a')?.IPAM?.Config, [
      { Subnet: '10.42.0.0/24', IPRange: '10.42.0.0/25', Gateway: '10.42.0.1' },
    ]);
    // A network that names no gateway (made by hand): the subnet's first host.
    engine.networks.get('k8ts-node-a')!.IPAM!.Config = [{ Subnet: '10.42.0.0/24', IPRange: '10.42.0.0/25' }];
    const plugin = new FakePodInterfaces();
    const { rt: fast } = await adapter(engine, 'node-a', plugin);
    await fast.runPodSandbox(sandboxConfig);
    assert.match(plugin.calls[2]!, /gw=10\.42\.0\.1 /);
  });
});

/** A network plugin in memory: addresses from its range in order, and the calls made. */
class FakePodInterfaces implements DockerPodInterfaces {
  readonly calls: string[] = [];
  on = true;
  attachError: Error | undefined;
  private next = 128;
  enabled(): boolean {
    return this.on;
  }
  async allocate(net: BridgeNetwork, owner: string): Promise<string> {
    const ip = `10.42.0.${this.next++}`;
    this.calls.push(`allocate ${net.name} ${net.range.first}-${net.range.last} ${owner} -> ${ip}`);
    return ip;
  }
  async attach(req: { pid: number; sandboxId: string; ip: string; net: BridgeNetwork }): Promise<void> {
    this.calls.push(
      `attach pid=${req.pid} ${req.ip} ${req.net.bridge} gw=${req.net.gateway} mtu=${req.net.mtu}`,
    );
    if (this.attachError) throw this.attachError;
  }
  async release(network: string, ip: string, owner: string): Promise<void> {
    this.calls.push(`release ${network} ${ip} ${owner}`);
  }
  async sweep(network: string, owners: ReadonlySet<string>): Promise<number> {
    this.calls.push(`sweep ${network} keeping ${[...owners].sort().join(',')}`);
    return 0;
  }
}

describe('docker adapter: sandboxes whose interface the agent makes (pod-interfaces.ts)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8ts-adapter-hosts-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const podNet = {
    name: 'k8ts-node-a',
    subnet: '10.42.0.0/24',
    labels: { 'io.k8ts.node': 'node-a' },
    mtu: 1450,
  };
  const owner = 'k8ts_POD_web-0_shop_u-1_0';

  async function fastAdapter() {
    const plugin = new FakePodInterfaces();
    const engine = new FakeEngine();
    engine.hostsPath = join(dir, `hosts-${Math.random()}`);
    writeFileSync(engine.hostsPath, '127.0.0.1\tlocalhost\n');
    const { rt } = await adapter(engine, 'node-a', plugin);
    await rt.ensurePodNetwork(podNet);
    return { engine, rt, plugin };
  }

  it('NetworkMode none, a reserved IP on its label, eth0 from the plugin, the hosts line; the IP freed on stop and remove', async () => {
    const { engine, rt, plugin } = await fastAdapter();
    const id = await rt.runPodSandbox(sandboxConfig);
    const c = engine.containers.get(id)!;
    const hostConfig = c.body.HostConfig as Record<string, unknown>;
    assert.equal(hostConfig.NetworkMode, 'none');
    assert.deepEqual(hostConfig.PortBindings, {});
    assert.equal(c.labels['io.k8ts.pod-ip'], '10.42.0.128');
    assert.equal(c.labels['io.k8ts.network'], 'k8ts-node-a');
    assert.deepEqual(plugin.calls, [
      'sweep k8ts-node-a keeping ',
      `allocate k8ts-node-a 10.42.0.128-10.42.0.254 ${owner} -> 10.42.0.128`,
      'attach pid=4242 10.42.0.128 br-110123456789 gw=10.42.0.1 mtu=1450',
    ]);
    assert.equal(readFileSync(engine.hostsPath, 'utf8'), '127.0.0.1\tlocalhost\n10.42.0.128\tweb-0\n');
    assert.equal((await rt.podSandboxStatus(id)).network.ip, '10.42.0.128');
    // A restarted agent (a new adapter on the same engine) reads the IP from the label.
    const { rt: again } = await adapter(engine, 'node-a', new FakePodInterfaces());
    assert.equal((await again.podSandboxStatus(id)).network.ip, '10.42.0.128');
    // Its first allocation sweeps, keeping what sandbox containers there are.
    const other = { ...sandboxConfig, metadata: { ...sandboxConfig.metadata, name: 'web-1' } };
    const pluginAgain = new FakePodInterfaces();
    const { rt: third } = await adapter(engine, 'node-a', pluginAgain);
    await third.removePodSandbox(await third.runPodSandbox(other));
    assert.equal(pluginAgain.calls[0], `sweep k8ts-node-a keeping ${owner}`);
    await rt.stopPodSandbox(id);
    assert.equal((await rt.podSandboxStatus(id)).network.ip, '');
    await rt.removePodSandbox(id);
    assert.deepEqual(plugin.calls.slice(3), [
      `release k8ts-node-a 10.42.0.128 ${owner}`,
      `release k8ts-node-a 10.42.0.128 ${owner}`,
    ]);
  });

  it("keeps Docker's network for hostPort pods, hostNetwork pods, a disabled plugin and a network without the IPRange", async () => {
    const { engine, rt, plugin } = await fastAdapter();
    const mode = async (config: PodSandboxConfig) =>
      (engine.containers.get(await rt.runPodSandbox(config))!.body.HostConfig as Record<string, unknown>)
        .NetworkMode;
    const hostPort = { protocol: 'TCP' as const, containerPort: 80, hostPort: 8080, hostIp: '' };
    assert.equal(await mode({ ...sandboxConfig, portMappings: [hostPort] }), 'k8ts-node-a');
    const hostNet = {
      ...sandboxConfig,
      linux: { securityContext: { namespaceOptions: { network: 'NODE' as const } } },
    };
    assert.equal(await mode(hostNet), 'host');
    plugin.on = false;
    assert.equal(await mode(sandboxConfig), 'k8ts-node-a');
    assert.deepEqual(plugin.calls, []);
    // A network made by an older agent, still in use: Docker may hand out the whole subnet.
    const old = new FakeEngine();
    old.networks.set('k8ts-node-a', {
      Name: 'k8ts-node-a',
      Id: 'abcdef0123456789',
      Driver: 'bridge',
      Labels: podNet.labels,
      Options: {},
      IPAM: { Config: [{ Subnet: '10.42.0.0/24', Gateway: '10.42.0.1' }] },
      Containers: { x: {} },
    } as unknown as Docker.NetworkInspectInfo);
    const oldPlugin = new FakePodInterfaces();
    const { rt: oldRt } = await adapter(old, 'node-a', oldPlugin);
    await oldRt.ensurePodNetwork(podNet);
    const id = await oldRt.runPodSandbox(sandboxConfig);
    assert.equal(
      (old.containers.get(id)!.body.HostConfig as Record<string, unknown>).NetworkMode,
      'k8ts-node-a',
    );
    assert.deepEqual(oldPlugin.calls, []);
  });

  it('onCreated: the id and reserved IP before the start, a container created in it meanwhile without inspecting it; one inspect for eth0 and resolv.conf', async () => {
    const { engine, rt } = await fastAdapter();
    engine.resolvConfPath = join(dir, `resolv-${Math.random()}`);
    let told: { id: string; ip?: string } | undefined;
    let made: Promise<string> | undefined;
    const config = { ...sandboxConfig, dnsConfig: { servers: ['10.43.0.10'], searches: [], options: [] } };
    engine.calls.length = 0;
    const id = await rt.runPodSandbox(config, {
      onCreated: (sandbox) => {
        told = sandbox;
        assert.equal(engine.containers.get(sandbox.id)!.state, 'created');
        made = rt.createContainer(sandbox.id, containerConfig, config);
      },
    });
    assert.deepEqual(told, { id, ip: '10.42.0.128' });
    // One inspect, for eth0 and resolv.conf together; none by the create, as Docker's inspect
    // of a container waits for its start to end.
    assert.equal(engine.calls.filter((c) => c === 'inspectContainer').length, 1);
    assert.equal(readFileSync(engine.resolvConfPath, 'utf8'), 'nameserver 10.43.0.10\n');
    const cid = await made!;
    const hostConfig = engine.containers.get(cid)!.body.HostConfig as Record<string, unknown>;
    assert.equal(hostConfig.NetworkMode, `container:${id}`);
    await rt.startContainer(cid);
    assert.equal((await rt.containerStatus(cid)).state, 'CONTAINER_RUNNING');
    // Once run() is over, a sandbox that is not running refuses containers again.
    await rt.stopPodSandbox(id);
    await rejectsWith(rt.createContainer(id, containerConfig, config), 'FailedPrecondition', /is not ready/);
  });

  it('an attach that fails removes the sandbox and frees the IP, as CriError Internal', async () => {
    const { engine, rt, plugin } = await fastAdapter();
    plugin.attachError = new Error('ip -batch -: RTNETLINK answers: Operation not permitted');
    await rejectsWith(
      rt.runPodSandbox(sandboxConfig),
      'Internal',
      /run pod sandbox shop\/web-0: ip -batch -: RTNETLINK answers: Operation not permitted/,
    );
    assert.equal(engine.containers.size, 0);
    assert.equal(plugin.calls.at(-1), `release k8ts-node-a 10.42.0.128 ${owner}`);
  });
});
