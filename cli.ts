#!/usr/bin/env node
/**
 * The `k8ts` command (the CLI contract of DESIGN.md). Arguments are parsed with Node's
 * own `util.parseArgs`. Commands that are not built yet say so and exit 2 instead of
 * pretending to work.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir, hostname } from 'node:os';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { PodSecuritySettings } from './control/apiserver/admission/podsecurity/config.js';

const HELP = `k8ts — a small, real Kubernetes

Usage:
  k8ts server      [--data-dir DIR] [--bind-address ADDR] [--port N] [--datastore sqlite|etcd|memory]
                   [--etcd-endpoints URL,...] [--disable-agent] [--node-name NAME] [--node-ip IP]
                   [--disable-controller-manager] [--disable-scheduler]
                   [--log-level LEVEL] [--etcd-compaction-interval 5m] [--min-request-timeout 1800]
                   [--default-watch-cache-size N] [--leader-elect-lease-duration 15s]
                   [--leader-elect-renew-deadline 10s] [--leader-elect-retry-period 2s]
                   [--node-monitor-grace-period 50s] [--node-monitor-period 5s]
                   [--node-startup-grace-period 60s] [--terminated-pod-gc-threshold 12500]
                   [--default-not-ready-toleration-seconds 300]
                   [--default-unreachable-toleration-seconds 300] [--cluster-cidr 10.42.0.0/16]
                   [--service-cluster-ip-range 10.43.0.0/16] [--service-node-port-range 30000-32767]
                   [--tls-san NAME|IP ...] [--insecure-http] [--flannel-backend vxlan|host-gw|none]
                   [--pod-security-default-level privileged|baseline|restricted]
                   [--pod-security-admission-config-file FILE]
  k8ts agent       --server URL (--token T | --token-file F) [--node-name NAME] [--node-ip IP]
                   [--data-dir DIR] [--runtime docker|containerd] [--log-level LEVEL]
                   (the token is needed to join once; the node credential is kept in DIR/tls)
  k8ts kubeconfig  [--data-dir DIR] [--user NAME [--group GROUP ...]]
  k8ts token       create [--ttl 24h (0: never)] [--description TEXT] | list | delete ID [--data-dir DIR]
  k8ts version
  k8ts help

\`k8ts server\` runs the control process (API server over the store, the controllers and
the scheduler) over HTTPS and, unless --disable-agent, a node agent for this host;
\`k8ts agent\` joins another host with the node token. Agents run the pods bound to their
node (kubelet), proxy Services (kube-proxy) and serve logs, exec and port-forward through a
tunnel they open to the server. Then: KUBECONFIG=DIR/kubeconfig.yaml kubectl ...
`;

const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;

/** The default data dir: /var/lib/k8ts for root, ~/.k8ts for anyone else. */
export function defaultDataDir(): string {
  return process.getuid?.() === 0 ? '/var/lib/k8ts' : join(homedir(), '.k8ts');
}

/** The agent's default data dir: /var/lib/k8ts-agent for root, ~/.k8ts-agent for anyone else. */
export function defaultAgentDataDir(): string {
  return process.getuid?.() === 0 ? '/var/lib/k8ts-agent' : join(homedir(), '.k8ts-agent');
}

/** A CLI usage error: printed as `k8ts <command>: <message>` with exit code 2. */
class UsageError extends Error {}

/**
 * The node flags shared by `server` and `agent`: --node-name (default: the hostname,
 * lowercased, as the kubelet) must be a DNS subdomain; --node-ip an IP address (default:
 * the host's primary IPv4).
 */
async function nodeFlags(values: {
  'node-name'?: string;
  'node-ip'?: string;
}): Promise<{ nodeName: string; nodeIP: string; nodePortAddress?: string }> {
  const nodeName = values['node-name'] ?? hostname().toLowerCase();
  if (
    nodeName.length > 253 ||
    !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(nodeName)
  ) {
    throw new UsageError(
      `--node-name must be a lowercase DNS subdomain (letters, digits, '-' and '.'), got ${JSON.stringify(nodeName)}`,
    );
  }
  const given = values['node-ip'];
  if (given !== undefined && isIP(given) === 0) {
    throw new UsageError(`--node-ip must be an IP address of this host, got ${JSON.stringify(given)}`);
  }
  const { primaryIPv4 } = await import('./agent/kubelet/machine.js');
  // With --node-ip, NodePorts listen on that address only (DESIGN.md, "Several nodes on one
  // host"); without it on all addresses, as kube-proxy by default.
  return given !== undefined
    ? { nodeName, nodeIP: given, nodePortAddress: given }
    : { nodeName, nodeIP: await primaryIPv4() };
}

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

async function agentCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      server: { type: 'string' },
      token: { type: 'string' },
      'token-file': { type: 'string' },
      'node-name': { type: 'string' },
      'node-ip': { type: 'string' },
      'data-dir': { type: 'string' },
      runtime: { type: 'string', default: 'docker' },
      'log-level': { type: 'string', default: 'info' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const server = values.server;
  if (!server)
    throw new UsageError('--server URL is required (the control process, e.g. https://10.0.0.1:6443)');
  if (!/^https?:\/\/[^/]/.test(server))
    throw new UsageError(`--server must be an http:// or https:// URL, got ${server}`);
  if (values.token !== undefined && values['token-file'] !== undefined) {
    throw new UsageError('give --token or --token-file, not both');
  }
  let token = values.token;
  if (values['token-file'] !== undefined) {
    try {
      token = readFileSync(values['token-file'], 'utf8').trim();
    } catch (err) {
      throw new UsageError(`cannot read --token-file ${values['token-file']}: ${(err as Error).message}`);
    }
  }
  const agentDataDir = values['data-dir'] ?? defaultAgentDataDir();
  // The token is needed to join; afterwards the node credential in the data dir is used.
  if (!token && !existsSync(join(agentDataDir, 'tls', 'kubelet-client.crt'))) {
    throw new UsageError("--token or --token-file is required (the server's DATA_DIR/node-token)");
  }
  const runtime = values.runtime!;
  if (runtime === 'containerd') throw new UsageError('--runtime containerd is not supported yet; use docker');
  if (runtime !== 'docker') throw new UsageError(`--runtime must be docker or containerd, got ${runtime}`);
  const logLevel = values['log-level']!;
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got ${logLevel}`);
  }
  const { nodeName, nodeIP, nodePortAddress } = await nodeFlags(values);
  const { startAgent } = await import('./agent/main.js');
  const { createLogger } = await import('./api/log.js');
  const interrupted = untilSignal();
  let agent;
  try {
    agent = await startAgent({
      server,
      ...(token ? { token } : {}),
      nodeName,
      nodeIP,
      ...(nodePortAddress !== undefined ? { nodePortAddress } : {}),
      dataDir: agentDataDir,
      runtime,
      logger: createLogger(logLevel as (typeof LOG_LEVELS)[number]),
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

async function server(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      'data-dir': { type: 'string' },
      'bind-address': { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '6443' },
      datastore: { type: 'string', default: 'sqlite' },
      'etcd-endpoints': { type: 'string' },
      'disable-agent': { type: 'boolean', default: false },
      'disable-controller-manager': { type: 'boolean', default: false },
      'disable-scheduler': { type: 'boolean', default: false },
      'node-name': { type: 'string' },
      'node-ip': { type: 'string' },
      'log-level': { type: 'string', default: 'info' },
      'etcd-compaction-interval': { type: 'string', default: '5m' },
      'min-request-timeout': { type: 'string', default: '1800' },
      'default-watch-cache-size': { type: 'string' },
      'leader-elect-lease-duration': { type: 'string', default: '15s' },
      'leader-elect-renew-deadline': { type: 'string', default: '10s' },
      'leader-elect-retry-period': { type: 'string', default: '2s' },
      'node-monitor-grace-period': { type: 'string', default: '50s' },
      'node-monitor-period': { type: 'string', default: '5s' },
      'node-startup-grace-period': { type: 'string', default: '60s' },
      'terminated-pod-gc-threshold': { type: 'string', default: '12500' },
      'cluster-cidr': { type: 'string', default: '10.42.0.0/16' },
      'flannel-backend': { type: 'string', default: 'vxlan' },
      'service-cluster-ip-range': { type: 'string', default: '10.43.0.0/16' },
      'service-node-port-range': { type: 'string', default: '30000-32767' },
      'default-not-ready-toleration-seconds': { type: 'string', default: '300' },
      'default-unreachable-toleration-seconds': { type: 'string', default: '300' },
      'tls-san': { type: 'string', multiple: true },
      'insecure-http': { type: 'boolean', default: false },
      'pod-security-default-level': { type: 'string' },
      'pod-security-admission-config-file': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port!) || port > 65535)
    throw new UsageError(`--port must be 0–65535, got ${values.port}`);
  const datastore = values.datastore!;
  if (datastore !== 'sqlite' && datastore !== 'etcd' && datastore !== 'memory') {
    throw new UsageError(`--datastore must be sqlite, etcd or memory, got ${datastore}`);
  }
  const etcdEndpoints = (values['etcd-endpoints'] ?? '').split(',').filter((e) => e !== '');
  if (datastore === 'etcd' && etcdEndpoints.length === 0) {
    throw new UsageError('--datastore etcd needs --etcd-endpoints URL[,URL...]');
  }
  const logLevel = values['log-level']!;
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got ${logLevel}`);
  }
  const localNode = values['disable-agent'] ? undefined : await nodeFlags(values);
  const compactionIntervalSeconds = parseDuration(
    values['etcd-compaction-interval']!,
    '--etcd-compaction-interval',
  );
  const minRequestTimeout = values['min-request-timeout']!;
  if (!/^[1-9]\d*$/.test(minRequestTimeout)) {
    throw new UsageError(
      `--min-request-timeout must be a positive number of seconds, got ${minRequestTimeout}`,
    );
  }
  const cacheSize = values['default-watch-cache-size'];
  if (cacheSize !== undefined && !/^[1-9]\d*$/.test(cacheSize)) {
    throw new UsageError(`--default-watch-cache-size must be a positive number of events, got ${cacheSize}`);
  }
  const leaseDuration = parseDuration(
    values['leader-elect-lease-duration']!,
    '--leader-elect-lease-duration',
  );
  const renewDeadline = parseDuration(
    values['leader-elect-renew-deadline']!,
    '--leader-elect-renew-deadline',
  );
  const retryPeriod = parseDuration(values['leader-elect-retry-period']!, '--leader-elect-retry-period');
  if (!Number.isInteger(leaseDuration)) {
    throw new UsageError(
      `--leader-elect-lease-duration must be whole seconds, got ${values['leader-elect-lease-duration']}`,
    );
  }
  // client-go's NewLeaderElector rules, said in flag terms.
  if (!(leaseDuration > renewDeadline && renewDeadline > 1.2 * retryPeriod)) {
    throw new UsageError(
      '--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline, which must be greater than 1.2 × --leader-elect-retry-period',
    );
  }
  const wholeNumber = (flag: string, min: number): number => {
    const text = values[flag as keyof typeof values] as string;
    if (!/^\d+$/.test(text) || Number(text) < min) {
      throw new UsageError(`--${flag} must be a whole number >= ${min}, got ${text}`);
    }
    return Number(text);
  };
  const clusterCidr = values['cluster-cidr']!;
  const { parseCidr } = await import('./control/controllers/nodeipam/cidr.js');
  try {
    if (parseCidr(clusterCidr).prefix > 23) throw new Error('it must hold at least two /24 node ranges');
  } catch (err) {
    throw new UsageError(`--cluster-cidr ${clusterCidr}: ${(err as Error).message}`);
  }
  const flannelBackend = values['flannel-backend']!;
  const { BACKENDS } = await import('./api/netconf.js');
  if (!(BACKENDS as readonly string[]).includes(flannelBackend))
    throw new UsageError(`--flannel-backend must be one of ${BACKENDS.join(', ')}, got ${flannelBackend}`);
  const podSecurity = await podSecurityFlags(
    values['pod-security-admission-config-file'],
    values['pod-security-default-level'],
  );
  const dataDir = values['data-dir'] ?? defaultDataDir();
  const { startControl } = await import('./control/main.js');
  const control = await startControl({
    dataDir,
    bindAddress: values['bind-address']!,
    port,
    datastore,
    etcdEndpoints,
    logLevel: logLevel as (typeof LOG_LEVELS)[number],
    compactionIntervalSeconds,
    minRequestTimeoutSeconds: Number(minRequestTimeout),
    ...(cacheSize ? { watchCacheSize: Number(cacheSize) } : {}),
    leaderElection: {
      leaseDurationSeconds: leaseDuration,
      renewDeadlineSeconds: renewDeadline,
      retryPeriodSeconds: retryPeriod,
    },
    controllers: {
      nodeMonitorGracePeriodSeconds: parseDuration(
        values['node-monitor-grace-period']!,
        '--node-monitor-grace-period',
      ),
      nodeMonitorPeriodSeconds: parseDuration(values['node-monitor-period']!, '--node-monitor-period'),
      nodeStartupGracePeriodSeconds: parseDuration(
        values['node-startup-grace-period']!,
        '--node-startup-grace-period',
      ),
      terminatedPodGCThreshold: wholeNumber('terminated-pod-gc-threshold', 1),
      clusterCIDR: clusterCidr,
    },
    defaultNotReadyTolerationSeconds: wholeNumber('default-not-ready-toleration-seconds', 0),
    defaultUnreachableTolerationSeconds: wholeNumber('default-unreachable-toleration-seconds', 0),
    disableControllerManager: values['disable-controller-manager']!,
    disableScheduler: values['disable-scheduler']!,
    serviceClusterIPRange: values['service-cluster-ip-range']!,
    serviceNodePortRange: values['service-node-port-range']!,
    tlsSANs: values['tls-san'] ?? [],
    flannelBackend: flannelBackend as (typeof BACKENDS)[number],
    insecureHTTP: values['insecure-http']!,
    ...(podSecurity ? { podSecurity } : {}),
  });
  process.stdout.write(
    `k8ts server listening on ${control.url}\nkubeconfig: ${control.kubeconfigPath}\ntry: KUBECONFIG=${control.kubeconfigPath} kubectl get namespaces\n`,
  );
  const interrupted = untilSignal();
  // The local agent joins this control process as any other agent would: over its URL,
  // with the node token, from its own data dir.
  let agent: { stop(): Promise<void> } | undefined;
  if (localNode) {
    const { startAgent } = await import('./agent/main.js');
    const { createLogger } = await import('./api/log.js');
    try {
      agent = await startAgent({
        server: control.url,
        token: readFileSync(join(dataDir, 'node-token'), 'utf8').trim(),
        ...localNode,
        dataDir: join(dataDir, 'agent'),
        runtime: 'docker',
        logger: createLogger(logLevel as (typeof LOG_LEVELS)[number]),
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

/**
 * Parses a duration as Go prints them (`300ms`, `10s`, `5m`, `1h30m`) into seconds.
 * @throws UsageError naming `flag` when malformed or not positive.
 */
export function parseDuration(text: string, flag: string): number {
  const units: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };
  let rest = text;
  let seconds = 0;
  while (rest.length > 0) {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)/.exec(rest);
    if (!m)
      throw new UsageError(`${flag} must be a duration such as 30s, 5m or 1h, got ${JSON.stringify(text)}`);
    seconds += Number(m[1]) * units[m[2]!]!;
    rest = rest.slice(m[0].length);
  }
  if (!(seconds > 0))
    throw new UsageError(
      `${flag} must be a positive duration such as 30s, 5m or 1h, got ${JSON.stringify(text)}`,
    );
  return seconds;
}

async function kubeconfigCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      'data-dir': { type: 'string' },
      user: { type: 'string' },
      group: { type: 'string', multiple: true },
    },
  });
  const dataDir = values['data-dir'] ?? defaultDataDir();
  if (values.user !== undefined) {
    if (values.user === '' || values.user.startsWith('system:'))
      throw new UsageError(`--user must be a name outside system:, got ${JSON.stringify(values.user)}`);
    const { userKubeconfig } = await import('./control/tokens.js');
    process.stdout.write(await userKubeconfig(dataDir, values.user, values.group ?? []));
    return 0;
  }
  if (values.group !== undefined) throw new UsageError('--group needs --user');
  const path = join(dataDir, 'kubeconfig.yaml');
  try {
    process.stdout.write(readFileSync(path, 'utf8'));
    return 0;
  } catch {
    throw new UsageError(`no kubeconfig at ${path}; start 'k8ts server' with this --data-dir first`);
  }
}

/**
 * PodSecurity admission's settings from `--pod-security-admission-config-file` (a
 * PodSecurityConfiguration, or an AdmissionConfiguration holding one; YAML or JSON) and
 * `--pod-security-default-level` (every mode's level for namespaces without labels, over
 * the file's). Undefined when neither is given: everything privileged, as upstream.
 * @throws UsageError naming the flag and what is wrong.
 */
async function podSecurityFlags(
  file: string | undefined,
  level: string | undefined,
): Promise<PodSecuritySettings | undefined> {
  if (file === undefined && level === undefined) return undefined;
  const config = await import('./control/apiserver/admission/podsecurity/config.js');
  const { parseLevel, LEVELS } = await import('./control/apiserver/admission/podsecurity/policy.js');
  let settings = config.DEFAULT_POD_SECURITY;
  if (file !== undefined) {
    const { parse } = await import('yaml');
    try {
      settings = config.parsePodSecurityConfiguration(parse(readFileSync(file, 'utf8')));
    } catch (err) {
      throw new UsageError(`--pod-security-admission-config-file ${file}: ${(err as Error).message}`);
    }
  }
  if (level === undefined) return settings;
  const parsed = parseLevel(level);
  if (!parsed)
    throw new UsageError(`--pod-security-default-level must be one of ${LEVELS.join(', ')}, got ${level}`);
  return config.withDefaultLevel(settings, parsed);
}

/** `k8ts token create|list|delete`: bootstrap tokens for joining agents. */
async function tokenCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      'data-dir': { type: 'string' },
      ttl: { type: 'string' },
      description: { type: 'string' },
    },
  });
  const dataDir = values['data-dir'] ?? defaultDataDir();
  const [sub, ...rest] = positionals;
  const tokens = await import('./control/tokens.js');
  switch (sub) {
    case 'create': {
      if (rest.length > 0) throw new UsageError(`token create takes no arguments, got ${rest.join(' ')}`);
      // `--ttl 0`: it never expires; no --ttl: createToken's default (24 h, as kubeadm).
      const ttl = values.ttl;
      const ttlSeconds =
        ttl === undefined ? undefined : /^0(ms|s|m|h)?$/.test(ttl) ? 0 : parseDuration(ttl, '--ttl');
      const token = await tokens.createToken(dataDir, {
        ...(ttlSeconds !== undefined ? { ttlSeconds } : {}),
        ...(values.description !== undefined ? { description: values.description } : {}),
      });
      process.stdout.write(`${token}\n`);
      return 0;
    }
    case 'list': {
      const rows = await tokens.listTokens(dataDir);
      process.stdout.write('TOKEN ID  EXPIRES               DESCRIPTION\n');
      for (const r of rows)
        process.stdout.write(`${r.id.padEnd(9)} ${(r.expires ?? '<never>').padEnd(21)} ${r.description}\n`);
      return 0;
    }
    case 'delete': {
      if (rest.length !== 1) throw new UsageError('token delete takes one token id (or token)');
      const id = await tokens.deleteToken(dataDir, rest[0]!);
      process.stdout.write(`bootstrap token "${id}" deleted\n`);
      return 0;
    }
    default:
      throw new UsageError('usage: k8ts token create [--ttl 24h] [--description TEXT] | list | delete ID');
  }
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

/** Runs the CLI with `argv` (without node and script); resolves with the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const command = argv[0];
  try {
    if (command === 'server') return await server(argv.slice(1));
    if (command === 'kubeconfig') return await kubeconfigCommand(argv.slice(1));
    if (command === 'token') return await tokenCommand(argv.slice(1));
    if (command === 'agent') return await agentCommand(argv.slice(1));
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (err instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))) {
      process.stderr.write(`k8ts ${command}: ${(err as Error).message}\n`);
      return 2;
    }
    process.stderr.write(`k8ts ${command}: ${(err as Error).message}\n`);
    return 1;
  }
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
