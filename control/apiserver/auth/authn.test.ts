// The x509 authenticator over real HTTPS: a client certificate is read once per
// connection, and a certificate that expires while its connection is kept alive stops
// authenticating on the next request, as kube-apiserver checks it on every request.
import assert from 'node:assert/strict';
import { request, Agent } from 'node:https';
import { TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { notAfter, signLeaf, type KeyPair } from '../../../api/tls/certs.js';
import { MemoryStore } from '../../storage/memory.js';
import type { ApiServer } from '../server.js';
import { startSecureApiServer } from './testing.js';

describe('x509 client certificates', () => {
  const store = new MemoryStore();
  let server: ApiServer;
  let url: string;
  let ca: KeyPair;
  let clock = new Date();

  before(async () => {
    ({ ca, server, url } = await startSecureApiServer(store, { now: () => clock }));
  });
  after(async () => {
    await server.stop();
    await store.close();
  });

  /** GETs `path` over `agent` (keep-alive: one TLS connection for all); resolves with the status code. */
  const get = (agent: Agent, path: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request(`${url}${path}`, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });

  it('reads the certificate once per connection, and refuses it once expired', async () => {
    const issued = new Date();
    const { cert, key } = await signLeaf(
      ca,
      { usage: 'client', user: 'root', groups: ['system:masters'] },
      { now: issued, days: 1 },
    );
    const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: ca.cert, cert, key: key! });
    let reads = 0;
    const original = TLSSocket.prototype.getPeerCertificate;
    TLSSocket.prototype.getPeerCertificate = function (this: TLSSocket, ...args: [boolean?]) {
      reads++;
      return original.apply(this, args as [true]);
    } as typeof original;
    try {
      // The first request's reads (the client's check of the server too) set the baseline.
      assert.equal(await get(agent, '/api/v1/namespaces'), 200);
      const first = reads;
      for (let i = 0; i < 4; i++) assert.equal(await get(agent, '/api/v1/namespaces'), 200);
      assert.equal(reads - first, 0, 'peer certificate reads for four more requests on the connection');
      // The same connection, after the certificate's end: 401.
      clock = new Date(notAfter(cert).getTime() + 1000);
      assert.equal(await get(agent, '/api/v1/namespaces'), 401);
    } finally {
      TLSSocket.prototype.getPeerCertificate = original;
      clock = new Date();
      agent.destroy();
    }
  });
});
