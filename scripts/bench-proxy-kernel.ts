/**
 * `npm run bench:proxy-kernel` (issue 19 item 5): Service traffic through kube-proxy's
 * nftables mode against its userspace mode, HAProxy and no proxy at all, and the network
 * programming latency of the nftables mode, in one run.
 *
 * Why one file of about 1,000 lines: it is one experiment, its namespaces, backends, four
 * targets, measurements and cleanup sharing the run's state; the parts others may reuse
 * (statistics and tables) are already in scripts/lib/.
 *
 * Part 1, data path. Three network namespaces made for the run (names `k8ts-bench-<run>-…`):
 *
 *   client 198.18.200.2 ──veth── 198.18.200.1 node 10.42.0.1 ──veth── pods 10.42.0.2/.3/.4
 *   (wrk)                        (the proxies; ip_forward=1)           (3 backends)
 *
 * The backends are three HAProxy processes (Debian's haproxy, `mode http`, answering
 * `http-request return status 200 … string ok` without a server behind them), one per pod
 * address, so that what the proxy costs is not hidden by a backend's tail; each has
 * BENCH_BACKEND_THREADS threads (default 2, the machine's cores), so that the one backend of
 * the direct target is not what limits it. Each target reaches the pods on a port of its
 * own (8080-8088, POD_PORT says why). Targets, each with wrk (Debian's) run in the client
 * namespace:
 *
 *   direct      one backend, 10.42.0.2:8080 (routed through the node, no NAT)
 *   nftables    a real Proxy (agent/proxy/proxy.ts, mode nftables) in this process, its API
 *               client here and every `ip`/`nft`/`sysctl` it runs inside the node namespace;
 *               NodePort 198.18.200.1:30080 and ClusterIP 10.43.0.10:80; and the same
 *               over the direct target's pod alone (NodePort 30082, ClusterIP 10.43.0.12),
 *               whose ratio to direct is the proxy's own cost with the same backend
 *   userspace   the same Proxy class with mode userspace, in a child process started with
 *               `ip netns exec <node> node --import tsx <this file> --userspace-child` (with
 *               its own in-process API server: this process's loopback is not reachable
 *               from there); NodePort 198.18.200.1:30081 and ClusterIP 10.43.0.20:80
 *   HAProxy     Debian's haproxy in the node namespace, `mode tcp`, round-robin over the same
 *               three pods, BENCH_HAPROXY_THREADS threads (default 1, like the userspace
 *               proxy's one event loop); on 198.18.200.1:30090 ("NodePort") and on
 *               10.43.255.90:80, an address on the node namespace's lo ("ClusterIP")
 *
 * Each proxy has two Services (one NodePort, one ClusterIP; one port, three hand-written
 * EndpointSlices each; the nftables one two more of one pod, see SERVICES_OF); the nftables one programs only its own Services' addresses, so the
 * userspace one's sockets are reached untouched. For keep-alive and for one connection
 * per request (`Connection: close`), BENCH_ROUNDS (default 3) interleaved rounds (the order
 * turns every round) of BENCH_SECONDS (default 5) with BENCH_CONNECTIONS (default 32)
 * connections and 2 wrk threads; the median round by requests/s is printed: requests/s,
 * p50, p99 (wrk's latency: request written → response read, connection set-up not
 * included), errors, the SYNs the client sent again (`SYN retx`, TcpExtTCPSynRetrans of the
 * client namespace; under NAT these are SYNs that met a pod's TIME_WAIT of an earlier
 * connection on the same masqueraded port (the pods count them as PAWSTimewait); what they
 * cost shows in requests/s, not in wrk's latency), the ratio to HAProxy on the same path and to direct, and CPU per
 * request. nftables' work happens in the kernel (mostly softirq) and belongs to no process,
 * so the CPU column that compares all targets is the whole machine's (from /proc/stat,
 * busy = everything but idle and iowait: wrk, the backends, the proxy and the kernel, and
 * whatever else runs on this shared machine), with its softirq part apart; the proxy's own
 * process CPU (userspace child, HAProxy) is printed where there is one. Then the latency
 * each target adds under light load (1 connection, 1 request at a time, keep-alive), as
 * p50 over direct, median of BENCH_ROUNDS interleaved rounds. The node namespace's conntrack
 * keeps closed connections 10 s instead of 120 s (see dataPath()).
 *
 * Targets (issue 19): nftables ≥ 1.0× HAProxy's requests/s and ≥ 0.9× direct; p50 latency
 * added < 0.1 ms.
 *
 * Part 2, network programming latency. A fresh namespace holds only the nftables table
 * and the ClusterIP addresses of a second nftables Proxy, fed by a fresh in-process API
 * server with BENCH_SERVICES (default 1,000) ClusterIP Services × BENCH_ENDPOINTS (default
 * 10) endpoints, each Service one hand-written EndpointSlice with
 * `endpoints.kubernetes.io/last-change-trigger-time` set to its write time (RFC 3339 with
 * ms, as the endpointslice controller writes it). Printed: the initial sync (Proxy.start()
 * until every Service's rules are written, checked against `nft list map … service-ips`).
 * Then BENCH_CHANGES (default 20) single-endpoint changes, one at a time (one endpoint's
 * address replaced, the annotation set to the write time): each one's latency is the
 * proxy's own observation in `k8ts_proxy_network_programming_duration_seconds` (the
 * histogram's sum grows by exactly that one value: trigger time → `nft -f` returned),
 * and the new endpoint is then confirmed in `nft list chain ip k8ts svc-<ns>/<name>/tcp/http`.
 * p50 and p99 are printed. Target p99 < 1 s.
 *
 * Kernel network state is made only inside the namespaces this run creates, and traffic
 * goes only to addresses inside them (198.18.200.0/24, 10.42.0.0/16 pods, 10.43.0.0/16
 * ClusterIPs); the machine's own namespace is not changed. Everything is removed at the end
 * (the processes this run started, by PID; then the namespaces), also on failure, SIGINT,
 * SIGTERM or after BENCH_DEADLINE_SECONDS (default 1500). Needs root, iproute2, nftables,
 * haproxy, wrk and curl (all installed by `.ci/run`). Not a test; the machine is shared, so
 * numbers move between runs.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runHostCommand, runProgram, type HostCommand } from '../agent/network/host-command.js';
import type { IpCommand } from '../agent/proxy/cluster-ip.js';
import { Proxy } from '../agent/proxy/proxy.js';
import { resources } from '../api/client/resource.js';
import type { RestClient } from '../api/client/rest.js';
import { LOG_LEVELS, createLogger, silentLogger, type LogLevel } from '../api/log.js';
import type { EndpointSlice, Service } from '../api/types.js';
import { startTestApi, type TestApi } from '../test/support/api.js';
import { untilTruthy } from '../test/support/wait.js';
import { percentile, table } from './lib/stats.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const HAPROXY_THREADS = Number(process.env.BENCH_HAPROXY_THREADS ?? 1);
const BACKEND_THREADS = Number(process.env.BENCH_BACKEND_THREADS ?? 2);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 1);
const SERVICES = Number(process.env.BENCH_SERVICES ?? 1000);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 10);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 20);
const DEADLINE_SECONDS = Number(process.env.BENCH_DEADLINE_SECONDS ?? 1500);

const RUN = randomBytes(3).toString('hex');
const NS = {
  client: `k8ts-bench-${RUN}-client`,
  node: `k8ts-bench-${RUN}-node`,
  pods: `k8ts-bench-${RUN}-pods`,
  programming: `k8ts-bench-${RUN}-prog`,
} as const;
const CLIENT_IP = '198.18.200.2';
const NODE_IP = '198.18.200.1';
const POD_GATEWAY = '10.42.0.1';
const POD_IPS = ['10.42.0.2', '10.42.0.3', '10.42.0.4'] as const;
const CLUSTER_CIDR = '10.42.0.0/16';
/**
 * The pods' port for each target: every target reaches the pods on a port of its own.
 * Masqueraded and proxied connections all come from 10.42.0.1, and the pods hold each
 * closed connection in TIME_WAIT for 60 s; a SYN that meets one of them with TCP
 * timestamps from another clock is refused (PAWS). With one shared port, a target's
 * connections met the TIME_WAITs the targets before it left, and HAProxy's and the
 * userspace proxy's runs showed 1 s stalls (p99 ≈ 1 s); with a port each, a target only
 * meets its own.
 */
const POD_PORT = {
  direct: 8080,
  nftNodePort: 8081,
  nftClusterIP: 8082,
  userspaceNodePort: 8083,
  userspaceClusterIP: 8084,
  haproxyNode: 8085,
  haproxyVIP: 8086,
  nftNodePortOnePod: 8087,
  nftClusterIPOnePod: 8088,
} as const;
/** The port of part 2's endpoints (never dialled). */
const BACKEND_PORT = 8080;

/**
 * One Service of part 1: one port `http` (80), with `podPort` as its endpoints' port and
 * `pods` (all three unless said) as its endpoints.
 */
interface BenchService {
  name: string;
  type: 'NodePort' | 'ClusterIP';
  clusterIP: string;
  nodePort?: number;
  podPort: number;
  pods: readonly string[];
}
/** The modes this benchmark runs a Proxy in. */
type BenchMode = 'nftables' | 'userspace';
/**
 * Each proxy's Services: one reached through its NodePort, one through its ClusterIP (see
 * POD_PORT), with addresses of their own so that neither proxy serves the other's. The
 * nftables proxy has two more, whose one endpoint is the direct target's pod: the ratio
 * of those to direct is the proxy's own cost, where the three-pod Services' ratio also holds
 * the difference between one backend process and three on this machine's two cores.
 */
const SERVICES_OF: Record<BenchMode, Record<string, BenchService>> = {
  nftables: {
    nodePort: {
      name: 'nft-nodeport',
      type: 'NodePort',
      clusterIP: '10.43.0.11',
      nodePort: 30080,
      podPort: POD_PORT.nftNodePort,
      pods: POD_IPS,
    },
    clusterIP: {
      name: 'nft-clusterip',
      type: 'ClusterIP',
      clusterIP: '10.43.0.10',
      podPort: POD_PORT.nftClusterIP,
      pods: POD_IPS,
    },
    nodePortOnePod: {
      name: 'nft-nodeport-one-pod',
      type: 'NodePort',
      clusterIP: '10.43.0.13',
      nodePort: 30082,
      podPort: POD_PORT.nftNodePortOnePod,
      pods: [POD_IPS[0]],
    },
    clusterIPOnePod: {
      name: 'nft-clusterip-one-pod',
      type: 'ClusterIP',
      clusterIP: '10.43.0.12',
      podPort: POD_PORT.nftClusterIPOnePod,
      pods: [POD_IPS[0]],
    },
  },
  userspace: {
    nodePort: {
      name: 'us-nodeport',
      type: 'NodePort',
      clusterIP: '10.43.0.21',
      nodePort: 30081,
      podPort: POD_PORT.userspaceNodePort,
      pods: POD_IPS,
    },
    clusterIP: {
      name: 'us-clusterip',
      type: 'ClusterIP',
      clusterIP: '10.43.0.20',
      podPort: POD_PORT.userspaceClusterIP,
      pods: POD_IPS,
    },
  },
};
const HAPROXY_VIP = '10.43.255.90';
const HAPROXY_NODE_PORT = 30090;
const CHILD_FLAG = '--userspace-child';
const CHILD_READY = 'k8ts-bench-userspace-ready';

/** The proxies' logger: silent, or on stderr at BENCH_LOG (`warn`, `info`, …) to see why a run fails. */
function proxyLogger(): ReturnType<typeof silentLogger> {
  const level = process.env.BENCH_LOG;
  return level && (LOG_LEVELS as readonly string[]).includes(level)
    ? createLogger(level as LogLevel)
    : silentLogger();
}

/** `ip netns exec <ns> file args…`: runs a program inside namespace `ns`; never rejects. */
function inNamespace(ns: string): HostCommand {
  return (file, args, stdin) =>
    runProgram('ip', ['netns', 'exec', ns, file, ...args], { stdin, timeoutMs: 30_000 });
}

/** iproute2's `ip -n <ns> …` (one exec instead of two), as the Proxy's IpCommand. */
function ipIn(ns: string): IpCommand {
  return (args) => runProgram('ip', ['-n', ns, ...args], { timeoutMs: 10_000 });
}

/** Runs `file args` in `ns` and returns stdout. @throws Error with the command's stderr when it fails. */
async function must(ns: string, file: string, args: readonly string[], stdin?: string): Promise<string> {
  const r = await inNamespace(ns)(file, args, stdin);
  if (r.code !== 0)
    throw new Error(`in ${ns}: ${file} ${args.join(' ')}: exit ${r.code}: ${(r.stderr || r.stdout).trim()}`);
  return r.stdout;
}

/** What to undo at the end, last made first. */
const cleanups: { what: string; undo: () => Promise<void> }[] = [];
let cleaning: Promise<void> | undefined;

/** Undoes everything made so far (each step at most once, errors printed and passed over). */
function cleanup(): Promise<void> {
  return (cleaning ??= (async () => {
    for (const w of wrkRuns) w.kill('SIGKILL');
    while (cleanups.length > 0) {
      const c = cleanups.pop()!;
      try {
        await c.undo();
      } catch (err) {
        console.error(`cleanup (${c.what}): ${String(err)}`);
      }
    }
  })());
}

/** Ends a child this run started, by its PID: SIGTERM, then SIGKILL after `graceMs`. */
async function endChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Spawns `file args` inside `ns` (`ip netns exec` execs it, so the child's PID is the program's). */
function spawnIn(ns: string, file: string, args: readonly string[], what: string): ChildProcess {
  const child = spawn('ip', ['netns', 'exec', ns, file, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => {
    err = (err + d.toString()).slice(-4000);
  });
  child.once('exit', (code, signal) => {
    if (!cleaning && code !== 0 && signal === null)
      console.error(`${what} exited with ${code}: ${err.trim()}`);
  });
  cleanups.push({ what, undo: () => endChild(child) });
  return child;
}

/** Creates namespace `ns` (loopback up); it is deleted at cleanup. */
async function addNamespace(ns: string): Promise<void> {
  const r = await runProgram('ip', ['netns', 'add', ns], { timeoutMs: 10_000 });
  if (r.code !== 0) throw new Error(`ip netns add ${ns}: ${r.stderr.trim()}`);
  cleanups.push({
    what: `namespace ${ns}`,
    undo: async () => {
      const d = await runProgram('ip', ['netns', 'del', ns], { timeoutMs: 10_000 });
      if (d.code !== 0) throw new Error(d.stderr.trim());
    },
  });
  await must(ns, 'ip', ['link', 'set', 'lo', 'up']);
}

/** The three namespaces of part 1 and the links between them (see the file comment). */
async function makeNetwork(): Promise<void> {
  for (const ns of [NS.client, NS.node, NS.pods]) await addNamespace(ns);
  // Each veth is created inside the node namespace and its peer moved straight into the
  // other one: no interface ever exists in the machine's own namespace.
  await must(NS.node, 'ip', [
    'link',
    'add',
    'to-client',
    'type',
    'veth',
    'peer',
    'name',
    'eth0',
    'netns',
    NS.client,
  ]);
  await must(NS.node, 'ip', [
    'link',
    'add',
    'to-pods',
    'type',
    'veth',
    'peer',
    'name',
    'eth0',
    'netns',
    NS.pods,
  ]);
  await must(NS.node, 'ip', ['addr', 'add', `${NODE_IP}/24`, 'dev', 'to-client']);
  await must(NS.node, 'ip', ['addr', 'add', `${POD_GATEWAY}/24`, 'dev', 'to-pods']);
  await must(NS.node, 'ip', ['link', 'set', 'to-client', 'up']);
  await must(NS.node, 'ip', ['link', 'set', 'to-pods', 'up']);
  await must(NS.node, 'sysctl', ['-qw', 'net.ipv4.ip_forward=1']);
  await must(NS.client, 'ip', ['addr', 'add', `${CLIENT_IP}/24`, 'dev', 'eth0']);
  await must(NS.client, 'ip', ['link', 'set', 'eth0', 'up']);
  await must(NS.client, 'ip', ['route', 'add', 'default', 'via', NODE_IP]);
  // Connection-per-request runs open tens of thousands of connections from one address.
  await must(NS.client, 'sysctl', ['-qw', 'net.ipv4.ip_local_port_range=1024 65000']);
  await must(NS.client, 'sysctl', ['-qw', 'net.ipv4.tcp_tw_reuse=1']);
  for (const ip of POD_IPS) await must(NS.pods, 'ip', ['addr', 'add', `${ip}/24`, 'dev', 'eth0']);
  await must(NS.pods, 'ip', ['link', 'set', 'eth0', 'up']);
  await must(NS.pods, 'ip', ['route', 'add', 'default', 'via', POD_GATEWAY]);
  // HAProxy's "ClusterIP": a local address of the node namespace, as kube-proxy's IPVS mode
  // holds them (on lo: not every kernel has the dummy driver).
  await must(NS.node, 'ip', ['addr', 'add', `${HAPROXY_VIP}/32`, 'dev', 'lo']);
}

/** Resolves once `GET url` from the client namespace answers 200. @throws Error after `ms`. */
async function waitForHttp(url: string, ms = 15_000): Promise<void> {
  await untilTruthy(
    `${url} to answer from the client namespace`,
    async () =>
      (await inNamespace(NS.client)('curl', ['-sf', '--max-time', '1', '-o', '/dev/null', url])).code === 0,
    ms,
    100,
  );
}

/** An HAProxy configuration file in `dir`; returns its path. */
function haproxyConfig(dir: string, name: string, lines: string[]): string {
  const path = join(dir, `${name}.cfg`);
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

/**
 * The three backends: one HAProxy answering 200 "ok" per pod address, each with
 * BACKEND_THREADS threads, so that one backend alone (the direct target) can use every core.
 */
async function startBackends(dir: string): Promise<void> {
  for (const [i, ip] of POD_IPS.entries()) {
    const cfg = haproxyConfig(dir, `backend-${i}`, [
      'global',
      `  nbthread ${BACKEND_THREADS}`,
      '  maxconn 4000',
      'defaults',
      '  mode http',
      '  timeout connect 1s',
      '  timeout client 60s',
      '  timeout server 60s',
      '  timeout http-keep-alive 60s',
      'frontend pod',
      ...Object.values(POD_PORT).map((port) => `  bind ${ip}:${port}`),
      '  http-request return status 200 content-type text/plain string ok',
    ]);
    spawnIn(NS.pods, 'haproxy', ['-db', '-f', cfg], `backend haproxy ${ip}`);
  }
  for (const ip of POD_IPS)
    for (const port of Object.values(POD_PORT)) await waitForHttp(`http://${ip}:${port}/`);
}

/** HAProxy in the node namespace, `mode tcp`, round-robin over the pods (see the file comment). */
async function startHAProxy(dir: string): Promise<ChildProcess> {
  const cfg = haproxyConfig(dir, 'haproxy', [
    'global',
    `  nbthread ${HAPROXY_THREADS}`,
    '  maxconn 4000',
    'defaults',
    '  mode tcp',
    '  timeout connect 1s',
    '  timeout client 60s',
    '  timeout server 60s',
    'frontend node-address',
    `  bind ${NODE_IP}:${HAPROXY_NODE_PORT}`,
    '  default_backend pods-node',
    'frontend vip',
    `  bind ${HAPROXY_VIP}:80`,
    '  default_backend pods-vip',
    'backend pods-node',
    '  balance roundrobin',
    ...POD_IPS.map((ip, i) => `  server pod${i} ${ip}:${POD_PORT.haproxyNode}`),
    'backend pods-vip',
    '  balance roundrobin',
    ...POD_IPS.map((ip, i) => `  server pod${i} ${ip}:${POD_PORT.haproxyVIP}`),
  ]);
  const child = spawnIn(NS.node, 'haproxy', ['-db', '-f', cfg], 'haproxy');
  await waitForHttp(`http://${NODE_IP}:${HAPROXY_NODE_PORT}/`);
  await waitForHttp(`http://${HAPROXY_VIP}/`);
  return child;
}

/** `mode`'s Services (SERVICES_OF), each with one hand-written EndpointSlice per pod. */
async function createBenchServices(client: RestClient, mode: BenchMode): Promise<void> {
  for (const s of Object.values(SERVICES_OF[mode])) {
    await client.create<Service>(resources.services, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: s.name, namespace: 'default' },
      spec: {
        type: s.type,
        clusterIP: s.clusterIP,
        ports: [
          {
            name: 'http',
            port: 80,
            targetPort: s.podPort,
            ...(s.nodePort !== undefined ? { nodePort: s.nodePort } : {}),
          },
        ],
      },
    });
    for (const [i, ip] of s.pods.entries())
      await client.create<EndpointSlice>(resources.endpointslices, {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: `${s.name}-${i}`,
          namespace: 'default',
          labels: { 'kubernetes.io/service-name': s.name },
        },
        addressType: 'IPv4',
        endpoints: [{ addresses: [ip], conditions: { ready: true } }],
        ports: [{ name: 'http', port: s.podPort, protocol: 'TCP' }],
      });
  }
}

/** Resolves once `proxy` serves every endpoint of each of its Services, in `mode`. @throws Error after 30 s. */
async function waitForServices(proxy: Proxy, mode: BenchMode): Promise<void> {
  for (const s of Object.values(SERVICES_OF[mode])) {
    const key = `default/${s.name}`;
    await untilTruthy(
      `the ${mode} proxy to serve ${key}`,
      () => {
        const p = proxy.snapshot()[key]?.http;
        return p?.mode === mode && p.endpoints.length === s.pods.length;
      },
      30_000,
      50,
    );
  }
}

/** Resolves once each of `mode`'s Services answers from the client namespace. */
async function waitForServicesHttp(mode: BenchMode): Promise<void> {
  for (const s of Object.values(SERVICES_OF[mode]))
    await waitForHttp(s.type === 'NodePort' ? `http://${NODE_IP}:${s.nodePort}/` : `http://${s.clusterIP}/`);
}

/**
 * The child process of the userspace target (run inside the node namespace): its own API
 * server and a Proxy in mode userspace; prints CHILD_READY once it serves, stops on SIGTERM.
 */
async function userspaceChild(): Promise<void> {
  const api = await startTestApi();
  const proxy = new Proxy({
    client: api.client,
    nodeName: 'bench-userspace',
    nodeIP: NODE_IP,
    clusterIPInterface: 'k8ts-bench-us',
    logger: proxyLogger(),
    kernel: { host: runHostCommand, enabled: () => true, clusterCIDR: () => CLUSTER_CIDR },
    mode: 'userspace',
  });
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await proxy.stop();
      await api.stop();
      process.exit(0);
    })());
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  await createBenchServices(api.client, 'userspace');
  await proxy.start();
  await waitForServices(proxy, 'userspace');
  console.log(CHILD_READY);
}

/** Starts the userspace target (userspaceChild) in the node namespace; resolves once it serves. */
async function startUserspaceProxy(): Promise<ChildProcess> {
  const child = spawnIn(
    NS.node,
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), CHILD_FLAG],
    'userspace proxy',
  );
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(
      () => reject(new Error('the userspace proxy did not start within 60 s')),
      60_000,
    );
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes(CHILD_READY)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the userspace proxy exited with ${code}`));
    });
  });
  await waitForServicesHttp('userspace');
  return child;
}

/** The nftables target: a Proxy in this process whose kernel is the node namespace's. */
async function startNftablesProxy(api: TestApi): Promise<Proxy> {
  await createBenchServices(api.client, 'nftables');
  const proxy = new Proxy({
    client: api.client,
    nodeName: 'bench-nftables',
    nodeIP: NODE_IP,
    clusterIPInterface: 'k8ts-bench-nft',
    logger: proxyLogger(),
    kernel: { host: inNamespace(NS.node), enabled: () => true, clusterCIDR: () => CLUSTER_CIDR },
    mode: 'nftables',
    ip: ipIn(NS.node),
  });
  cleanups.push({ what: 'nftables proxy', undo: () => proxy.stop() });
  await proxy.start();
  await waitForServices(proxy, 'nftables');
  await waitForServicesHttp('nftables');
  return proxy;
}

/** The wrk runs under way (ended by PID at cleanup, should it come in the middle of one). */
const wrkRuns = new Set<ChildProcess>();

/** Runs wrk with `args` inside `ns` and returns its stdout. @throws Error when it fails. */
function wrkIn(ns: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'ip',
      ['netns', 'exec', ns, 'wrk', ...args],
      { maxBuffer: 1 << 20 },
      (err, stdout, stderr) => {
        wrkRuns.delete(child);
        if (err) reject(new Error(`wrk ${args.join(' ')}: ${String(stderr).trim() || err.message}`));
        else resolve(String(stdout));
      },
    );
    wrkRuns.add(child);
  });
}

/** Busy and softirq clock ticks of the whole machine so far (/proc/stat's `cpu` line). */
function machineTicks(): { busy: number; softirq: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already in user).
  const [user, nice, system, , , irq, softirq, steal] = f as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return { busy: user + nice + system + irq + softirq + steal, softirq };
}

/** User + system CPU of process `pid` so far, in clock ticks (/proc/<pid>/stat). */
function processTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** The client namespace's count of retransmitted SYNs so far (TcpExt TCPSynRetrans in /proc/net/netstat). */
async function clientSynRetransmits(): Promise<number> {
  const lines = (await must(NS.client, 'cat', ['/proc/net/netstat'])).split('\n');
  const names = lines.find((l) => l.startsWith('TcpExt:'))!.split(' ');
  const values = lines.filter((l) => l.startsWith('TcpExt:'))[1]!.split(' ');
  return Number(values[names.indexOf('TCPSynRetrans')]);
}

/** Microseconds per clock tick (USER_HZ is 100 on Linux). */
const TICK_US = 10_000;

interface WrkResult {
  rps: number;
  requests: number;
  p50: number;
  p99: number;
  errors: number;
  /** Machine busy and softirq CPU during the run, µs per request. */
  machineUs: number;
  softirqUs: number;
  /** The proxy process's CPU, µs per request (undefined: no process). */
  processUs?: number;
  /** SYNs the client had to send again (each costs a connection 1 s). */
  synRetransmits: number;
}

/** Milliseconds from wrk's `635.00us` / `2.07ms` / `1.01s`. */
function wrkMs(v: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(v);
  if (!m) return Number.NaN;
  const n = Number(m[1]);
  return m[2] === 'us' ? n / 1000 : m[2] === 'ms' ? n : m[2] === 's' ? n * 1000 : n * 60_000;
}

/**
 * One wrk run in the client namespace against `url` (`close`: `Connection: close`, a new
 * connection per request), with the machine's CPU and `pid`'s across it.
 */
async function wrk(
  url: string,
  close: boolean,
  seconds: number,
  connections: number,
  threads: number,
  pid?: number,
): Promise<WrkResult> {
  const args = [
    '-t',
    String(threads),
    '-c',
    String(connections),
    '-d',
    `${seconds}s`,
    '--latency',
    '--timeout',
    '5s',
  ];
  if (close) args.push('-H', 'Connection: close');
  const s0 = await clientSynRetransmits();
  const m0 = machineTicks();
  const p0 = pid !== undefined ? processTicks(pid) : 0;
  const stdout = await wrkIn(NS.client, [...args, url]);
  const m1 = machineTicks();
  const p1 = pid !== undefined ? processTicks(pid) : 0;
  const synRetransmits = (await clientSynRetransmits()) - s0;
  const pct = (p: string) => wrkMs(new RegExp(`^\\s*${p}%\\s+(\\S+)`, 'm').exec(stdout)?.[1] ?? '');
  const errs = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(stdout);
  const requests = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? NaN);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? NaN),
    requests,
    p50: pct('50'),
    p99: pct('99'),
    errors: (errs ? errs.slice(1).reduce((a, b) => a + Number(b), 0) : 0) + (non2xx ? Number(non2xx[1]) : 0),
    machineUs: ((m1.busy - m0.busy) * TICK_US) / requests,
    softirqUs: ((m1.softirq - m0.softirq) * TICK_US) / requests,
    ...(pid !== undefined ? { processUs: ((p1 - p0) * TICK_US) / requests } : {}),
    synRetransmits,
  };
}

/** The run with the median requests/s (the middle one of an odd count). */
function median(runs: readonly WrkResult[]): WrkResult {
  return [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)]!;
}

/** One thing wrk is pointed at. */
interface Target {
  name: string;
  kind: 'direct' | 'nftables' | 'userspace' | 'haproxy';
  /** An nftables target whose Service's one endpoint is the direct target's pod. */
  onePod?: boolean;
  /** Which path it stands for (direct stands for both). */
  path: 'NodePort' | 'ClusterIP' | 'both';
  url: string;
  pid?: number;
}

/** The machine's busy cores over `ms` (what else is running before a measurement). */
async function busyCores(ms = 1000): Promise<number> {
  const a = machineTicks();
  const t = performance.now();
  await new Promise((r) => setTimeout(r, ms));
  return ((machineTicks().busy - a.busy) * TICK_US) / ((performance.now() - t) * 1000);
}

/** Runs every target ROUNDS times, interleaved, turning the order each round; the median per target. */
async function rounds(
  targets: readonly Target[],
  run: (t: Target) => Promise<WrkResult>,
): Promise<Map<Target, WrkResult>> {
  const runs = new Map<Target, WrkResult[]>(targets.map((t) => [t, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
    for (const t of order) runs.get(t)!.push(await run(t));
  }
  return new Map([...runs].map(([t, r]) => [t, median(r)]));
}

/** Prints one path's table: a row per target, ratios to HAProxy on that path and to direct. */
function printTable(title: string, path: 'NodePort' | 'ClusterIP', results: Map<Target, WrkResult>): void {
  const rows = [...results].filter(([t]) => t.path === path || t.path === 'both');
  const direct = rows.find(([t]) => t.kind === 'direct')![1];
  const haproxy = rows.find(([t]) => t.kind === 'haproxy')![1];
  const out = [
    [
      'target',
      'requests/s',
      'p50 ms',
      'p99 ms',
      'errors',
      'SYN retx',
      '× HAProxy',
      '× direct',
      'machine CPU µs/req',
      'of it softirq',
      'proxy process CPU µs/req',
    ],
  ];
  for (const [t, r] of rows)
    out.push([
      t.name,
      r.rps.toFixed(0),
      r.p50.toFixed(3),
      r.p99.toFixed(3),
      String(r.errors),
      String(r.synRetransmits),
      (r.rps / haproxy.rps).toFixed(2),
      (r.rps / direct.rps).toFixed(2),
      r.machineUs.toFixed(1),
      r.softirqUs.toFixed(1),
      r.processUs === undefined ? (t.kind === 'nftables' ? '(in the kernel)' : '') : r.processUs.toFixed(1),
    ]);
  console.log(`### ${title}, ${path}`);
  console.log(table(out));
  const nft = rows.find(([t]) => t.kind === 'nftables' && !t.onePod)![1];
  const nftOnePod = rows.find(([t]) => t.kind === 'nftables' && t.onePod)![1];
  const vsHAProxy = nft.rps / haproxy.rps;
  const vsDirect = nft.rps / direct.rps;
  const onePodVsDirect = nftOnePod.rps / direct.rps;
  const verdict = (x: number, target: number) => `${x.toFixed(2)} → ${x >= target ? 'met' : 'NOT met'}`;
  console.log(
    `targets: nftables ≥ 1.0× HAProxy (three pods each): ${verdict(vsHAProxy, 1)}; ` +
      `≥ 0.9× direct: three pods ${verdict(vsDirect, 0.9)}, the direct target's one pod ${verdict(onePodVsDirect, 0.9)}\n`,
  );
}

/** Part 1 (see the file comment). */
async function dataPath(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'k8ts-bench-proxy-kernel-'));
  cleanups.push({ what: 'config dir', undo: async () => rmSync(dir, { recursive: true, force: true }) });
  await makeNetwork();
  await startBackends(dir);
  const api = await startTestApi();
  cleanups.push({ what: 'API server', undo: () => api.stop() });
  await startNftablesProxy(api);
  // The connection-per-request runs open ~25,000 connections each, and the node's conntrack
  // keeps every closed one for 120 s by default: interleaved rounds would fill the table
  // (nf_conntrack_max, counted per namespace) and later runs pay for earlier ones. Kept
  // for 10 s here, in the node namespace only (nf_conntrack is loaded by now: the table
  // has NAT chains).
  await must(NS.node, 'sysctl', ['-qw', 'net.netfilter.nf_conntrack_tcp_timeout_time_wait=10']);
  const userspace = await startUserspaceProxy();
  const haproxy = await startHAProxy(dir);

  const nft = SERVICES_OF.nftables;
  const us = SERVICES_OF.userspace;
  const targets: Target[] = [
    {
      name: 'direct (one pod)',
      kind: 'direct',
      path: 'both',
      url: `http://${POD_IPS[0]}:${POD_PORT.direct}/`,
    },
    {
      name: 'nftables NodePort',
      kind: 'nftables',
      path: 'NodePort',
      url: `http://${NODE_IP}:${nft.nodePort!.nodePort}/`,
    },
    {
      name: 'nftables ClusterIP',
      kind: 'nftables',
      path: 'ClusterIP',
      url: `http://${nft.clusterIP!.clusterIP}/`,
    },
    {
      name: 'nftables NodePort, one pod',
      kind: 'nftables',
      onePod: true,
      path: 'NodePort',
      url: `http://${NODE_IP}:${nft.nodePortOnePod!.nodePort}/`,
    },
    {
      name: 'nftables ClusterIP, one pod',
      kind: 'nftables',
      onePod: true,
      path: 'ClusterIP',
      url: `http://${nft.clusterIPOnePod!.clusterIP}/`,
    },
    {
      name: 'userspace NodePort',
      kind: 'userspace',
      path: 'NodePort',
      url: `http://${NODE_IP}:${us.nodePort!.nodePort}/`,
      pid: userspace.pid!,
    },
    {
      name: 'userspace ClusterIP',
      kind: 'userspace',
      path: 'ClusterIP',
      url: `http://${us.clusterIP!.clusterIP}/`,
      pid: userspace.pid!,
    },
    {
      name: `HAProxy node address (${HAPROXY_THREADS} thr)`,
      kind: 'haproxy',
      path: 'NodePort',
      url: `http://${NODE_IP}:${HAPROXY_NODE_PORT}/`,
      pid: haproxy.pid!,
    },
    {
      name: `HAProxy VIP (${HAPROXY_THREADS} thr)`,
      kind: 'haproxy',
      path: 'ClusterIP',
      url: `http://${HAPROXY_VIP}/`,
      pid: haproxy.pid!,
    },
  ];
  console.log(
    `## Part 1: data path\n` +
      `backends: 3 haproxy ${haproxyVersion} processes (mode http, http-request return 200 "ok", ${BACKEND_THREADS} threads each) ` +
      `on ${POD_IPS.join(', ')}, ports ${Object.values(POD_PORT).join(', ')} (one per target); wrk: 2 threads, ${CONNECTIONS} connections, ${SECONDS} s per run, ` +
      `median of ${ROUNDS} interleaved rounds; machine: ${(await busyCores()).toFixed(2)} cores busy before the runs ` +
      `(shared with other work)\n`,
  );
  for (const t of targets) {
    await wrk(t.url, false, WARMUP_SECONDS, CONNECTIONS, 2);
    await wrk(t.url, true, WARMUP_SECONDS, CONNECTIONS, 2);
  }
  for (const close of [false, true]) {
    const results = await rounds(targets, (t) => wrk(t.url, close, SECONDS, CONNECTIONS, 2, t.pid));
    const title = close ? 'one connection per request (Connection: close)' : 'keep-alive';
    printTable(title, 'NodePort', results);
    printTable(title, 'ClusterIP', results);
  }
  // Latency a target adds, where queueing does not hide it: one connection, one request at a time.
  const light = await rounds(targets, (t) => wrk(t.url, false, SECONDS, 1, 1, t.pid));
  const direct = light.get(targets[0]!)!;
  const rows = [['target', 'requests/s', 'p50 ms', 'p99 ms', 'added p50 ms', 'added p99 ms']];
  for (const [t, r] of light)
    rows.push([
      t.name,
      r.rps.toFixed(0),
      r.p50.toFixed(3),
      r.p99.toFixed(3),
      t.kind === 'direct' ? '' : (r.p50 - direct.p50).toFixed(3),
      t.kind === 'direct' ? '' : (r.p99 - direct.p99).toFixed(3),
    ]);
  console.log('### light load (1 connection, 1 request at a time, keep-alive)');
  console.log(table(rows));
  for (const t of targets.filter((x) => x.kind === 'nftables')) {
    const added = light.get(t)!.p50 - direct.p50;
    console.log(
      `target: ${t.name} adds < 0.1 ms at p50: ${added.toFixed(3)} ms → ${added < 0.1 ? 'met' : 'NOT met'}`,
    );
  }
  console.log();
}

/** haproxy's version (`haproxy -v`), for the output; set by main(). */
let haproxyVersion = '';

/** The `value` of one series of the programming-latency histogram (`_sum` or `_count`). */
async function programming(proxy: Proxy): Promise<{ sum: number; count: number }> {
  const metric = proxy.registry.getSingleMetric('k8ts_proxy_network_programming_duration_seconds');
  const values = (await metric!.get()).values;
  const of = (suffix: string) =>
    values.find((v) => (v as { metricName?: string }).metricName?.endsWith(suffix))?.value ?? 0;
  return { sum: of('_sum'), count: of('_count') };
}

/** Endpoint address number `n` in 10.42.0.0/16, from 10.42.1.0 on (10.42.0.0/24 is part 1's). */
function podIP(n: number): string {
  const k = n + 256;
  return `10.42.${(k >> 8) & 255}.${k & 255}`;
}

/** Runs `fn` over `items` with at most `limit` at a time. */
async function pool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** Part 2 (see the file comment). */
async function networkProgramming(): Promise<void> {
  await addNamespace(NS.programming);
  const api = await startTestApi();
  cleanups.push({ what: 'API server (part 2)', undo: () => api.stop() });
  const names = Array.from({ length: SERVICES }, (_, i) => `svc-${String(i).padStart(4, '0')}`);
  const t0 = performance.now();
  await pool(names, 16, async (name) => {
    await api.client.create<Service>(resources.services, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: 'default' },
      spec: { type: 'ClusterIP', ports: [{ name: 'http', port: 80, targetPort: BACKEND_PORT }] },
    });
  });
  await pool(names, 16, async (name) => {
    const i = Number(name.slice(4));
    await api.client.create<EndpointSlice>(resources.endpointslices, {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: `${name}-0`,
        namespace: 'default',
        labels: { 'kubernetes.io/service-name': name },
        annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': new Date().toISOString() },
      },
      addressType: 'IPv4',
      endpoints: Array.from({ length: ENDPOINTS }, (_, j) => ({
        addresses: [podIP(i * ENDPOINTS + j)],
        conditions: { ready: true },
      })),
      ports: [{ name: 'http', port: BACKEND_PORT, protocol: 'TCP' }],
    });
  });
  const written = performance.now() - t0;
  const host = inNamespace(NS.programming);
  const proxy = new Proxy({
    client: api.client,
    nodeName: 'bench-programming',
    nodeIP: '198.18.201.1',
    clusterIPInterface: 'k8ts-bench-prog',
    logger: proxyLogger(),
    kernel: { host, enabled: () => true, clusterCIDR: () => CLUSTER_CIDR },
    mode: 'nftables',
    ip: ipIn(NS.programming),
  });
  cleanups.push({ what: 'nftables proxy (part 2)', undo: () => proxy.stop() });
  const s0 = performance.now();
  await proxy.start(120_000);
  const cacheSynced = performance.now() - s0;
  const live = () =>
    Object.values(proxy.snapshot()).filter(
      (ports) => ports.http?.mode === 'nftables' && ports.http.endpoints.length === ENDPOINTS,
    ).length;
  await untilTruthy(`all ${SERVICES} Services in the kernel`, () => live() === SERVICES, 600_000, 20);
  const initialSync = performance.now() - s0;
  // Only the proxy made tables in this namespace; its rules are in the one with the
  // service-ips map (the names depend on the node name, and there may be others).
  const tables = await must(NS.programming, 'nft', ['list', 'tables', 'ip']);
  let nftTable: string | undefined;
  let map = '';
  for (const [, name] of tables.matchAll(/^table ip (\S+)$/gm)) {
    const r = await inNamespace(NS.programming)('nft', ['list', 'map', 'ip', name!, 'service-ips']);
    if (r.code === 0) [nftTable, map] = [name!, r.stdout];
  }
  if (!nftTable) throw new Error(`no nftables table with a service-ips map in ${NS.programming}: ${tables}`);
  const inKernel = (map.match(/: goto svc-/g) ?? []).length;
  if (inKernel !== SERVICES) throw new Error(`service-ips holds ${inKernel} Services, not ${SERVICES}`);
  const rules = await must(NS.programming, 'nft', ['list', 'table', 'ip', nftTable]);
  const chains = (rules.match(/^\s*chain /gm) ?? []).length;
  // nft's fixed cost at this size: a transaction that names no chain or set of the table
  // (`add table`, a no-op), to compare with the `nft list chain` of one chain below.
  const noops: number[] = [];
  for (let k = 0; k < 5; k++) {
    const q = performance.now();
    await must(NS.programming, 'nft', ['-f', '-'], `add table ip ${nftTable}\n`);
    noops.push(performance.now() - q);
  }

  const latencies: number[] = [];
  const confirms: number[] = [];
  for (let c = 0; c < CHANGES; c++) {
    const i = (c * 397) % SERVICES;
    const name = names[i]!;
    const slice = await api.client.get<EndpointSlice>(resources.endpointslices, 'default', `${name}-0`);
    const newIP = podIP(SERVICES * ENDPOINTS + c);
    const endpoints = slice.endpoints.map((e, j) => (j === c % ENDPOINTS ? { ...e, addresses: [newIP] } : e));
    const before = await programming(proxy);
    const at = new Date().toISOString();
    await api.client.update(resources.endpointslices, {
      ...slice,
      metadata: {
        ...slice.metadata,
        annotations: {
          ...slice.metadata.annotations,
          'endpoints.kubernetes.io/last-change-trigger-time': at,
        },
      },
      endpoints,
    });
    const after = await untilTruthy(
      `change ${c} to be programmed`,
      async () => {
        const p = await programming(proxy);
        return p.count > before.count ? p : undefined;
      },
      30_000,
      2,
    );
    if (after.count !== before.count + 1)
      throw new Error(`change ${c}: ${after.count - before.count} observations, not 1`);
    latencies.push((after.sum - before.sum) * 1000);
    const q = performance.now();
    const chain = await must(NS.programming, 'nft', [
      'list',
      'chain',
      'ip',
      nftTable,
      `svc-default/${name}/tcp/http`,
    ]);
    confirms.push(performance.now() - q);
    if (!chain.includes(`__${newIP}/${BACKEND_PORT}`))
      throw new Error(`change ${c}: ${newIP} is not in the kernel's svc chain of ${name}`);
  }
  const writes = await proxy.registry.getSingleMetric('k8ts_proxy_nftables_writes_total')!.get();
  const byKind = writes.values.map((v) => `${String(v.labels.kind)} ${v.value}`).join(', ');
  const p99 = percentile(latencies, 99);
  console.log(
    `## Part 2: network programming latency (nftables mode)\n` +
      `${SERVICES} ClusterIP Services × ${ENDPOINTS} endpoints (one EndpointSlice each) written in ${(written / 1000).toFixed(1)} s; ` +
      `kernel table then: ${chains} chains; an nft -f naming no chain (add table, a no-op) takes ${percentile(noops, 50).toFixed(0)} ms there (median of 5)\n` +
      `initial sync: Proxy.start() → every Service's rules written ${(initialSync / 1000).toFixed(1)} s ` +
      `(caches synced after ${(cacheSynced / 1000).toFixed(2)} s); nft transactions so far: ${byKind}\n`,
  );
  console.log(
    table([
      ['single-endpoint changes', 'p50 ms', 'p99 ms', 'max ms'],
      [
        `${CHANGES}, slice write → rules live (histogram)`,
        percentile(latencies, 50).toFixed(1),
        p99.toFixed(1),
        Math.max(...latencies).toFixed(1),
      ],
      [
        `then one nft list chain (confirms it)`,
        percentile(confirms, 50).toFixed(1),
        percentile(confirms, 99).toFixed(1),
        Math.max(...confirms).toFixed(1),
      ],
    ]),
  );
  console.log(`target: p99 < 1 s: ${p99.toFixed(1)} ms → ${p99 < 1000 ? 'met' : 'NOT met'}\n`);
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('bench:proxy-kernel needs root (network namespaces, nft)');
  for (const tool of ['wrk', 'haproxy', 'nft', 'ip', 'curl']) {
    const r = await runProgram('sh', ['-c', `command -v ${tool}`], { timeoutMs: 5000 });
    if (r.code !== 0) throw new Error(`${tool} is missing (.ci/run installs it)`);
  }
  haproxyVersion =
    /version (\S+)/.exec((await runProgram('haproxy', ['-v'], { timeoutMs: 5000 })).stdout)?.[1] ?? '?';
  const stopOn = (signal: NodeJS.Signals) =>
    process.on(signal, () => {
      console.error(`${signal}: cleaning up`);
      void cleanup().then(() => process.exit(130));
    });
  stopOn('SIGINT');
  stopOn('SIGTERM');
  const deadline = setTimeout(() => {
    console.error(`deadline of ${DEADLINE_SECONDS} s reached: cleaning up`);
    void cleanup().then(() => process.exit(1));
  }, DEADLINE_SECONDS * 1000);
  try {
    if (process.env.BENCH_PARTS !== '2') await dataPath();
    await cleanup();
    cleaning = undefined;
    if (process.env.BENCH_PARTS !== '1') await networkProgramming();
  } finally {
    clearTimeout(deadline);
    await cleanup();
  }
}

if (process.argv.includes(CHILD_FLAG)) {
  userspaceChild().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
} else {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      void cleanup().then(() => process.exit(1));
    },
  );
}
