/**
 * The lifecycle hook runner on its own: exec output and failure message, httpGet (any
 * HTTP status is delivered, a refused connection fails, headers and User-Agent sent to the
 * named port), sleep on the injected clock, and handlers that run nothing.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../../api/clock.js';
import type { ExecSyncResponse } from '../../../cri/index.js';
import { HookError, LIFECYCLE_USER_AGENT, runLifecycleHandler, type HookContext } from './lifecycle.js';
import type { KubeletContainer, KubeletPod } from './types.js';

const container: KubeletContainer = {
  name: 'app',
  image: 'spring-server:1.0',
  ports: [{ name: 'http', containerPort: 0 }],
};
const pod: KubeletPod = {
  metadata: { name: 'p', namespace: 'default', uid: 'u1' },
  spec: { containers: [container] },
};

let server: Server;
let port = 0;
const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
before(async () => {
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    res.statusCode = req.url === '/broken' ? 500 : 200;
    res.end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
after(() => new Promise<void>((r) => server.close(() => r())));

function ctx(exec: HookContext['exec'] = () => Promise.reject(new Error('no exec'))): HookContext {
  return { exec, clock: new FakeClock(), podIP: '127.0.0.1' };
}

const out = (exitCode: number, stdout = '', stderr = ''): ExecSyncResponse => ({
  stdout: Buffer.from(stdout),
  stderr: Buffer.from(stderr),
  exitCode,
});

describe('runLifecycleHandler', () => {
  it('exec: the output on success; exit code and output in the failure', async () => {
    const calls: string[][] = [];
    const ok = await runLifecycleHandler(
      pod,
      container,
      'c1',
      { exec: { command: ['sh', '-c', 'echo hi'] } },
      ctx(async (id, cmd, t) => (calls.push([id, ...cmd, String(t)]), out(0, 'hi\n'))),
      30,
    );
    assert.equal(ok, 'hi\n');
    assert.deepEqual(calls, [['c1', 'sh', '-c', 'echo hi', '30']]);
    await assert.rejects(
      runLifecycleHandler(
        pod,
        container,
        'c1',
        { exec: { command: ['false'] } },
        ctx(async () => out(1, '', 'bad')),
      ),
      (err: unknown) =>
        err instanceof HookError &&
        err.message ===
          'Exec lifecycle hook ([false]) for Container "app" in Pod "p_default(u1)" failed - error: command \'false\' exited with 1: , message: "bad"',
    );
    await assert.rejects(
      runLifecycleHandler(pod, container, 'c1', { exec: { command: ['x'] } }, ctx()),
      /failed - error: no exec, message: ""$/,
    );
  });

  it('httpGet: any HTTP status is delivered; headers and the User-Agent sent; a refused connection fails', async () => {
    const c = { ...container, ports: [{ name: 'http', containerPort: port }] };
    await runLifecycleHandler(
      pod,
      c,
      'c1',
      { httpGet: { path: '/hook', port: 'http', httpHeaders: [{ name: 'X-Why', value: 'start' }] } },
      ctx(),
    );
    await runLifecycleHandler(pod, c, 'c1', { httpGet: { path: '/broken', port } }, ctx());
    assert.deepEqual(
      seen.map((s) => [s.url, s.headers['user-agent'], s.headers['x-why']]),
      [
        ['/hook', LIFECYCLE_USER_AGENT, 'start'],
        ['/broken', LIFECYCLE_USER_AGENT, undefined],
      ],
    );
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const dead = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    await assert.rejects(
      runLifecycleHandler(pod, c, 'c1', { httpGet: { path: '/', port: dead } }, ctx()),
      /Http lifecycle hook \(\/\) for Container "app" in Pod "p_default\(u1\)" failed - error: .*connection refused/,
    );
    await assert.rejects(
      runLifecycleHandler(pod, c, 'c1', { httpGet: { path: '/', port: 'nope' } }, ctx()),
      /strconv.Atoi: parsing "nope": invalid syntax/,
    );
  });

  it('sleep waits on the injected clock; a handler with no action runs nothing', async () => {
    const c = ctx();
    const clock = c.clock as FakeClock;
    let done = false;
    const p = runLifecycleHandler(pod, container, 'c1', { sleep: { seconds: 5 } }, c).then(
      () => (done = true),
    );
    await clock.advance(4_000);
    assert.equal(done, false);
    await clock.advance(1_000);
    await p;
    assert.equal(done, true);
    assert.equal(await runLifecycleHandler(pod, container, 'c1', {}, ctx()), '');
  });
});
