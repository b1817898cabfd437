/**
 * What every command's options share: the usage error they throw, the defaults of the data
 * directories, the log levels, Go-style durations and the node flags of `server` and `agent`.
 * Each command's own flags, defaults and validation live next to this file, one file per
 * command (server.ts, agent.ts, kubeconfig.ts, token.ts), as Kubernetes keeps them in
 * cmd/<component>/app/options; cli.ts only runs what they return.
 */
import { hostname, homedir } from 'node:os';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type { LogLevel } from '../../api/log.js';

/** A CLI usage error: printed as `k8ts <command>: <message>` with exit code 2. */
export class UsageError extends Error {}

/**
 * The values of --log-level, most severe first: api/log.ts's levels, repeated here so that
 * parsing flags does not load winston (`k8ts version` and `k8ts token` never log).
 */
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const satisfies readonly LogLevel[];

/** The default data dir: /var/lib/k8ts for root, ~/.k8ts for anyone else. */
export function defaultDataDir(): string {
  return process.getuid?.() === 0 ? '/var/lib/k8ts' : join(homedir(), '.k8ts');
}

/** The agent's default data dir: /var/lib/k8ts-agent for root, ~/.k8ts-agent for anyone else. */
export function defaultAgentDataDir(): string {
  return process.getuid?.() === 0 ? '/var/lib/k8ts-agent' : join(homedir(), '.k8ts-agent');
}

/**
 * Checks `--log-level`'s value.
 * @returns the value, typed as one of LOG_LEVELS.
 * @throws UsageError when it is not one of them.
 */
export function parseLogLevel(text: string): LogLevel {
  if (!(LOG_LEVELS as readonly string[]).includes(text)) {
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got ${text}`);
  }
  return text as LogLevel;
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

/** The node this host runs as: what `--node-name` and `--node-ip` come to. */
export interface NodeOptions {
  /** The Node's name. */
  nodeName: string;
  /** The node's InternalIP. */
  nodeIP: string;
  /** The one address NodePorts listen on; absent: all addresses. */
  nodePortAddress?: string;
}

/**
 * The node flags shared by `server` and `agent`: --node-name (default: the hostname,
 * lowercased, as the kubelet) must be a DNS subdomain; --node-ip an IP address (default:
 * the host's primary IPv4).
 * @throws UsageError naming the flag that is malformed.
 */
export async function parseNodeFlags(values: {
  'node-name'?: string;
  'node-ip'?: string;
}): Promise<NodeOptions> {
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
  const { primaryIPv4 } = await import('../../agent/kubelet/machine.js');
  // With --node-ip, NodePorts listen on that address only (DESIGN.md, "Several nodes on one
  // host"); without it on all addresses, as kube-proxy by default.
  return given !== undefined
    ? { nodeName, nodeIP: given, nodePortAddress: given }
    : { nodeName, nodeIP: await primaryIPv4() };
}

/**
 * `--server`'s values (the flag repeated, each value possibly comma-separated) as the list
 * of API servers an agent or hollow-nodes process uses, the first one first (RestClient's
 * `server`, the rest its `alternateServers`: it fails over between them). Duplicates are
 * dropped.
 * @throws UsageError when none is given, or one is not a URL of `schemes` (`https:` alone
 *   for hollow nodes, `why` saying so), or they mix http:// and https://.
 */
export function parseServerURLs(
  values: readonly string[] | undefined,
  schemes: readonly ('http:' | 'https:')[],
  why = '',
): string[] {
  const urls = (values ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
  if (urls.length === 0)
    throw new UsageError('--server URL is required (the control process, e.g. https://10.0.0.1:6443)');
  const want = schemes.map((s) => `${s}//`).join(' or ');
  for (const url of urls) {
    let scheme: string | undefined;
    try {
      const u = new URL(url);
      scheme = u.host !== '' ? u.protocol : undefined;
    } catch {
      scheme = undefined;
    }
    if (scheme === undefined || !(schemes as readonly string[]).includes(scheme))
      throw new UsageError(`--server must be an ${want} URL${why}, got ${url}`);
  }
  if (new Set(urls.map((u) => new URL(u).protocol)).size > 1)
    throw new UsageError(
      `--server: all API servers must be http://, or all https://, got ${urls.join(', ')}`,
    );
  return [...new Set(urls)];
}
