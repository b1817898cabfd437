// Two control processes of one cluster (one store, two data dirs) sign service account
// tokens with one key: the first one's.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { MemoryStore } from './storage/memory.js';
import { ensureControlPKI } from './pki.js';
import { clusterServiceAccountKey, SERVICE_ACCOUNT_KEY_STORE_KEY } from './service-account-key.js';

describe('clusterServiceAccountKey', () => {
  const dirs: string[] = [];
  const dataDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'k8ts-sakey-'));
    dirs.push(d);
    return d;
  };
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('stores the first process key and makes the next adopt it, file 0600', async () => {
    const store = new MemoryStore();
    const a = await ensureControlPKI(dataDir(), []);
    const b = await ensureControlPKI(dataDir(), []);
    assert.notEqual(a.serviceAccountKey, b.serviceAccountKey, 'each data dir starts with its own');
    assert.equal(await clusterServiceAccountKey(store, a.serviceAccountKey, a.dir), a.serviceAccountKey);
    assert.equal(await clusterServiceAccountKey(store, b.serviceAccountKey, b.dir), a.serviceAccountKey);
    const file = join(b.dir, 'service-account.key');
    assert.equal(readFileSync(file, 'utf8'), a.serviceAccountKey);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    // A restart of b reads the adopted key from its data dir.
    assert.equal((await ensureControlPKI(join(b.dir, '..'), [])).serviceAccountKey, a.serviceAccountKey);
    await store.close();
  });

  it('agrees when two processes start at once', async () => {
    const store = new MemoryStore();
    const [a, b] = await Promise.all([ensureControlPKI(dataDir(), []), ensureControlPKI(dataDir(), [])]);
    const [ka, kb] = await Promise.all([
      clusterServiceAccountKey(store, a.serviceAccountKey, a.dir),
      clusterServiceAccountKey(store, b.serviceAccountKey, b.dir),
    ]);
    assert.equal(ka, kb);
    await store.close();
  });

  it('refuses a stored value that is no key', async () => {
    const store = new MemoryStore();
    await store.create(SERVICE_ACCOUNT_KEY_STORE_KEY, JSON.stringify({ key: 'nope' }));
    const a = await ensureControlPKI(dataDir(), []);
    await assert.rejects(clusterServiceAccountKey(store, a.serviceAccountKey, a.dir), /is not a private key/);
    await store.close();
  });
});
