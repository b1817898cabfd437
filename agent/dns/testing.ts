/**
 * Helpers for tests and the benchmark of the cluster DNS: a client that sends one query
 * over UDP or TCP and decodes the answer, and a tiny upstream resolver (dns-packet over UDP
 * and TCP on 127.0.0.1) that answers from a fixed table and counts what it was asked.
 */
import { createSocket } from 'node:dgram';
import { connect, createServer } from 'node:net';
import * as dnsPacket from 'dns-packet';
import type { Answer, RecordType } from 'dns-packet';

/** A decoded response with its rcode and the raw bytes. */
export interface TestResponse {
  rcode: string;
  flags: number;
  packet: dnsPacket.DecodedPacket;
  raw: Buffer;
}

/** Options of one test query. */
export interface QueryOptions {
  transport?: 'udp' | 'tcp';
  /** Add an EDNS OPT record with this payload size. */
  edns?: number;
  id?: number;
  timeoutMs?: number;
}

function decodeResponse(raw: Buffer): TestResponse {
  const packet = dnsPacket.decode(raw);
  return { rcode: (packet as { rcode?: string }).rcode ?? 'NOERROR', flags: packet.flags ?? 0, packet, raw };
}

/** The bytes of a query for `name`/`type`. */
export function encodeQuery(name: string, type: RecordType, opts: QueryOptions = {}): Buffer {
  return dnsPacket.encode({
    type: 'query',
    id: opts.id ?? 4242,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ name, type, class: 'IN' }],
    additionals: opts.edns ? [{ type: 'OPT', name: '.', udpPayloadSize: opts.edns } as Answer] : [],
  });
}

/**
 * Sends `msg` (a DNS message) to host:port and resolves with the first reply's bytes.
 * @throws Error when no reply comes within `timeoutMs` (default 3000).
 */
export function exchange(host: string, port: number, msg: Buffer, opts: QueryOptions = {}): Promise<Buffer> {
  const timeoutMs = opts.timeoutMs ?? 3000;
  if (opts.transport === 'tcp') {
    return new Promise((resolve, reject) => {
      const sock = connect({ host, port });
      let buf = Buffer.alloc(0);
      const timer = setTimeout(() => {
        sock.destroy();
        reject(new Error(`no TCP reply from ${host}:${port} within ${timeoutMs} ms`));
      }, timeoutMs);
      sock.on('connect', () => {
        const len = Buffer.alloc(2);
        len.writeUInt16BE(msg.length);
        sock.write(Buffer.concat([len, msg]));
      });
      sock.on('data', (c) => {
        buf = Buffer.concat([buf, c]);
        if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
          clearTimeout(timer);
          sock.destroy();
          resolve(buf.subarray(2, 2 + buf.readUInt16BE(0)));
        }
      });
      sock.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  }
  return new Promise((resolve, reject) => {
    const sock = createSocket(host.includes(':') ? 'udp6' : 'udp4');
    const timer = setTimeout(() => {
      sock.close();
      reject(new Error(`no UDP reply from ${host}:${port} within ${timeoutMs} ms`));
    }, timeoutMs);
    sock.on('message', (m) => {
      clearTimeout(timer);
      sock.close();
      resolve(m);
    });
    sock.send(msg, port, host);
  });
}

/** One query for `name`/`type` to host:port, decoded. */
export async function query(
  host: string,
  port: number,
  name: string,
  type: RecordType,
  opts: QueryOptions = {},
): Promise<TestResponse> {
  return decodeResponse(await exchange(host, port, encodeQuery(name, type, opts), opts));
}

/** A running test resolver. */
export interface TestResolver {
  host: string;
  port: number;
  /** Questions received (`name/type`, lowercased name). */
  asked: string[];
  close(): Promise<void>;
}

/**
 * Starts an upstream resolver on `host` (default 127.0.0.1) and a free port, UDP and TCP:
 * a name in `zone` (lowercased, no trailing dot) answers its records of the asked type
 * (NODATA when it has none of that type), any other name NXDOMAIN, both with an SOA of TTL
 * `negativeTtl` (default 30). With `truncateUdp`, every UDP answer with records is sent
 * truncated (TC) so that clients retry over TCP.
 */
export async function startTestResolver(
  zone: Record<string, Answer[]>,
  opts: { host?: string; negativeTtl?: number; truncateUdp?: boolean } = {},
): Promise<TestResolver> {
  const host = opts.host ?? '127.0.0.1';
  const asked: string[] = [];
  const answer = (msg: Buffer, tcp: boolean): Buffer => {
    const q = dnsPacket.decode(msg);
    const question = q.questions![0]!;
    const name = question.name.toLowerCase();
    asked.push(`${name}/${question.type}`);
    const records = zone[name];
    const answers = (records ?? []).filter((r) => r.type === question.type || r.type === 'CNAME');
    const soa: Answer = {
      name: name.split('.').slice(-1).join('.') || '.',
      type: 'SOA',
      ttl: opts.negativeTtl ?? 30,
      class: 'IN',
      data: {
        mname: 'ns.test',
        rname: 'hostmaster.test',
        serial: 1,
        refresh: 60,
        retry: 60,
        expire: 60,
        minimum: opts.negativeTtl ?? 30,
      },
    };
    const truncated = !tcp && opts.truncateUdp === true && answers.length > 0;
    return dnsPacket.encode({
      type: 'response',
      id: q.id,
      flags:
        dnsPacket.RECURSION_AVAILABLE |
        ((q.flags ?? 0) & dnsPacket.RECURSION_DESIRED) |
        (truncated ? dnsPacket.TRUNCATED_RESPONSE : 0) |
        (records ? 0 : 3),
      questions: q.questions,
      answers: truncated ? [] : answers,
      authorities: answers.length > 0 ? [] : [soa],
    });
  };
  const udp = createSocket('udp4');
  await new Promise<void>((r) => udp.bind(0, host, () => r()));
  const port = udp.address().port;
  udp.on('message', (msg, rinfo) => udp.send(answer(msg, false), rinfo.port, rinfo.address));
  const tcp = createServer((s) => {
    let buf = Buffer.alloc(0);
    s.on('data', (c) => {
      buf = Buffer.concat([buf, c]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const n = buf.readUInt16BE(0);
        const out = answer(buf.subarray(2, 2 + n), true);
        buf = buf.subarray(2 + n);
        const len = Buffer.alloc(2);
        len.writeUInt16BE(out.length);
        s.write(Buffer.concat([len, out]));
      }
    });
    s.on('error', () => s.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    tcp.once('error', reject);
    tcp.listen(port, host, () => resolve());
  });
  return {
    host,
    port,
    asked,
    close: async () => {
      await Promise.all([
        new Promise<void>((r) => udp.close(() => r())),
        new Promise<void>((r) => tcp.close(() => r())),
      ]);
    },
  };
}
