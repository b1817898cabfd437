import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { CriError } from '../../../cri/index.js';
import type { KubeletContainer } from '../pods/types.js';
import { PROBE_USER_AGENT, probeExec, probeHttp, probeTcp, resolvePort, runProbe } from './probe.js';

const container: KubeletContainer = { name: 'app', ports: [{ name: 'http', containerPort: 8080 }] };

describe('probes', () => {
  let server: Server;
  let port = 0;
  let seenHeaders: Record<string, string | string[] | undefined> = {};
  before(async () => {
    server = createServer((req, res) => {
      seenHeaders = req.headers;
      if (req.url === '/slow') return; // never answers
      const code = Number(req.url?.slice(1)) || 200;
      res.writeHead(code);
      res.end('body');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  const target = { podIP: '127.0.0.1', containerId: 'c1', container };

  for (const [code, want] of [
    [200, 'Success'],
    [204, 'Success'],
    [302, 'Warning'],
    [399, 'Warning'],
    [404, 'Failure'],
    [503, 'Failure'],
  ] as const) {
    it(`httpGet: status ${code} → ${want}`, async () => {
      const r = await probeHttp({ port, path: `/${code}` }, target, 1);
      assert.equal(r.result, want);
      if (want === 'Failure') assert.equal(r.output, `HTTP probe failed with statuscode: ${code}`);
      if (want === 'Warning') assert.equal(r.output, 'Probe terminated redirects, Response body: body');
    });
  }

  it('httpGet sends the kubelet user agent and the probe headers', async () => {
    await probeHttp({ port, path: '/200', httpHeaders: [{ name: 'X-Probe', value: 'yes' }] }, target, 1);
    assert.equal(seenHeaders['user-agent'], PROBE_USER_AGENT);
    assert.equal(seenHeaders['x-probe'], 'yes');
  });

  it('httpGet: timeout → Failure', async () => {
    const r = await probeHttp({ port, path: '/slow' }, target, 1);
    assert.equal(r.result, 'Failure');
    assert.match(r.output, /Client\.Timeout exceeded/);
  });

  it('httpGet: refused → Failure with the dial error', async () => {
    const closed = createTcpServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const p = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const r = await probeHttp({ port: p }, target, 1);
    assert.equal(r.result, 'Failure');
    assert.equal(
      r.output,
      `Get "http://127.0.0.1:${p}/": dial tcp 127.0.0.1:${p}: connect: connection refused`,
    );
    const t = await probeTcp({ port: p }, target, 1);
    assert.deepEqual(t, {
      result: 'Failure',
      output: `dial tcp 127.0.0.1:${p}: connect: connection refused`,
    });
  });

  it('tcpSocket: open port → Success', async () => {
    assert.equal((await probeTcp({ port }, target, 1)).result, 'Success');
  });

  it('named ports resolve through the container ports', () => {
    assert.equal(resolvePort('http', container), 8080);
    assert.equal(resolvePort(81, container), 81);
    assert.equal(resolvePort('8081', container), 8081);
    // probe.ResolveContainerPort's errors, which the "probe errored" event carries.
    assert.deepEqual(resolvePort('nope', container), {
      error: 'strconv.Atoi: parsing "nope": invalid syntax',
    });
    assert.deepEqual(resolvePort(0, container), { error: 'invalid port number: 0' });
    assert.deepEqual(resolvePort(70000, container), { error: 'invalid port number: 70000' });
  });

  it('httpGet and tcpSocket on a port name no container port has: Unknown with the error', async () => {
    const want = { result: 'Unknown', output: 'strconv.Atoi: parsing "web": invalid syntax' };
    assert.deepEqual(await probeHttp({ port: 'web' }, target, 1), want);
    assert.deepEqual(await probeTcp({ port: 'web' }, target, 1), want);
  });

  it('exec: exit 0 → Success, non-zero → Failure with the output, timeout → Failure, runtime error → Unknown', async () => {
    const reply =
      (exitCode: number, out = '') =>
      async () => ({
        stdout: Buffer.from(out),
        stderr: Buffer.from(''),
        exitCode,
      });
    assert.equal((await probeExec({ command: ['true'] }, target, 1, reply(0))).result, 'Success');
    assert.deepEqual(await probeExec({ command: ['cat', '/x'] }, target, 1, reply(1, 'no such file')), {
      result: 'Failure',
      output: 'no such file',
    });
    const timeout = async () => {
      throw new CriError('DeadlineExceeded', 'late');
    };
    assert.equal((await probeExec({ command: ['sleep', '9'] }, target, 1, timeout)).result, 'Failure');
    const gone = async () => {
      throw new CriError('NotFound', 'no container');
    };
    assert.equal((await probeExec({ command: ['true'] }, target, 1, gone)).result, 'Unknown');
  });

  it('runProbe picks the handler', async () => {
    const never = async () => {
      throw new Error('not called');
    };
    assert.equal((await runProbe({ tcpSocket: { port } }, target, never)).result, 'Success');
    assert.equal((await runProbe({}, target, never)).result, 'Unknown');
  });
});
