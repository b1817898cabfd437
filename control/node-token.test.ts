import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { KubeObject } from '../api/object.js';
import { caHash, createCA } from '../api/tls/certs.js';
import { parseJoinToken, secretStrings } from '../api/auth/bootstrap-token.js';
import { ensureNodeToken } from './main.js';

describe('ensureNodeToken', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8ts-node-token-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const created: KubeObject[] = [];
  const create = (s: KubeObject) => {
    created.push(s);
    return Promise.resolve();
  };

  it('writes a join token pinning the CA (0600) after storing its bootstrap token', async () => {
    const ca = await createCA('ca');
    const { token } = await ensureNodeToken(dir, ca.cert, create);
    const parsed = parseJoinToken(token);
    assert.equal(parsed.caHash, caHash(ca.cert));
    assert.equal(statSync(join(dir, 'node-token')).mode & 0o777, 0o600);
    assert.equal(created.length, 1);
    assert.equal(created[0]!.metadata?.name, `bootstrap-token-${parsed.id}`);
    assert.equal(secretStrings(created[0]!)['token-secret'], parsed.secret);
    // Kept on the next start, with nothing created.
    assert.deepEqual(await ensureNodeToken(dir, ca.cert, create), { token });
    assert.equal(created.length, 1);
    // A new CA: the old token could never join, so a new one is made.
    const other = await createCA('other');
    const renewed = await ensureNodeToken(dir, other.cert, create);
    assert.equal(parseJoinToken(renewed.token).caHash, caHash(other.cert));
    assert.equal(renewed.replaced, 'it does not pin the cluster CA');
    assert.equal(created.length, 2);
  });

  it('replaces a token from before TLS', async () => {
    writeFileSync(join(dir, 'node-token'), `K10${'a'.repeat(48)}\n`);
    const ca = await createCA('ca');
    const { token } = await ensureNodeToken(dir, ca.cert, create);
    assert.equal(parseJoinToken(token).caHash, caHash(ca.cert));
    assert.equal(readFileSync(join(dir, 'node-token'), 'utf8'), `${token}\n`);
  });

  it('keeps a token whose bootstrap token is stored, and replaces a revoked one', async () => {
    const ca = await createCA('ca');
    const stored = new Map<string, KubeObject>();
    const createStored = (secret: KubeObject) => {
      stored.set(secret.metadata!.name!, secret);
      return Promise.resolve();
    };
    const get = (name: string) => Promise.resolve(stored.get(name));
    const first = await ensureNodeToken(dir, ca.cert, createStored, get);
    assert.deepEqual(await ensureNodeToken(dir, ca.cert, createStored, get), { token: first.token });
    // k8ts token delete <id>: the Secret is gone; the next start writes a new token.
    stored.clear();
    const next = await ensureNodeToken(dir, ca.cert, createStored, get);
    const oldId = parseJoinToken(first.token).id;
    assert.notEqual(parseJoinToken(next.token).id, oldId);
    assert.equal(next.replaced, `its bootstrap token ${oldId} was revoked`);
    assert.equal(readFileSync(join(dir, 'node-token'), 'utf8'), `${next.token}\n`);
    assert.ok(stored.has(`bootstrap-token-${parseJoinToken(next.token).id}`));
  });
});
