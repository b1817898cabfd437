/**
 * `k8ts server`'s flags, their defaults and their validation, in one place, as
 * kube-apiserver's cmd/kube-apiserver/app/options: parseServerOptions turns argv into the
 * ControlConfig the control process starts from, and the local node's flags (absent with
 * --disable-agent). The flags are checked in the order below, so that of several wrong
 * flags the first one in this order is the one reported.
 */
import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { PodSecuritySettings } from '../../control/apiserver/admission/podsecurity/config.js';
import type { ControlConfig } from '../../control/main.js';
import { parseProxyFlags, type ProxyOptions } from './agent.js';
import {
  UsageError,
  defaultDataDir,
  parseDuration,
  parseLogLevel,
  parseNodeFlags,
  type NodeOptions,
} from './common.js';

/** The flags of `k8ts server` with their defaults (the help text lists them in cli.ts). */
export const SERVER_FLAGS = {
  'data-dir': { type: 'string' },
  // Every address, as kube-apiserver and k3s listen: agents on other hosts and pods (through
  // the kubernetes Service, whose endpoint is the advertise address) must reach it.
  'bind-address': { type: 'string', default: '0.0.0.0' },
  port: { type: 'string', default: '6443' },
  datastore: { type: 'string', default: 'sqlite' },
  'etcd-endpoints': { type: 'string' },
  'disable-agent': { type: 'boolean', default: false },
  // The local agent's kube-proxy (k8ts agent's flags of the same names; defaults there).
  'proxy-mode': { type: 'string' },
  'metrics-bind-address': { type: 'string' },
  'disable-controller-manager': { type: 'boolean', default: false },
  'disable-scheduler': { type: 'boolean', default: false },
  // k3s's `--disable local-storage`: no local-path StorageClass, and no provisioner in the local agent.
  'disable-local-storage': { type: 'boolean', default: false },
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
  'horizontal-pod-autoscaler-sync-period': { type: 'string', default: '15s' },
  'cluster-cidr': { type: 'string', default: '10.42.0.0/16' },
  'flannel-backend': { type: 'string', default: 'vxlan' },
  'service-cluster-ip-range': { type: 'string', default: '10.43.0.0/16' },
  'service-node-port-range': { type: 'string', default: '30000-32767' },
  'advertise-address': { type: 'string' },
  'cluster-dns': { type: 'string' },
  'cluster-domain': { type: 'string', default: 'cluster.local' },
  'default-not-ready-toleration-seconds': { type: 'string', default: '300' },
  'default-unreachable-toleration-seconds': { type: 'string', default: '300' },
  'tls-san': { type: 'string', multiple: true },
  'insecure-http': { type: 'boolean', default: false },
  'pod-security-default-level': { type: 'string' },
  'pod-security-admission-config-file': { type: 'string' },
  // k3s's --etcd-snapshot-schedule-cron, --etcd-snapshot-retention, --etcd-disable-snapshots
  // and --etcd-snapshot-dir, for either datastore.
  'snapshot-schedule': { type: 'string', default: '0 */12 * * *' },
  'snapshot-retention': { type: 'string', default: '5' },
  'disable-snapshots': { type: 'boolean', default: false },
  'snapshot-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

/** What `k8ts server` runs: the control process, and unless --disable-agent a node agent. */
export interface ServerOptions {
  /** The control process's configuration; its dataDir is --data-dir or defaultDataDir(). */
  control: ControlConfig;
  /** The local agent's node and kube-proxy flags; undefined with --disable-agent. */
  localNode?: NodeOptions & ProxyOptions;
}

/**
 * Parses and checks `k8ts server`'s arguments (argv without `k8ts server`).
 * @returns 'help' for --help/-h, else the checked options with every default filled in.
 * @throws UsageError naming the first wrong flag and what it must be; parseArgs' own
 *   ERR_PARSE_ARGS_* errors for unknown flags or missing values.
 */
export async function parseServerOptions(argv: string[]): Promise<ServerOptions | 'help'> {
  const { values } = parseArgs({ args: argv, strict: true, options: SERVER_FLAGS });
  if (values.help) return 'help';
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port) || port > 65535)
    throw new UsageError(`--port must be 0–65535, got ${values.port}`);
  const datastore = values.datastore;
  if (datastore !== 'sqlite' && datastore !== 'etcd' && datastore !== 'memory') {
    throw new UsageError(`--datastore must be sqlite, etcd or memory, got ${datastore}`);
  }
  const etcdEndpoints = (values['etcd-endpoints'] ?? '').split(',').filter((e) => e !== '');
  if (datastore === 'etcd' && etcdEndpoints.length === 0) {
    throw new UsageError('--datastore etcd needs --etcd-endpoints URL[,URL...]');
  }
  const logLevel = parseLogLevel(values['log-level']);
  if (values['disable-agent']) {
    for (const flag of ['proxy-mode', 'metrics-bind-address'] as const)
      if (values[flag] !== undefined)
        throw new UsageError(`--${flag} is for the local agent, which --disable-agent turns off`);
  }
  const localNode = values['disable-agent']
    ? undefined
    : { ...(await parseNodeFlags(values)), ...parseProxyFlags(values) };
  const compactionIntervalSeconds = parseDuration(
    values['etcd-compaction-interval'],
    '--etcd-compaction-interval',
  );
  const minRequestTimeout = values['min-request-timeout'];
  if (!/^[1-9]\d*$/.test(minRequestTimeout)) {
    throw new UsageError(
      `--min-request-timeout must be a positive number of seconds, got ${minRequestTimeout}`,
    );
  }
  const cacheSize = values['default-watch-cache-size'];
  if (cacheSize !== undefined && !/^[1-9]\d*$/.test(cacheSize)) {
    throw new UsageError(`--default-watch-cache-size must be a positive number of events, got ${cacheSize}`);
  }
  const leaseDuration = parseDuration(values['leader-elect-lease-duration'], '--leader-elect-lease-duration');
  const renewDeadline = parseDuration(values['leader-elect-renew-deadline'], '--leader-elect-renew-deadline');
  const retryPeriod = parseDuration(values['leader-elect-retry-period'], '--leader-elect-retry-period');
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
  const clusterCidr = values['cluster-cidr'];
  const { parseCidr } = await import('../../control/controllers/nodeipam/cidr.js');
  try {
    if (parseCidr(clusterCidr).prefix > 23) throw new Error('it must hold at least two /24 node ranges');
  } catch (err) {
    throw new UsageError(`--cluster-cidr ${clusterCidr}: ${(err as Error).message}`);
  }
  const flannelBackend = values['flannel-backend'];
  const { BACKENDS } = await import('../../api/netconf.js');
  if (!(BACKENDS as readonly string[]).includes(flannelBackend))
    throw new UsageError(`--flannel-backend must be one of ${BACKENDS.join(', ')}, got ${flannelBackend}`);
  const serviceAddresses = await parseServiceAddressFlags(values);
  const snapshots = await parseSnapshotFlags(values, localNode?.nodeName);
  const podSecurity = await parsePodSecurityFlags(
    values['pod-security-admission-config-file'],
    values['pod-security-default-level'],
  );
  const control: ControlConfig = {
    dataDir: values['data-dir'] ?? defaultDataDir(),
    bindAddress: values['bind-address'],
    port,
    datastore,
    etcdEndpoints,
    logLevel,
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
        values['node-monitor-grace-period'],
        '--node-monitor-grace-period',
      ),
      nodeMonitorPeriodSeconds: parseDuration(values['node-monitor-period'], '--node-monitor-period'),
      nodeStartupGracePeriodSeconds: parseDuration(
        values['node-startup-grace-period'],
        '--node-startup-grace-period',
      ),
      terminatedPodGCThreshold: wholeNumber(values, 'terminated-pod-gc-threshold', 1),
      horizontalPodAutoscalerSyncPeriodSeconds: parseDuration(
        values['horizontal-pod-autoscaler-sync-period'],
        '--horizontal-pod-autoscaler-sync-period',
      ),
      clusterCIDR: clusterCidr,
    },
    defaultNotReadyTolerationSeconds: wholeNumber(values, 'default-not-ready-toleration-seconds', 0),
    defaultUnreachableTolerationSeconds: wholeNumber(values, 'default-unreachable-toleration-seconds', 0),
    disableControllerManager: values['disable-controller-manager'],
    disableScheduler: values['disable-scheduler'],
    ...(values['disable-local-storage'] ? { disableLocalStorage: true } : {}),
    serviceClusterIPRange: values['service-cluster-ip-range'],
    serviceNodePortRange: values['service-node-port-range'],
    ...serviceAddresses,
    tlsSANs: values['tls-san'] ?? [],
    flannelBackend: flannelBackend as (typeof BACKENDS)[number],
    insecureHTTP: values['insecure-http'],
    ...(podSecurity ? { podSecurity } : {}),
    snapshots,
  };
  return localNode ? { control, localNode } : { control };
}

/**
 * `--advertise-address` (the `kubernetes` Service's endpoint), `--cluster-dns` (the
 * `kube-dns` Service's clusterIP) and `--cluster-domain`, checked against
 * `--service-cluster-ip-range`. Without --advertise-address: defaultAdvertiseAddress (the
 * bind address unless unspecified or loopback, else --node-ip, else the host's primary
 * IPv4 address).
 * Without --cluster-dns: the tenth address of the service range (k3s's default).
 * @throws UsageError naming the flag and what is wrong.
 */
async function parseServiceAddressFlags(values: {
  'bind-address': string;
  'node-ip'?: string;
  'service-cluster-ip-range': string;
  'advertise-address'?: string;
  'cluster-dns'?: string;
  'cluster-domain': string;
}): Promise<Required<Pick<ControlConfig, 'advertiseAddress' | 'clusterDNS' | 'clusterDomain'>>> {
  const { ipv4ToNumber, parseIPv4CIDR } = await import('../../control/apiserver/service-allocator/index.js');
  const { advertiseAddressProblem, defaultAdvertiseAddress, defaultClusterDNS, kubernetesServiceIP } =
    await import('../../control/kubernetesservice/index.js');
  const range = values['service-cluster-ip-range'];
  let cidr: ReturnType<typeof parseIPv4CIDR>;
  let clusterDNS: string;
  try {
    cidr = parseIPv4CIDR(range);
    clusterDNS = values['cluster-dns'] ?? defaultClusterDNS(range);
  } catch (err) {
    throw new UsageError(`--service-cluster-ip-range ${range}: ${(err as Error).message}`);
  }
  const dns = ipv4ToNumber(clusterDNS);
  const size = 2 ** (32 - cidr.prefixLength);
  if (dns === undefined || dns <= cidr.base || dns >= cidr.base + size - 1) {
    throw new UsageError(
      `--cluster-dns must be an IPv4 address inside --service-cluster-ip-range ${range}, got ${clusterDNS}`,
    );
  }
  if (clusterDNS === kubernetesServiceIP(range)) {
    throw new UsageError(
      `--cluster-dns ${clusterDNS} is the kubernetes Service's address (the first of ${range})`,
    );
  }
  const domain = values['cluster-domain'].toLowerCase().replace(/\.$/, '');
  if (
    domain.length > 253 ||
    !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(domain)
  ) {
    throw new UsageError(
      `--cluster-domain must be a DNS domain such as cluster.local, got ${values['cluster-domain']}`,
    );
  }
  let advertise = values['advertise-address'];
  if (advertise !== undefined) {
    const problem = advertiseAddressProblem(advertise);
    if (problem) throw new UsageError(`--advertise-address ${advertise}: ${problem}`);
  } else {
    advertise = await defaultAdvertiseAddress(values['bind-address'], values['node-ip']);
  }
  return { advertiseAddress: advertise, clusterDNS, clusterDomain: domain };
}

/**
 * Scheduled snapshots (control/snapshot/schedule.ts): `--snapshot-schedule` (a cron spec,
 * checked as CronJob schedules are), `--snapshot-retention` (>= 1), `--disable-snapshots`,
 * `--snapshot-dir`; the node in the snapshots' names is the local node's, else
 * `--node-name`, else the hostname.
 * @throws UsageError naming the flag and what is wrong.
 */
async function parseSnapshotFlags(
  values: {
    'snapshot-schedule': string;
    'snapshot-retention': string;
    'disable-snapshots': boolean;
    'snapshot-dir'?: string;
    'node-name'?: string;
  },
  localNodeName: string | undefined,
): Promise<NonNullable<ControlConfig['snapshots']>> {
  const { parseSnapshotSchedule } = await import('../../control/snapshot/schedule.js');
  const schedule = values['snapshot-schedule'];
  try {
    parseSnapshotSchedule(schedule);
  } catch (err) {
    throw new UsageError(`--snapshot-schedule: ${(err as Error).message}`);
  }
  const { hostname } = await import('node:os');
  return {
    disabled: values['disable-snapshots'],
    schedule,
    retention: wholeNumber(values, 'snapshot-retention', 1),
    ...(values['snapshot-dir'] !== undefined ? { dir: values['snapshot-dir'] } : {}),
    nodeName: localNodeName ?? values['node-name'] ?? hostname().toLowerCase(),
  };
}

/**
 * The value of the string flag `--<flag>` (one with a default) as a whole number.
 * @throws UsageError when it is not digits only or is below `min`.
 */
function wholeNumber<F extends string>(values: Record<F, string>, flag: F, min: number): number {
  const text = values[flag];
  if (!/^\d+$/.test(text) || Number(text) < min) {
    throw new UsageError(`--${flag} must be a whole number >= ${min}, got ${text}`);
  }
  return Number(text);
}

/**
 * PodSecurity admission's settings from `--pod-security-admission-config-file` (a
 * PodSecurityConfiguration, or an AdmissionConfiguration holding one; YAML or JSON) and
 * `--pod-security-default-level` (every mode's level for namespaces without labels, over
 * the file's). Undefined when neither is given: everything privileged, as upstream.
 * @throws UsageError naming the flag and what is wrong.
 */
async function parsePodSecurityFlags(
  file: string | undefined,
  level: string | undefined,
): Promise<PodSecuritySettings | undefined> {
  if (file === undefined && level === undefined) return undefined;
  const config = await import('../../control/apiserver/admission/podsecurity/config.js');
  const { parseLevel, LEVELS } = await import('../../control/apiserver/admission/podsecurity/policy.js');
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
