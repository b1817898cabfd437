import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { KubeconfigError, loadKubeconfig, parseKubeconfig } from './kubeconfig.js';

const dir = mkdtempSync(join(tmpdir(), 'k8ts-kubeconfig-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function config(cluster: Record<string, unknown>, user: Record<string, unknown> = {}, extra = {}) {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster }],
    users: [{ name: 'u', user }],
    contexts: [
      { name: 'ctx', context: { cluster: 'c', user: 'u', namespace: 'team' } },
      { name: 'other', context: { cluster: 'c' } },
    ],
    'current-context': 'ctx',
    ...extra,
  });
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('kubeconfig', () => {
  it('reads the kubeconfig k8ts server writes', () => {
    const k = parseKubeconfig(
      config({ server: 'http://127.0.0.1:6443', 'insecure-skip-tls-verify': true }, {}),
    );
    assert.deepEqual(k, {
      context: 'ctx',
      namespace: 'team',
      config: { server: 'http://127.0.0.1:6443', insecureSkipTLSVerify: true },
    });
  });

  it('decodes -data fields', () => {
    const k = parseKubeconfig(
      config(
        { server: 'https://h:6443', 'certificate-authority-data': b64('CA PEM'), 'tls-server-name': 'api' },
        { token: 'tok', 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') },
      ),
    );
    assert.deepEqual(k.config, {
      server: 'https://h:6443',
      ca: 'CA PEM',
      tlsServerName: 'api',
      token: 'tok',
      cert: 'CERT',
      key: 'KEY',
    });
  });

  it('reads files relative to the kubeconfig', () => {
    writeFileSync(join(dir, 'ca.crt'), 'CA FILE');
    writeFileSync(join(dir, 'client.crt'), 'CERT FILE');
    writeFileSync(join(dir, 'client.key'), 'KEY FILE');
    writeFileSync(join(dir, 'token'), 'file-token\n');
    const path = join(dir, 'kubeconfig.yaml');
    writeFileSync(
      path,
      config(
        { server: 'https://h:6443', 'certificate-authority': 'ca.crt' },
        { tokenFile: 'token', 'client-certificate': 'client.crt', 'client-key': join(dir, 'client.key') },
      ),
    );
    assert.deepEqual(loadKubeconfig(path).config, {
      server: 'https://h:6443',
      ca: 'CA FILE',
      token: 'file-token',
      cert: 'CERT FILE',
      key: 'KEY FILE',
    });
  });

  it('uses another context when asked', () => {
    const k = parseKubeconfig(config({ server: 'http://x' }, { token: 't' }), { context: 'other' });
    assert.deepEqual(k, { context: 'other', config: { server: 'http://x' } });
  });

  it('refuses what it cannot use', () => {
    const cases: [string, string, RegExp][] = [
      ['missing file', 'MISSING', /cannot read kubeconfig/],
      ['bad yaml', '{', /not valid YAML/],
      [
        'no current-context',
        config({ server: 'http://x' }, {}, { 'current-context': '' }),
        /no current-context/,
      ],
      [
        'unknown context',
        config({ server: 'http://x' }, {}, { 'current-context': 'nope' }),
        /no context named "nope"/,
      ],
      ['no server', config({}), /has no server/],
      [
        'exec plugin',
        config({ server: 'http://x' }, { exec: { command: 'x' } }),
        /exec credentials are not supported/,
      ],
      [
        'cert without key',
        config({ server: 'http://x' }, { 'client-certificate-data': b64('C') }),
        /needs its key/,
      ],
      [
        'missing CA file',
        config({ server: 'http://x', 'certificate-authority': 'nope.crt' }),
        /cannot read certificate-authority/,
      ],
    ];
    for (const [name, text, want] of cases) {
      const run = () =>
        text === 'MISSING'
          ? loadKubeconfig(join(dir, 'missing.yaml'))
          : parseKubeconfig(text, { baseDir: dir });
      assert.throws(run, (err: Error) => err instanceof KubeconfigError && want.test(err.message), name);
    }
  });
});
