/**
 * `k8ts agent`'s flags, their defaults and their validation, in one place, as the kubelet's
 * cmd/kubelet/app/options: parseAgentOptions turns argv into what the agent starts from.
 * The flags are checked in the order below, so that of several wrong flags the first one in
 * this order is the one reported.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { LogLevel } from '../../api/log.js';
import { PROXY_MODES, type ProxyMode } from '../../agent/proxy/mode.js';
import {
  UsageError,
  defaultAgentDataDir,
  parseLogLevel,
  parseNodeFlags,
  parseServerURLs,
  type NodeOptions,
} from './common.js';

/** kube-proxy's default `--metrics-bind-address` (its metricsBindAddress, port 10249 on loopback). */
export const DEFAULT_METRICS_BIND_ADDRESS = '127.0.0.1:10249';

/** The flags of `k8ts agent` with their defaults (the help text lists them in cli.ts). */
export const AGENT_FLAGS = {
  server: { type: 'string', multiple: true },
  'disable-cluster-dns': { type: 'boolean', default: false },
  'disable-local-storage': { type: 'boolean', default: false },
  token: { type: 'string' },
  'token-file': { type: 'string' },
  'node-name': { type: 'string' },
  'node-ip': { type: 'string' },
  'data-dir': { type: 'string' },
  runtime: { type: 'string', default: 'docker' },
  'container-runtime-endpoint': { type: 'string' },
  'cni-conf-dir': { type: 'string' },
  'cni-bin-dir': { type: 'string' },
  'cluster-dns': { type: 'string' },
  'cluster-domain': { type: 'string', default: 'cluster.local' },
  'resolv-conf': { type: 'string' },
  'proxy-mode': { type: 'string', default: 'nftables' },
  'metrics-bind-address': { type: 'string', default: DEFAULT_METRICS_BIND_ADDRESS },
  'log-level': { type: 'string', default: 'info' },
  cleanup: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

/** `k8ts agent --cleanup [--node-name NAME]`: remove the agent's kernel state and exit (agent/network/cleanup.ts). */
export interface AgentCleanupOptions {
  cleanup: true;
  nodeName: string;
  /** --data-dir (its CNI leases; --cleanup also takes --cni-conf-dir), or defaultAgentDataDir(). */
  dataDir: string;
  /** --cni-conf-dir, or DEFAULT_CNI_CONF_DIR. */
  cniConfDir: string;
}

/** What `k8ts agent` runs: a node agent joining `server` (agent/main.ts's AgentConfig, less its parts). */
export interface AgentOptions extends NodeOptions {
  /** The control process's URL (http:// or https://): the first --server. */
  server: string;
  /**
   * The other --server URLs (the flag repeated, or comma-separated): API servers of the same
   * cluster the agent fails over to (RestClient's alternateServers). Empty for one server.
   */
  alternateServers: string[];
  /** The join token (--token, or --token-file's content trimmed); absent when the data dir already holds the node credential. */
  token?: string;
  /** `--disable-cluster-dns`: no DNS server in this agent (agent/dns/); pods still get --cluster-dns as their nameserver. */
  disableClusterDNS: boolean;
  /** `--disable-local-storage`: no local-path provisioner in this agent (agent/storage/), as k3s's `--disable local-storage`. */
  disableLocalStorage: boolean;
  /** --data-dir, or defaultAgentDataDir(). */
  dataDir: string;
  /** The container runtime: Docker (DOCKER_HOST or its default socket), or containerd's CRI. */
  runtime: 'docker' | 'containerd';
  /** containerd's CRI endpoint (`--container-runtime-endpoint`); unset: the adapter's default, `unix:///run/containerd/containerd.sock`. */
  runtimeEndpoint?: string;
  /** The CNI dirs of the runtime (`--cni-conf-dir`, `--cni-bin-dir`; defaults /etc/cni/net.d, /usr/lib/cni); containerd only. */
  cni?: { confDir: string; binDir: string };
  /** kube-proxy's `--proxy-mode` (agent/proxy/proxy.ts's ProxyMode). */
  proxyMode: ProxyMode;
  /**
   * kube-proxy's `--metrics-bind-address`: where the proxy's /metrics, /healthz and
   * /proxyMode are served over plain HTTP (default 127.0.0.1:10249; port 0: a free port);
   * undefined for `0` or '' (not served).
   */
  metricsBindAddress?: { host: string; port: number };
  /**
   * The pods' DNS (agent/kubelet/pods/dns.ts): `--cluster-dns` (comma-separated IPs; empty:
   * the kube-dns Service's clusterIP), `--cluster-domain`, `--resolv-conf` (see defaultResolvConf).
   */
  dns: { clusterDNS: string[]; clusterDomain: string; resolvConf: string };
  logLevel: LogLevel;
}

/** Where the agent writes the node's conflist for containerd (containerd's default CNI conf dir). */
export const DEFAULT_CNI_CONF_DIR = '/etc/cni/net.d';
/** Where Debian's containernetworking-plugins install the CNI plugins. */
export const DEFAULT_CNI_BIN_DIR = '/usr/lib/cni';

/**
 * Parses and checks `k8ts agent`'s arguments (argv without `k8ts agent`). Reads
 * --token-file, and looks for DATA_DIR/tls/kubelet-client.crt when no token is given.
 * @returns 'help' for --help/-h; for --cleanup, the node name only; else the checked
 *   options with every default filled in.
 * @throws UsageError naming the first wrong flag and what it must be; parseArgs' own
 *   ERR_PARSE_ARGS_* errors for unknown flags or missing values.
 */
export async function parseAgentOptions(
  argv: string[],
): Promise<AgentOptions | AgentCleanupOptions | 'help'> {
  const { values } = parseArgs({ args: argv, strict: true, options: AGENT_FLAGS });
  if (values.help) return 'help';
  // Cleaning up needs no server: only the node's name (its ClusterIP interface's).
  if (values.cleanup)
    return {
      cleanup: true,
      nodeName: (await parseNodeFlags({ 'node-name': values['node-name'] })).nodeName,
      dataDir: values['data-dir'] ?? defaultAgentDataDir(),
      cniConfDir: values['cni-conf-dir'] ?? DEFAULT_CNI_CONF_DIR,
    };
  const [server, ...alternateServers] = parseServerURLs(values.server, ['http:', 'https:']) as [
    string,
    ...string[],
  ];
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
  const dataDir = values['data-dir'] ?? defaultAgentDataDir();
  // The token is needed to join; afterwards the node credential in the data dir is used.
  if (!token && !existsSync(join(dataDir, 'tls', 'kubelet-client.crt'))) {
    throw new UsageError("--token or --token-file is required (the server's DATA_DIR/node-token)");
  }
  const runtime = values.runtime;
  if (runtime !== 'docker' && runtime !== 'containerd')
    throw new UsageError(`--runtime must be docker or containerd, got ${runtime}`);
  const containerd = runtime === 'containerd' ? containerdFlags(values) : undefined;
  if (runtime === 'docker') {
    for (const flag of ['container-runtime-endpoint', 'cni-conf-dir', 'cni-bin-dir'] as const) {
      if (values[flag] !== undefined)
        throw new UsageError(
          `--${flag} is for --runtime containerd (Docker is reached through DOCKER_HOST and makes its own bridge network)`,
        );
    }
  }
  const dns = dnsFlags(values);
  const proxy = parseProxyFlags(values);
  const logLevel = parseLogLevel(values['log-level']);
  const node = await parseNodeFlags(values);
  return {
    disableClusterDNS: values['disable-cluster-dns'],
    disableLocalStorage: values['disable-local-storage'],
    server,
    alternateServers,
    ...(token ? { token } : {}),
    ...node,
    dataDir,
    runtime,
    ...containerd,
    ...proxy,
    dns,
    logLevel,
  };
}

/** kube-proxy's flags as the agent takes them (agent/main.ts's AgentConfig fields). */
export interface ProxyOptions {
  /** --proxy-mode (default nftables). */
  proxyMode: ProxyMode;
  /** --metrics-bind-address (default 127.0.0.1:10249); absent for `0`: no metrics server. */
  metricsBindAddress?: { host: string; port: number };
}

/**
 * `--proxy-mode` and `--metrics-bind-address`, shared by `k8ts agent` and the local agent of
 * `k8ts server`; an absent flag takes kube-proxy's default (nftables, 127.0.0.1:10249).
 * @throws UsageError naming the flag and what it must be.
 */
export function parseProxyFlags(values: {
  'proxy-mode'?: string | undefined;
  'metrics-bind-address'?: string | undefined;
}): ProxyOptions {
  const proxyMode = values['proxy-mode'] ?? PROXY_MODES[0];
  if (!(PROXY_MODES as readonly string[]).includes(proxyMode))
    throw new UsageError(
      `--proxy-mode must be ${PROXY_MODES.slice(0, -1).join(', ')} or ${PROXY_MODES.at(-1)}, got ${JSON.stringify(proxyMode)}${PROXY_MODE_HINTS.get(proxyMode) ?? ''}`,
    );
  const metricsBindAddress = parseBindAddress(
    values['metrics-bind-address'] ?? DEFAULT_METRICS_BIND_ADDRESS,
    '--metrics-bind-address',
  );
  return { proxyMode: proxyMode as ProxyMode, ...(metricsBindAddress ? { metricsBindAddress } : {}) };
}

/**
 * An `IP:port` flag value (`[IPv6]:port` for IPv6), as kube-proxy's --metrics-bind-address.
 * @returns host (without brackets) and port (0-65535; 0: a free port), or undefined for `0`
 *   or '' (the server is off).
 * @throws UsageError naming `flag` for anything else.
 */
export function parseBindAddress(text: string, flag: string): { host: string; port: number } | undefined {
  if (text === '0' || text === '') return undefined;
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text);
  const host = m?.[1] ?? m?.[2];
  const port = Number(m?.[3]);
  const family = host !== undefined ? isIP(host) : 0;
  if (!m || family === 0 || (family === 6) !== (m[1] !== undefined) || port > 65535)
    throw new UsageError(
      `${flag} must be IP:port (127.0.0.1:10249, 0.0.0.0:10249, [::1]:10249), or 0 for none, got ${JSON.stringify(text)}`,
    );
  return { host: host!, port };
}

/** What a wrong --proxy-mode value is told besides the allowed ones. */
const PROXY_MODE_HINTS = new Map([
  ['', ` (an empty value: leave the flag out for the default, ${PROXY_MODES[0]})`],
  ['ipvs', ' (k8ts programs the kernel with nftables or iptables, not IPVS)'],
]);

/** systemd-resolved's list of the real upstream servers (its stub file lists 127.0.0.53). */
const RESOLVED_RESOLV_CONF = '/run/systemd/resolve/resolv.conf';

/**
 * The host resolv.conf pods with dnsPolicy Default get (and whose search list ClusterFirst
 * pods append): /etc/resolv.conf, or systemd-resolved's upstream file when /etc/resolv.conf
 * names only its stub 127.0.0.53, which a pod cannot reach — as kubeadm sets the kubelet's
 * --resolv-conf.
 */
export function defaultResolvConf(etc = '/etc/resolv.conf', resolved = RESOLVED_RESOLV_CONF): string {
  let text: string;
  try {
    text = readFileSync(etc, 'utf8');
  } catch {
    return etc;
  }
  const servers = [...text.matchAll(/^\s*nameserver\s+(\S+)/gm)].map((m) => m[1]);
  if (servers.length > 0 && servers.every((s) => s === '127.0.0.53') && existsSync(resolved)) return resolved;
  return etc;
}

const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** --cluster-dns, --cluster-domain and --resolv-conf, checked, defaults filled in. */
function dnsFlags(values: {
  'cluster-dns'?: string | undefined;
  'cluster-domain': string;
  'resolv-conf'?: string | undefined;
}): AgentOptions['dns'] {
  const clusterDNS = (values['cluster-dns'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const ip of clusterDNS)
    if (isIP(ip) === 0)
      throw new UsageError(`--cluster-dns must be a comma-separated list of IP addresses, got ${ip}`);
  const clusterDomain = values['cluster-domain'].replace(/\.$/, '');
  if (clusterDomain !== '' && !DNS_SUBDOMAIN.test(clusterDomain))
    throw new UsageError(
      `--cluster-domain must be a DNS domain (cluster.local), got ${values['cluster-domain']}`,
    );
  const resolvConf = values['resolv-conf'] ?? defaultResolvConf();
  if (resolvConf !== '' && !existsSync(resolvConf))
    throw new UsageError(`--resolv-conf ${resolvConf}: no such file ('' for none)`);
  return { clusterDNS, clusterDomain, resolvConf };
}

/** The endpoint and CNI dirs of `--runtime containerd`, defaults filled in and checked. */
function containerdFlags(values: {
  'container-runtime-endpoint'?: string | undefined;
  'cni-conf-dir'?: string | undefined;
  'cni-bin-dir'?: string | undefined;
}): Pick<AgentOptions, 'runtimeEndpoint' | 'cni'> {
  const endpoint = values['container-runtime-endpoint'];
  if (endpoint !== undefined && !/^unix:\/\/\/./.test(endpoint))
    throw new UsageError(
      `--container-runtime-endpoint must be a unix socket URL (unix:///path), got ${endpoint}`,
    );
  const cni = {
    confDir: values['cni-conf-dir'] ?? DEFAULT_CNI_CONF_DIR,
    binDir: values['cni-bin-dir'] ?? DEFAULT_CNI_BIN_DIR,
  };
  for (const [flag, dir] of [
    ['--cni-conf-dir', cni.confDir],
    ['--cni-bin-dir', cni.binDir],
  ] as const) {
    if (!dir.startsWith('/')) throw new UsageError(`${flag} must be an absolute path, got ${dir}`);
  }
  return { ...(endpoint !== undefined ? { runtimeEndpoint: endpoint } : {}), cni };
}
