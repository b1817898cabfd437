#!/usr/bin/env node
/**
 * The `k8ts` command (the CLI contract of DESIGN.md): the help text, and each command run
 * from its options. A command's flags, defaults and validation live in cmd/options/<command>.ts
 * (parsed with Node's own `util.parseArgs`); what they return is already checked. Commands
 * that are not built yet say so and exit 2 instead of pretending to work.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startMallocTrim } from './api/malloc-trim.js';
import { defaultResolvConf, parseAgentOptions } from './cmd/options/agent.js';
import { UsageError } from './cmd/options/common.js';
import { parseKubeconfigOptions } from './cmd/options/kubeconfig.js';
import { parseServerOptions } from './cmd/options/server.js';
import { parseSnapshotOptions } from './cmd/options/snapshot.js';
import { parseTokenOptions } from './cmd/options/token.js';

const HELP = `k8ts — a small, real Kubernetes

Usage:
  k8ts server      [--data-dir DIR] [--bind-address ADDR] [--port N] [--datastore sqlite|etcd|memory]
                   [--etcd-endpoints URL,...] [--disable-agent] [--node-name NAME] [--node-ip IP]
                   [--disable-controller-manager] [--disable-scheduler] [--disable-local-storage]
                   [--log-level LEVEL] [--etcd-compaction-interval 5m] [--min-request-timeout 1800]
                   [--default-watch-cache-size N] [--leader-elect-lease-duration 15s]
                   [--leader-elect-renew-deadline 10s] [--leader-elect-retry-period 2s]
                   [--node-monitor-grace-period 50s] [--node-monitor-period 5s]
                   [--node-startup-grace-period 60s] [--terminated-pod-gc-threshold 12500]
                   [--horizontal-pod-autoscaler-sync-period 15s]
                   [--snapshot-schedule '0 */12 * * *'] [--snapshot-retention 5] [--disable-snapshots]
                   [--snapshot-dir DIR (default DIR/snapshots)]
                   [--default-not-ready-toleration-seconds 300]
                   [--default-unreachable-toleration-seconds 300] [--cluster-cidr 10.42.0.0/16]
                   [--service-cluster-ip-range 10.43.0.0/16] [--service-node-port-range 30000-32767]
                   [--advertise-address IP] [--cluster-dns 10.43.0.10] [--cluster-domain cluster.local]
                   [--tls-san NAME|IP ...] [--insecure-http] [--flannel-backend vxlan|host-gw|none]
                   [--pod-security-default-level privileged|baseline|restricted]
                   [--pod-security-admission-config-file FILE]
                   [--proxy-mode nftables|iptables|userspace] [--metrics-bind-address 127.0.0.1:10249]
                   (the local agent's kube-proxy, as k8ts agent's flags)
  k8ts agent       --server URL (--token T | --token-file F) [--node-name NAME] [--node-ip IP]
                   (--server repeated or comma-separated: API servers of one cluster; the agent
                   fails over to the next when one stops answering, and keeps a tunnel to each)
                   [--data-dir DIR] [--runtime docker|containerd] [--log-level LEVEL]
                   [--container-runtime-endpoint unix:///run/containerd/containerd.sock]
                   [--cni-conf-dir /etc/cni/net.d] [--cni-bin-dir /usr/lib/cni]   (containerd only)
                   [--proxy-mode nftables|iptables|userspace]   (nftables, iptables: Service rules in
                   the kernel where the cluster network is not backend none; userspace elsewhere)
                   [--metrics-bind-address 127.0.0.1:10249 (0: none)]   (kube-proxy's /metrics, /healthz)
                   [--cluster-dns IP[,IP]] (default: kube-system/kube-dns's clusterIP)
                   [--cluster-domain cluster.local] [--resolv-conf /etc/resolv.conf ('' for none)]
                   [--disable-cluster-dns]   (no DNS server in this agent; it serves the kube-dns address)
                   [--disable-local-storage]   (no local-path provisioner for this node's claims)
  k8ts agent       --cleanup [--node-name NAME] [--data-dir DIR] [--cni-conf-dir DIR]   (remove the agent's
                   routes, VXLAN device, firewall rules, and its CNI conflist, bridge and leases)
                   (the token is needed to join once; the node credential is kept in DIR/tls)
  k8ts kubeconfig  [--data-dir DIR] [--user NAME [--group GROUP ...]]
  k8ts token       create [--ttl 24h (0: never)] [--description TEXT] | list | delete ID [--data-dir DIR]
  k8ts snapshot    save [--name on-demand] [--datastore sqlite|etcd --etcd-endpoints URL,...] [--node-name NAME]
                   | list | delete NAME... | prune [--name on-demand] [--retention 5]
                   | restore NAME|PATH [--bump-revision 1000000000]
                     [--etcd-data-dir DIR [--etcd-name N] [--etcd-initial-cluster C]
                      [--etcd-initial-advertise-peer-urls U] [--etcd-initial-cluster-token T]]
                   (each: [--data-dir DIR] [--snapshot-dir DIR]; save asks the server running on
                   DIR, else takes the snapshot itself; restore in place only with the server stopped)
  k8ts version
  k8ts help

\`k8ts server\` runs the control process (API server over the store, the controllers and
the scheduler) over HTTPS and, unless --disable-agent, a node agent for this host;
\`k8ts agent\` joins another host with the node token. Agents run the pods bound to their
node (kubelet), proxy Services (kube-proxy) and serve logs, exec and port-forward through a
tunnel they open to the server. Then: KUBECONFIG=DIR/kubeconfig.yaml kubectl ...

For scale tests one process plays many nodes (hollow nodes, as kwok's and kubemark's):
  k8ts hollow-nodes --server URL (--token T | --token-file F) --count N [--prefix hollow-node-]
                   (--server repeated or comma-separated: the nodes fail over between them)
                   [--data-dir DIR] [--cpu 4] [--memory 16Gi] [--max-pods 110] [--node-ip 127.0.0.1]
                   [--job-pod-run-time 5s] [--report-interval 1m] [--concurrency 16]
                   [--connections-per-node 2] [--log-level warn]
                   (each node joins with its own credential, kept in DIR/<node>/tls; pods run on the
                   fake runtime; the memory per node is printed at start, every --report-interval
                   and on SIGUSR1)
`;

/**
 * Resolves on the first SIGINT or SIGTERM, and keeps the process alive until then (or
 * until release()): a daemon runs until it is told to stop. The ref'd timer matters while
 * everything else waits on unref'd timers; an agent retrying a server it cannot reach
 * would otherwise end with Node's exit code 13 (an unsettled top-level await).
 */
function untilSignal(): { promise: Promise<void>; signal: AbortSignal; release(): void } {
  const ac = new AbortController();
  const alive = setInterval(() => {}, 1 << 30);
  let stop = () => {};
  const release = () => {
    clearInterval(alive);
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
  };
  const promise = new Promise<void>((resolve) => {
    stop = () => {
      release();
      ac.abort(new Error('interrupted'));
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return { promise, signal: ac.signal, release };
}

/** `k8ts agent`: a node agent that joins a server and runs until SIGINT or SIGTERM. */
async function agentCommand(argv: string[]): Promise<number> {
  const options = await parseAgentOptions(argv);
  if (options === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  if ('cleanup' in options) {
    const { cleanupNodeNetwork } = await import('./agent/network/cleanup.js');
    const { runHostCommand } = await import('./agent/network/host-command.js');
    const { clusterIPInterfaceFor } = await import('./agent/proxy/cluster-ip.js');
    const { nftTableFor } = await import('./agent/proxy/nftables-rules.js');
    const { iptablesPrefixFor } = await import('./agent/proxy/iptables-rules.js');
    const { dnsInterfaceFor } = await import('./agent/dns/cluster-dns.js');
    const { hostname } = await import('node:os');
    for (const line of await cleanupNodeNetwork(
      runHostCommand,
      clusterIPInterfaceFor(options.nodeName),
      nftTableFor(options.nodeName, hostname()),
      dnsInterfaceFor(options.nodeName),
      iptablesPrefixFor(options.nodeName, hostname()),
    ))
      process.stdout.write(`${line}\n`);
    const { cleanupCniNetwork } = await import('./agent/network/cleanup.js');
    for (const line of await cleanupCniNetwork(runHostCommand, {
      nodeName: options.nodeName,
      confDir: options.cniConfDir,
      dataDir: options.dataDir,
    }))
      process.stdout.write(`${line}\n`);
    return 0;
  }
  const {
    server,
    alternateServers,
    token,
    nodeName,
    nodeIP,
    nodePortAddress,
    dataDir,
    runtime,
    runtimeEndpoint,
    cni,
    proxyMode,
    metricsBindAddress,
    dns,
    logLevel,
  } = options;
  const { startAgent } = await import('./agent/main.js');
  const { createLogger } = await import('./api/log.js');
  const interrupted = untilSignal();
  let agent;
  try {
    agent = await startAgent({
      ...(options.disableClusterDNS ? { clusterDNSServer: false } : {}),
      ...(options.disableLocalStorage ? { localStorage: false } : {}),
      server,
      alternateServers,
      ...(token ? { token } : {}),
      nodeName,
      nodeIP,
      ...(nodePortAddress !== undefined ? { nodePortAddress } : {}),
      dataDir,
      runtime,
      ...(runtimeEndpoint !== undefined ? { runtimeEndpoint } : {}),
      ...(cni !== undefined ? { cni } : {}),
      proxyMode,
      ...(metricsBindAddress ? { metricsBindAddress } : {}),
      dns,
      logger: createLogger(logLevel),
      signal: interrupted.signal,
    });
  } catch (err) {
    interrupted.release();
    if (interrupted.signal.aborted) return 0;
    throw err;
  }
  process.stdout.write(`k8ts agent ${nodeName} joined ${server}\n`);
  await interrupted.promise;
  await agent.stop();
  return 0;
}

/**
 * `k8ts server`: the control process and, unless --disable-agent, an agent for this host,
 * until SIGINT or SIGTERM.
 */
async function server(argv: string[]): Promise<number> {
  const options = await parseServerOptions(argv);
  if (options === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  const { control: config, localNode } = options;
  const { dataDir, logLevel } = config;
  const { startControl } = await import('./control/main.js');
  const control = await startControl(config);
  process.stdout.write(
    `k8ts server listening on ${control.url}\nkubeconfig: ${control.kubeconfigPath}\ntry: KUBECONFIG=${control.kubeconfigPath} kubectl get namespaces\n`,
  );
  const interrupted = untilSignal();
  // The local agent joins this control process as any other agent would: over its URL,
  // with the node token, from its own data dir; then its API client's connections stay in
  // the process (control.inProcessConnector), authenticated as its node.
  let agent: { stop(): Promise<void> } | undefined;
  if (localNode) {
    const { startAgent } = await import('./agent/main.js');
    const { createLogger } = await import('./api/log.js');
    try {
      agent = await startAgent({
        server: control.url,
        token: readFileSync(join(dataDir, 'node-token'), 'utf8').trim(),
        // Its API client reaches the server in this process without TLS, as its node.
        inProcess: (credential) => control.inProcessConnector(credential),
        ...localNode,
        // --disable-local-storage: no local-path class, so no provisioner in this agent either.
        ...(config.disableLocalStorage ? { localStorage: false } : {}),
        dataDir: join(dataDir, 'agent'),
        runtime: 'docker',
        // The pods' search list follows the server's --cluster-domain (their nameserver is
        // the kube-dns Service it creates).
        dns: {
          ...(config.clusterDomain !== undefined ? { clusterDomain: config.clusterDomain } : {}),
          resolvConf: defaultResolvConf(),
        },
        logger: createLogger(logLevel),
        signal: interrupted.signal,
      });
      process.stdout.write(`k8ts agent ${localNode.nodeName} joined ${control.url}\n`);
    } catch (err) {
      if (!interrupted.signal.aborted) {
        interrupted.release();
        await control.stop();
        throw err;
      }
    }
  }
  await interrupted.promise;
  await agent?.stop();
  await control.stop();
  return 0;
}

/** `k8ts kubeconfig`: prints the admin kubeconfig of a data dir, or makes one for --user. */
async function kubeconfigCommand(argv: string[]): Promise<number> {
  const { dataDir, user } = parseKubeconfigOptions(argv);
  if (user !== undefined) {
    const { userKubeconfig } = await import('./control/tokens.js');
    process.stdout.write(await userKubeconfig(dataDir, user.name, user.groups));
    return 0;
  }
  const path = join(dataDir, 'kubeconfig.yaml');
  try {
    process.stdout.write(readFileSync(path, 'utf8'));
    return 0;
  } catch {
    throw new UsageError(`no kubeconfig at ${path}; start 'k8ts server' with this --data-dir first`);
  }
}

/** `k8ts token create|list|delete`: bootstrap tokens for joining agents. */
async function tokenCommand(argv: string[]): Promise<number> {
  const options = parseTokenOptions(argv);
  const tokens = await import('./control/tokens.js');
  switch (options.command) {
    case 'create': {
      const { ttlSeconds, description } = options;
      const token = await tokens.createToken(options.dataDir, {
        ...(ttlSeconds !== undefined ? { ttlSeconds } : {}),
        ...(description !== undefined ? { description } : {}),
      });
      process.stdout.write(`${token}\n`);
      return 0;
    }
    case 'list': {
      const rows = await tokens.listTokens(options.dataDir);
      process.stdout.write('TOKEN ID  EXPIRES               DESCRIPTION\n');
      for (const r of rows)
        process.stdout.write(`${r.id.padEnd(9)} ${(r.expires ?? '<never>').padEnd(21)} ${r.description}\n`);
      return 0;
    }
    case 'delete': {
      const id = await tokens.deleteToken(options.dataDir, options.id);
      process.stdout.write(`bootstrap token "${id}" deleted\n`);
      return 0;
    }
  }
}

/** `k8ts snapshot save|list|delete|prune|restore`: snapshots of the store (control/snapshot/). */
async function snapshotCommand(argv: string[]): Promise<number> {
  const options = parseSnapshotOptions(argv);
  const { runSnapshotCommand } = await import('./control/snapshot/commands.js');
  for (const line of await runSnapshotCommand(options)) process.stdout.write(`${line}\n`);
  return 0;
}

/** The package version, read from package.json next to dist/ (or the source tree). */
function version(): string {
  for (const rel of ['../package.json', './package.json']) {
    try {
      return (JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { version: string }).version;
    } catch {
      // try the next location
    }
  }
  return 'unknown';
}

/**
 * `k8ts hollow-nodes`: `--count` simulated nodes in this process (agent/hollow/) until
 * SIGINT or SIGTERM; the memory line at start, every --report-interval and on SIGUSR1.
 * Maps its own failures to exit codes as main() does (2: usage, 1: anything else).
 */
async function hollowNodesCommand(argv: string[]): Promise<number> {
  try {
    const { parseHollowNodesOptions } = await import('./cmd/options/hollow-nodes.js');
    const options = parseHollowNodesOptions(argv);
    if (options === 'help') {
      process.stdout.write(HELP);
      return 0;
    }
    // V8 then grows the heap less far beyond what is live (some 70 KiB per node less here,
    // for more collections): the process is there to be many small nodes.
    const { setFlagsFromString } = await import('node:v8');
    setFlagsFromString('--optimize-for-size');
    const { startHollowNodes, formatMemoryReport } = await import('./agent/hollow/hollow-nodes.js');
    const { createLogger } = await import('./api/log.js');
    const interrupted = untilSignal();
    let hollow;
    try {
      hollow = await startHollowNodes({
        ...options,
        logger: createLogger(options.logLevel),
        signal: interrupted.signal,
        onProgress: (line) => process.stdout.write(`hollow-nodes: ${line}\n`),
      });
    } catch (err) {
      interrupted.release();
      if (interrupted.signal.aborted) return 0;
      throw err;
    }
    const report = () => process.stdout.write(`hollow-nodes: ${formatMemoryReport(hollow.memory())}\n`);
    const { joinMs, registerMs } = hollow.timings;
    process.stdout.write(
      `hollow-nodes: ${options.count} nodes joined ${options.server} (credentials ${(joinMs / 1000).toFixed(1)} s, registration ${(registerMs / 1000).toFixed(1)} s)\n`,
    );
    report();
    process.on('SIGUSR1', report);
    const timer = setInterval(report, options.reportIntervalMs);
    await interrupted.promise;
    clearInterval(timer);
    process.removeListener('SIGUSR1', report);
    await hollow.stop();
    return 0;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    process.stderr.write(`k8ts hollow-nodes: ${(err as Error).message}\n`);
    return err instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))
      ? 2
      : 1;
  }
}

/** Runs the CLI with `argv` (without node and script); resolves with the process exit code. */
/**
 * The commands that run until stopped: their C heap is trimmed (api/malloc-trim.ts) unless
 * K8TS_MALLOC_TRIM=off (to measure what it saves).
 */
const LONG_RUNNING = new Set(['server', 'agent', 'hollow-nodes']);

export async function main(argv: string[]): Promise<number> {
  const command = argv[0];
  const trims = LONG_RUNNING.has(command ?? '') && process.env.K8TS_MALLOC_TRIM !== 'off';
  const stopTrimming = trims ? startMallocTrim() : undefined;
  try {
    return await dispatch(command, argv);
  } finally {
    stopTrimming?.();
  }
}

async function dispatch(command: string | undefined, argv: string[]): Promise<number> {
  try {
    if (command === 'server') return await server(argv.slice(1));
    if (command === 'kubeconfig') return await kubeconfigCommand(argv.slice(1));
    if (command === 'token') return await tokenCommand(argv.slice(1));
    if (command === 'agent') return await agentCommand(argv.slice(1));
    if (command === 'snapshot') return await snapshotCommand(argv.slice(1));
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (err instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))) {
      process.stderr.write(`k8ts ${command}: ${(err as Error).message}\n`);
      return 2;
    }
    process.stderr.write(`k8ts ${command}: ${(err as Error).message}\n`);
    return 1;
  }
  // Apart from the commands above: it maps its own failures to exit codes.
  if (command === 'hollow-nodes') return hollowNodesCommand(argv.slice(1));
  return basic(argv);
}

function basic(argv: string[]): number {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: false,
    options: { help: { type: 'boolean', short: 'h' }, version: { type: 'boolean' } },
  });
  const command = positionals[0] ?? (values.version ? 'version' : 'help');
  switch (command) {
    case 'help':
      process.stdout.write(HELP);
      return 0;
    case 'version':
      process.stdout.write(`k8ts v${version()}\n`);
      return 0;
    default:
      process.stderr.write(
        `k8ts: unknown command ${JSON.stringify(command)}; run 'k8ts help' for the commands\n`,
      );
      return 2;
  }
}

process.exitCode = await main(process.argv.slice(2));
