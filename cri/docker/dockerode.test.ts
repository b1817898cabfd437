/**
 * The docker adapter loads dockerode without ssh2 and gRPC (dockerode.ts): they are loaded
 * on the first call of docker-modem's SSH transport or dockerode's BuildKit session, which
 * then behave as before. Each case runs in a child process, whose module cache is its own.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const RUNTIME = fileURLToPath(new URL('./runtime.ts', import.meta.url));

/**
 * Runs `body` (an ES module's text, with `runtime` the adapter's module and `loaded(pkg)`
 * whether a file of node_modules/pkg is in the CommonJS module cache) in a child; returns
 * what it printed, parsed as JSON.
 */
function inChild(body: string): unknown {
  const script = `
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const loaded = (pkg) => Object.keys(require.cache).some((f) => f.includes('/node_modules/' + pkg + '/'));
const runtime = await import(${JSON.stringify(RUNTIME)});
${body}
`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    cwd: fileURLToPath(new URL('.', import.meta.url)),
  });
  return JSON.parse(out.trim().split('\n').at(-1)!);
}

describe('docker adapter: dockerode without ssh2 and gRPC', () => {
  it('loading the adapter loads dockerode and docker-modem, not ssh2, @grpc/grpc-js or protobufjs', () => {
    const seen = inChild(`
console.log(JSON.stringify({
  runtime: typeof runtime.DockerRuntime,
  dockerode: loaded('dockerode'),
  modem: loaded('docker-modem'),
  ssh2: loaded('ssh2'),
  grpc: loaded('@grpc/grpc-js'),
  protobufjs: loaded('protobufjs'),
}));
`);
    assert.deepEqual(seen, {
      runtime: 'function',
      dockerode: true,
      modem: true,
      ssh2: false,
      grpc: false,
      protobufjs: false,
    });
  });

  it("docker-modem's SSH transport loads ssh2 on its first call and gives its http.Agent", () => {
    const seen = inChild(`
const http = await import('node:http');
const ssh = require(require.resolve('docker-modem/lib/ssh.js', { paths: [require.resolve('dockerode')] }));
const before = loaded('ssh2');
// No connection is made until the agent is asked for one.
const agent = ssh({ host: '198.18.0.1', port: 22, username: 'nobody' });
const again = ssh({ host: '198.18.0.1', port: 22, username: 'nobody' });
console.log(JSON.stringify({
  before,
  after: loaded('ssh2'),
  agent: agent instanceof http.Agent && typeof agent.createConnection === 'function',
  distinct: agent !== again,
}));
`);
    assert.deepEqual(seen, { before: false, after: true, agent: true, distinct: true });
  });

  it("dockerode's BuildKit session loads gRPC on its first call and dials as before", () => {
    const seen = inChild(`
const withSession = require(require.resolve('dockerode/lib/session.js'));
const before = loaded('@grpc/grpc-js');
let dialed;
const docker = { modem: { dial: (opts, cb) => ((dialed = opts.path), cb(new Error('no daemon here'))) } };
const err = await new Promise((resolve) => withSession(docker, undefined, (e) => resolve(String(e))));
console.log(JSON.stringify({ before, after: loaded('@grpc/grpc-js'), dialed, err }));
`);
    assert.deepEqual(seen, { before: false, after: true, dialed: '/session', err: 'Error: no daemon here' });
  });
});
