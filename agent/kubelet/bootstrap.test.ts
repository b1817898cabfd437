import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { after, describe, it } from 'node:test';
import { BootstrapError, checkPlainHTTP } from './bootstrap.js';

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
    const plain = createHttpServer((_, res) => res.writeHead(401).end());
    servers.push(plain);
    await checkPlainHTTP(await listen(plain));
  });

  it('passes a server that is not up yet (connection refused): the agent retries it', async () => {
    const gone = createServer();
    const url = await listen(gone);
    await new Promise<void>((resolve) => gone.close(() => resolve()));
    await checkPlainHTTP(url);
  });
});
