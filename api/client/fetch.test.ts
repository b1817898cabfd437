// configuredFetch over TLS: the CA and client certificate are used, and its connections are
// kept alive and share one TLS context (the leader elections renew a Lease every 2 s with it).
import assert from 'node:assert/strict';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it, mock } from 'node:test';
import tls, { type TLSSocket } from 'node:tls';
import { createCA, signLeaf } from '../tls/certs.js';
import { configuredFetch } from './fetch.js';

describe('configuredFetch', () => {
  let server: https.Server;
  let url = '';
  let ca = '';
  let client: { cert: string; key?: string };
  let connections = 0;
  before(async () => {
    const authority = await createCA('fetch-test-ca');
    ca = authority.cert;
    const serving = await signLeaf(authority, {
      usage: 'server',
      commonName: '127.0.0.1',
      sans: [{ type: 'ip', value: '127.0.0.1' }],
    });
    client = await signLeaf(authority, { usage: 'client', user: 'alice', groups: [] });
    server = https.createServer(
      { cert: serving.cert, key: serving.key, ca, requestCert: true, rejectUnauthorized: false },
      (req, res) => {
        const cn = (req.socket as TLSSocket).getPeerCertificate()?.subject?.CN ?? null;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ cn }));
      },
    );
    server.keepAliveTimeout = 60_000;
    server.on('secureConnection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('presents the client certificate, and sends one request after another over one connection and one TLS context', async () => {
    const f = configuredFetch({ ca, cert: client.cert, key: client.key! });
    // Node's tls.connect makes a context of its own (tls.createSecureContext) for a connection given none.
    const made = mock.method(tls, 'createSecureContext');
    connections = 0;
    try {
      for (let i = 0; i < 3; i++) assert.deepEqual(await (await f(url)).json(), { cn: 'alice' });
      assert.equal(connections, 1, 'a connection per request');
      assert.equal(made.mock.callCount(), 0, 'a TLS context per connection');
    } finally {
      made.mock.restore();
    }
    await assert.rejects(configuredFetch({})(url), /self[- ]signed|unable to verify|certificate/i);
  });
});
