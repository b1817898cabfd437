/**
 * `k8ts hollow-nodes`' flags, their defaults and their validation (agent/hollow/): one
 * process playing `--count` nodes against `--server`, each joined with the token.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { LogLevel } from '../../api/log.js';
import { parseQuantity, QuantityParseError } from '../../api/meta/quantity.js';
import { UsageError, parseDuration, parseLogLevel, parseServerURLs } from './common.js';

/** The flags of `k8ts hollow-nodes` with their defaults (the help text lists them in cli.ts). */
export const HOLLOW_NODES_FLAGS = {
  server: { type: 'string', multiple: true },
  token: { type: 'string' },
  'token-file': { type: 'string' },
  count: { type: 'string' },
  prefix: { type: 'string', default: 'hollow-node-' },
  'data-dir': { type: 'string' },
  cpu: { type: 'string', default: '4' },
  memory: { type: 'string', default: '16Gi' },
  'max-pods': { type: 'string', default: '110' },
  'node-ip': { type: 'string', default: '127.0.0.1' },
  'job-pod-run-time': { type: 'string', default: '5s' },
  'report-interval': { type: 'string', default: '1m' },
  concurrency: { type: 'string', default: '16' },
  'connections-per-node': { type: 'string', default: '2' },
  'log-level': { type: 'string', default: 'warn' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

/** What `k8ts hollow-nodes` runs (agent/hollow/hollow-nodes.ts's HollowNodesConfig, less the logger). */
export interface HollowNodesOptions {
  /** The first --server. */
  server: string;
  /** The other --server URLs (repeated or comma-separated): API servers the nodes fail over to. */
  alternateServers: string[];
  /** --token, or --token-file's content trimmed; absent when every node's credential is stored. */
  token?: string;
  count: number;
  /** Node names are `<prefix><i>`. */
  prefix: string;
  /** --data-dir, or defaultHollowDataDir(). */
  dataDir: string;
  capacity: { cpu: number; memoryBytes: number; pods: number };
  nodeIP: string;
  /** --job-pod-run-time in ms. */
  jobPodRunTimeMs: number;
  /** --report-interval in ms: how often the memory line is printed. */
  reportIntervalMs: number;
  concurrency: number;
  /** --connections-per-node: connections each node keeps to the API server at most. */
  connectionsPerNode: number;
  logLevel: LogLevel;
}

/** The default data dir: /var/lib/k8ts-hollow for root, ~/.k8ts-hollow for anyone else. */
export function defaultHollowDataDir(): string {
  return process.getuid?.() === 0 ? '/var/lib/k8ts-hollow' : join(homedir(), '.k8ts-hollow');
}

const DNS_LABEL_PREFIX = /^[a-z0-9]([-a-z0-9.]*)?$/;

/** A positive whole number of at most `max`, or UsageError naming `flag`. */
function positiveInt(text: string, flag: string, max: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < 1 || n > max)
    throw new UsageError(`${flag} must be a whole number from 1 to ${max}, got ${JSON.stringify(text)}`);
  return n;
}

/**
 * Parses and checks `k8ts hollow-nodes`' arguments (argv without `k8ts hollow-nodes`).
 * Reads --token-file; without a token, the first node's stored credential must exist.
 * @returns 'help' for --help/-h; else the checked options with every default filled in.
 * @throws UsageError naming the first wrong flag and what it must be; parseArgs' own
 *   ERR_PARSE_ARGS_* errors for unknown flags or missing values.
 */
export function parseHollowNodesOptions(argv: string[]): HollowNodesOptions | 'help' {
  const { values } = parseArgs({ args: argv, strict: true, options: HOLLOW_NODES_FLAGS });
  if (values.help) return 'help';
  const [server, ...alternateServers] = parseServerURLs(
    values.server,
    ['https:'],
    ' (each hollow node joins with its own credential)',
  ) as [string, ...string[]];
  if (values.token !== undefined && values['token-file'] !== undefined)
    throw new UsageError('give --token or --token-file, not both');
  let token = values.token;
  if (values['token-file'] !== undefined) {
    try {
      token = readFileSync(values['token-file'], 'utf8').trim();
    } catch (err) {
      throw new UsageError(`cannot read --token-file ${values['token-file']}: ${(err as Error).message}`);
    }
  }
  if (values.count === undefined) throw new UsageError('--count N is required (how many nodes to play)');
  const count = positiveInt(values.count, '--count', 100_000);
  const prefix = values.prefix;
  if (!DNS_LABEL_PREFIX.test(prefix) || prefix.length > 200)
    throw new UsageError(
      `--prefix must start a lowercase DNS name (letters, digits, '-' and '.'), got ${JSON.stringify(prefix)}`,
    );
  const dataDir = values['data-dir'] ?? defaultHollowDataDir();
  if (!token && !existsSync(join(dataDir, `${prefix}0`, 'tls', 'kubelet-client.crt')))
    throw new UsageError("--token or --token-file is required (the server's DATA_DIR/node-token)");
  const cpu = positiveInt(values.cpu, '--cpu', 1024);
  let memoryBytes: number;
  try {
    memoryBytes = Number(parseQuantity(values.memory).value());
  } catch (err) {
    if (!(err instanceof QuantityParseError)) throw err;
    throw new UsageError(`--memory must be a quantity such as 16Gi, got ${JSON.stringify(values.memory)}`);
  }
  // Allocatable is capacity less the kubelet's 100Mi eviction threshold.
  if (!(memoryBytes > 100 * 2 ** 20))
    throw new UsageError(`--memory must be more than 100Mi, got ${JSON.stringify(values.memory)}`);
  const pods = positiveInt(values['max-pods'], '--max-pods', 10_000);
  const nodeIP = values['node-ip'];
  if (isIP(nodeIP) === 0)
    throw new UsageError(`--node-ip must be an IP address, got ${JSON.stringify(nodeIP)}`);
  const jobPodRunTimeMs = parseDuration(values['job-pod-run-time'], '--job-pod-run-time') * 1000;
  const reportIntervalMs = parseDuration(values['report-interval'], '--report-interval') * 1000;
  const concurrency = positiveInt(values.concurrency, '--concurrency', 1000);
  const connectionsPerNode = positiveInt(values['connections-per-node'], '--connections-per-node', 100);
  const logLevel = parseLogLevel(values['log-level']);
  return {
    server,
    alternateServers,
    ...(token ? { token } : {}),
    count,
    prefix,
    dataDir,
    capacity: { cpu, memoryBytes, pods },
    nodeIP,
    jobPodRunTimeMs,
    reportIntervalMs,
    concurrency,
    connectionsPerNode,
    logLevel,
  };
}
