/**
 * The containerd half of `npm run bench:podstartup -- --runtime containerd` (issue 15 item 8):
 * pod startup on `k8ts agent --runtime containerd` next to `k8ts agent` on Docker, on one
 * simulated host (test/support/simulated-hosts.ts), so that neither the CNI bridge nor the
 * containers' networks touch the machine's own namespace:
 *
 *   machine: control process (in this process, on the segment's address) + the watch
 *   host h1: containerd with its CRI plugin (test/support/host-containerd.ts)  ← agent ctd
 *            the host's dockerd                                                 ← agent docker
 *
 * Both agents are `k8ts agent` processes in the host's namespace (cross-host backend none:
 * one host). Each pod is pinned to its node by a nodeSelector (the scheduler still binds
 * it); latency is from just before the create request to the watch event showing
 * `status.phase=Running`. References, on the same host and engines, until the start
 * command returns:
 * - `ctr run`: a bare containerd task of the image (host network: ctr 1.6 reads CNI
 *   configuration only from /etc/cni/net.d and /opt/cni/bin, which a benchmark may not
 *   write);
 * - `ctr run` with a CNI network, what `ctr run --cni` does, by hand: a network namespace
 *   (`ip netns add`, its `lo` up), the bridge plugin's ADD with the first plugin of the
 *   agent's own conflist (same bridge, subnet and host-local leases; portmap has no
 *   mappings to add), then `ctr run --with-ns network:<netns>`; DEL and the namespace's
 *   removal between runs;
 * - CRI by hand: RunPodSandbox on the agent's CNI network, CreateContainer, StartContainer
 *   through cri/containerd — a pod's runtime work with the network, without the kubelet;
 * - `docker run` on a user-defined bridge network of the host's engine.
 * And each agent's resident memory (VmRSS) after the runs.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { resources } from '../../api/client/resource.js';
import { RestClient } from '../../api/client/rest.js';
import type { Node, Pod } from '../../api/types.js';
import { startControl, type ControlProcess } from '../../control/main.js';
import { CNI_CONFLIST_FILE } from '../../agent/network/cni.js';
import { ContainerdRuntime } from '../../cri/containerd/runtime.js';
import { CNI_BIN_DIR, HostContainerd } from '../../test/support/host-containerd.js';
import { startK8tsAgent, type K8tsAgent } from '../../test/support/k8ts-agent.js';
import { startSimulatedHosts, type SimulatedHosts } from '../../test/support/simulated-hosts.js';

const exec = promisify(execFile);
const now = () => performance.now();
const IMAGE = 'spring-server:1.0';
const DEADLINE_MS = 180_000;
const LABEL = 'io.k8ts.bench=podstartup-containerd';

/** ms from the start of each run to running, one list per way of starting. */
export interface ContainerdBenchResult {
  containerdPods: { sequential: number[]; parallel: number[] };
  dockerPods: { sequential: number[]; parallel: number[] };
  ctrRun: { sequential: number[]; parallel: number[] };
  ctrRunCni: { sequential: number[]; parallel: number[] };
  criByHand: { sequential: number[]; parallel: number[] };
  dockerRun: { sequential: number[]; parallel: number[] };
  /** VmRSS of each agent process after its pods ran, bytes. */
  agentRss: { containerd: number; docker: number };
}

/** VmRSS of `pid`, bytes (0 when it is gone). */
function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Runs `argv` with `stdin` and `env`; resolves with its stdout, rejects with its stderr on a non-zero exit. */
function runWithStdin(argv: string[], stdin: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${argv.join(' ')}: exit ${code}: ${err}${out}`)),
    );
    child.stdin.end(stdin);
  });
}

/** Runs `n` of `once` one after the other, then `n` at once; `reset` between and after. */
async function both(
  n: number,
  once: (i: number) => Promise<number>,
  reset: () => Promise<void>,
): Promise<{ sequential: number[]; parallel: number[] }> {
  const sequential: number[] = [];
  for (let i = 0; i < n; i++) sequential.push(await once(i));
  await reset();
  const parallel = await Promise.all(Array.from({ length: n }, (_, i) => once(n + i)));
  await reset();
  return { sequential, parallel };
}

/**
 * The whole containerd comparison with `n` pods per way and mode; removes everything it
 * made (pods, agents, containers, the host) also when it fails.
 * @throws Error naming what did not become ready or running within 180 s.
 */
export async function benchContainerd(
  n: number,
  log: (line: string) => void,
): Promise<ContainerdBenchResult> {
  const run = randomBytes(3).toString('hex');
  const nodes = { containerd: `bench-ctd-${run}`, docker: `bench-dkr-${run}` };
  const dataDir = mkdtempSync(join(tmpdir(), 'k8ts-bench-ctd-'));
  let lan: SimulatedHosts | undefined;
  let containerd: HostContainerd | undefined;
  let control: ControlProcess | undefined;
  const agents: K8tsAgent[] = [];
  let client: RestClient | undefined;
  try {
    lan = await startSimulatedHosts({ count: 1, images: [IMAGE, 'k8ts/pause:1.0'] });
    const h = lan.hosts[0]!;
    containerd = new HostContainerd(h, ['k8ts/pause:1.0', IMAGE]);
    await containerd.start();
    control = await startControl({
      dataDir: join(dataDir, 'control'),
      bindAddress: lan.gatewayIP,
      port: 0,
      datastore: 'sqlite',
      etcdEndpoints: [],
      logLevel: 'error',
      controllers: { clusterCIDR: '10.42.0.0/16' },
      flannelBackend: 'none',
    });
    const token = readFileSync(join(dataDir, 'control', 'node-token'), 'utf8').trim();
    const agentOf = (node: string, extra: Partial<Parameters<typeof startK8tsAgent>[0]>) =>
      startK8tsAgent({
        server: control!.url,
        token,
        nodeName: node,
        nodeIP: h.ip,
        dataDir: join(h.dir, node),
        wrapper: h.nsenter,
        fromSource: true,
        readyTimeoutMs: 60_000,
        ...extra,
      });
    const ctdAgent = await agentOf(nodes.containerd, {
      args: [
        '--runtime',
        'containerd',
        '--container-runtime-endpoint',
        containerd.endpoint,
        '--cni-conf-dir',
        containerd.confDir,
        '--cni-bin-dir',
        CNI_BIN_DIR,
        '--log-level',
        'warn',
      ],
    });
    agents.push(ctdAgent);
    const dockerAgent = await agentOf(nodes.docker, {
      env: { DOCKER_HOST: h.dockerHost },
      args: ['--log-level', 'warn'],
    });
    agents.push(dockerAgent);
    const api = RestClient.fromKubeconfig(control.kubeconfigPath, { userAgent: 'bench-podstartup' });
    client = api;
    for (const node of Object.values(nodes)) {
      const deadline = now() + DEADLINE_MS;
      for (;;) {
        const nd = await api.get<Node>(resources.nodes, undefined, node).catch(() => undefined);
        if (nd?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) break;
        if (now() > deadline) throw new Error(`node ${node} not Ready within ${DEADLINE_MS} ms`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }

    // Pods, through the watch.
    const waiters = new Map<string, () => void>();
    const abort = new AbortController();
    const list = await api.list<Pod>(resources.pods, { namespace: 'default' });
    const stream = await api.watch<Pod>(resources.pods, {
      namespace: 'default',
      resourceVersion: list.metadata?.resourceVersion,
      signal: abort.signal,
    });
    const watching = (async () => {
      try {
        for await (const ev of stream) {
          const pod = ev.object as Pod;
          if (pod.status?.phase === 'Running') waiters.get(pod.metadata.name ?? '')?.();
        }
      } catch (err) {
        if (!abort.signal.aborted) throw err;
      }
    })();
    let seq = 0;
    const startPod = (node: string) => async (): Promise<number> => {
      const name = `ctd-startup-${++seq}`;
      const t0 = now();
      const running = new Promise<void>((resolve) => waiters.set(name, resolve));
      await api.create<Pod>(resources.pods, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: 'default' },
        spec: {
          nodeSelector: { 'kubernetes.io/hostname': node },
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'app', image: IMAGE }],
        },
      });
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        running,
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`${name} not Running within ${DEADLINE_MS} ms`)),
            DEADLINE_MS,
          );
        }),
      ]).finally(() => clearTimeout(timer));
      waiters.delete(name);
      return now() - t0;
    };
    const deletePods = async () => {
      const pods = await api.list<Pod>(resources.pods, { namespace: 'default' });
      await Promise.all(
        pods.items.map((p) => api.delete(resources.pods, 'default', p.metadata.name!).catch(() => undefined)),
      );
      const deadline = now() + DEADLINE_MS;
      while ((await api.list<Pod>(resources.pods, { namespace: 'default' })).items.length > 0) {
        if (now() > deadline) throw new Error('pods left after deletion');
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    // Warm-up: one pod per node (images in the page cache, the CNI bridge made).
    await startPod(nodes.containerd)();
    await startPod(nodes.docker)();
    await deletePods();
    log(`${n} containerd pods, one at a time, then at once`);
    const containerdPods = await both(n, startPod(nodes.containerd), deletePods);
    log(`${n} docker pods, one at a time, then at once`);
    const dockerPods = await both(n, startPod(nodes.docker), deletePods);
    abort.abort();
    await watching;
    const agentRss = { containerd: rssOf(ctdAgent.pid), docker: rssOf(dockerAgent.pid) };

    // ctr run (host network), on the same containerd.
    const ctr = (args: string[]) => exec('ctr', ['-a', containerd!.sock, '-n', 'k8s.io', ...args]);
    const ctrIds: string[] = [];
    const ctrOnce = async (i: number): Promise<number> => {
      const id = `bench-ctr-${run}-${i}`;
      ctrIds.push(id);
      const t0 = now();
      await exec(h.nsenter[0]!, [
        ...h.nsenter.slice(1),
        'ctr',
        '-a',
        containerd!.sock,
        '-n',
        'k8s.io',
        'run',
        '-d',
        '--net-host',
        '--label',
        LABEL,
        `docker.io/library/${IMAGE}`,
        id,
      ]);
      return now() - t0;
    };
    const ctrReset = async () => {
      for (const id of ctrIds.splice(0)) {
        await ctr(['task', 'kill', '-s', 'SIGKILL', id]).catch(() => undefined);
        for (let i = 0; i < 50; i++) {
          if (
            await ctr(['task', 'rm', id]).then(
              () => true,
              () => false,
            )
          )
            break;
          await new Promise((r) => setTimeout(r, 100));
        }
        await ctr(['container', 'rm', id]).catch(() => undefined);
      }
    };
    log(`${n} ctr run, one at a time, then at once`);
    const ctrRun = await both(n, ctrOnce, ctrReset);

    // ctr run with a CNI network by hand (see the file comment), on the agent's conflist.
    const conflist = JSON.parse(readFileSync(join(containerd.confDir, CNI_CONFLIST_FILE), 'utf8')) as {
      cniVersion: string;
      name: string;
      plugins: Record<string, unknown>[];
    };
    const bridgeConf = JSON.stringify({
      cniVersion: conflist.cniVersion,
      name: conflist.name,
      ...conflist.plugins[0],
    });
    const inHost = (argv: string[]) => exec(h.nsenter[0]!, [...h.nsenter.slice(1), ...argv]);
    const cni = (command: 'ADD' | 'DEL', id: string) =>
      runWithStdin([...h.nsenter, join(CNI_BIN_DIR, String(conflist.plugins[0]!.type))], bridgeConf, {
        PATH: process.env.PATH,
        CNI_COMMAND: command,
        CNI_CONTAINERID: id,
        CNI_NETNS: `/var/run/netns/${id}`,
        CNI_IFNAME: 'eth0',
        CNI_PATH: CNI_BIN_DIR,
      });
    const cniIds: string[] = [];
    const ctrCniOnce = async (i: number): Promise<number> => {
      const id = `bctr-${run}-${i}`;
      cniIds.push(id);
      const t0 = now();
      await inHost(['ip', 'netns', 'add', id]);
      await inHost(['ip', '-n', id, 'link', 'set', 'lo', 'up']);
      await cni('ADD', id);
      await inHost([
        'ctr',
        '-a',
        containerd!.sock,
        '-n',
        'k8s.io',
        'run',
        '-d',
        '--with-ns',
        `network:/var/run/netns/${id}`,
        '--label',
        LABEL,
        `docker.io/library/${IMAGE}`,
        id,
      ]);
      return now() - t0;
    };
    const ctrCniReset = async () => {
      const ids = cniIds.splice(0);
      ctrIds.push(...ids);
      await ctrReset();
      for (const id of ids) {
        await cni('DEL', id).catch(() => undefined);
        await inHost(['ip', 'netns', 'del', id]).catch(() => undefined);
      }
    };
    log(`${n} ctr run with a CNI network, one at a time, then at once`);
    let ctrRunCni: { sequential: number[]; parallel: number[] };
    try {
      ctrRunCni = await both(n, ctrCniOnce, ctrCniReset);
    } finally {
      await ctrCniReset();
    }

    // CRI by hand, on the agent's CNI network (the runtime's only one).
    const cri = await ContainerdRuntime.connect({
      endpoint: containerd.endpoint,
      nodeName: `bench-cri-${run}`,
      podLogsDir: join(h.dir, 'bench-cri-logs'),
    });
    try {
      const criOnce = async (i: number): Promise<number> => {
        const t0 = now();
        const sandbox = {
          metadata: { name: `cri-${i}`, namespace: 'bench', uid: `bench-${run}-${i}`, attempt: 0 },
          hostname: `cri-${i}`,
          portMappings: [],
          labels: {},
          annotations: {},
          linux: { securityContext: { namespaceOptions: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' } } },
        } as const;
        const sandboxId = await cri.runPodSandbox({ ...sandbox, portMappings: [] });
        const id = await cri.createContainer(
          sandboxId,
          {
            metadata: { name: 'app', attempt: 0 },
            image: { image: IMAGE },
            labels: {},
            annotations: {},
            linux: { resources: { cpuShares: 2 } },
          },
          { ...sandbox, portMappings: [] },
        );
        await cri.startContainer(id);
        return now() - t0;
      };
      const criReset = async () => {
        for (const c of await cri.listContainers()) await cri.removeContainer(c.id);
        for (const s of await cri.listPodSandbox()) {
          await cri.stopPodSandbox(s.id);
          await cri.removePodSandbox(s.id);
        }
      };
      log(`${n} CRI sandbox + app by hand, one at a time, then at once`);
      const criByHand = await both(n, criOnce, criReset);

      // docker run on a bridge network of the host's engine.
      const docker = (args: string[]) => h.docker(args, { timeoutMs: 120_000 });
      const net = `bench-net-${run}`;
      await docker(['network', 'create', '--label', LABEL, '--subnet', '10.199.0.0/24', net]);
      const dockerOnce = async (): Promise<number> => {
        const t0 = now();
        const r = await docker(['run', '-d', '--label', LABEL, '--network', net, IMAGE]);
        if (r.code !== 0) throw new Error(`docker run: ${r.stderr}`);
        return now() - t0;
      };
      const dockerReset = async () => {
        const ids = (await docker(['ps', '-aq', '--filter', `label=${LABEL}`])).stdout
          .split('\n')
          .filter(Boolean);
        if (ids.length > 0) await docker(['rm', '-f', ...ids]);
      };
      log(`${n} docker run, one at a time, then at once`);
      const dockerRun = await both(n, dockerOnce, dockerReset);
      await docker(['network', 'rm', net]);
      return { containerdPods, dockerPods, ctrRun, ctrRunCni, criByHand, dockerRun, agentRss };
    } finally {
      await cri.close();
    }
  } finally {
    client?.close();
    for (const a of agents) await a.stop().catch(() => undefined);
    await control?.stop().catch(() => undefined);
    await containerd?.stop().catch(() => undefined);
    await lan?.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
