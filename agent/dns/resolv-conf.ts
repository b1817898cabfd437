/**
 * The upstream resolvers of the cluster DNS: the `nameserver` lines of the host's
 * resolv.conf (`--resolv-conf`, default /etc/resolv.conf), as CoreDNS's
 * `forward . /etc/resolv.conf` reads them. Search and options lines are the clients'
 * business (the kubelet writes pods' resolv.conf) and are ignored here.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';

/** One upstream resolver. */
export interface Upstream {
  host: string;
  /** Default 53. */
  port: number;
}

/** The default resolv.conf of the host. */
export const DEFAULT_RESOLV_CONF = '/etc/resolv.conf';

/**
 * The nameservers of resolv.conf text, in order. An address may carry a port as
 * `[ip]:port` or `ip:port` for IPv4 (CoreDNS's forward plugin accepts both; glibc does not,
 * so only tests and the benchmark use it). Zone-scoped IPv6 (`fe80::1%eth0`) and
 * anything that is not an IP address are skipped.
 */
export function parseResolvConf(text: string): Upstream[] {
  const out: Upstream[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    const m = /^nameserver\s+(\S+)/.exec(line);
    if (!m) continue;
    const addr = m[1]!;
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(addr);
    const v4port = /^(\d+\.\d+\.\d+\.\d+):(\d+)$/.exec(addr);
    const [host, port] = bracketed
      ? [bracketed[1]!, bracketed[2] ? Number(bracketed[2]) : 53]
      : v4port
        ? [v4port[1]!, Number(v4port[2])]
        : [addr, 53];
    if (!isIP(host) || host.includes('%') || !(port > 0 && port < 65536)) continue;
    out.push({ host, port });
  }
  return out;
}

/**
 * The nameservers of the file at `path`.
 * @throws Error when the file cannot be read.
 */
export function readResolvConf(path: string): Upstream[] {
  return parseResolvConf(readFileSync(path, 'utf8'));
}
