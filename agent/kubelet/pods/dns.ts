/**
 * The pod's DNS settings and names, as the kubelet forms them
 * (pkg/kubelet/network/dns/dns.go GetPodDNS, kubelet_pods.go GeneratePodHostNameAndDomain,
 * pkg/util/hostname GetNodenameForKernel). Pure except for reading `--resolv-conf`
 * (DnsConfigurer.podDNS).
 *
 * The rulebook of podDNSConfig(pod):
 * - The base is the host's resolv.conf (`--resolv-conf`): its nameservers, its last
 *   `search` line (trailing dots dropped, `.` left out) and its options.
 * - dnsPolicy None: an empty base. ClusterFirstWithHostNet: the cluster's.
 *   ClusterFirst (the default, also for a policy the kubelet does not know): the cluster's,
 *   except for a hostNetwork pod, which gets Default. Default: the host's.
 * - The cluster's: `nameserver <--cluster-dns>` only; search `<ns>.svc.<zone>
 *   svc.<zone> <zone>` then the host's (duplicates dropped); options `ndots:5`. Without a
 *   known cluster DNS it is Default, with Warning events MissingClusterDNS on the pod and
 *   the node.
 * - Default with `--resolv-conf ""`: nameserver 127.0.0.1 (`::1` for an IPv6 node), search `.`.
 * - Then the pod's dnsConfig: its nameservers and searches appended (duplicates dropped),
 *   its options merged by name (a pod's option replaces the base's of that name; no value
 *   → the bare name).
 * - Then the limits of libc's resolver (validation.MaxDNSNameservers, MaxDNSSearchPaths,
 *   MaxDNSSearchListChars): the first 3 nameservers; the first 32 searches, those longer than
 *   253 characters dropped, then the last ones dropped until the line is at most 2048
 *   characters; each cut is a Warning event DNSConfigForming.
 */
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import type { DNSConfig } from '../../../cri/index.js';
import type { KubeletPod } from './types.js';

/** Most nameservers a resolv.conf may list (glibc's MAXNS; validation.MaxDNSNameservers). */
export const MAX_DNS_NAMESERVERS = 3;
/** Most search domains (validation.MaxDNSSearchPaths, glibc ≥ 2.26). */
export const MAX_DNS_SEARCH_PATHS = 32;
/** Most characters of the search line (validation.MaxDNSSearchListChars). */
export const MAX_DNS_SEARCH_LIST_CHARS = 2048;
/** The longest search domain glibc takes without aborting (DNS1123SubdomainMaxLength). */
const MAX_SEARCH_DOMAIN_LENGTH = 253;
/** The most of a resolv.conf the kubelet reads (maxResolvConfLength), bytes. */
const MAX_RESOLV_CONF_BYTES = (10 * 1) << 20;
/** The options of a ClusterFirst pod (defaultDNSOptions). */
const CLUSTER_DNS_OPTIONS = ['ndots:5'];
/** Longest hostname the kernel takes (hostnameMaxLen). */
const HOSTNAME_MAX_LENGTH = 63;
/** Longest FQDN set as the kernel hostname (GetNodenameForKernel's fqdnMaxLen). */
const FQDN_MAX_LENGTH = 64;

/** The pod's dnsConfig (core/v1 PodDNSConfig). */
export interface PodDNSConfig {
  nameservers?: string[];
  searches?: string[];
  options?: { name?: string; value?: string }[];
}

/** A Warning event the forming of a pod's DNS settings asks for. */
export interface DNSEvent {
  /** The pod's (`pod`) or the node's (`node`). */
  on: 'pod' | 'node';
  reason: 'MissingClusterDNS' | 'DNSConfigForming';
  message: string;
}

/** What podDNSConfig needs of the node. */
export interface NodeDNS {
  /**
   * The host's resolv.conf parsed (`--resolv-conf`); undefined for `--resolv-conf ""`
   * (no host resolver: Default pods get the node's loopback).
   */
  host: DNSConfig | undefined;
  /** The cluster DNS servers (`--cluster-dns`, or the kube-dns Service's clusterIP); may be empty. */
  clusterDNS: string[];
  /** `--cluster-domain` (`cluster.local`); '' leaves the cluster's search list out. */
  clusterDomain: string;
  /** The node's IPs, for the loopback of `--resolv-conf ""`. */
  nodeIPs: string[];
}

/**
 * A resolv.conf's text parsed as the kubelet's parseResolvConf: `nameserver` lines
 * accumulate, the last `search` line wins (trailing dots trimmed, `.` dropped), `options`
 * accumulate with a later option replacing an earlier one of the same name. Comments (`#`)
 * and other lines are skipped; a `nameserver` line without an address is skipped.
 */
export function parseResolvConf(text: string): DNSConfig {
  const out: DNSConfig = { servers: [], searches: [], options: [] };
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed.startsWith('#')) continue;
    const fields = trimmed.split(/\s+/).filter((f) => f !== '');
    if (fields.length === 0) continue;
    if (fields[0] === 'nameserver' && fields[1] !== undefined) out.servers.push(fields[1]);
    if (fields[0] === 'search')
      out.searches = fields
        .slice(1)
        .filter((s) => s !== '.')
        .map((s) => s.replace(/\.$/, ''));
    if (fields[0] === 'options') out.options = appendOptions(out.options, fields.slice(1));
  }
  return out;
}

/** appendOptions: later options replace earlier ones of the same name (before `:`), order kept. */
function appendOptions(options: string[], more: string[]): string[] {
  const byName = new Map<string, string>();
  for (const o of [...options, ...more]) byName.set(o.split(':')[0] ?? o, o);
  return [...byName.values()];
}

/** How the pod's DNS is formed (getPodDNSType): none, the cluster's, or the host's. */
export function podDNSType(pod: KubeletPod): 'None' | 'Cluster' | 'Host' {
  switch (pod.spec.dnsPolicy) {
    case 'None':
      return 'None';
    case 'ClusterFirstWithHostNet':
      return 'Cluster';
    case 'Default':
      return 'Host';
    default:
      // ClusterFirst, and (as the kubelet, after the API server let it through) any other.
      return pod.spec.hostNetwork ? 'Host' : 'Cluster';
  }
}

function isLoopback(ip: string): boolean {
  return ip.startsWith('127.') || ip === '::1';
}

function omitDuplicates(list: string[]): string[] {
  return [...new Set(list)];
}

/**
 * The pod's resolv.conf settings and the Warning events forming them asks for (see the
 * file comment for the rules; Kubernetes' GetPodDNS).
 */
export function podDNSConfig(pod: KubeletPod, node: NodeDNS): { config: DNSConfig; events: DNSEvent[] } {
  const events: DNSEvent[] = [];
  const host = node.host ?? { servers: [], searches: [], options: [] };
  let cfg: DNSConfig = {
    servers: [...host.servers],
    searches: [...host.searches],
    options: [...host.options],
  };
  let type = podDNSType(pod);
  if (type === 'None') cfg = { servers: [], searches: [], options: [] };
  if (type === 'Cluster') {
    if (node.clusterDNS.length > 0) {
      const zone = node.clusterDomain;
      const ns = pod.metadata.namespace ?? 'default';
      cfg = {
        servers: [...node.clusterDNS],
        searches: zone
          ? omitDuplicates([`${ns}.svc.${zone}`, `svc.${zone}`, zone, ...cfg.searches])
          : cfg.searches,
        options: [...CLUSTER_DNS_OPTIONS],
      };
    } else {
      const message = `kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`;
      events.push({ on: 'node', reason: 'MissingClusterDNS', message });
      const who = `${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})`;
      events.push({ on: 'pod', reason: 'MissingClusterDNS', message: `pod: "${who}". ${message}` });
      type = 'Host';
    }
  }
  if (type === 'Host' && node.host === undefined) {
    cfg.servers =
      node.nodeIPs.length > 0
        ? node.nodeIPs.map((ip) => (isIP(ip) === 6 ? '::1' : '127.0.0.1'))
        : ['127.0.0.1'];
    cfg.searches = ['.'];
  }
  const own = pod.spec.dnsConfig;
  if (own) {
    cfg.servers = omitDuplicates([...cfg.servers, ...(own.nameservers ?? [])]);
    cfg.searches = omitDuplicates([...cfg.searches, ...(own.searches ?? [])]);
    cfg.options = mergeDNSOptions(cfg.options, own.options ?? []);
  }
  return { config: fitLimits(cfg, events), events };
}

/** mergeDNSOptions: the pod's options over the base's, by name; `name:value`, or `name` without a value. */
function mergeDNSOptions(base: string[], own: NonNullable<PodDNSConfig['options']>): string[] {
  const byName = new Map<string, string>();
  for (const o of base) {
    const i = o.indexOf(':');
    if (i >= 0) byName.set(o.slice(0, i), o.slice(i + 1));
    else byName.set(o, '');
  }
  for (const o of own) byName.set(o.name ?? '', o.value ?? '');
  return [...byName].map(([name, value]) => (value !== '' ? `${name}:${value}` : name));
}

/** formDNSConfigFitsLimits: cuts nameservers and searches to libc's limits, telling the pod. */
function fitLimits(cfg: DNSConfig, events: DNSEvent[]): DNSConfig {
  if (cfg.servers.length > MAX_DNS_NAMESERVERS) {
    cfg.servers = cfg.servers.slice(0, MAX_DNS_NAMESERVERS);
    events.push({
      on: 'pod',
      reason: 'DNSConfigForming',
      message: `Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: ${cfg.servers.join(' ')}`,
    });
  }
  let searches = cfg.searches;
  let exceeded = false;
  if (searches.length > MAX_DNS_SEARCH_PATHS) {
    searches = searches.slice(0, MAX_DNS_SEARCH_PATHS);
    exceeded = true;
  }
  const fitting = searches.filter((s) => s.length <= MAX_SEARCH_DOMAIN_LENGTH);
  if (fitting.length < searches.length) exceeded = true;
  searches = fitting;
  while (searches.join(' ').length > MAX_DNS_SEARCH_LIST_CHARS) {
    searches = searches.slice(0, -1);
    exceeded = true;
  }
  if (exceeded) {
    events.push({
      on: 'pod',
      reason: 'DNSConfigForming',
      message: `Search Line limits were exceeded, some search paths have been omitted, the applied search line is: ${searches.join(' ')}`,
    });
  }
  cfg.searches = searches;
  return cfg;
}

/**
 * The pod's hostname and domain (GeneratePodHostNameAndDomain): spec.hostname or the pod
 * name, cut to 63 characters with trailing `-` and `.` trimmed (truncatePodHostnameIfNeeded);
 * the domain `<subdomain>.<ns>.svc.<zone>` when spec.subdomain is set, else ''.
 */
export function podHostnameAndDomain(
  pod: KubeletPod,
  clusterDomain: string,
): { hostname: string; domain: string } {
  let hostname = pod.spec.hostname || pod.metadata.name || '';
  if (hostname.length > HOSTNAME_MAX_LENGTH)
    hostname = hostname.slice(0, HOSTNAME_MAX_LENGTH).replace(/[-.]+$/, '');
  const sub = pod.spec.subdomain;
  const domain = sub ? `${sub}.${pod.metadata.namespace ?? 'default'}.svc.${clusterDomain}` : '';
  return { hostname, domain };
}

/**
 * The hostname the sandbox's kernel gets (GetNodenameForKernel): `<hostname>.<domain>` with
 * setHostnameAsFQDN and a domain, else the hostname.
 * @throws Error when the FQDN is longer than 64 characters (the kubelet's sandbox error).
 */
export function kernelHostname(
  hostname: string,
  domain: string,
  setHostnameAsFQDN: boolean | undefined,
): string {
  if (!setHostnameAsFQDN || !domain) return hostname;
  const fqdn = `${hostname}.${domain}`;
  if (fqdn.length > FQDN_MAX_LENGTH)
    throw new Error(
      `failed to construct FQDN from pod hostname and cluster domain, FQDN ${fqdn} is too long (${FQDN_MAX_LENGTH} characters is the max, ${fqdn.length} characters requested)`,
    );
  return fqdn;
}

/** The node's DNS settings (`--cluster-dns`, `--cluster-domain`, `--resolv-conf`). */
export interface DnsConfigurerConfig {
  /** `--cluster-dns`, or the kube-dns Service's clusterIP when it has one, asked at each call. */
  clusterDNS: () => string[] | Promise<string[]>;
  /** `--cluster-domain`; default `cluster.local`. */
  clusterDomain?: string;
  /** `--resolv-conf`; default /etc/resolv.conf; '' for none. */
  resolvConf?: string;
  nodeIPs: string[];
  /** Told once when the host file names only loopback nameservers, which no pod can reach. */
  warn?: (message: string) => void;
}

/** The kubelet's dns.Configurer: the node's settings, and podDNS(pod) for each new sandbox. */
export class DnsConfigurer {
  readonly clusterDomain: string;
  readonly resolvConf: string;
  private warnedLoopback = false;

  constructor(private readonly cfg: DnsConfigurerConfig) {
    this.clusterDomain = cfg.clusterDomain ?? 'cluster.local';
    this.resolvConf = cfg.resolvConf ?? '/etc/resolv.conf';
  }

  /**
   * The pod's resolv.conf settings (podDNSConfig) over the host's resolv.conf as it is now.
   * @throws Error when `--resolv-conf` cannot be read (the kubelet fails the sandbox).
   */
  async podDNS(pod: KubeletPod): Promise<{ config: DNSConfig; events: DNSEvent[] }> {
    let host: DNSConfig | undefined;
    if (this.resolvConf !== '') {
      const text = await readFile(this.resolvConf, 'utf8');
      host = parseResolvConf(text.slice(0, MAX_RESOLV_CONF_BYTES));
      // A stub resolver on the host's loopback (systemd-resolved's 127.0.0.53) is not the
      // pod's loopback: such a file is no use to Default pods (kubeadm points the kubelet
      // at the upstream file instead; the agent's default --resolv-conf does the same).
      if (!this.warnedLoopback && host.servers.length > 0 && host.servers.every(isLoopback)) {
        this.warnedLoopback = true;
        this.cfg.warn?.(
          `${this.resolvConf} names only loopback nameservers (${host.servers.join(', ')}), which pods cannot reach: pods with dnsPolicy Default will not resolve; give --resolv-conf the file of the real upstream servers (systemd-resolved: /run/systemd/resolve/resolv.conf)`,
        );
      }
    }
    return podDNSConfig(pod, {
      host,
      clusterDNS: await this.cfg.clusterDNS(),
      clusterDomain: this.clusterDomain,
      nodeIPs: this.cfg.nodeIPs,
    });
  }
}
