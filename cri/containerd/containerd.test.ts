// One file because one containerd: the conformance suite and the adapter's own tests share the containerd this file starts and stops.
/**
 * The containerd adapter against a real containerd (Debian's `containerd` 1.6 and `runc`)
 * that this file starts for itself: its own root, state, socket and config under a temp
 * dir, so the host's containerd (and Docker's) is never touched, run inside a simulated
 * host (test/support/simulated-hosts.ts: a network namespace of this run), so that the CNI
 * bridge, the sandboxes' veths and their routes never touch the machine's own namespace;
 * its CRI streaming server listens on the host's segment address, which this process
 * reaches. Its CRI plugin runs sandboxes of `k8ts/pause:1.0` on a CNI bridge of this run
 * (Debian's CNI plugins in /usr/lib/cni: bridge, host-local, loopback), with the images
 * imported from Docker into its `k8s.io` namespace. Then: the conformance suite, and what
 * is containerd's own.
 *
 * What this VM needs of containerd's config: `restrict_oom_score_adj = true` (runc may not
 * set the sandbox's oom_score_adj of -998 here: "failed to update /proc/self/oom_score_adj:
 * Permission denied"), and runc's state root under our own state dir. cgroups (v1, on a
 * tmpfs) work with containerd's defaults. Sandboxes' network namespaces are mounted under
 * the state dir too (`netns_mounts_under_state_dir`), not in the host's /var/run/netns.
 *
 * Without root, containerd, ctr, runc, nsenter or ip everything is skipped, saying why; without the CNI
 * plugins (Debian's containernetworking-plugins, which containerd only suggests) what
 * needs a pod network is skipped (the conformance suite among it) and the rest runs.
 *
 * At the end, passed or failed: every sandbox is removed, containerd is stopped by its
 * PID (and the shims it left, found by our socket in their command line), mounts left
 * under the temp dir are unmounted, the dir removed and the simulated host (its namespace
 * with the bridge) removed.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { PodSandboxConfig, Runtime } from '../api.js';
import { runRuntimeConformance, type RuntimeHarness } from '../conformance.js';
import { isCriError } from '../errors.js';
import { startSimulatedHosts, type SimulatedHosts } from '../../test/support/simulated-hosts.js';
import { CriClient } from './client.js';
import { ContainerdRuntime } from './runtime.js';

const RUN = randomBytes(3).toString('hex');
const DIR = mkdtempSync(join(tmpdir(), 'k8ts-containerd-'));
const SOCK = join(DIR, 'containerd.sock');
const ENDPOINT = `unix://${SOCK}`;
const BRIDGE = `k8tsctd${RUN}`;
const SUBNET = `10.${randomInt(200, 250)}.${randomInt(0, 256)}.0/24`;
const IMAGES = ['k8ts/pause:1.0', 'k8ts/busybox:1.0'];
/** Where sandboxes without a logDirectory get theirs (the adapter's default is the host's /var/log/pods). */
const POD_LOGS = join(DIR, 'pod-logs');

/** Debian's containernetworking-plugins (K8TS_TEST_CNI_DIR: another dir, or a missing one to see the skips). */
const CNI_DIR = process.env.K8TS_TEST_CNI_DIR ?? '/usr/lib/cni';
const missingTools = ['containerd', 'ctr', 'runc', 'nsenter', 'ip'].filter(
  (t) => spawnSync('which', [t]).status !== 0,
);
const missingCni = ['bridge', 'host-local', 'loopback'].filter((p) => !existsSync(join(CNI_DIR, p)));
/** Why nothing here can run (undefined: it can). */
const SKIP_ALL =
  process.getuid?.() !== 0
    ? 'starting containerd needs root'
    : missingTools.length > 0
      ? `needs ${missingTools.join(', ')} (Debian packages containerd, runc, util-linux, iproute2)`
      : undefined;
/** Why pod-network sandboxes cannot run (the CRI plugin needs CNI for them). */
const SKIP_NET =
  SKIP_ALL ??
  (missingCni.length > 0
    ? `needs the CNI plugins ${missingCni.join(', ')} in ${CNI_DIR} (Debian package containernetworking-plugins)`
    : undefined);

let containerd: ChildProcess | undefined;
const running = (): boolean =>
  containerd?.pid !== undefined && containerd.exitCode === null && containerd.signalCode === null;
let seq = 0;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The simulated host whose namespace containerd runs in. */
let lan: SimulatedHosts | undefined;

function writeConfig(streamAddress: string): string {
  for (const d of ['root', 'state', 'net.d', 'ipam', 'logs']) mkdirSync(join(DIR, d), { recursive: true });
  const config = `version = 2
root = "${DIR}/root"
state = "${DIR}/state"
[grpc]
  address = "${SOCK}"
[ttrpc]
  address = "${SOCK}.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "k8ts/pause:1.0"
  stream_server_address = "${streamAddress}"
  stream_server_port = "0"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "${CNI_DIR}"
    conf_dir = "${DIR}/net.d"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "${DIR}/state/runc"
`;
  const path = join(DIR, 'config.toml');
  writeFileSync(path, config);
  const conflist = {
    cniVersion: '0.4.0',
    name: `k8ts-ctd-${RUN}`,
    plugins: [
      {
        type: 'bridge',
        bridge: BRIDGE,
        isGateway: true,
        ipMasq: false,
        ipam: { type: 'host-local', ranges: [[{ subnet: SUBNET }]], dataDir: join(DIR, 'ipam') },
      },
    ],
  };
  if (SKIP_NET === undefined)
    writeFileSync(join(DIR, 'net.d', '10-k8ts-test.conflist'), JSON.stringify(conflist));
  return path;
}

/** PIDs of processes whose command line names our socket (containerd's shims). */
function shimPids(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (cmd.includes('containerd-shim') && cmd.includes(SOCK)) pids.push(Number(name));
    } catch {
      // gone
    }
  }
  return pids;
}

async function stopPid(pid: number): Promise<void> {
  const alive = (): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  for (let i = 0; i < 50 && alive(); i++) await sleep(100);
  if (alive()) process.kill(pid, 'SIGKILL');
}

/** Removes every sandbox (and so container) the test's containerd has. */
async function removeAll(): Promise<void> {
  const rt = await ContainerdRuntime.connect({ endpoint: ENDPOINT, podLogsDir: POD_LOGS });
  try {
    for (const c of await rt.listContainers()) await rt.removeContainer(c.id).catch(() => undefined);
    for (const s of await rt.listPodSandbox()) {
      await rt.stopPodSandbox(s.id).catch(() => undefined);
      await rt.removePodSandbox(s.id).catch(() => undefined);
    }
  } finally {
    await rt.close();
  }
}

before(async () => {
  if (SKIP_ALL !== undefined) return;
  execFileSync('bash', ['scripts/start-dockerd.sh'], { stdio: 'inherit' });
  execFileSync('bash', ['scripts/build-images.sh', 'pause', 'busybox'], { stdio: 'inherit' });
  lan = await startSimulatedHosts({ count: 1, images: [] });
  const host = lan.hosts[0]!;
  const config = writeConfig(host.ip);
  const log = openSync(join(DIR, 'containerd.log'), 'a');
  // nsenter execs containerd: the child's PID is containerd's.
  containerd = spawn(
    host.nsenter[0]!,
    [...host.nsenter.slice(1), 'containerd', '--config', config, '--log-level', 'info'],
    {
      stdio: ['ignore', log, log],
    },
  );
  const exited = new Promise<never>((_resolve, reject) => {
    containerd?.once('exit', (code) =>
      reject(new Error(`containerd exited (${code}); see ${join(DIR, 'containerd.log')}`)),
    );
  });
  exited.catch(() => undefined);
  const end = Date.now() + 30_000;
  for (;;) {
    const rt = await Promise.race([
      ContainerdRuntime.connect({ endpoint: ENDPOINT, podLogsDir: POD_LOGS }),
      exited,
    ]).catch((err: unknown) => {
      if (Date.now() > end || !isCriError(err, 'Unavailable')) throw err;
      return undefined;
    });
    if (rt) {
      await rt.close();
      break;
    }
    await sleep(200);
  }
  const tar = join(DIR, 'images.tar');
  execFileSync('docker', ['save', '-o', tar, ...IMAGES]);
  execFileSync('ctr', ['-a', SOCK, '-n', 'k8s.io', 'images', 'import', tar], { stdio: 'inherit' });
  rmSync(tar, { force: true });
});

after(async () => {
  try {
    if (running()) await removeAll().catch(() => undefined);
  } finally {
    if (running() && containerd?.pid !== undefined) await stopPid(containerd.pid);
    for (const pid of shimPids()) await stopPid(pid);
    const mounts = readFileSync('/proc/mounts', 'utf8')
      .split('\n')
      .map((l) => l.split(' ')[1] ?? '')
      .filter((m) => m.startsWith(`${DIR}/`))
      .reverse();
    for (const m of mounts) {
      try {
        execFileSync('umount', ['-l', m], { stdio: 'ignore' });
      } catch {
        // already gone
      }
    }
    rmSync(DIR, { recursive: true, force: true });
    // The bridge and every sandbox interface go with the host's namespace.
    await lan?.stop();
  }
});

/** A fresh node name's runtime, and a cleanup that removes what it made. */
async function newNode(): Promise<{ nodeName: string; runtime: ContainerdRuntime }> {
  const nodeName = `ctd-test-${RUN}-${++seq}`;
  return {
    nodeName,
    runtime: await ContainerdRuntime.connect({ endpoint: ENDPOINT, nodeName, podLogsDir: POD_LOGS }),
  };
}

async function sweep(rt: Runtime): Promise<void> {
  for (const c of await rt.listContainers()) await rt.removeContainer(c.id);
  for (const s of await rt.listPodSandbox()) {
    await rt.stopPodSandbox(s.id);
    await rt.removePodSandbox(s.id);
  }
}

if (SKIP_NET !== undefined) {
  it('runtime conformance: containerd', { skip: SKIP_NET }, () => undefined);
} else {
  runRuntimeConformance(
    'containerd',
    async (): Promise<RuntimeHarness> => {
      const { nodeName, runtime } = await newNode();
      const opened: Runtime[] = [runtime];
      return {
        runtime,
        podNetwork: { name: `unused-${RUN}-${seq}`, subnet: '10.199.0.0/24', labels: {} },
        otherSubnet: '10.199.1.0/24',
        reconnect: async () => {
          const again = await ContainerdRuntime.connect({
            endpoint: ENDPOINT,
            nodeName,
            podLogsDir: POD_LOGS,
          });
          opened.push(again);
          return again;
        },
        cleanup: async () => {
          try {
            await sweep(runtime);
          } finally {
            for (const rt of opened) await rt.close();
          }
        },
      };
    },
    { sharedLocalhost: true, podNetworks: false },
  );
}

const sandboxConfig = (name: string, extra: Partial<PodSandboxConfig> = {}): PodSandboxConfig => ({
  metadata: { name, namespace: 'containerd-only', uid: `uid-${RUN}-${name}`, attempt: 0 },
  hostname: name,
  portMappings: [],
  labels: {},
  annotations: {},
  ...extra,
});

async function withNode(fn: (rt: ContainerdRuntime) => Promise<void>): Promise<void> {
  const { runtime } = await newNode();
  try {
    await fn(runtime);
  } finally {
    await sweep(runtime).catch(() => undefined);
    await runtime.close();
  }
}

describe('containerd adapter', { skip: SKIP_ALL ?? false }, () => {
  it('a socket where nothing listens: connect rejects Unavailable, naming the socket', async () => {
    const missing = join(DIR, 'absent.sock');
    await assert.rejects(
      ContainerdRuntime.connect({ endpoint: `unix://${missing}`, timeoutMs: 5000 }),
      (err) => {
        assert.ok(isCriError(err, 'Unavailable'), String(err));
        assert.match(err.message, new RegExp(missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
        return true;
      },
    );
  });

  it('an RPC containerd 1.6 does not implement is a CriError, not a crash', async () => {
    const client = new CriClient(ENDPOINT);
    try {
      await assert.rejects(
        client.callRuntime('CheckpointContainer', { containerId: 'x' }, 'checkpoint x'),
        (err) => {
          assert.ok(isCriError(err, 'Internal'), String(err));
          assert.match(err.message, /does not implement CheckpointContainer/);
          return true;
        },
      );
      await assert.rejects(client.callRuntime('NoSuchRpc', {}, 'nothing'), (err) =>
        isCriError(err, 'Internal'),
      );
    } finally {
      client.close();
    }
  });

  it(
    'another node on the same containerd does not see this one’s sandboxes',
    { skip: SKIP_NET ?? false },
    async () => {
      await withNode(async (a) => {
        await withNode(async (b) => {
          const id = await a.runPodSandbox(sandboxConfig('mine'));
          assert.deepEqual(
            (await a.listPodSandbox()).map((s) => s.id),
            [id],
          );
          assert.deepEqual(await b.listPodSandbox(), []);
          await assert.rejects(b.podSandboxStatus(id), (err) => isCriError(err, 'NotFound'));
        });
      });
    },
  );

  it(
    'ensurePodNetwork waits for the CNI network the runtime loaded; a sandbox may name it, no other',
    { skip: SKIP_NET ?? false },
    async () => {
      const { runtime } = await newNode();
      try {
        const net = { name: `k8ts-ctd-${RUN}`, subnet: SUBNET, labels: {} };
        await runtime.ensurePodNetwork(net);
        const id = await runtime.runPodSandbox(sandboxConfig('named-net', { network: net.name }));
        const ip = (await runtime.podSandboxStatus(id)).network.ip;
        assert.ok(ip.startsWith(SUBNET.split('.').slice(0, 3).join('.') + '.'), `${ip} is not in ${SUBNET}`);
        await assert.rejects(
          runtime.runPodSandbox(sandboxConfig('other-net', { network: 'k8ts-nothing' })),
          (err) => isCriError(err, 'NotFound'),
        );
        const impatient = await ContainerdRuntime.connect({
          endpoint: ENDPOINT,
          networkWaitMs: 500,
          podLogsDir: POD_LOGS,
        });
        try {
          await assert.rejects(impatient.ensurePodNetwork({ ...net, subnet: '10.199.9.0/24' }), (err) => {
            assert.ok(isCriError(err, 'FailedPrecondition'), String(err));
            assert.match(
              err.message,
              /has not loaded it from its CNI conf dir .*net\.d \(CNI load status: OK; networks: k8ts-ctd-/,
            );
            return true;
          });
        } finally {
          await impatient.close();
        }
      } finally {
        await sweep(runtime).catch(() => undefined);
        await runtime.close();
      }
    },
  );

  it('a host-network sandbox runs (no hostname is set) and has the node’s namespace', async () => {
    await withNode(async (rt) => {
      const id = await rt.runPodSandbox(
        sandboxConfig('hostnet', {
          linux: { securityContext: { namespaceOptions: { network: 'NODE', pid: 'CONTAINER', ipc: 'POD' } } },
        }),
      );
      assert.equal((await rt.podSandboxStatus(id)).state, 'SANDBOX_READY');
    });
  });

  it(
    'logs: the CRI log file, partial lines joined, tail and timestamps',
    { skip: SKIP_NET ?? false },
    async () => {
      await withNode(async (rt) => {
        const logDirectory = join(DIR, 'logs', `pod-${RUN}`);
        mkdirSync(logDirectory, { recursive: true });
        const sb = sandboxConfig('logs', { logDirectory });
        const sandboxId = await rt.runPodSandbox(sb);
        const id = await rt.createContainer(
          sandboxId,
          {
            metadata: { name: 'main', attempt: 0 },
            image: { image: 'k8ts/busybox:1.0' },
            command: [
              'sh',
              '-c',
              'echo one; sleep 0.2; echo two >&2; sleep 0.2; printf three; sleep 0.2; echo -four',
            ],
            labels: {},
            annotations: {},
            logPath: 'main/0.log',
          },
          sb,
        );
        await rt.startContainer(id);
        const end = Date.now() + 30_000;
        while ((await rt.containerStatus(id)).state !== 'CONTAINER_EXITED') {
          assert.ok(Date.now() < end, 'container did not exit');
          await sleep(100);
        }
        const read = async (opts: Parameters<Runtime['containerLogs']>[1]): Promise<string> => {
          const chunks: Buffer[] = [];
          for await (const c of await rt.containerLogs(id, opts)) chunks.push(Buffer.from(c as Buffer));
          return Buffer.concat(chunks).toString();
        };
        assert.equal((await rt.containerStatus(id)).logPath, join(logDirectory, 'main/0.log'));
        assert.equal(await read({}), 'one\ntwo\nthree-four\n');
        assert.equal(await read({ tailLines: 1 }), 'three-four\n');
        assert.match(await read({ timestamps: true }), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z one\n/);
      });
    },
  );

  it(
    'logs without a logDirectory: the kubelet’s <podLogsDir>/<ns>_<name>_<uid>, removed with the last sandbox',
    { skip: SKIP_NET ?? false },
    async () => {
      await withNode(async (rt) => {
        const sb = sandboxConfig('deflogs');
        const sandboxId = await rt.runPodSandbox(sb);
        const id = await rt.createContainer(
          sandboxId,
          {
            metadata: { name: 'main', attempt: 2 },
            image: { image: 'k8ts/busybox:1.0' },
            command: ['sh', '-c', 'echo hello'],
            labels: {},
            annotations: {},
          },
          sb,
        );
        await rt.startContainer(id);
        const dir = join(POD_LOGS, `containerd-only_deflogs_uid-${RUN}-deflogs`);
        assert.equal((await rt.containerStatus(id)).logPath, join(dir, 'main/2.log'));
        const end = Date.now() + 30_000;
        while ((await rt.containerStatus(id)).state !== 'CONTAINER_EXITED') {
          assert.ok(Date.now() < end, 'container did not exit');
          await sleep(100);
        }
        const chunks: Buffer[] = [];
        for await (const c of await rt.containerLogs(id, {})) chunks.push(Buffer.from(c as Buffer));
        assert.equal(Buffer.concat(chunks).toString(), 'hello\n');
        await rt.removeContainer(id);
        assert.ok(!existsSync(join(dir, 'main/2.log')));
        await rt.removePodSandbox(sandboxId);
        assert.ok(!existsSync(dir));
      });
    },
  );

  it(
    'exec and attach through the CRI streaming server: streams and exit codes',
    { skip: SKIP_NET ?? false },
    async () => {
      await withNode(async (rt) => {
        const sb = sandboxConfig('stream');
        const sandboxId = await rt.runPodSandbox(sb);
        const id = await rt.createContainer(
          sandboxId,
          {
            metadata: { name: 'main', attempt: 0 },
            image: { image: 'k8ts/busybox:1.0' },
            command: ['sh', '-c', 'read line; echo "got $line"; exit 4'],
            labels: {},
            annotations: {},
            stdin: true,
            stdinOnce: true,
          },
          sb,
        );
        await rt.startContainer(id);
        const collect = (s: NodeJS.ReadableStream | undefined): Promise<string> => {
          const chunks: Buffer[] = [];
          s?.on('data', (c: Buffer) => chunks.push(c));
          return new Promise((resolve) => {
            if (!s) resolve('');
            else s.on('end', () => resolve(Buffer.concat(chunks).toString()));
          });
        };
        const ex = await rt.exec(id, ['sh', '-c', 'read x; echo "out $x"; echo err >&2; exit 7'], {
          stdin: true,
          stdout: true,
          stderr: true,
          tty: false,
        });
        const [out, err] = [collect(ex.stdout), collect(ex.stderr)];
        ex.stdin?.write('hello\n');
        assert.equal(await ex.exitCode, 7);
        assert.equal(await out, 'out hello\n');
        assert.equal(await err, 'err\n');

        // stdin's end reaches the process (`echo hi | kubectl exec -i … -- cat`): cat exits 0.
        const cat = await rt.exec(id, ['cat'], { stdin: true, stdout: true, stderr: true, tty: false });
        const catOut = collect(cat.stdout);
        cat.stdin?.end('hi\n');
        let timer: NodeJS.Timeout | undefined;
        const deadline = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('cat did not exit 20 s after stdin ended')), 20_000);
        });
        try {
          assert.equal(await Promise.race([cat.exitCode, deadline]), 0);
        } finally {
          clearTimeout(timer);
          cat.close();
        }
        assert.equal(await catOut, 'hi\n');

        // A tty session: stdin and stdout are the terminal, output on stdout, resize accepted.
        const tty = await rt.exec(id, ['sh', '-c', '[ -t 0 ] && [ -t 1 ] && echo terminal; exit 3'], {
          stdin: true,
          stdout: true,
          stderr: false,
          tty: true,
        });
        const ttyOut = collect(tty.stdout);
        await tty.resize({ width: 80, height: 24 });
        assert.equal(await tty.exitCode, 3);
        assert.equal(await ttyOut, 'terminal\r\n');

        const at = await rt.attach(id, { stdin: true, stdout: true, stderr: true, tty: false });
        const atOut = collect(at.stdout);
        at.stdin?.write('there\n');
        assert.equal(await at.exitCode, 4);
        assert.equal(await atOut, 'got there\n');
        await assert.rejects(
          rt.exec(id, ['true'], { stdin: false, stdout: true, stderr: true, tty: false }),
          (e) => isCriError(e, 'FailedPrecondition'),
        );
      });
    },
  );

  it(
    'port-forward through the CRI streaming server reaches 127.0.0.1 in the pod',
    { skip: SKIP_NET ?? false },
    async () => {
      await withNode(async (rt) => {
        const sb = sandboxConfig('pf');
        const sandboxId = await rt.runPodSandbox(sb);
        const id = await rt.createContainer(
          sandboxId,
          {
            metadata: { name: 'web', attempt: 0 },
            image: { image: 'k8ts/busybox:1.0' },
            command: [
              'sh',
              '-c',
              'mkdir -p /tmp/w && echo pf-body > /tmp/w/index.html && exec httpd -f -p 127.0.0.1:8080 -h /tmp/w',
            ],
            labels: {},
            annotations: {},
          },
          sb,
        );
        await rt.startContainer(id);
        const get = async (port: number): Promise<string> => {
          const s = await rt.portForward(sandboxId, port);
          const chunks: Buffer[] = [];
          return new Promise<string>((resolve, reject) => {
            s.on('data', (c: Buffer) => chunks.push(c));
            s.on('end', () => resolve(Buffer.concat(chunks).toString()));
            s.on('error', reject);
            s.write('GET / HTTP/1.0\r\n\r\n');
          });
        };
        const end = Date.now() + 30_000;
        let body = '';
        while (!body.includes('pf-body')) {
          assert.ok(Date.now() < end, `no answer through port-forward: ${body}`);
          body = await get(8080).catch((err: unknown) => String(err));
          if (!body.includes('pf-body')) await sleep(200);
        }
        // Whole, from its first byte: the port prefix may come in the 101 response's read.
        assert.match(body, /^HTTP\/1\.[01] 200/);
        await assert.rejects(get(8081), (err) => isCriError(err, 'Unavailable'));
      });
    },
  );

  it(
    "a CNI plugin that fails: RunPodSandbox rejects with the plugin's words, and works once the conflist is good",
    { skip: SKIP_NET ?? false },
    async () => {
      await withNode(async (rt) => {
        // Sorts before the good conflist, so the runtime takes it (its only network).
        const bad = join(DIR, 'net.d', '00-bad.conflist');
        const name = `k8ts-bad-${RUN}`;
        writeFileSync(
          bad,
          JSON.stringify({
            cniVersion: '0.4.0',
            name,
            plugins: [
              {
                type: 'bridge',
                bridge: `k8tsbad${RUN}`,
                ipam: { type: 'host-local', ranges: [[{ subnet: 'not-a-subnet' }]] },
              },
            ],
          }),
        );
        try {
          // The runtime has loaded it once its Status names it.
          const end = Date.now() + 15_000;
          const client = new CriClient(ENDPOINT);
          try {
            for (;;) {
              const r = await client.callRuntime('Status', { verbose: true }, 'status');
              if (String(r.info?.cniconfig ?? '').includes(name)) break;
              assert.ok(Date.now() < end, 'the runtime did not load the bad conflist');
              await sleep(200);
            }
          } finally {
            client.close();
          }
          await assert.rejects(rt.runPodSandbox(sandboxConfig('badnet')), (err) => {
            assert.ok(isCriError(err), String(err));
            assert.match(err.message, /failed to setup network for sandbox/);
            assert.match(err.message, /not-a-subnet|invalid CIDR/);
            return true;
          });
        } finally {
          rmSync(bad, { force: true });
        }
        await rt.ensurePodNetwork({ name: `k8ts-ctd-${RUN}`, subnet: SUBNET, labels: {} });
        const id = await rt.runPodSandbox(sandboxConfig('goodnet'));
        assert.equal((await rt.podSandboxStatus(id)).state, 'SANDBOX_READY');
      });
    },
  );

  // Last: it stops this file's containerd.
  it('containerd stopped: calls reject Unavailable, naming the socket; the adapter does not crash', async () => {
    const rt = await ContainerdRuntime.connect({
      endpoint: ENDPOINT,
      nodeName: `stopped-${RUN}`,
      podLogsDir: POD_LOGS,
    });
    try {
      await removeAll();
      assert.ok(containerd?.pid !== undefined);
      await stopPid(containerd.pid);
      for (const call of [
        () => rt.status(),
        () => rt.listPodSandbox(),
        () => rt.imageStatus('k8ts/busybox:1.0'),
      ]) {
        await assert.rejects(call(), (err) => {
          assert.ok(isCriError(err, 'Unavailable'), String(err));
          assert.ok(err.message.includes(SOCK), err.message);
          return true;
        });
      }
    } finally {
      await rt.close();
    }
  });
});
