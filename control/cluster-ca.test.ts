// Two control processes of one cluster (one store, two data dirs) serve and sign with one
// CA, the first one's: a client of one verifies, and is verified by, the other.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isSignedBy, signLeaf } from '../api/tls/certs.js';
import { clusterCA, CLUSTER_CA_STORE_KEY } from './cluster-ca.js';
import { ensureControlPKI, servingSANs, type ControlPKI } from './pki.js';
import { MemoryStore } from './storage/memory.js';

/** GET / on an https server with `serverPKI`'s serving certificate, as a client trusting `ca` with `client`. */
async function handshake(serverPKI: ControlPKI, ca: string, client: { cert: string; key: string }) {
  const srv = createServer(
    { cert: serverPKI.serving.cert, key: serverPKI.serving.key, ca: serverPKI.ca.cert, requestCert: true },
    (req, res) => res.end((req.socket as TLSSocket).authorized ? 'authorized' : 'anonymous'),
  );
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  try {
    const port = (srv.address() as AddressInfo).port;
    return await new Promise<string>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path: '/', ca, cert: client.cert, key: client.key },
        (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve(body));
        },
      );
      req.on('error', reject);
      req.end();
    });
  } finally {
    srv.closeAllConnections();
    await new Promise((r) => srv.close(r));
  }
}

describe('clusterCA', () => {
  const dirs: string[] = [];
  const dataDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'k8ts-clusterca-'));
    dirs.push(d);
    return d;
  };
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const sans = servingSANs('127.0.0.1', []);

  it('the second process adopts the first one’s CA and re-signs its serving and admin certificates', async () => {
    const store = new MemoryStore();
    const dirA = dataDir();
    const dirB = dataDir();
    const a = await clusterCA(store, await ensureControlPKI(dirA, sans), dirA, sans);
    const ownB = await ensureControlPKI(dirB, sans);
    assert.notEqual(ownB.ca.cert, a.ca.cert, 'each data dir starts with its own CA');
    const b = await clusterCA(store, ownB, dirB, sans);
    assert.equal(b.ca.cert, a.ca.cert);
    assert.equal(b.ca.key, a.ca.key);
    assert.ok(
      await isSignedBy(b.serving.cert, a.ca.cert),
      "b's serving certificate chains to the cluster CA",
    );
    assert.ok(await isSignedBy(b.admin.cert, a.ca.cert), "b's admin certificate chains to the cluster CA");
    for (const f of ['server-ca.crt', 'server-ca.key', 'serving.crt', 'serving.key', 'client-admin.crt']) {
      assert.equal(statSync(join(b.dir, f)).mode & 0o777, 0o600, f);
    }
    assert.equal(readFileSync(join(b.dir, 'server-ca.crt'), 'utf8'), a.ca.cert);

    // a's kubeconfig (its CA and admin certificate) works against b, and b's against a.
    assert.equal(await handshake(b, a.ca.cert, a.admin), 'authorized');
    assert.equal(await handshake(a, b.ca.cert, b.admin), 'authorized');
    // A node credential a signed is taken by b.
    const node = await signLeaf(a.ca, { usage: 'client', user: 'system:node:n1', groups: ['system:nodes'] });
    assert.equal(await handshake(b, a.ca.cert, { cert: node.cert, key: node.key! }), 'authorized');

    // A restart of b finds the adopted CA in its data dir: nothing changes.
    const again = await clusterCA(store, await ensureControlPKI(dirB, sans), dirB, sans);
    assert.equal(again.ca.cert, a.ca.cert);
    assert.equal(again.serving.cert, b.serving.cert);
    await store.close();
  });

  it('agrees when two processes start at once', async () => {
    const store = new MemoryStore();
    const [dA, dB] = [dataDir(), dataDir()];
    const [pa, pb] = await Promise.all([ensureControlPKI(dA, sans), ensureControlPKI(dB, sans)]);
    const [a, b] = await Promise.all([clusterCA(store, pa, dA, sans), clusterCA(store, pb, dB, sans)]);
    assert.equal(a.ca.cert, b.ca.cert);
    assert.ok(await isSignedBy(a.serving.cert, a.ca.cert));
    assert.ok(await isSignedBy(b.serving.cert, a.ca.cert));
    await store.close();
  });

  it('refuses a stored value that is no CA', async () => {
    const store = new MemoryStore();
    await store.create(CLUSTER_CA_STORE_KEY, JSON.stringify({ cert: 'nope', key: 'nope' }));
    const d = dataDir();
    await assert.rejects(clusterCA(store, await ensureControlPKI(d, sans), d, sans), /is not a certificate/);
    await store.close();
  });
});
