import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { certificateSubject, isSignedBy, subjectAltNames } from '../api/tls/certs.js';
import { ensureControlPKI, servingSANs } from './pki.js';

describe('ensureControlPKI', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8ts-pki-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const files = [
    'server-ca.crt',
    'server-ca.key',
    'serving.crt',
    'serving.key',
    'client-admin.crt',
    'client-admin.key',
  ];

  it('creates the CA, serving and admin certificates, owner-only', async () => {
    const pki = await ensureControlPKI(dir, servingSANs('127.0.0.1', ['k8ts.example', '10.9.8.7']));
    assert.equal(statSync(join(dir, 'tls')).mode & 0o777, 0o700);
    for (const f of files) assert.equal(statSync(join(dir, 'tls', f)).mode & 0o777, 0o600, f);
    assert.ok(await isSignedBy(pki.serving.cert, pki.ca.cert));
    assert.ok(await isSignedBy(pki.admin.cert, pki.ca.cert));
    assert.deepEqual(certificateSubject(pki.admin.cert), {
      commonName: 'system:admin',
      organizations: ['system:masters'],
    });
    const sans = subjectAltNames(pki.serving.cert);
    for (const want of [
      { type: 'dns', value: 'localhost' },
      { type: 'ip', value: '127.0.0.1' },
      { type: 'dns', value: 'k8ts.example' },
      { type: 'ip', value: '10.9.8.7' },
    ])
      assert.ok(
        sans.some((s) => s.type === want.type && s.value === want.value),
        JSON.stringify(want),
      );
  });

  it('reuses everything on the next start', async () => {
    const before = files.map((f) => readFileSync(join(dir, 'tls', f), 'utf8'));
    await ensureControlPKI(dir, servingSANs('127.0.0.1', ['k8ts.example', '10.9.8.7']));
    assert.deepEqual(
      files.map((f) => readFileSync(join(dir, 'tls', f), 'utf8')),
      before,
    );
  });

  it('re-signs only the serving certificate (same CA) when a SAN is new', async () => {
    const ca = readFileSync(join(dir, 'tls', 'server-ca.crt'), 'utf8');
    const admin = readFileSync(join(dir, 'tls', 'client-admin.crt'), 'utf8');
    const pki = await ensureControlPKI(dir, servingSANs('127.0.0.1', ['new.example']));
    assert.equal(pki.ca.cert, ca);
    assert.equal(pki.admin.cert, admin);
    assert.ok(subjectAltNames(pki.serving.cert).some((s) => s.value === 'new.example'));
    assert.ok(await isSignedBy(pki.serving.cert, ca));
  });

  it('servingSANs leaves out wildcard bind addresses and duplicates', () => {
    const sans = servingSANs('0.0.0.0', ['localhost', '127.0.0.1', 'Host.Example']);
    assert.ok(!sans.some((s) => s.value === '0.0.0.0'));
    assert.equal(sans.filter((s) => s.value === 'localhost').length, 1);
    assert.ok(sans.some((s) => s.type === 'dns' && s.value === 'host.example'));
  });
});
