// A kubernetes.io/tls Secret's pair checked as Go's tls.X509KeyPair (the Secret strategy's
// warningsForSecret): its error texts, and the warning of a mismatched pair.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { createCA, type KeyPair } from '../../../api/tls/certs.js';
import { secretStrategy } from './secrets.js';
import { x509KeyPairError } from './tls-keypair.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('tls.X509KeyPair of a TLS Secret', () => {
  let pair: KeyPair;
  let other: KeyPair;
  before(async () => {
    pair = await createCA('a');
    other = await createCA('b');
  });

  it('a matching pair passes', () => {
    assert.equal(x509KeyPairError(pair.cert, pair.key), undefined);
  });

  it("crypto/tls's messages for what is missing, switched or mismatched", () => {
    assert.equal(x509KeyPairError('', pair.key), 'tls: failed to find any PEM data in certificate input');
    assert.equal(
      x509KeyPairError(pair.key, pair.cert),
      'tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM inputs may have been switched',
    );
    assert.equal(x509KeyPairError(pair.cert, 'junk'), 'tls: failed to find any PEM data in key input');
    assert.equal(
      x509KeyPairError(pair.cert, pair.cert),
      'tls: found a certificate rather than a key in the PEM for the private key',
    );
    assert.equal(x509KeyPairError(pair.cert, other.key), 'tls: private key does not match public key');
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({
      type: 'pkcs1',
      format: 'pem',
    });
    assert.equal(
      x509KeyPairError(pair.cert, rsa.toString()),
      'tls: private key type does not match public key type',
    );
    assert.equal(
      x509KeyPairError(pair.cert, '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n'),
      'tls: failed to parse private key',
    );
  });

  it('the Secret strategy warns on create and update of a kubernetes.io/tls Secret only', () => {
    const secret = {
      metadata: { name: 's' },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': b64(pair.cert), 'tls.key': b64(other.key) },
    };
    assert.deepEqual(secretStrategy.warningsOnCreate!(secret), [
      'tls: private key does not match public key',
    ]);
    assert.deepEqual(secretStrategy.warningsOnUpdate!(secret, secret), [
      'tls: private key does not match public key',
    ]);
    assert.deepEqual(secretStrategy.warningsOnCreate!({ ...secret, type: 'Opaque' }), []);
    const good = { ...secret, data: { 'tls.crt': b64(pair.cert), 'tls.key': b64(pair.key) } };
    assert.deepEqual(secretStrategy.warningsOnCreate!(good), []);
  });
});
