// `k8ts token create`'s tokens against a secure in-process API server, through the data
// dir's admin kubeconfig as the command reads it: 24 h unless told (kubeadm's default),
// `--ttl 0` never expires.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { signLeaf } from '../api/tls/certs.js';
import type { ApiServer } from './apiserver/server.js';
import { kubeconfig } from './main.js';
import { MemoryStore } from './storage/memory.js';
import { createToken, DEFAULT_TOKEN_TTL_SECONDS, listTokens } from './tokens.js';
import { startSecureApiServer } from './apiserver/auth/testing.js';

describe('k8ts token create', () => {
  const store = new MemoryStore();
  const dataDir = mkdtempSync(join(tmpdir(), 'k8ts-tokens-'));
  let server: ApiServer;
  before(async () => {
    const started = await startSecureApiServer(store);
    server = started.server;
    const { ca, url } = started;
    const admin = await signLeaf(ca, { usage: 'client', user: 'root', groups: ['system:masters'] });
    writeFileSync(
      join(dataDir, 'kubeconfig.yaml'),
      kubeconfig(url, { ca, admin: { cert: admin.cert, key: admin.key! } }),
      {
        mode: 0o600,
      },
    );
  });
  after(async () => {
    await server.stop();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const expiryOf = async (token: string) => {
    const id = token.split('::')[1]!.split('.')[0]!;
    return (await listTokens(dataDir)).find((t) => t.id === id)?.expires;
  };

  it('expires in 24 h unless told otherwise; --ttl 0 never expires', async () => {
    assert.equal(DEFAULT_TOKEN_TTL_SECONDS, 86400);
    const before = Date.now();
    const expires = await expiryOf(await createToken(dataDir));
    assert.ok(expires, 'the default token expires');
    const left = Date.parse(expires) - before;
    assert.ok(left > 86400_000 - 5_000 && left <= 86400_000 + 5_000, `expires in 24 h, not ${left} ms`);
    const hour = Date.parse((await expiryOf(await createToken(dataDir, { ttlSeconds: 3600 })))!) - before;
    assert.ok(hour > 3595_000 && hour <= 3605_000);
    assert.equal(await expiryOf(await createToken(dataDir, { ttlSeconds: 0 })), undefined);
  });
});
