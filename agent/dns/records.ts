/**
 * The cluster's DNS records, kept as an index from lowercased name to records, built from
 * Services and their EndpointSlices as the Kubernetes DNS specification (kubernetes/dns
 * docs/specification.md, schema 1.1.0) and CoreDNS's kubernetes plugin define them:
 *
 *   ClusterIP Service      <svc>.<ns>.svc.<zone>                A    <clusterIP>
 *                          _<port>._<proto>.<svc>.<ns>.svc.<zone> SRV 0 100 <port> <svc>.<ns>.svc.<zone>
 *                          <d.c.b.a>.in-addr.arpa               PTR  <svc>.<ns>.svc.<zone>
 *   headless Service       <svc>.<ns>.svc.<zone>                A    <each ready endpoint>
 *   (clusterIP None)       <host>.<svc>.<ns>.svc.<zone>         A    <endpoint>   host = its hostname, else a-b-c-d
 *                          _<port>._<proto>.<svc>.<ns>.svc.<zone> SRV 0 w <endpoint port> <host>.<svc>.<ns>.svc.<zone>
 *                          <d.c.b.a>.in-addr.arpa               PTR  <hostname>.<svc>.<ns>.svc.<zone> (hostname only)
 *   ExternalName Service   <svc>.<ns>.svc.<zone>                CNAME <externalName>
 *   dns-version.<zone>                                          TXT  "1.1.0"
 *
 * Pod names `a-b-c-d.<ns>.pod.<zone>` are not indexed: they answer from the name alone
 * (CoreDNS's `pods insecure`, its default in kubeadm's Corefile), see podAddress().
 *
 * "Ready" is the EndpointSlice condition (unset counts as ready) or, for a Service with
 * publishNotReadyAddresses, any endpoint. Names of one Service are replaced together by
 * setService(); every change bumps `generation`, which the server's answer cache checks.
 * Every ancestor of a record's name is counted in `nodes`, so that a query for an empty
 * non-terminal (`svc.<zone>`, `<ns>.svc.<zone>`) is told apart from a name that does not
 * exist: NODATA (NOERROR, no answers) vs NXDOMAIN.
 */
import type { EndpointSlice, Service } from '../../api/types.js';

/** The DNS schema version this index implements (the spec's `dns-version` record). */
export const DNS_SCHEMA_VERSION = '1.1.0';

/** An SRV record's data (RFC 2782). */
export interface SrvData {
  priority: number;
  weight: number;
  port: number;
  /** Lowercased FQDN without the trailing dot. */
  target: string;
}

/** The records one owner (a Service) gives one name. */
interface OwnedRecords {
  A: string[];
  AAAA: string[];
  SRV: SrvData[];
  PTR: string[];
  CNAME?: string;
}

/** The records of one name, merged over its owners (a name may be given by several Services). */
export interface NameRecords {
  A: string[];
  AAAA: string[];
  SRV: SrvData[];
  PTR: string[];
  /** At most one CNAME per name (RFC 1034); the first owner's wins. */
  CNAME?: string;
  TXT: string[];
}

const EMPTY: NameRecords = Object.freeze({ A: [], AAAA: [], SRV: [], PTR: [], TXT: [] }) as NameRecords;

/** The name `<d>.<c>.<b>.<a>.in-addr.arpa` of an IPv4 address; undefined for anything else. */
export function reverseName(ip: string): string | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return undefined;
  return `${parts.reverse().join('.')}.in-addr.arpa`;
}

/** An IPv4 address as a DNS label `a-b-c-d` (CoreDNS's endpoint and pod names). */
export function dashedIP(ip: string): string {
  return ip.replace(/[.:]/g, '-');
}

/**
 * The address of a pod name `a-b-c-d.<ns>.pod.<zone>` (lowercased, no trailing dot), as
 * CoreDNS's `pods insecure`: any well-formed dashed IPv4 answers, whether or not a pod has
 * it. Undefined when `name` is not such a name.
 */
export function podAddress(name: string, zone: string): string | undefined {
  const suffix = `.pod.${zone}`;
  if (!name.endsWith(suffix)) return undefined;
  const labels = name.slice(0, -suffix.length).split('.');
  if (labels.length !== 2) return undefined;
  const parts = labels[0]!.split('-');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return undefined;
  return parts.join('.');
}

/**
 * The records index (see the file comment). Names are lowercased FQDNs without the
 * trailing dot; `zone` is the cluster domain (`--cluster-domain`, e.g. `cluster.local`).
 */
export class ClusterRecords {
  /** Lowercased cluster domain without dots at either end. */
  readonly zone: string;
  /** Bumped on every change (the server's answer cache is valid for one generation). */
  generation = 0;
  private readonly names = new Map<string, Map<string, OwnedRecords>>();
  /** How many record names have this name as themselves or an ancestor (within the zone or in-addr.arpa). */
  private readonly nodes = new Map<string, number>();
  /** The names each owner (Service key) gave records to, to replace them in one go. */
  private readonly owned = new Map<string, string[]>();
  private readonly versionName: string;

  /** @throws Error for an empty or malformed zone. */
  constructor(zone: string) {
    const z = zone.replace(/^\.+|\.+$/g, '').toLowerCase();
    if (!z || !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(z))
      throw new Error(`ClusterRecords: zone ${JSON.stringify(zone)} is not a DNS name`);
    this.zone = z;
    this.versionName = `dns-version.${z}`;
    this.count(this.versionName, 1);
    // The pod subdomain exists whatever pods there are (its names are computed).
    this.count(`pod.${z}`, 1);
  }

  /** Whether `name` (lowercased) is the zone or below it. */
  inZone(name: string): boolean {
    return name === this.zone || name.endsWith(`.${this.zone}`);
  }

  /** The records of `name` (lowercased, no trailing dot); an empty set when it has none. */
  lookup(name: string): NameRecords {
    if (name === this.versionName) return { ...EMPTY, TXT: [DNS_SCHEMA_VERSION] };
    const pod = podAddress(name, this.zone);
    if (pod !== undefined) return { ...EMPTY, A: [pod] };
    const owners = this.names.get(name);
    if (!owners) return EMPTY;
    if (owners.size === 1) {
      const only = owners.values().next().value as OwnedRecords;
      return { ...only, TXT: [] };
    }
    const out: NameRecords = { A: [], AAAA: [], SRV: [], PTR: [], TXT: [] };
    for (const r of owners.values()) {
      pushNew(out.A, r.A);
      pushNew(out.AAAA, r.AAAA);
      out.SRV.push(...r.SRV);
      pushNew(out.PTR, r.PTR);
      if (r.CNAME !== undefined && out.CNAME === undefined) out.CNAME = r.CNAME;
    }
    return out;
  }

  /**
   * Whether `name` exists: it has records, or is an ancestor of a name that has (an empty
   * non-terminal), or is a namespace of the pod subdomain (`<ns>.pod.<zone>`).
   */
  exists(name: string): boolean {
    if (this.nodes.has(name) || name === this.zone) return true;
    const suffix = `.pod.${this.zone}`;
    return name.endsWith(suffix) && !name.slice(0, -suffix.length).includes('.');
  }

  /** How many names have records (for metrics and the benchmark). */
  get size(): number {
    return this.names.size;
  }

  /**
   * Replaces the records of the Service `key` (`namespace/name`) with those of `svc` and
   * its `slices` (every EndpointSlice labelled with its name); `svc` undefined removes them.
   */
  setService(key: string, svc: Service | undefined, slices: readonly EndpointSlice[]): void {
    const next = svc ? serviceRecords(svc, slices, this.zone) : new Map<string, OwnedRecords>();
    const before = this.owned.get(key) ?? [];
    if (before.length === 0 && next.size === 0) return;
    for (const name of before) {
      const owners = this.names.get(name);
      if (!owners?.delete(key)) continue;
      if (owners.size === 0) this.names.delete(name);
      this.count(name, -1);
    }
    for (const [name, recs] of next) {
      let owners = this.names.get(name);
      if (!owners) this.names.set(name, (owners = new Map()));
      owners.set(key, recs);
      this.count(name, 1);
    }
    if (next.size > 0) this.owned.set(key, [...next.keys()]);
    else this.owned.delete(key);
    this.generation++;
  }

  /** Adds `delta` to `name` and each of its ancestors down to the zone (or `in-addr.arpa`). */
  private count(name: string, delta: number): void {
    let n = name;
    for (;;) {
      const c = (this.nodes.get(n) ?? 0) + delta;
      if (c <= 0) this.nodes.delete(n);
      else this.nodes.set(n, c);
      if (n === this.zone || n === 'in-addr.arpa') return;
      const dot = n.indexOf('.');
      if (dot < 0) return;
      n = n.slice(dot + 1);
    }
  }
}

function pushNew(into: string[], from: readonly string[]): void {
  for (const v of from) if (!into.includes(v)) into.push(v);
}

function recordsOf(m: Map<string, OwnedRecords>, name: string): OwnedRecords {
  let r = m.get(name);
  if (!r) m.set(name, (r = { A: [], AAAA: [], SRV: [], PTR: [] }));
  return r;
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** The records one Service gives, by lowercased name (see the file comment). */
export function serviceRecords(
  svc: Service,
  slices: readonly EndpointSlice[],
  zone: string,
): Map<string, OwnedRecords> {
  const out = new Map<string, OwnedRecords>();
  const ns = svc.metadata.namespace ?? 'default';
  const base = `${svc.metadata.name}.${ns}.svc.${zone}`.toLowerCase();
  const spec = svc.spec ?? {};
  if (spec.type === 'ExternalName') {
    const target = spec.externalName?.replace(/\.+$/, '').toLowerCase();
    if (target) recordsOf(out, base).CNAME = target;
    return out;
  }
  const clusterIPs = (
    spec.clusterIPs?.length ? spec.clusterIPs : spec.clusterIP ? [spec.clusterIP] : []
  ).filter((ip) => ip && ip !== 'None');
  const namedPorts = (spec.ports ?? []).filter((p) => p.name);
  if (clusterIPs.length > 0) {
    const r = recordsOf(out, base);
    for (const ip of clusterIPs) {
      (IPV4.test(ip) ? r.A : r.AAAA).push(ip);
      const rev = reverseName(ip);
      if (rev) recordsOf(out, rev).PTR.push(base);
    }
    for (const p of namedPorts) {
      const srv = `_${p.name}._${(p.protocol ?? 'TCP').toLowerCase()}.${base}`.toLowerCase();
      recordsOf(out, srv).SRV.push({ priority: 0, weight: 100, port: p.port, target: base });
    }
    return out;
  }
  if (spec.clusterIP !== 'None' && !(spec.clusterIPs ?? []).includes('None')) return out;
  // Headless: the ready endpoints themselves.
  const anyEndpoint = spec.publishNotReadyAddresses === true;
  const srvByName = new Map<string, SrvData[]>();
  const seen = new Set<string>();
  for (const slice of slices) {
    if (slice.addressType !== 'IPv4' && slice.addressType !== 'IPv6') continue;
    for (const ep of slice.endpoints ?? []) {
      if (!anyEndpoint && ep.conditions?.ready === false) continue;
      const ip = ep.addresses?.[0];
      if (!ip) continue;
      const host = (ep.hostname ?? dashedIP(ip)).toLowerCase();
      const hostName = `${host}.${base}`;
      const v4 = slice.addressType === 'IPv4';
      if (!seen.has(`${ip}/${host}`)) {
        seen.add(`${ip}/${host}`);
        const baseRecs = recordsOf(out, base);
        pushNew(v4 ? baseRecs.A : baseRecs.AAAA, [ip]);
        const hostRecs = recordsOf(out, hostName);
        pushNew(v4 ? hostRecs.A : hostRecs.AAAA, [ip]);
        const rev = ep.hostname ? reverseName(ip) : undefined;
        if (rev) pushNew(recordsOf(out, rev).PTR, [hostName]);
      }
      for (const sp of slice.ports ?? []) {
        if (!sp.name || typeof sp.port !== 'number') continue;
        if (!namedPorts.some((p) => p.name === sp.name)) continue;
        const srv = `_${sp.name}._${(sp.protocol ?? 'TCP').toLowerCase()}.${base}`.toLowerCase();
        let list = srvByName.get(srv);
        if (!list) srvByName.set(srv, (list = []));
        if (!list.some((s) => s.target === hostName && s.port === sp.port))
          list.push({ priority: 0, weight: 0, port: sp.port, target: hostName });
      }
    }
  }
  for (const [name, list] of srvByName) {
    // CoreDNS spreads a weight of 100 over a name's records.
    const weight = Math.floor(100 / list.length);
    recordsOf(out, name).SRV.push(...list.map((s) => ({ ...s, weight })));
  }
  return out;
}
