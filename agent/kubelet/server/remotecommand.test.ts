// The exec/attach channel protocol: framing tables, and serveChannels over a real
// websocket pair with a runtime session made of PassThrough streams.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { after, describe, it } from 'node:test';
import WebSocket, { WebSocketServer } from 'ws';
import type { StreamSession, TerminalSize } from '../../../cri/index.js';
import {
  decodeChannelMessage,
  encodeChannelMessage,
  exitStatus,
  selectChannelProtocol,
  serveChannels,
  type ChannelMessage,
} from './remotecommand.js';

describe('channel framing', () => {
  it('picks v5, then v4, else nothing', () => {
    assert.equal(selectChannelProtocol(['v4.channel.k8s.io', 'v5.channel.k8s.io']), 'v5.channel.k8s.io');
    assert.equal(selectChannelProtocol(['channel.k8s.io', 'v4.channel.k8s.io']), 'v4.channel.k8s.io');
    assert.equal(selectChannelProtocol(['v3.channel.k8s.io', 'base64.channel.k8s.io']), undefined);
  });

  it('puts the channel byte first', () => {
    assert.deepEqual([...encodeChannelMessage(2, 'ab')], [2, 97, 98]);
  });

  const cases: [string, Buffer, 'v5.channel.k8s.io' | 'v4.channel.k8s.io', ChannelMessage][] = [
    ['stdin', Buffer.from([0, 104, 105]), 'v5.channel.k8s.io', { kind: 'stdin', data: Buffer.from('hi') }],
    [
      'resize',
      Buffer.concat([Buffer.from([4]), Buffer.from('{"Width":80,"Height":24}')]),
      'v4.channel.k8s.io',
      { kind: 'resize', size: { width: 80, height: 24 } },
    ],
    [
      'bad resize',
      Buffer.concat([Buffer.from([4]), Buffer.from('{nope')]),
      'v5.channel.k8s.io',
      { kind: 'ignored' },
    ],
    ['v5 close of stdin', Buffer.from([255, 0]), 'v5.channel.k8s.io', { kind: 'close', channel: 0 }],
    ['close under v4', Buffer.from([255, 0]), 'v4.channel.k8s.io', { kind: 'ignored' }],
    ['a server channel from the client', Buffer.from([1, 1]), 'v5.channel.k8s.io', { kind: 'ignored' }],
    ['empty', Buffer.alloc(0), 'v5.channel.k8s.io', { kind: 'ignored' }],
  ];
  for (const [name, data, protocol, want] of cases) {
    it(`reads ${name}`, () => assert.deepEqual(decodeChannelMessage(data, protocol), want));
  }

  it('reports exit codes as kubectl reads them', () => {
    assert.deepEqual(exitStatus(0, ['true']), { metadata: {}, status: 'Success' });
    const failed = exitStatus(3, ['sh', '-c', 'exit 3']) as {
      status: string;
      reason: string;
      details: { causes: { reason: string; message: string }[] };
    };
    assert.equal(failed.status, 'Failure');
    assert.equal(failed.reason, 'NonZeroExitCode');
    assert.deepEqual(failed.details.causes, [{ reason: 'ExitCode', message: '3' }]);
  });
});

describe('serveChannels', () => {
  let server: Server;
  after(() => server?.close());

  /** A session whose process echoes stdin to stdout upper-cased, exits with `code` once stdin ends. */
  function fakeSession(code: number): {
    session: StreamSession;
    resizes: TerminalSize[];
    closed: () => boolean;
  } {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const resizes: TerminalSize[] = [];
    let closed = false;
    stdin.on('data', (d: Buffer) => stdout.write(d.toString().toUpperCase()));
    const exitCode = new Promise<number>((resolve) =>
      stdin.on('end', () => {
        stderr.end('bye\n');
        stdout.end();
        resolve(code);
      }),
    );
    return {
      session: {
        stdin,
        stdout,
        stderr,
        resize: async (s) => void resizes.push(s),
        exitCode,
        close: () => (closed = true),
      },
      resizes,
      closed: () => closed,
    };
  }

  it('carries stdin, stdout, stderr, resize and the exit status (v5)', async () => {
    const fake = fakeSession(7);
    const wss = new WebSocketServer({
      noServer: true,
      handleProtocols: (p) => selectChannelProtocol(p) ?? false,
    });
    server = createServer();
    server.on('upgrade', (req, socket, head) =>
      wss.handleUpgrade(
        req,
        socket,
        head,
        (ws) => void serveChannels(ws, 'v5.channel.k8s.io', fake.session, ['x']),
      ),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const ws = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/`, [
      'v5.channel.k8s.io',
    ]);
    const got: Record<number, string> = {};
    ws.on('message', (d: Buffer) => (got[d[0]!] = (got[d[0]!] ?? '') + d.subarray(1).toString()));
    const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
    await new Promise((r) => ws.on('open', r));
    assert.equal(ws.protocol, 'v5.channel.k8s.io');
    ws.send(encodeChannelMessage(4, '{"Width":100,"Height":40}'));
    ws.send(encodeChannelMessage(0, 'hello '));
    ws.send(encodeChannelMessage(0, 'world'));
    ws.send(Buffer.from([255, 0]));
    assert.equal(await closed, 1000);
    assert.equal(got[1], 'HELLO WORLD');
    assert.equal(got[2], 'bye\n');
    const status = JSON.parse(got[3]!) as { details: { causes: { message: string }[] } };
    assert.equal(status.details.causes[0]!.message, '7');
    assert.deepEqual(fake.resizes, [{ width: 100, height: 40 }]);
    assert.equal(fake.closed(), false, 'a session that ended by itself is not closed');
  });
});
