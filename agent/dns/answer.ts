/**
 * The answer to one question about the cluster's names, from the records index
 * (records.ts), as CoreDNS's kubernetes plugin gives it:
 *
 * - a name with records of the asked type: those records (owner names in the query's own
 *   case), SRV targets' addresses in the additional section;
 * - a name with a CNAME (an ExternalName Service): the CNAME for any type but CNAME's own,
 *   followed through the index while the target is in the zone; a target outside the
 *   zone is left to the caller to chase upstream (`chase`);
 * - an existing name without records of the type: NODATA (NOERROR, no answers), the
 *   zone's SOA in the authority section so that resolvers cache the denial;
 * - a name in the zone that does not exist: NXDOMAIN with the SOA;
 * - a name outside the zone that the index does not hold (every name but the PTRs of
 *   Service and endpoint addresses): undefined, for the forwarder.
 *
 * TTLs: `ttl` seconds on every record (the kubernetes plugin's default, 5 s) and as the
 * SOA's minimum (the negative-caching TTL, RFC 2308).
 */
import type { Answer, Question, RecordType, StringAnswer } from 'dns-packet';
import type { ClusterRecords, NameRecords } from './records.js';

/** The kubernetes plugin's default TTL of its records, seconds. */
export const DEFAULT_TTL_SECONDS = 5;

/** An answer made from the index. */
export interface IndexAnswer {
  rcode: 'NOERROR' | 'NXDOMAIN';
  answers: Answer[];
  authorities: Answer[];
  additionals: Answer[];
  /** The CNAME target outside the zone the answer ends at (lowercased), for the caller to resolve. */
  chase?: string;
}

/** How many CNAMEs within the zone are followed (CoreDNS stops at 8 too). */
const MAX_CNAME_HOPS = 8;

/**
 * The answer to `q` from `records`, or undefined when the name is not the index's to answer
 * (outside the zone and without records: forward it).
 */
export function answerFromIndex(
  records: ClusterRecords,
  q: Question,
  ttl = DEFAULT_TTL_SECONDS,
): IndexAnswer | undefined {
  const asked = q.name.replace(/\.$/, '');
  const name = asked.toLowerCase();
  const inZone = records.inZone(name);
  const recs = records.lookup(name);
  if (!inZone && !hasAny(recs)) return undefined;
  const out: IndexAnswer = { rcode: 'NOERROR', answers: [], authorities: [], additionals: [] };
  if (name === records.zone && (q.type === 'SOA' || (q.type as string) === 'ANY')) {
    out.answers.push({ ...soa(records, ttl), name: asked });
    return out;
  }
  let owner = asked;
  let current = recs;
  let currentName = name;
  for (let hop = 0; ; hop++) {
    if (current.CNAME !== undefined && q.type !== 'CNAME') {
      out.answers.push({ name: owner, type: 'CNAME', ttl, class: 'IN', data: current.CNAME });
      const target = current.CNAME;
      if (hop >= MAX_CNAME_HOPS) return out;
      if (!records.inZone(target)) {
        out.chase = target;
        return out;
      }
      if (!records.exists(target)) {
        out.rcode = 'NXDOMAIN';
        out.authorities.push(soa(records, ttl));
        return out;
      }
      owner = target;
      currentName = target;
      current = records.lookup(target);
      continue;
    }
    const before = out.answers.length;
    appendRecords(out, records, owner, current, q.type, ttl);
    if (out.answers.length === before && hop === 0) {
      // No records of the type: NODATA for a name that exists, else NXDOMAIN.
      if (!hasAny(current) && !records.exists(currentName)) out.rcode = 'NXDOMAIN';
      out.authorities.push(soa(records, ttl));
    }
    return out;
  }
}

function hasAny(r: NameRecords): boolean {
  return r.A.length + r.AAAA.length + r.SRV.length + r.PTR.length + r.TXT.length > 0 || r.CNAME !== undefined;
}

function appendRecords(
  out: IndexAnswer,
  records: ClusterRecords,
  owner: string,
  r: NameRecords,
  type: RecordType | 'ANY' | string,
  ttl: number,
): void {
  const any = type === 'ANY';
  if (any || type === 'A')
    for (const ip of r.A) out.answers.push({ name: owner, type: 'A', ttl, class: 'IN', data: ip });
  if (any || type === 'AAAA')
    for (const ip of r.AAAA) out.answers.push({ name: owner, type: 'AAAA', ttl, class: 'IN', data: ip });
  if (any || type === 'PTR')
    for (const p of r.PTR)
      out.answers.push({ name: owner, type: 'PTR', ttl, class: 'IN', data: p } as StringAnswer);
  if (any || type === 'TXT')
    for (const t of r.TXT) out.answers.push({ name: owner, type: 'TXT', ttl, class: 'IN', data: t });
  if (any || type === 'CNAME')
    if (r.CNAME !== undefined)
      out.answers.push({ name: owner, type: 'CNAME', ttl, class: 'IN', data: r.CNAME });
  if (any || type === 'SRV') {
    const targets = new Set<string>();
    for (const s of r.SRV) {
      out.answers.push({
        name: owner,
        type: 'SRV',
        ttl,
        class: 'IN',
        data: { priority: s.priority, weight: s.weight, port: s.port, target: s.target },
      });
      targets.add(s.target);
    }
    for (const t of targets) {
      const tr = records.lookup(t);
      for (const ip of tr.A) out.additionals.push({ name: t, type: 'A', ttl, class: 'IN', data: ip });
      for (const ip of tr.AAAA) out.additionals.push({ name: t, type: 'AAAA', ttl, class: 'IN', data: ip });
    }
  }
}

/** The zone's SOA (CoreDNS's shape: ns.dns.<zone>, hostmaster.<zone>, minimum = the TTL). */
export function soa(records: ClusterRecords, ttl: number): Answer {
  return {
    name: records.zone,
    type: 'SOA',
    ttl,
    class: 'IN',
    data: {
      mname: `ns.dns.${records.zone}`,
      rname: `hostmaster.${records.zone}`,
      serial: records.generation >>> 0,
      refresh: 7200,
      retry: 1800,
      expire: 86400,
      minimum: ttl,
    },
  };
}
