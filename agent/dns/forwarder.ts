/**
 * Names outside the cluster: forwarded to the upstream resolvers (resolv-conf.ts) and
 * cached, as CoreDNS's `forward . /etc/resolv.conf` behind its `cache` plugin (and
 * NodeLocal DNSCache) do:
 *
 *   resolve(q) ─ cache hit (not expired) ───────────────────────────▶ records, TTLs counted down
 *             └ miss ─ same question already in flight? ─ yes ─ wait for it
 *                                                       └ no ─ UDP to upstream[0], next on timeout
 *                                                              TC bit ─ the same upstream over TCP
 *                                                              ─▶ cache, answer
 *
 * Cache: by lowercased name, type and class; a success is kept for the smallest TTL of its
 * answer and authority records (at most 3600 s, CoreDNS's cache default), a denial
 * (NXDOMAIN or NODATA) for the SOA's minimum or its TTL, whichever is smaller (RFC 2308;
 * at most 1800 s), SERVFAIL and timeouts not at all. At most `maxEntries` entries (CoreDNS's
 * 9984 by default); the oldest go first. Each query goes out from a socket of its own (a
 * fresh random source port) with a random ID, and only a reply from the upstream's address
 * with that ID and question is taken.
 */
import { createSocket } from 'node:dgram';
import { randomInt } from 'node:crypto';
import { connect } from 'node:net';
import * as dnsPacket from 'dns-packet';
import type { Answer, Question } from 'dns-packet';
import type { Clock } from '../../api/clock.js';
import { realClock } from '../../api/clock.js';
import type { Upstream } from './resolv-conf.js';

/** What an upstream said, records with their TTLs as of now. */
export interface UpstreamAnswer {
  rcode: string;
  answers: Answer[];
  authorities: Answer[];
  additionals: Answer[];
  /** True when it came from the cache. */
  cached: boolean;
}

/** Settings of a Forwarder. */
export interface ForwarderConfig {
  /** The upstream resolvers, tried in order; read again through this function for each miss. */
  upstreams: () => readonly Upstream[];
  /** Milliseconds to wait for one upstream before the next; default 2000 (CoreDNS's read timeout). */
  timeoutMs?: number;
  /** Cache entries kept; default 9984. */
  maxEntries?: number;
  clock?: Clock;
}

interface CacheEntry {
  rcode: string;
  answers: Answer[];
  authorities: Answer[];
  additionals: Answer[];
  /** clock.now() ms at storage and expiry. */
  storedAt: number;
  expiresAt: number;
}

const MAX_SUCCESS_TTL = 3600;
const MAX_DENIAL_TTL = 1800;

/** Forwards and caches (see the file comment). */
export class Forwarder {
  private readonly cfg: Required<ForwarderConfig>;
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<UpstreamAnswer>>();
  /** Counters for metrics: cache hits and misses, upstream failures. */
  readonly stats = { hits: 0, misses: 0, failures: 0 };

  constructor(cfg: ForwarderConfig) {
    this.cfg = { timeoutMs: 2000, maxEntries: 9984, clock: realClock, ...cfg };
  }

  /** Entries in the cache now. */
  get size(): number {
    return this.cache.size;
  }

  /**
   * The answer to `q` (RD set), from the cache or an upstream. Resolves SERVFAIL (not
   * cached) when no upstream is configured or none answered within the timeout; never rejects.
   */
  async resolve(q: Question): Promise<UpstreamAnswer> {
    const key = `${(q.class ?? 'IN').toString()}|${q.type}|${q.name.replace(/\.$/, '').toLowerCase()}`;
    const now = this.cfg.clock.now();
    const hit = this.cache.get(key);
    if (hit && hit.expiresAt > now) {
      this.stats.hits++;
      const spent = Math.floor((now - hit.storedAt) / 1000);
      const age = (rs: Answer[]) =>
        rs.map((r) =>
          'ttl' in r && r.ttl !== undefined ? { ...r, ttl: Math.max(0, r.ttl - spent) } : r,
        ) as Answer[];
      return {
        rcode: hit.rcode,
        answers: age(hit.answers),
        authorities: age(hit.authorities),
        additionals: age(hit.additionals),
        cached: true,
      };
    }
    if (hit) this.cache.delete(key);
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    this.stats.misses++;
    const p = this.ask(q).then((a) => {
      this.store(key, a);
      return a;
    });
    this.inFlight.set(key, p);
    try {
      return await p;
    } finally {
      this.inFlight.delete(key);
    }
  }

  private store(key: string, a: UpstreamAnswer): void {
    const ttl = cacheTTL(a);
    if (ttl === undefined || ttl <= 0) return;
    while (this.cache.size >= this.cfg.maxEntries) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
    const now = this.cfg.clock.now();
    this.cache.set(key, { ...a, storedAt: now, expiresAt: now + ttl * 1000 });
  }

  private async ask(q: Question): Promise<UpstreamAnswer> {
    const question: Question = { name: q.name.replace(/\.$/, ''), type: q.type, class: q.class ?? 'IN' };
    for (const up of this.cfg.upstreams()) {
      try {
        let reply = await queryUdp(up, question, this.cfg.timeoutMs);
        if (reply.flag_tc) reply = await queryTcp(up, question, this.cfg.timeoutMs);
        const rcode = (reply as { rcode?: string }).rcode ?? 'NOERROR';
        if (rcode === 'SERVFAIL' || rcode === 'REFUSED') continue;
        return {
          rcode,
          answers: reply.answers ?? [],
          authorities: reply.authorities ?? [],
          additionals: (reply.additionals ?? []).filter((r) => r.type !== 'OPT'),
          cached: false,
        };
      } catch {
        // Timeout or a broken reply: the next upstream.
      }
    }
    this.stats.failures++;
    return { rcode: 'SERVFAIL', answers: [], authorities: [], additionals: [], cached: false };
  }
}

/** Seconds an answer may be cached (see the file comment); undefined: not at all. */
export function cacheTTL(a: Pick<UpstreamAnswer, 'rcode' | 'answers' | 'authorities'>): number | undefined {
  const ttlOf = (r: Answer): number => ('ttl' in r && typeof r.ttl === 'number' ? r.ttl : 0);
  if (a.rcode === 'NOERROR' && a.answers.length > 0) {
    const all = [...a.answers, ...a.authorities];
    return Math.min(MAX_SUCCESS_TTL, ...all.map(ttlOf));
  }
  if (a.rcode === 'NXDOMAIN' || (a.rcode === 'NOERROR' && a.answers.length === 0)) {
    const soa = a.authorities.find((r) => r.type === 'SOA');
    if (!soa) return undefined;
    const minimum = (soa.data as { minimum?: number }).minimum ?? 0;
    return Math.min(MAX_DENIAL_TTL, ttlOf(soa), minimum);
  }
  return undefined;
}

/** Whether `reply` answers `id` and `q` (name compared case-insensitively). */
function matches(reply: dnsPacket.DecodedPacket, id: number, q: Question): boolean {
  const rq = reply.questions?.[0];
  return (
    reply.type === 'response' &&
    reply.id === id &&
    rq !== undefined &&
    rq.type === q.type &&
    rq.name.toLowerCase() === q.name.toLowerCase()
  );
}

function queryPacket(id: number, q: Question): Buffer {
  return dnsPacket.encode({
    type: 'query',
    id,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [q],
    // EDNS(0) with DNS Flag Day 2020's 1232-byte payload: fewer truncations, no fragments.
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232 } as Answer],
  });
}

/** One UDP query to `up`; rejects on timeout. */
function queryUdp(up: Upstream, q: Question, timeoutMs: number): Promise<dnsPacket.DecodedPacket> {
  return new Promise((resolve, reject) => {
    const id = randomInt(0, 65536);
    const sock = createSocket(up.host.includes(':') ? 'udp6' : 'udp4');
    const timer = setTimeout(
      () => done(new Error(`no answer from ${up.host}:${up.port} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const done = (err: Error | undefined, reply?: dnsPacket.DecodedPacket) => {
      clearTimeout(timer);
      sock.close();
      if (err) reject(err);
      else resolve(reply!);
    };
    sock.on('error', (err) => done(err));
    sock.on('message', (msg, rinfo) => {
      if (rinfo.address !== up.host || rinfo.port !== up.port) return;
      let reply: dnsPacket.DecodedPacket;
      try {
        reply = dnsPacket.decode(msg);
      } catch {
        return;
      }
      if (matches(reply, id, q)) done(undefined, reply);
    });
    sock.send(queryPacket(id, q), up.port, up.host, (err) => {
      if (err) done(err);
    });
  });
}

/** One TCP query to `up` (RFC 7766: two-byte length prefix); rejects on timeout. */
function queryTcp(up: Upstream, q: Question, timeoutMs: number): Promise<dnsPacket.DecodedPacket> {
  return new Promise((resolve, reject) => {
    const id = randomInt(0, 65536);
    const sock = connect({ host: up.host, port: up.port });
    let buf = Buffer.alloc(0);
    const timer = setTimeout(
      () => done(new Error(`no TCP answer from ${up.host}:${up.port} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const done = (err: Error | undefined, reply?: dnsPacket.DecodedPacket) => {
      clearTimeout(timer);
      sock.destroy();
      if (err) reject(err);
      else resolve(reply!);
    };
    sock.on('error', (err) => done(err));
    sock.on('connect', () => {
      const body = queryPacket(id, q);
      const len = Buffer.alloc(2);
      len.writeUInt16BE(body.length);
      sock.write(Buffer.concat([len, body]));
    });
    sock.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length < 2) return;
      const n = buf.readUInt16BE(0);
      if (buf.length < 2 + n) return;
      try {
        const reply = dnsPacket.decode(buf.subarray(2, 2 + n));
        if (matches(reply, id, q)) done(undefined, reply);
        else done(new Error('TCP reply does not match the query'));
      } catch (err) {
        done(err as Error);
      }
    });
    sock.on('end', () => done(new Error('upstream closed the TCP connection without an answer')));
  });
}
