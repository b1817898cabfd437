/**
 * The docker adapter against the real engine (started by scripts/start-dockerd.sh): the
 * conformance suite, then what only Docker can show (published ports, HostConfig,
 * OOM kills, node isolation). Every test runs under its own node name; everything it
 * makes carries that name (or the `io.k8ts.test=cri` label) and is removed afterwards,
 * passed or failed. Nothing else on the engine is touched.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Docker from 'dockerode';
import type { ContainerConfig, PodSandboxConfig, Runtime } from '../api.js';
import { runRuntimeConformance, type RuntimeHarness } from '../conformance.js';
import { isCriError } from '../errors.js';
import { LABEL_NODE } from './labels.js';
import { DockerRuntime } from './runtime.js';

const RUN = randomBytes(3).toString('hex');
const TEST_LABELS = { 'io.k8ts.test': 'cri', 'io.k8ts.test.run': RUN };
const NETWORK = `k8ts-cri-test-${RUN}`;
const docker = new Docker();
const nodes: string[] = [];
let seq = 0;

/** Removes every container of `nodeName` (the adapter's label) and the networks named. */
async function sweep(nodeName: string, networks: string[] = []): Promise<void> {
  const items = await docker.listContainers({ all: true, filters: { label: [`${LABEL_NODE}=${nodeName}`] } });
  // App containers first: a sandbox cannot go while containers share its namespaces.
  items.sort(
    (a, b) =>
      Number(a.Labels['io.k8ts.type'] === 'podsandbox') - Number(b.Labels['io.k8ts.type'] === 'podsandbox'),
  );
  for (const c of items)
    await docker
      .getContainer(c.Id)
      .remove({ force: true })
      .catch(() => undefined);
  for (const n of networks)
    await docker
      .getNetwork(n)
      .remove()
      .catch(() => undefined);
}

/** A random /24 in 10.200.0.0–10.249.255.0 (overlap with another network is unlikely). */
const randomSubnet = (): string => `10.${randomInt(200, 250)}.${randomInt(0, 256)}.0/24`;

async function newNode(): Promise<{ nodeName: string; runtime: DockerRuntime }> {
  const nodeName = `cri-test-${RUN}-${++seq}`;
  nodes.push(nodeName);
  return { nodeName, runtime: await DockerRuntime.connect({ nodeName }) };
}

before(async () => {
  execFileSync('bash', ['scripts/start-dockerd.sh'], { stdio: 'inherit' });
  execFileSync('bash', ['scripts/build-images.sh', 'pause', 'busybox'], { stdio: 'inherit' });
  await docker.createNetwork({ Name: NETWORK, Driver: 'bridge', Labels: TEST_LABELS, CheckDuplicate: true });
});

after(async () => {
  for (const n of nodes) await sweep(n);
  await docker
    .getNetwork(NETWORK)
    .remove()
    .catch(() => undefined);
  const left = await docker.listNetworks({ filters: { label: [`io.k8ts.test.run=${RUN}`] } });
  for (const n of left)
    await docker
      .getNetwork(n.Id)
      .remove()
      .catch(() => undefined);
});

runRuntimeConformance(
  'docker',
  async (): Promise<RuntimeHarness> => {
    const { nodeName, runtime } = await newNode();
    const opened: Runtime[] = [runtime];
    const podNetwork = {
      name: `k8ts-cri-${RUN}-${seq}`,
      subnet: randomSubnet(),
      labels: { ...TEST_LABELS, [LABEL_NODE]: nodeName },
    };
    return {
      runtime,
      podNetwork,
      otherSubnet: randomSubnet(),
      reconnect: async () => {
        const again = await DockerRuntime.connect({ nodeName });
        opened.push(again);
        return again;
      },
      cleanup: async () => {
        await sweep(nodeName, [podNetwork.name]);
        for (const rt of opened) await rt.close();
      },
    };
  },
  { sharedLocalhost: true, network: NETWORK },
);

const sandboxConfig = (name: string, extra: Partial<PodSandboxConfig> = {}): PodSandboxConfig => ({
  metadata: { name, namespace: 'docker-only', uid: `uid-${RUN}-${name}`, attempt: 0 },
  hostname: name,
  portMappings: [],
  labels: {},
  annotations: {},
  network: NETWORK,
  ...extra,
});

const containerConfig = (argv: string[], extra: Partial<ContainerConfig> = {}): ContainerConfig => ({
  metadata: { name: 'main', attempt: 0 },
  image: { image: 'k8ts/busybox:1.0' },
  command: argv.slice(0, 1),
  args: argv.slice(1),
  labels: {},
  annotations: {},
  ...extra,
});

/** Runs `fn` with a runtime of a fresh node, sweeping the node afterwards. */
async function withNode(fn: (rt: DockerRuntime) => Promise<void>): Promise<void> {
  const { nodeName, runtime } = await newNode();
  try {
    await fn(runtime);
  } finally {
    await sweep(nodeName);
    await runtime.close();
  }
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('docker adapter', () => {
  it('connecting to a socket with no engine rejects Unavailable', async () => {
    await assert.rejects(
      DockerRuntime.connect({ nodeName: 'x', socketPath: '/nonexistent/docker.sock' }),
      (e: unknown) => isCriError(e, 'Unavailable'),
    );
  });

  it('publishes hostPorts on their hostIp, reaching the pod', () =>
    withNode(async (rt) => {
      const hostPort = await freePort();
      const sb = sandboxConfig('ports', {
        portMappings: [{ protocol: 'TCP', containerPort: 8080, hostPort, hostIp: '127.0.0.1' }],
      });
      const sandboxId = await rt.runPodSandbox(sb);
      const id = await rt.createContainer(
        sandboxId,
        containerConfig([
          'sh',
          '-c',
          'mkdir -p /tmp/www && echo published > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www',
        ]),
        sb,
      );
      await rt.startContainer(id);
      const body = await until('the published port to answer', async () => {
        const res = await fetch(`http://127.0.0.1:${hostPort}/`);
        return res.ok ? res.text() : undefined;
      });
      assert.equal(body, 'published\n');
      const inspect = await docker.getContainer(sandboxId).inspect();
      assert.deepEqual(inspect.HostConfig.PortBindings, {
        '8080/tcp': [{ HostIp: '127.0.0.1', HostPort: String(hostPort) }],
      });
      assert.equal(inspect.Config.Hostname, 'ports');
    }));

  it('passes command, args, env, workingDir, user, mounts, resources and readonly rootfs to docker', () =>
    withNode(async (rt) => {
      const sb = sandboxConfig('settings');
      const sandboxId = await rt.runPodSandbox(sb);
      const cfg = containerConfig(['sh', '-c', 'sleep 3600'], {
        envs: [{ key: 'GREETING', value: 'hello world' }],
        workingDir: '/tmp',
        mounts: [{ hostPath: '/etc', containerPath: '/host-etc', readonly: true }],
        linux: {
          resources: { cpuPeriod: 100_000, cpuQuota: 50_000, cpuShares: 512, memoryLimitInBytes: 64 << 20 },
          securityContext: { runAsUser: 65534, runAsGroup: 65534, readonlyRootfs: true },
        },
      });
      const id = await rt.createContainer(sandboxId, cfg, sb);
      await rt.startContainer(id);
      const r = await rt.execSync(
        id,
        [
          'sh',
          '-c',
          'echo "$GREETING"; pwd; id -u; id -g; hostname; test -r /host-etc/hostname && echo mounted; touch /x',
        ],
        10,
      );
      assert.equal(r.stdout.toString(), 'hello world\n/tmp\n65534\n65534\nsettings\nmounted\n');
      assert.match(r.stderr.toString(), /Read-only file system/);
      assert.notEqual(r.exitCode, 0);

      const inspect = await docker.getContainer(id).inspect();
      const hc = inspect.HostConfig;
      assert.equal(hc.NetworkMode, `container:${sandboxId}`);
      assert.equal(hc.IpcMode, `container:${sandboxId}`);
      assert.deepEqual(
        [hc.CpuPeriod, hc.CpuQuota, hc.CpuShares, hc.Memory],
        [100_000, 50_000, 512, 64 << 20],
      );
      assert.equal(hc.ReadonlyRootfs, true);
      assert.deepEqual(hc.Binds, ['/etc:/host-etc:ro']);
      assert.equal(inspect.Config.User, '65534:65534');
      assert.deepEqual(inspect.Config.Entrypoint, ['sh']);
      assert.deepEqual(inspect.Config.Cmd, ['-c', 'sleep 3600']);
      assert.match((await rt.containerStatus(id)).logPath, /\.log$/);
    }));

  it('host namespaces (namespaceOptions NODE) and capabilities add/drop reach docker and the process', () =>
    withNode(async (rt) => {
      const ns = (kind: string) => readlinkSync(`/proc/self/ns/${kind}`);
      const capEff = (status: string) => BigInt(`0x${/^CapEff:\s*([0-9a-f]+)$/m.exec(status)?.[1] ?? '0'}`);
      const NET_ADMIN = 1n << 12n;
      const CHOWN = 1n << 0n;
      const host = { network: 'NODE', pid: 'NODE', ipc: 'NODE' } as const;
      const sb = sandboxConfig('hostns', { linux: { securityContext: { namespaceOptions: host } } });
      const sandboxId = await rt.runPodSandbox(sb);
      const id = await rt.createContainer(
        sandboxId,
        containerConfig(['sleep', '3600'], {
          linux: {
            securityContext: {
              namespaceOptions: host,
              capabilities: { addCapabilities: ['NET_ADMIN'], dropCapabilities: ['CHOWN'] },
            },
          },
        }),
        sb,
      );
      await rt.startContainer(id);
      const r = await rt.execSync(
        id,
        ['sh', '-c', 'for n in net pid ipc; do readlink /proc/self/ns/$n; done; cat /proc/self/status'],
        10,
      );
      const [net, pid, ipc] = r.stdout.toString().split('\n');
      assert.deepEqual([net, pid, ipc], [ns('net'), ns('pid'), ns('ipc')], "the host's namespaces");
      const caps = capEff(r.stdout.toString());
      assert.equal(caps & NET_ADMIN, NET_ADMIN, 'NET_ADMIN added');
      assert.equal(caps & CHOWN, 0n, 'CHOWN dropped');
      const hc = (await docker.getContainer(id).inspect()).HostConfig;
      // The sandbox's network namespace, which is the host's (dockershim's); UTS the host's.
      assert.deepEqual(
        [hc.NetworkMode, hc.UTSMode, hc.PidMode, hc.IpcMode],
        [`container:${sandboxId}`, 'host', 'host', 'host'],
      );
      assert.deepEqual([hc.CapAdd, hc.CapDrop], [['NET_ADMIN'], ['CHOWN']]);
      assert.equal((await docker.getContainer(sandboxId).inspect()).HostConfig.NetworkMode, 'host');

      // The pod's own namespaces otherwise; pid POD shares the sandbox's (shareProcessNamespace).
      const own = sandboxConfig('podns');
      const ownId = await rt.runPodSandbox(own);
      const shared = await rt.createContainer(
        ownId,
        containerConfig(['sleep', '3600'], {
          linux: { securityContext: { namespaceOptions: { network: 'POD', pid: 'POD', ipc: 'POD' } } },
        }),
        own,
      );
      await rt.startContainer(shared);
      const out = await rt.execSync(
        shared,
        ['sh', '-c', 'readlink /proc/self/ns/net; readlink /proc/self/ns/pid; ps'],
        10,
      );
      const [ownNet, ownPid] = out.stdout.toString().split('\n');
      assert.notEqual(ownNet, ns('net'));
      assert.notEqual(ownPid, ns('pid'));
      assert.match(out.stdout.toString(), /pause/, "the sandbox's pause process is in its PID namespace");
      assert.equal((await docker.getContainer(shared).inspect()).HostConfig.PidMode, `container:${ownId}`);
    }));

  it("a hostNetwork pod's containers get the pod's resolv.conf (ClusterFirstWithHostNet) and the host's hostname", () =>
    withNode(async (rt) => {
      const host = { network: 'NODE', pid: 'POD', ipc: 'POD' } as const;
      const dnsConfig = {
        servers: ['198.18.0.10'],
        searches: ['default.svc.cluster.local', 'svc.cluster.local', 'cluster.local'],
        options: ['ndots:5'],
      };
      const sb = sandboxConfig('hostdns', {
        dnsConfig,
        linux: { securityContext: { namespaceOptions: host } },
      });
      const sandboxId = await rt.runPodSandbox(sb);
      const id = await rt.createContainer(
        sandboxId,
        containerConfig(['sleep', '3600'], { linux: { securityContext: { namespaceOptions: host } } }),
        sb,
      );
      await rt.startContainer(id);
      const r = await rt.execSync(
        id,
        ['sh', '-c', 'cat /etc/resolv.conf; echo ---; hostname; readlink /proc/self/ns/net'],
        10,
      );
      const [resolv, rest] = r.stdout.toString().split('---\n') as [string, string];
      assert.equal(
        resolv,
        'nameserver 198.18.0.10\nsearch default.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n',
        "the kubelet's resolv.conf, not a copy of the host's",
      );
      const [name, net] = rest.split('\n');
      assert.equal(name, hostname(), "the host's hostname");
      assert.equal(net, readlinkSync('/proc/self/ns/net'), "the host's network namespace");
    }));

  it('a container over its memory limit is EXITED with reason OOMKilled', () =>
    withNode(async (rt) => {
      const sb = sandboxConfig('oom');
      const sandboxId = await rt.runPodSandbox(sb);
      // tail keeps the last "line" of a newline-free stream in memory: all of it.
      const id = await rt.createContainer(
        sandboxId,
        containerConfig(['sh', '-c', 'head -c 200m /dev/zero | tail'], {
          linux: { resources: { memoryLimitInBytes: 16 << 20 } },
        }),
        sb,
      );
      await rt.startContainer(id);
      const st = await until('the container to exit', async () => {
        const s = await rt.containerStatus(id);
        return s.state === 'CONTAINER_EXITED' ? s : undefined;
      });
      assert.equal(st.reason, 'OOMKilled');
      assert.notEqual(st.exitCode, 0);
    }));

  it('containerStats reports cpu time and a working set of a busy container', () =>
    withNode(async (rt) => {
      const sb = sandboxConfig('stats');
      const sandboxId = await rt.runPodSandbox(sb);
      const id = await rt.createContainer(
        sandboxId,
        containerConfig(['sh', '-c', 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; sleep 3600']),
        sb,
      );
      await rt.startContainer(id);
      const s = await until('some cpu time', async () => {
        const st = await rt.containerStats(id);
        return st.cpuUsageCoreNanoSeconds > 0n ? st : undefined;
      });
      assert.ok(s.memoryWorkingSetBytes > 0, `working set ${s.memoryWorkingSetBytes}`);
    }));

  it('containerLogs: stdout and stderr interleaved, tail, timestamps, since, follow until exit', () =>
    withNode(async (rt) => {
      const sb = sandboxConfig('logs');
      const sandboxId = await rt.runPodSandbox(sb);
      const id = await rt.createContainer(
        sandboxId,
        containerConfig(['sh', '-c', 'echo one; echo two >&2; echo three; sleep 2; echo four']),
        sb,
      );
      await rt.startContainer(id);
      const read = async (opts: Parameters<DockerRuntime['containerLogs']>[1]): Promise<string> => {
        let out = '';
        for await (const chunk of await rt.containerLogs(id, opts)) out += String(chunk);
        return out;
      };
      // Following ends when the container exits, with every line. (Docker keeps each
      // stream's order; stdout and stderr are separate pipes, so not their interleaving.)
      const all = await read({ follow: true });
      assert.deepEqual(all.split('\n').filter(Boolean).sort(), ['four', 'one', 'three', 'two']);
      assert.match(all, /one\n(.*\n)*three\n(.*\n)*four\n$/);
      const lines = all.split('\n').filter(Boolean);
      assert.equal(await read({ tailLines: 2 }), `${lines.slice(-2).join('\n')}\n`);
      const stamped = (await read({ timestamps: true })).split('\n').filter(Boolean);
      assert.equal(stamped.length, 4);
      for (const line of stamped) assert.match(line, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z \w+$/);
      const fourAt = Date.parse(stamped[3]!.split(' ')[0]!);
      const since = await read({ sinceTime: BigInt(fourAt - 500) * 1_000_000n });
      assert.equal(since, 'four\n', 'only the line written after the 2 s pause');
      await assert.rejects(rt.containerLogs('nope', {}), (err: unknown) => isCriError(err, 'NotFound'));
    }));

  it("the kubelet's log path is a symlink to Docker's json log, kept after docker rm -f, removed by removeContainer", () =>
    withNode(async (rt) => {
      const logDirectory = mkdtempSync(join(tmpdir(), 'k8ts-docker-pod-logs-'));
      try {
        const sb = sandboxConfig('loglink', { logDirectory });
        const sandboxId = await rt.runPodSandbox(sb);
        const start = async (attempt: number, argv: string[]) => {
          const id = await rt.createContainer(
            sandboxId,
            containerConfig(argv, { metadata: { name: 'main', attempt }, logPath: `main/${attempt}.log` }),
            sb,
          );
          await rt.startContainer(id).catch(() => undefined);
          return id;
        };
        const first = await start(0, ['sh', '-c', 'echo from-docker']);
        const link = join(logDirectory, 'main/0.log');
        assert.equal((await rt.containerStatus(first)).logPath, link);
        const target = readlinkSync(link);
        assert.equal(target, (await docker.getContainer(first).inspect()).LogPath);
        await until('the line in the linked log', async () =>
          readFileSync(link, 'utf8').includes('from-docker') ? true : undefined,
        );
        // A start that fails (no such executable) is linked too: its attempt counts.
        const failed = await start(1, ['/nonexistent']);
        assert.equal(
          readlinkSync(join(logDirectory, 'main/1.log')),
          (await docker.getContainer(failed).inspect()).LogPath,
        );

        // Removed behind the adapter's back: Docker's log goes, the link stays (dangling).
        await docker.getContainer(first).remove({ force: true });
        assert.equal(readlinkSync(link), target);
        assert.equal(existsSync(link), false, 'dangling');
        // Removed through the adapter: the link goes first.
        await rt.removeContainer(failed);
        assert.deepEqual(readdirSync(join(logDirectory, 'main')), ['0.log']);
      } finally {
        rmSync(logDirectory, { recursive: true, force: true });
      }
    }));

  it('exec: stdin to the process, stdout and stderr apart, the exit code', () =>
    withNode(async (rt) => {
      const sb = sandboxConfig('exec');
      const sandboxId = await rt.runPodSandbox(sb);
      const id = await rt.createContainer(sandboxId, containerConfig(['sleep', '3600']), sb);
      await rt.startContainer(id);
      const session = await rt.exec(id, ['sh', '-c', 'cat; echo oops >&2; exit 4'], {
        stdin: true,
        stdout: true,
        stderr: true,
        tty: false,
      });
      let out = '';
      let err = '';
      session.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      session.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      session.stdin!.write('hello ');
      session.stdin!.end('world\n');
      assert.equal(await session.exitCode, 4);
      assert.equal(out, 'hello world\n');
      assert.equal(err, 'oops\n');
      const stopped = await rt.createContainer(
        sandboxId,
        containerConfig(['true'], { metadata: { name: 'done', attempt: 0 } }),
        sb,
      );
      await assert.rejects(
        rt.exec(stopped, ['true'], { stdin: false, stdout: true, stderr: false, tty: false }),
        (e: unknown) => isCriError(e, 'FailedPrecondition'),
      );
    }));

  it('portForward connects to a port inside the sandbox', () =>
    withNode(async (rt) => {
      const sb = sandboxConfig('pf');
      const sandboxId = await rt.runPodSandbox(sb);
      const id = await rt.createContainer(
        sandboxId,
        containerConfig(['sh', '-c', 'while true; do echo pong | nc -l -p 7000; done']),
        sb,
      );
      await rt.startContainer(id);
      const answer = await until('pong through portForward', async () => {
        const socket = await rt.portForward(sandboxId, 7000);
        return new Promise<string | undefined>((resolve) => {
          let got = '';
          socket.on('data', (d: Buffer) => (got += d.toString()));
          socket.on('close', () => resolve(got.includes('pong') ? got : undefined));
          socket.on('error', () => resolve(undefined));
          socket.end('ping\n');
        });
      });
      assert.match(answer, /pong/);
      await assert.rejects(rt.portForward(sandboxId, 7999), (e: unknown) => isCriError(e, 'Unavailable'));
    }));

  it('never sees or touches another node’s sandboxes and containers', async () => {
    const a = await newNode();
    const b = await newNode();
    try {
      const sb = sandboxConfig('mine');
      const sandboxId = await a.runtime.runPodSandbox(sb);
      const id = await a.runtime.createContainer(sandboxId, containerConfig(['sleep', '3600']), sb);
      assert.deepEqual(await b.runtime.listPodSandbox(), []);
      assert.deepEqual(await b.runtime.listContainers(), []);
      await assert.rejects(b.runtime.podSandboxStatus(sandboxId), (e: unknown) => isCriError(e, 'NotFound'));
      await assert.rejects(b.runtime.startContainer(id), (e: unknown) => isCriError(e, 'NotFound'));
      await b.runtime.removePodSandbox(sandboxId);
      await b.runtime.removeContainer(id);
      assert.equal((await a.runtime.podSandboxStatus(sandboxId)).state, 'SANDBOX_READY');
      assert.equal((await a.runtime.containerStatus(id)).state, 'CONTAINER_CREATED');
    } finally {
      await sweep(a.nodeName);
      await sweep(b.nodeName);
      await a.runtime.close();
      await b.runtime.close();
    }
  });
});
