// SPDY/3.1 framing (spdy.ts) and port-forward over it (portforward.ts): the test plays
// kubectl — a websocket client speaking SPDY with its own zlib contexts — against
// servePortForward, which forwards to a local TCP echo server standing in for the pod.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import {
  connect,
  createServer as createTcpServer,
  type AddressInfo,
  type Server as TcpServer,
} from 'node:net';
import { after, before, describe, it } from 'node:test';
import winston from 'winston';
import WebSocket, { WebSocketServer } from 'ws';
import { CriError } from '../../../cri/index.js';
import { PORT_FORWARD_TUNNEL_PROTOCOL, selectPortForwardProtocol, servePortForward } from './portforward.js';
import {
  BlockCodec,
  FLAG_FIN,
  FRAME_TYPES,
  SPDY3_DICTIONARY,
  controlFrame,
  dataFrame,
  decodeHeaderBlock,
  encodeHeaderBlock,
} from './spdy.js';

describe('SPDY framing', () => {
  it('has the 1423-byte SPDY/3 dictionary, starting with the length-prefixed "options"', () => {
    assert.equal(SPDY3_DICTIONARY.length, 1423);
    assert.deepEqual([...SPDY3_DICTIONARY.subarray(0, 11)], [0, 0, 0, 7, ...Buffer.from('options')]);
    assert.ok(SPDY3_DICTIONARY.toString('latin1').endsWith(',*,enq=0.'));
  });

  it('round-trips header blocks, names lower-cased', () => {
    const block = encodeHeaderBlock({ StreamType: 'data', port: '8080', requestID: '0' });
    assert.deepEqual(decodeHeaderBlock(block), { streamtype: 'data', port: '8080', requestid: '0' });
    assert.throws(() => decodeHeaderBlock(block.subarray(0, block.length - 1)), /truncated/);
  });

  it('compresses and decompresses block after block in one context', async () => {
    const deflate = new BlockCodec('deflate');
    const inflate = new BlockCodec('inflate');
    const blocks: Record<string, string>[] = [{ a: '1' }, { streamtype: 'error', port: '80' }, {}];
    for (const h of blocks) {
      const packed = await deflate.process(encodeHeaderBlock(h));
      assert.deepEqual(decodeHeaderBlock(await inflate.process(packed)), h);
    }
    deflate.close();
    inflate.close();
  });

  it('lays frames out as the spec does', () => {
    assert.deepEqual(
      [...controlFrame(FRAME_TYPES.PING, 0, Buffer.from([0, 0, 0, 1]))],
      [0x80, 3, 0, 6, 0, 0, 0, 4, 0, 0, 0, 1],
    );
    assert.deepEqual([...dataFrame(5, FLAG_FIN, Buffer.from('hi'))], [0, 0, 0, 5, 1, 0, 0, 2, 104, 105]);
  });
});

/** A SPDY client over a websocket (kubectl's tunnelled port-forward) or a plain connection. */
class Client {
  private buf = Buffer.alloc(0);
  private readonly deflate = new BlockCodec('deflate');
  private readonly inflate = new BlockCodec('inflate');
  readonly replies = new Set<number>();
  readonly data = new Map<number, string>();
  readonly fins = new Set<number>();
  readonly pings: number[] = [];
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly sendBytes: (b: Buffer) => void,
    onBytes: (cb: (d: Buffer) => void) => void,
    readonly close: () => void,
  ) {
    onBytes((d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      while (this.buf.length >= 8) {
        const len = this.buf.readUInt32BE(4) & 0xffffff;
        if (this.buf.length < 8 + len) break;
        const frame = this.buf.subarray(0, 8 + len);
        this.buf = this.buf.subarray(8 + len);
        this.queue = this.queue.then(() => this.handle(frame));
      }
    });
  }

  private async handle(frame: Buffer): Promise<void> {
    const payload = frame.subarray(8);
    if (frame[0]! & 0x80) {
      const type = frame.readUInt16BE(2);
      if (type === FRAME_TYPES.SYN_REPLY) {
        await this.inflate.process(payload.subarray(4));
        this.replies.add(payload.readUInt32BE(0));
      } else if (type === FRAME_TYPES.PING) this.pings.push(payload.readUInt32BE(0));
      return;
    }
    const id = frame.readUInt32BE(0);
    this.data.set(id, (this.data.get(id) ?? '') + payload.toString());
    if (frame[4]! & FLAG_FIN) this.fins.add(id);
  }

  async open(id: number, headers: Record<string, string>, fin = false): Promise<void> {
    const block = await this.deflate.process(encodeHeaderBlock(headers));
    const head = Buffer.alloc(10);
    head.writeUInt32BE(id, 0);
    this.sendBytes(controlFrame(FRAME_TYPES.SYN_STREAM, fin ? FLAG_FIN : 0, Buffer.concat([head, block])));
  }

  sendRaw(b: Buffer): void {
    this.sendBytes(b);
  }

  send(id: number, text: string, fin = false): void {
    this.sendBytes(dataFrame(id, fin ? FLAG_FIN : 0, Buffer.from(text)));
  }
}

async function until(what: string, check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('servePortForward', () => {
  it('is offered as kubectl 1.31+ asks for it', () => {
    assert.equal(selectPortForwardProtocol(['SPDY/3.1+portforward.k8s.io']), PORT_FORWARD_TUNNEL_PROTOCOL);
    assert.equal(selectPortForwardProtocol(['portforward.k8s.io']), undefined);
  });

  let pod: TcpServer;
  let podPort: number;
  let server: Server;
  let url: string;

  before(async () => {
    // The "pod": echoes each line back prefixed.
    pod = createTcpServer((s) =>
      s.on('data', (d) => s.write(`echo:${d.toString()}`)).on('end', () => s.end()),
    );
    await new Promise<void>((r) => pod.listen(0, '127.0.0.1', r));
    podPort = (pod.address() as AddressInfo).port;
    const wss = new WebSocketServer({ noServer: true });
    server = createServer();
    server.on('upgrade', (req, socket, head) =>
      wss.handleUpgrade(req, socket, head, (ws) =>
        servePortForward(
          { kind: 'websocket', ws },
          (port) =>
            port === podPort
              ? new Promise((resolve, reject) => {
                  const s = connect({ host: '127.0.0.1', port }, () => resolve(s));
                  s.once('error', reject);
                })
              : Promise.reject(new CriError('Unavailable', `connection refused on port ${port}`)),
          winston.createLogger({ silent: true }),
        ),
      ),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(() => {
    server.close();
    pod.close();
  });

  async function client(): Promise<Client> {
    // ws refuses `SPDY/3.1+portforward.k8s.io` as a subprotocol token (the kubelet server
    // answers it by hand; see server.ts), so the test connects without one.
    const ws = new WebSocket(url);
    const c = new Client(
      (b) => ws.send(b),
      (cb) => ws.on('message', cb),
      () => ws.close(),
    );
    await new Promise((r) => ws.on('open', r));
    return c;
  }

  it('forwards two connections at once, each closed in turn', async () => {
    const c = await client();
    const port = String(podPort);
    await c.open(1, { streamtype: 'error', port, requestid: '0' }, true);
    await c.open(3, { streamtype: 'data', port, requestid: '0' });
    await c.open(5, { streamtype: 'error', port, requestid: '1' }, true);
    await c.open(7, { streamtype: 'data', port, requestid: '1' });
    await until('four replies', () => c.replies.size === 4);
    c.send(3, 'one');
    c.send(7, 'two');
    await until('both echoes', () => c.data.get(3) === 'echo:one' && c.data.get(7) === 'echo:two');
    c.send(3, '', true);
    await until('connection 0 closed, its error stream empty', () => c.fins.has(3) && c.fins.has(1));
    assert.equal(c.data.get(1) ?? '', '');
    assert.ok(!c.fins.has(7), 'connection 1 is still open');
    c.send(7, 'three');
    await until('connection 1 still works', () => c.data.get(7) === 'echo:twoecho:three');
    c.close();
  });

  it('reports a refused port on the error stream', async () => {
    const c = await client();
    await c.open(1, { streamtype: 'error', port: '1', requestid: '9' }, true);
    await c.open(3, { streamtype: 'data', port: '1', requestid: '9' });
    await until('the error stream closed', () => c.fins.has(1));
    assert.match(c.data.get(1) ?? '', /error forwarding port 1 to pod: connection refused on port 1/);
    assert.ok(c.fins.has(3));
    c.close();
  });

  it('buffers what arrives before the pod is connected, and echoes pings', async () => {
    const c = await client();
    const port = String(podPort);
    await c.open(1, { streamtype: 'error', port, requestid: '0' }, true);
    await c.open(3, { streamtype: 'data', port, requestid: '0' });
    c.send(3, 'early');
    c.sendRaw(controlFrame(FRAME_TYPES.PING, 0, Buffer.from([0, 0, 0, 1])));
    await until('the echo of early data', () => c.data.get(3) === 'echo:early');
    await until('the ping back', () => c.pings.includes(1));
    c.close();
  });

  it('serves the same session directly on an upgraded connection (the SPDY fallback)', async () => {
    const plain = createTcpServer((socket) =>
      servePortForward(
        { kind: 'socket', socket },
        (port) =>
          new Promise((resolve, reject) => {
            const s = connect({ host: '127.0.0.1', port }, () => resolve(s));
            s.once('error', reject);
          }),
        winston.createLogger({ silent: true }),
      ),
    );
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    const raw = connect({ host: '127.0.0.1', port: (plain.address() as AddressInfo).port });
    await new Promise((r) => raw.on('connect', r));
    const c = new Client(
      (b) => raw.write(b),
      (cb) => raw.on('data', cb),
      () => raw.end(),
    );
    const port = String(podPort);
    await c.open(1, { streamtype: 'error', port, requestid: '0' }, true);
    await c.open(3, { streamtype: 'data', port, requestid: '0' });
    c.send(3, 'plain', true);
    await until(
      'the echo and both FINs',
      () => c.data.get(3) === 'echo:plain' && c.fins.has(3) && c.fins.has(1),
    );
    c.close();
    plain.close();
  });
});
