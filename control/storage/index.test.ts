import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
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

it('the sqlite store is owner-only: DATA_DIR/db 0700, state.db and its WAL 0600, also when they existed with wider modes', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'k8ts-openstore-'));
  const mode = (p: string) => statSync(p).mode & 0o777;
  try {
    const db = join(dataDir, 'db');
    let s = await openStore({ datastore: 'sqlite', dataDir });
    await s.create('/registry/secrets/default/a', '{}');
    assert.equal(mode(db), 0o700);
    assert.equal(mode(sqlitePath(dataDir)), 0o600);
    assert.equal(mode(`${sqlitePath(dataDir)}-wal`), 0o600);
    await s.close();
    // As an older k8ts left them (the umask's 0755 and 0644).
    chmodSync(db, 0o755);
    chmodSync(sqlitePath(dataDir), 0o644);
    writeFileSync(`${sqlitePath(dataDir)}-wal`, '', { mode: 0o644 });
    chmodSync(`${sqlitePath(dataDir)}-wal`, 0o644);
    s = await openStore({ datastore: 'sqlite', dataDir });
    await s.create('/registry/secrets/default/b', '{}');
    assert.equal(mode(db), 0o700);
    assert.equal(mode(sqlitePath(dataDir)), 0o600);
    assert.equal(mode(`${sqlitePath(dataDir)}-wal`), 0o600);
    await s.close();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
