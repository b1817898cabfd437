// The built `k8ts` binary (dist/cli.js, what the package's bin maps to) as a user runs it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

describe('k8ts agent flags', () => {
  const cases: [string[], RegExp][] = [
    [['agent', '--token', 't'], /--server URL is required/],
    [
      ['agent', '--server', 'localhost:6443', '--token', 't'],
      /--server must be an http:\/\/ or https:\/\/ URL/,
    ],
    [['agent', '--server', 'http://127.0.0.1:1'], /--token or --token-file is required/],
    [
      ['agent', '--server', 'http://127.0.0.1:1', '--token-file', '/nonexistent-k8ts-token'],
      /cannot read --token-file/,
    ],
    [
      ['agent', '--server', 'http://127.0.0.1:1', '--token', 't', '--node-ip', 'x'],
      /--node-ip must be an IP address/,
    ],
    [
      ['agent', '--server', 'http://127.0.0.1:1', '--token', 't', '--cni-conf-dir', '/tmp/cni'],
      /--cni-conf-dir is for --runtime containerd/,
    ],
    [
      [
        'agent',
        '--server',
        'http://127.0.0.1:1',
        '--token',
        't',
        '--runtime',
        'containerd',
        '--container-runtime-endpoint',
        'tcp://127.0.0.1:1',
      ],
      /--container-runtime-endpoint must be a unix socket URL/,
    ],
    [
      ['agent', '--server', 'http://127.0.0.1:1', '--token', 't', '--runtime', 'rkt'],
      /--runtime must be docker or containerd, got rkt/,
    ],
    [
      ['agent', '--server', 'http://127.0.0.1:1', '--token', 't', '--log-level', 'loud'],
      /--log-level must be one of/,
    ],
  ];
  for (const [args, message] of cases) {
    it(`refuses ${args.slice(1).join(' ')} with exit code 2 and a message saying what to fix`, () => {
      const r = k8ts(...args);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.equal(r.stdout, '');
    });
  }
});

describe('k8ts token and kubeconfig flags', () => {
  const cases: [string[], RegExp][] = [
    [['token'], /usage: k8ts token create/],
    [['token', 'revoke'], /usage: k8ts token create/],
    [['token', 'delete'], /token delete takes one token id/],
    [['token', 'create', 'extra'], /token create takes no arguments/],
    [['token', 'create', '--ttl', 'soon'], /--ttl must be a duration/],
    [['kubeconfig', '--group', 'devs'], /--group needs --user/],
    [['kubeconfig', '--user', 'system:admin'], /--user must be a name outside system:/],
  ];
  for (const [args, message] of cases) {
    it(`refuses ${args.join(' ')} with exit code 2`, () => {
      const r = k8ts(...args);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, message);
    });
  }

  it('agent: a token that is not a join token is refused before anything is contacted (exit 1)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'k8ts-cli-agent-'));
    try {
      const r = k8ts(
        'agent',
        '--server',
        'https://127.0.0.1:1',
        '--token',
        'abcdef.0123456789abcdef',
        '--node-ip',
        '127.0.0.1',
        '--data-dir',
        dir,
      );
      assert.equal(r.status, 1, r.stderr);
      assert.match(
        r.stderr,
        /^k8ts agent: invalid join token: the token must be a join token K10<CA hash>::<id>.<secret>/m,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('k8ts server flags', () => {
  const cases: [string[], RegExp][] = [
    [
      ['server', '--port', '0', '--node-ip', '10.0.0'],
      /--node-ip must be an IP address of this host, got "10.0.0"/,
    ],
    [['server', '--port', '0', '--node-name', 'Not_A_Name'], /--node-name must be a lowercase DNS subdomain/],
    [['server', '--disable-agent', '--port', 'abc'], /--port must be 0–65535, got abc/],
    [
      ['server', '--disable-agent', '--datastore', 'mysql'],
      /--datastore must be sqlite, etcd or memory, got mysql/,
    ],
    [['server', '--disable-agent', '--datastore', 'etcd'], /--datastore etcd needs --etcd-endpoints/],
    [
      ['server', '--disable-agent', '--log-level', 'loud'],
      /--log-level must be one of error, warn, info, debug/,
    ],
    [
      ['server', '--disable-agent', '--etcd-compaction-interval', '5x'],
      /--etcd-compaction-interval must be a duration such as 30s, 5m or 1h/,
    ],
    [
      ['server', '--disable-agent', '--min-request-timeout', '0'],
      /--min-request-timeout must be a positive number of seconds/,
    ],
    [['server', '--disable-agent', '--no-such-flag'], /Unknown option '--no-such-flag'/],
    [
      ['server', '--disable-agent', '--pod-security-default-level', 'strict'],
      /--pod-security-default-level must be one of privileged, baseline, restricted, got strict/,
    ],
    [
      ['server', '--disable-agent', '--pod-security-admission-config-file', '/nonexistent-k8ts-psa.yaml'],
      /--pod-security-admission-config-file \/nonexistent-k8ts-psa.yaml: ENOENT/,
    ],
  ];
  for (const [args, message] of cases) {
    it(`refuses ${args.slice(1).join(' ')} with exit code 2 and a message saying what to fix`, () => {
      const r = k8ts(...args);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, message);
    });
  }

  it('kubeconfig says where to start the server when the data dir has none', () => {
    const r = k8ts('kubeconfig', '--data-dir', '/nonexistent-k8ts-dir');
    assert.equal(r.status, 2);
    assert.match(r.stderr, /no kubeconfig at \/nonexistent-k8ts-dir\/kubeconfig\.yaml; start 'k8ts server'/);
  });
});
