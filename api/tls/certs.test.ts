import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { createServer, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { X509Certificate } from 'node:crypto';
import {
  caHash,
  certificateSubject,
  createCA,
  createCertificateRequest,
  isSignedBy,
  parseCertificateRequest,
  signLeaf,
  subjectAltNames,
} from './certs.js';

describe('certificates', () => {
  it('makes a P-256 CA and a serving certificate with its SANs, which node:crypto reads alike', async () => {
    const ca = await createCA('test-ca');
    const caCert = new X509Certificate(ca.cert);
    assert.equal(caCert.ca, true);
    assert.equal(caCert.subject, 'CN=test-ca');
    assert.equal(caCert.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    assert.match(ca.key, /^-----BEGIN PRIVATE KEY-----/);
    const serving = await signLeaf(ca, {
      usage: 'server',
      commonName: 'k8ts',
      sans: [
        { type: 'dns', value: 'localhost' },
        { type: 'ip', value: '127.0.0.1' },
        { type: 'ip', value: '10.1.2.3' },
      ],
    });
    const leaf = new X509Certificate(serving.cert);
    assert.equal(leaf.ca, false);
    assert.ok(leaf.verify(caCert.publicKey));
    assert.ok(leaf.checkIssued(caCert));
    assert.equal(leaf.subjectAltName, 'DNS:localhost, IP Address:127.0.0.1, IP Address:10.1.2.3');
    assert.deepEqual(subjectAltNames(serving.cert), [
      { type: 'dns', value: 'localhost' },
      { type: 'ip', value: '127.0.0.1' },
      { type: 'ip', value: '10.1.2.3' },
    ]);
    assert.ok(await isSignedBy(serving.cert, ca.cert));
    assert.ok(!(await isSignedBy(serving.cert, (await createCA('other')).cert)));
    const days = (Date.parse(leaf.validTo) - Date.now()) / 86_400_000;
    assert.ok(days > 364 && days <= 365, String(days));
  });

  it('hashes the CA as sha256 of its DER', async () => {
    const ca = await createCA('test-ca');
    assert.equal(
      caHash(ca.cert),
      createHash('sha256').update(new X509Certificate(ca.cert).raw).digest('hex'),
    );
    assert.throws(() => caHash('not pem'), /no PEM block/);
  });

  it('signs a certificate request and the client certificate authenticates over TLS', async () => {
    const ca = await createCA('test-ca');
    const serving = await signLeaf(ca, {
      usage: 'server',
      commonName: 'k8ts',
      sans: [{ type: 'ip', value: '127.0.0.1' }],
    });
    const { csr, key } = await createCertificateRequest('system:node:n1', ['system:nodes']);
    const parsed = await parseCertificateRequest(csr);
    assert.equal(parsed.commonName, 'system:node:n1');
    assert.deepEqual(parsed.organizations, ['system:nodes']);
    const { cert, key: noKey } = await signLeaf(
      ca,
      { usage: 'client', user: parsed.commonName, groups: parsed.organizations },
      { publicKey: parsed.publicKey },
    );
    assert.equal(noKey, undefined, 'the key stays with the requester');
    assert.deepEqual(certificateSubject(cert), {
      commonName: 'system:node:n1',
      organizations: ['system:nodes'],
    });
    const server = createServer(
      { cert: serving.cert, key: serving.key, ca: ca.cert, requestCert: true, rejectUnauthorized: false },
      (req: IncomingMessage, res) => {
        const socket = req.socket as TLSSocket;
        res.end(
          JSON.stringify({ authorized: socket.authorized, subject: socket.getPeerCertificate().subject }),
        );
      },
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as AddressInfo).port;
      const body = await new Promise<string>((resolve, reject) => {
        request({ host: '127.0.0.1', port, ca: ca.cert, cert, key }, (res) => {
          let t = '';
          res.on('data', (d: Buffer) => (t += d.toString()));
          res.on('end', () => resolve(t));
        })
          .on('error', reject)
          .end();
      });
      assert.deepEqual(JSON.parse(body), {
        authorized: true,
        subject: { O: 'system:nodes', CN: 'system:node:n1' },
      });
    } finally {
      server.close();
    }
  });

  it('refuses a request whose signature does not match its key', async () => {
    const { csr } = await createCertificateRequest('system:node:n1', ['system:nodes']);
    const b64 = csr
      .split('\n')
      .filter((l) => l && !l.startsWith('-----'))
      .join('');
    const der = Buffer.from(b64, 'base64');
    der[der.length - 5] ^= 0xff; // inside the signature
    const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    await assert.rejects(
      parseCertificateRequest(tampered),
      /not signed by its own key|not a PEM certificate request/,
    );
    await assert.rejects(parseCertificateRequest('garbage'), /not a PEM certificate request/);
  });
});
