import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { openStore, sqlitePath } from './index.js';

it('opens the sqlite store in the data dir and finds its data again', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'k8ts-openstore-'));
  try {
    const s = await openStore({ datastore: 'sqlite', dataDir });
    assert.equal(s.backend, 'sqlite');
    await s.create('/registry/namespaces/default', '{}');
    await s.close();
    assert.ok(statSync(sqlitePath(dataDir)).isFile());
    const again = await openStore({ datastore: 'sqlite', dataDir });
    assert.equal((await again.get('/registry/namespaces/default'))?.value, '{}');
    await again.close();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

it('opens the memory store', async () => {
  const s = await openStore({ datastore: 'memory' });
  assert.equal(s.backend, 'memory');
  await s.close();
});

it('refuses etcd without endpoints, naming the flag', async () => {
  await assert.rejects(openStore({ datastore: 'etcd', endpoints: [] }), /--etcd-endpoints/);
});
