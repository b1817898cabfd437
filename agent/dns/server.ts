/**
 * The DNS server itself: UDP and TCP (RFC 1035, RFC 7766) on one address and port, the
 * cluster's names from the records index (answer.ts), every other name through the
 * forwarder (forwarder.ts).
 *
 *   query ─ shorter than a header, or a response ─▶ dropped
 *         ─ same bytes (but the ID) answered before and still valid (memo below) ─▶ that answer, ID set
 *         ─ unparseable (dns-packet throws) ─▶ FORMERR with the query's ID, the server carries on
 *         ─ opcode other than QUERY ─▶ NOTIMP; not exactly one question ─▶ FORMERR; class not IN ─▶ REFUSED
 *         ─ the cluster's name ─▶ authoritative answer (AA), CNAMEs out of the zone chased upstream
 *         ─ else ─▶ forwarder (cache, upstream) ─▶ its rcode and records (RA)
 *
 * A UDP answer larger than 512 bytes, or than the query's EDNS payload size, is sent
 * truncated (TC, no records) so that the client asks again over TCP. A query with EDNS gets
 * an OPT record back (payload size 1232). The response's question is the query's own, in its
 * own case (clients such as those using 0x20 randomisation compare it), and so are the owner
 * names of the records that answer it.
 *
 * The answer memo (the first arrow above) is what makes the cluster's names cheap: a
 * client repeats the same question, and the memo hands back the encoded answer from the
 * last time after one Map lookup. It is keyed by the query's bytes after the ID (flags,
 * question, EDNS) and the transport. An answer from the index is tagged with the index's
 * generation, so that any Service or EndpointSlice change retires it; a forwarded answer
 * (one the forwarder caches) is reused for one second, so its TTLs are at most a second
 * too high, as CoreDNS's cache serves TTLs rounded to the second.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, isIPv6, type Server, type Socket } from 'node:net';
import * as dnsPacket from 'dns-packet';
import type { Answer, Question } from 'dns-packet';
import { realClock, type Clock } from '../../api/clock.js';
import type { Logger } from '../../api/log.js';
import { answerFromIndex, DEFAULT_TTL_SECONDS } from './answer.js';
import { cacheTTL, type Forwarder } from './forwarder.js';
import type { DnsMetrics } from './metrics.js';
import type { ClusterRecords } from './records.js';

/** Settings of a DnsServer. */
export interface DnsServerConfig {
  records: ClusterRecords;
  forwarder: Forwarder;
  logger: Pick<Logger, 'info' | 'warn' | 'debug'>;
  /** TTL of the cluster's records, seconds; default 5 (the kubernetes plugin's). */
  ttlSeconds?: number;
  metrics?: DnsMetrics;
  /** The forwarded answers' memo expires by it; default the real clock. */
  clock?: Clock;
  /** Memoized answers kept before the memo starts over; default 20 000. */
  memoEntries?: number;
}

/** Where a DnsServer listens. */
export interface DnsAddress {
  host: string;
  /** 53 in a cluster; 0 picks a free port (tests), the same one for UDP and TCP. */
  port: number;
}

const RCODES: Record<string, number> = {
  NOERROR: 0,
  FORMERR: 1,
  SERVFAIL: 2,
  NXDOMAIN: 3,
  NOTIMP: 4,
  REFUSED: 5,
};
const RCODE_NAMES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];
const QR = 0x8000;
const EDNS_PAYLOAD = 1232;
/** Seconds a TCP connection may stay idle (RFC 7766 suggests some seconds; CoreDNS: 10). */
const TCP_IDLE_MS = 10_000;

type Transport = 'udp' | 'tcp';

interface Memo {
  /** The index generation an answer from the index is valid for; undefined for a forwarded answer. */
  generation: number | undefined;
  /** clock.now() after which a forwarded answer is asked of the forwarder again. */
  expiresAt: number;
  bytes: Buffer;
  rcode: string;
}

/** How long a forwarded answer's bytes are reused, ms: its TTLs are off by at most this. */
const FORWARDED_MEMO_MS = 1000;

/** A DNS server on UDP and TCP (see the file comment). */
export class DnsServer {
  private readonly cfg: DnsServerConfig & { ttlSeconds: number; memoEntries: number; clock: Clock };
  private udp: UdpSocket | undefined;
  private tcp: Server | undefined;
  private readonly connections = new Set<Socket>();
  private readonly memo = new Map<string, Memo>();
  private boundAddress: DnsAddress | undefined;

  constructor(cfg: DnsServerConfig) {
    if (!cfg.records || !cfg.forwarder || !cfg.logger)
      throw new Error('DnsServer: records, forwarder and logger are required');
    this.cfg = { ttlSeconds: DEFAULT_TTL_SECONDS, memoEntries: 20_000, clock: realClock, ...cfg };
  }

  /** The address being served (the real port when 0 was asked for); undefined while closed. */
  get address(): DnsAddress | undefined {
    return this.boundAddress;
  }

  /**
   * Opens the UDP socket and the TCP listener on `addr` (with port 0: a port free for both,
   * retried a few times). Resolves with the address served.
   * @throws Error (EADDRINUSE, EACCES, EADDRNOTAVAIL, ...) when either cannot be bound;
   *   nothing stays open then.
   */
  async listen(addr: DnsAddress): Promise<DnsAddress> {
    if (this.udp) throw new Error('DnsServer: already listening');
    for (let attempt = 0; ; attempt++) {
      const udp = createSocket({ type: isIPv6(addr.host) ? 'udp6' : 'udp4' });
      try {
        await new Promise<void>((resolve, reject) => {
          udp.once('error', reject);
          udp.bind(addr.port, addr.host, () => {
            udp.off('error', reject);
            resolve();
          });
        });
      } catch (err) {
        udp.close();
        throw err;
      }
      const port = udp.address().port;
      const tcp = createServer((s) => this.serveTcp(s));
      try {
        await new Promise<void>((resolve, reject) => {
          tcp.once('error', reject);
          tcp.listen({ host: addr.host, port }, () => {
            tcp.off('error', reject);
            resolve();
          });
        });
      } catch (err) {
        udp.close();
        // Port 0: the UDP port's TCP twin was taken; try another.
        if (addr.port === 0 && (err as NodeJS.ErrnoException).code === 'EADDRINUSE' && attempt < 5) continue;
        throw err;
      }
      udp.on('message', (msg, rinfo) => {
        this.cfg.metrics?.udp.inc();
        const fast = this.fromMemo(msg, 'udp');
        if (fast) {
          udp.send(fast, rinfo.port, rinfo.address);
          return;
        }
        void this.respond(msg, 'udp').then((out) => {
          if (out) udp.send(out, rinfo.port, rinfo.address);
        });
      });
      udp.on('error', (err) => this.cfg.logger.warn('dns: UDP socket error', { error: err.message }));
      tcp.on('error', (err) => this.cfg.logger.warn('dns: TCP listener error', { error: err.message }));
      this.udp = udp;
      this.tcp = tcp;
      this.boundAddress = { host: addr.host, port };
      return this.boundAddress;
    }
  }

  /** Closes the sockets and every TCP connection. Idempotent. */
  async close(): Promise<void> {
    const udp = this.udp;
    const tcp = this.tcp;
    this.udp = undefined;
    this.tcp = undefined;
    this.boundAddress = undefined;
    for (const s of this.connections) s.destroy();
    this.connections.clear();
    await Promise.all([
      udp ? new Promise<void>((r) => udp.close(() => r())) : undefined,
      tcp ? new Promise<void>((r) => tcp.close(() => r())) : undefined,
    ]);
  }

  /**
   * The answer to one message (the DNS message, without TCP's length prefix), or undefined
   * when nothing is to be sent back (no readable header, or a response). Never rejects.
   */
  async respond(msg: Buffer, transport: Transport): Promise<Buffer | undefined> {
    const fast = this.fromMemo(msg, transport);
    if (fast) return fast;
    if (msg.length < 12 || (msg.readUInt16BE(2) & QR) !== 0) return undefined;
    let query: dnsPacket.DecodedPacket;
    try {
      query = dnsPacket.decode(msg);
    } catch {
      return this.headerOnly(msg, 'FORMERR');
    }
    if ((query as { opcode?: string }).opcode !== 'QUERY') return this.headerOnly(msg, 'NOTIMP');
    const questions = query.questions ?? [];
    if (questions.length !== 1) return this.headerOnly(msg, 'FORMERR');
    const q = questions[0]!;
    const opt = (query.additionals ?? []).find((r) => r.type === 'OPT') as
      { udpPayloadSize?: number } | undefined;
    const limit = transport === 'tcp' ? 65535 : Math.max(512, Math.min(opt?.udpPayloadSize ?? 512, 4096));
    const reply = (
      rcode: string,
      aa: boolean,
      answers: Answer[],
      authorities: Answer[],
      additionals: Answer[],
    ) => this.encode(query, q, opt !== undefined, limit, rcode, aa, answers, authorities, additionals);
    if ((q.class ?? 'IN') !== 'IN') return reply('REFUSED', false, [], [], []);
    try {
      const generation = this.cfg.records.generation;
      const own = answerFromIndex(this.cfg.records, q, this.cfg.ttlSeconds);
      if (own) {
        if (own.chase === undefined) {
          const out = reply(own.rcode, true, own.answers, own.authorities, own.additionals);
          this.remember(msg, transport, generation, out, own.rcode);
          return out;
        }
        const up = await this.cfg.forwarder.resolve({ name: own.chase, type: q.type, class: 'IN' });
        return reply(up.rcode, true, [...own.answers, ...up.answers], up.authorities, []);
      }
      const up = await this.cfg.forwarder.resolve(q);
      const asked = q.name.replace(/\.$/, '');
      const lower = asked.toLowerCase();
      const answers = up.answers.map((r) => (r.name.toLowerCase() === lower ? { ...r, name: asked } : r));
      const out = reply(up.rcode, false, answers, up.authorities, up.additionals);
      // Only what the forwarder would cache: not SERVFAIL, not an answer that expires at once.
      if (up.rcode === 'NOERROR' || up.rcode === 'NXDOMAIN')
        if ((cacheTTL(up) ?? 0) >= 1) this.remember(msg, transport, undefined, out, up.rcode);
      return out;
    } catch (err) {
      this.cfg.logger.warn('dns: cannot answer', {
        name: q.name,
        type: q.type,
        error: (err as Error).message,
      });
      return reply('SERVFAIL', false, [], [], []);
    }
  }

  /** The memoized answer to `msg`, its ID set, if there is one for the index as it is now. */
  private fromMemo(msg: Buffer, transport: Transport): Buffer | undefined {
    if (msg.length < 12) return undefined;
    const m = this.memo.get(memoKey(msg, transport));
    if (!m) return undefined;
    if (
      m.generation === undefined
        ? this.cfg.clock.now() >= m.expiresAt
        : m.generation !== this.cfg.records.generation
    )
      return undefined;
    const out = Buffer.from(m.bytes);
    out[0] = msg[0]!;
    out[1] = msg[1]!;
    this.cfg.metrics?.response(m.rcode);
    return out;
  }

  private remember(
    msg: Buffer,
    transport: Transport,
    generation: number | undefined,
    out: Buffer,
    rcode: string,
  ): void {
    if (generation !== undefined && generation !== this.cfg.records.generation) return;
    if (this.memo.size >= this.cfg.memoEntries) this.memo.clear();
    this.memo.set(memoKey(msg, transport), {
      generation,
      expiresAt: this.cfg.clock.now() + FORWARDED_MEMO_MS,
      bytes: out,
      rcode,
    });
  }

  /** A response of the header alone: the query's ID, opcode and RD, with `rcode`. */
  private headerOnly(msg: Buffer, rcode: string): Buffer {
    this.cfg.metrics?.response(rcode);
    const out = Buffer.alloc(12);
    msg.copy(out, 0, 0, 2);
    const flags = msg.readUInt16BE(2);
    out.writeUInt16BE(QR | (flags & 0x7900) | 0x0080 | RCODES[rcode]!, 2);
    return out;
  }

  private encode(
    query: dnsPacket.DecodedPacket,
    q: Question,
    edns: boolean,
    limit: number,
    rcode: string,
    aa: boolean,
    answers: Answer[],
    authorities: Answer[],
    additionals: Answer[],
  ): Buffer {
    this.cfg.metrics?.response(rcode);
    const opt = edns ? [{ type: 'OPT', name: '.', udpPayloadSize: EDNS_PAYLOAD } as Answer] : [];
    const flags =
      ((query.flags ?? 0) & dnsPacket.RECURSION_DESIRED) |
      dnsPacket.RECURSION_AVAILABLE |
      (aa ? dnsPacket.AUTHORITATIVE_ANSWER : 0) |
      (RCODES[rcode] ?? RCODES.SERVFAIL!);
    const packet = {
      type: 'response' as const,
      id: query.id ?? 0,
      flags,
      questions: [q],
      answers,
      authorities,
      additionals: [...additionals, ...opt],
    };
    const out = dnsPacket.encode(packet);
    if (out.length <= limit) return out;
    return dnsPacket.encode({
      ...packet,
      flags: flags | dnsPacket.TRUNCATED_RESPONSE,
      answers: [],
      authorities: [],
      additionals: opt,
    });
  }

  /** One TCP connection: length-prefixed messages, answered as they come; closed after 10 s idle. */
  private serveTcp(sock: Socket): void {
    this.connections.add(sock);
    sock.setTimeout(TCP_IDLE_MS, () => sock.destroy());
    let buf = Buffer.alloc(0);
    sock.on('data', (chunk) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      while (buf.length >= 2) {
        const n = buf.readUInt16BE(0);
        if (buf.length < 2 + n) break;
        const msg = buf.subarray(2, 2 + n);
        buf = buf.subarray(2 + n);
        this.cfg.metrics?.tcp.inc();
        void this.respond(Buffer.from(msg), 'tcp').then((out) => {
          if (!out || sock.destroyed) return;
          const len = Buffer.alloc(2);
          len.writeUInt16BE(out.length);
          sock.write(Buffer.concat([len, out]));
        });
      }
    });
    sock.on('error', () => sock.destroy());
    sock.on('close', () => this.connections.delete(sock));
  }
}

function memoKey(msg: Buffer, transport: Transport): string {
  return (transport === 'udp' ? 'u' : 't') + msg.toString('latin1', 2);
}

/** The rcode name of a response (its header's low four bits). */
export function rcodeOf(msg: Buffer): string {
  const code = msg.readUInt16BE(2) & 0xf;
  return RCODE_NAMES[code] ?? String(code);
}
