import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dockerConfigEntries, lookupCredentials } from './pull-secrets.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const secret = (type: string, field: string, value: unknown) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 's' },
  type,
  data: { [field]: b64(typeof value === 'string' ? value : JSON.stringify(value)) },
});

describe('dockerConfigEntries', () => {
  it('dockerconfigjson auths, keys without scheme or /v1/, auth split into username and password', () => {
    const s = secret('kubernetes.io/dockerconfigjson', '.dockerconfigjson', {
      auths: {
        'https://index.docker.io/v1/': { auth: b64('ann:a:b') },
        'http://r.example:5000/team/': { username: 'bob', password: 'pw' },
      },
    });
    assert.deepEqual(dockerConfigEntries(s), [
      { key: 'index.docker.io', auth: { username: 'ann', password: 'a:b', auth: b64('ann:a:b') } },
      { key: 'r.example:5000/team', auth: { username: 'bob', password: 'pw' } },
    ]);
  });
  it('dockercfg is the auths themselves; other types and bad JSON give nothing', () => {
    assert.deepEqual(
      dockerConfigEntries(secret('kubernetes.io/dockercfg', '.dockercfg', { 'r:1': { username: 'u' } })),
      [{ key: 'r:1', auth: { username: 'u' } }],
    );
    assert.deepEqual(dockerConfigEntries(secret('Opaque', '.dockerconfigjson', { auths: { r: {} } })), []);
    assert.deepEqual(
      dockerConfigEntries(secret('kubernetes.io/dockerconfigjson', '.dockerconfigjson', '{')),
      [],
    );
  });
});

describe('lookupCredentials', () => {
  const e = (key: string, username: string) => ({ key, auth: { username } });
  const users = (entries: ReturnType<typeof e>[], image: string) =>
    lookupCredentials(entries, image).map((a) => a.username);
  it('host and port must match; paths by prefix, longest first; host globs per label', () => {
    const entries = [
      e('r:5000', 'host'),
      e('r:5000/team', 'team'),
      e('r.lan', 'noport'),
      e('*.example.com', 'glob'),
    ];
    assert.deepEqual(users(entries, 'r:5000/team/app:1'), ['team', 'host']);
    assert.deepEqual(users(entries, 'r:5000/other/app:1'), ['host']);
    assert.deepEqual(users(entries, 'r.lan/app'), ['noport']);
    assert.deepEqual(users(entries, 'reg.example.com/app'), ['glob']);
    assert.deepEqual(users(entries, 'a.reg.example.com/app'), []);
    assert.deepEqual(users(entries, 'r:5001/app'), []);
  });
  it("docker.io's images: docker.io keys, else index.docker.io's", () => {
    assert.deepEqual(users([e('index.docker.io', 'idx')], 'busybox'), ['idx']);
    assert.deepEqual(users([e('index.docker.io', 'idx'), e('docker.io', 'd')], 'library/busybox:1'), ['d']);
  });
});
