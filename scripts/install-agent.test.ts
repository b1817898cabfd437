/**
 * scripts/install-agent.sh without installing anything: its dry run (K8TS_DRY_RUN=1 prints
 * each step and the agent's command line) for Docker and containerd agents and its flag
 * errors; and lib/install-common.sh's install_packages against stub dpkg-query and apt-get
 * (first in PATH, in a temp dir), which record what would be installed. The script checks
 * for root and apt-get first, so without them this file is skipped.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./install-agent.sh', import.meta.url));
const COMMON = fileURLToPath(new URL('./lib/install-common.sh', import.meta.url));
const SKIP = process.getuid?.() !== 0 ? 'install-agent.sh runs as root only' : false;

function run(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', args, { env: { ...process.env, ...env }, timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const JOIN = ['--server', 'https://10.0.0.1:6443', '--token', 'K10abc', '--node-name', 'w1'];

describe('scripts/install-agent.sh', { skip: SKIP }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8ts-install-test-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('--runtime containerd: containerd started before the images are built and imported, the flag passed to the agent', async () => {
    const r = await run([SCRIPT, ...JOIN, '--runtime', 'containerd'], { K8TS_DRY_RUN: '1' });
    assert.equal(r.code, 0, r.stderr);
    const steps = r.stdout
      .trim()
      .split('\n')
      .map((l) => l.replace(/^dry-run: /, ''));
    assert.deepEqual(
      steps.map((s) => s.split(' ')[0]),
      [
        'install_packages',
        'require_node',
        'start_docker',
        'start_containerd',
        'build_k8ts',
        'build_images',
        'write_token',
        'run_service',
      ],
    );
    assert.equal(
      steps.at(-1),
      'run_service k8ts-agent k8ts\\ agent agent --server https://10.0.0.1:6443 --token-file /var/lib/k8ts-agent/token --data-dir /var/lib/k8ts-agent --node-name w1 --runtime containerd',
    );
  });

  it('Docker (the default): no containerd step, no --runtime', async () => {
    const r = await run([SCRIPT, ...JOIN], { K8TS_DRY_RUN: '1' });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /start_containerd|--runtime/);
  });

  it('an unknown runtime, or no server: an error, nothing done', async () => {
    const bad = await run([SCRIPT, ...JOIN, '--runtime', 'cri-o'], { K8TS_DRY_RUN: '1' });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--runtime must be docker or containerd, got cri-o/);
    assert.equal(bad.stdout, '');
    const none = await run([SCRIPT, '--token', 't'], { K8TS_DRY_RUN: '1', K8TS_URL: '' });
    assert.equal(none.code, 1);
    assert.match(none.stderr, /--server URL/);
  });

  it('install_packages asks apt-get for containerd, runc and containernetworking-plugins', async () => {
    const bin = join(dir, 'bin');
    const log = join(dir, 'apt.log');
    rmSync(bin, { recursive: true, force: true });
    const stub = (name: string, body: string) => {
      const p = join(bin, name);
      writeFileSync(p, `#!/bin/sh\n${body}\n`);
      chmodSync(p, 0o755);
    };
    mkdirSync(bin, { recursive: true });
    stub('dpkg-query', 'exit 1'); // nothing installed
    stub('apt-get', `echo "$*" >>${log}`);
    stub('kubectl', 'exit 0');
    const r = await run(['-c', `source ${COMMON}; install_packages`], { PATH: `${bin}:${process.env.PATH}` });
    assert.equal(r.code, 0, r.stderr);
    const install = readFileSync(log, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('install'));
    assert.ok(install, readFileSync(log, 'utf8'));
    for (const p of [
      'containerd',
      'runc',
      'containernetworking-plugins',
      'docker.io',
      'iproute2',
      'nftables',
    ])
      assert.ok(install.split(' ').includes(p), `${p} in: ${install}`);
  });
});
