import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import winston from 'winston';
import { createCA, signLeaf } from '../../api/tls/certs.js';
import { BootstrapError, bootstrapNodeCredential, checkPlainHTTP } from './bootstrap.js';

/** Listens on a free loopback port; resolves with the server's `http://` URL. */
async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('checkPlainHTTP', () => {
  const servers: Server[] = [];
  after(() => servers.forEach((s) => s.close()));

  it('refuses a port that hangs up on plain HTTP (a TLS port), naming the https:// URL to use', async () => {
    const tlsLike = createServer((socket) => socket.destroy());
    servers.push(tlsLike);
    const url = await listen(tlsLike);
    await assert.rejects(checkPlainHTTP(url), (err: Error) => {
      assert.ok(err instanceof BootstrapError);
      assert.match(err.message, /does not answer plain HTTP/);
      assert.ok(err.message.includes(`use --server ${url.replace('http:', 'https:')}`), err.message);
      return true;
    });
  });

  it('refuses a port that answers with something other than HTTP', async () => {
    const garbage = createServer((socket) => socket.end('\x15\x03\x01\x00\x02\x02\x46'));
    servers.push(garbage);
    await assert.rejects(checkPlainHTTP(await listen(garbage)), BootstrapError);
  });

  it('passes a plain HTTP server, whatever its status code', async () => {
    const asked: string[] = [];
    const plain = createHttpServer((req, res) => {
      asked.push(`${req.method} ${req.url}`);
      res.writeHead(401).end();
    });
    servers.push(plain);
    assert.equal(await checkPlainHTTP(await listen(plain)), 'http');
    assert.deepEqual(asked, ['GET /version']);
  });

  it('passes a server that accepts but does not answer in time (a slow server, not a TLS one)', async () => {
    const held: Socket[] = [];
    const silent = createServer((socket) => void held.push(socket));
    servers.push(silent);
    assert.equal(await checkPlainHTTP(await listen(silent), { timeoutMs: 100 }), 'no-answer');
    assert.equal(held.length, 1, 'it connected');
    held.forEach((socket) => socket.destroy());
  });

  it('passes a server that is not up yet (connection refused): the agent retries it', async () => {
    const gone = createServer();
    const url = await listen(gone);
    await new Promise<void>((resolve) => gone.close(() => resolve()));
    assert.equal(await checkPlainHTTP(url), 'unreachable');
  });
});

describe('bootstrapNodeCredential without a join token', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'k8ts-bootstrap-test-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));
  const logger = winston.createLogger({ silent: true });
  const attempt = (nodeName: string) =>
    bootstrapNodeCredential({ server: 'https://127.0.0.1:1', nodeName, dataDir, logger });

  it('says that nothing is stored yet', async () => {
    await assert.rejects(attempt('n1'), /^BootstrapError: no node credential is stored in .*; give --token/);
  });

  it('says whose the stored credential is when it belongs to another node, and uses it for that node', async () => {
    const ca = await createCA('k8ts-test-ca');
    const leaf = await signLeaf(ca, { usage: 'client', user: 'system:node:n1', groups: ['system:nodes'] });
    mkdirSync(join(dataDir, 'tls'), { recursive: true });
    writeFileSync(join(dataDir, 'tls', 'server-ca.crt'), ca.cert);
    writeFileSync(join(dataDir, 'tls', 'kubelet-client.crt'), leaf.cert);
    writeFileSync(join(dataDir, 'tls', 'kubelet-client.key'), leaf.key!);
    await assert.rejects(
      attempt('n2'),
      /the node credential in .* is system:node:n1's, not node n2's: run with --node-name n1, or give node n2 its own --data-dir$/,
    );
    assert.equal((await attempt('n1')).cert, leaf.cert);
    // A join token does not make n2 overwrite n1's credential.
    await assert.rejects(
      bootstrapNodeCredential({
        server: 'https://127.0.0.1:1',
        nodeName: 'n2',
        dataDir,
        logger,
        token: `K10${'0'.repeat(64)}::abcdef.0123456789abcdef`,
      }),
      /is system:node:n1's, not node n2's/,
    );
    assert.equal(readFileSync(join(dataDir, 'tls', 'kubelet-client.crt'), 'utf8'), leaf.cert);
  });

  it('says which files an incomplete credential lacks', async () => {
    rmSync(join(dataDir, 'tls', 'kubelet-client.key'));
    await assert.rejects(
      attempt('n1'),
      /the node credential in .* is incomplete \(missing kubelet-client\.key\); give --token/,
    );
  });
});
