// The built `k8ts` binary (dist/cli.js, what the package's bin maps to) as a user runs it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const k8ts = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });

describe('k8ts CLI', () => {
  it('prints help with the commands of the CLI contract', () => {
    for (const args of [[], ['help'], ['--help']]) {
      const r = k8ts(...args);
      assert.equal(r.status, 0, r.stderr);
      for (const word of ['k8ts server', 'k8ts agent', 'k8ts kubeconfig', '--data-dir', '--datastore']) {
        assert.match(r.stdout, new RegExp(word));
      }
    }
  });

  it('prints the package version', () => {
    const r = k8ts('version');
    assert.equal(r.status, 0);
    assert.match(r.stdout, /^k8ts v\d+\.\d+\.\d+\n$/);
  });

  it('refuses an unknown command with exit code 2 and says what to run', () => {
    const r = k8ts('sevrer');
    assert.equal(r.status, 2);
    assert.match(r.stderr, /unknown command "sevrer"; run 'k8ts help'/);
    assert.equal(r.stdout, '');
  });
});
