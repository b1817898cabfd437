import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, flushPromises, realClock, type Clock } from '../../api/clock.js';
import type { ContainerConfig, PodSandboxConfig } from '../api.js';
import { runRuntimeConformance } from '../conformance.js';
import { isCriError } from '../errors.js';
import { FakeRuntime } from './runtime.js';

/** Real time whose timers keep the test process alive (realClock's are unref'd). */
const refClock: Clock = { ...realClock, setTimeout: (fn, ms) => setTimeout(fn, ms) };

runRuntimeConformance(
  'fake',
  async () => {
    const runtime = new FakeRuntime({ clock: refClock, images: ['k8ts/busybox:1.0', 'k8ts/pause:1.0'] });
    const opened = [runtime];
    return {
      runtime,
      podNetwork: { name: 'k8ts-fake', subnet: '10.42.7.0/24', labels: { 'io.k8ts.node': 'fake' } },
      otherSubnet: '10.42.8.0/25',
      reconnect: async () => {
        const again = runtime.reopen();
        opened.push(again);
        return again;
      },
      cleanup: async () => {
        // Removal ends the programs, and with them their sleeps' timers.
        for (const s of await runtime.reopen().listPodSandbox())
          await runtime.reopen().removePodSandbox(s.id);
        for (const rt of opened) await rt.close();
      },
    };
  },
  { sharedLocalhost: false },
);

const sandboxConfig = (name: string): PodSandboxConfig => ({
  metadata: { name, namespace: 'default', uid: `uid-${name}`, attempt: 0 },
  hostname: name,
  portMappings: [],
  labels: { app: name },
  annotations: {},
});

const containerConfig = (argv: string[], image = 'k8ts/busybox:1.0'): ContainerConfig => ({
  metadata: { name: 'c', attempt: 0 },
  image: { image },
  command: argv,
  labels: {},
  annotations: {},
});

async function runContainer(rt: FakeRuntime, argv: string[]): Promise<string> {
  const sb = sandboxConfig('p');
  const sandboxId = await rt.runPodSandbox(sb);
  const id = await rt.createContainer(sandboxId, containerConfig(argv), sb);
  await rt.startContainer(id);
  return id;
}

describe('FakeRuntime test hooks', () => {
  it('exitContainer ends a running container with a code and reason', async () => {
    const rt = new FakeRuntime({ images: ['k8ts/busybox:1.0'] });
    const cases: [number, { reason?: string; oomKilled?: boolean }, string][] = [
      [0, {}, 'Completed'],
      [1, {}, 'Error'],
      [137, { oomKilled: true }, 'OOMKilled'],
      [2, { reason: 'ContainerCannotRun' }, 'ContainerCannotRun'],
    ];
    for (const [code, opts, reason] of cases) {
      const id = await runContainer(rt, []);
      rt.exitContainer(id, code, opts);
      const st = await rt.containerStatus(id);
      assert.equal(st.state, 'CONTAINER_EXITED');
      assert.equal(st.exitCode, code);
      assert.equal(st.reason, reason);
      assert.throws(
        () => rt.exitContainer(id, 0),
        (e: unknown) => isCriError(e, 'FailedPrecondition'),
      );
    }
  });

  it('programs sleep on the injected clock and write their output', async () => {
    const clock = new FakeClock();
    const rt = new FakeRuntime({ clock, images: ['k8ts/busybox:1.0'] });
    const id = await runContainer(rt, ['sh', '-c', 'echo start; sleep 10; echo done; exit 4']);
    await flushPromises();
    assert.equal((await rt.containerStatus(id)).state, 'CONTAINER_RUNNING');
    assert.equal(rt.containerOutput(id), 'start\n');
    await clock.advance(9_999);
    assert.equal((await rt.containerStatus(id)).state, 'CONTAINER_RUNNING');
    await clock.advance(1);
    const st = await rt.containerStatus(id);
    assert.equal(st.state, 'CONTAINER_EXITED');
    assert.equal(st.exitCode, 4);
    assert.equal(st.finishedAt - st.startedAt, 10_000n * 1_000_000n);
    assert.equal(rt.containerOutput(id), 'start\ndone\n');
  });

  it('a stopped sleeping program does not exit again when its sleep would have ended', async () => {
    const clock = new FakeClock();
    const rt = new FakeRuntime({ clock, images: ['k8ts/busybox:1.0'] });
    const id = await runContainer(rt, ['sleep', '5']);
    await rt.stopContainer(id, 0);
    await clock.advance(10_000);
    const st = await rt.containerStatus(id);
    assert.equal(st.exitCode, 137);
    assert.equal(clock.pendingTimers, 0);
  });

  it('exec handlers answer first; undefined falls back to the fake programs', async () => {
    const rt = new FakeRuntime({ images: ['k8ts/busybox:1.0'] });
    const id = await runContainer(rt, []);
    rt.setExecHandler((cid, cmd) =>
      cmd[0] === 'probe' ? { stdout: Buffer.from(cid), stderr: Buffer.alloc(0), exitCode: 9 } : undefined,
    );
    const r = await rt.execSync(id, ['probe'], 1);
    assert.equal(r.exitCode, 9);
    assert.equal(r.stdout.toString(), id);
    assert.equal((await rt.execSync(id, ['false'], 1)).exitCode, 1);
  });

  it('exec of a command that never ends without a timeout is refused, not hung', async () => {
    const rt = new FakeRuntime({ images: ['k8ts/busybox:1.0'] });
    const id = await runContainer(rt, []);
    await assert.rejects(rt.execSync(id, ['nc', '-l'], 0), (e: unknown) => isCriError(e, 'Internal'));
  });

  it('pulls from its registry, with progress, a delay on the clock and injected failures', async () => {
    const clock = new FakeClock();
    const rt = new FakeRuntime({ clock, registry: ['spring-server:1.0'], pullDelayMs: 2_000 });
    assert.equal(await rt.imageStatus('spring-server:1.0'), undefined);
    const progress: string[] = [];
    let pulled: string | undefined;
    void rt.pullImage('spring-server:1.0', (p) => progress.push(p.status)).then((id) => (pulled = id));
    await clock.advance(1_999);
    assert.equal(pulled, undefined);
    await clock.advance(1);
    assert.match(pulled ?? '', /^sha256:[0-9a-f]{64}$/);
    assert.equal((await rt.imageStatus('docker.io/library/spring-server:1.0'))?.id, pulled);
    assert.ok(progress.length >= 2, JSON.stringify(progress));
    assert.deepEqual(rt.pulls, ['spring-server:1.0']);

    await assert.rejects(rt.pullImage('spring-server:2.0'), (e: unknown) => isCriError(e, 'ImagePullFailed'));
    rt.setPullFailure('spring-server:1.0', 'registry says no');
    await assert.rejects(
      rt.pullImage('spring-server:1.0'),
      (e: unknown) => isCriError(e, 'ImagePullFailed') && /registry says no/.test(e.message),
    );
    rt.setPullFailure('spring-server:1.0', undefined);
    await rt.removeImage('spring-server:1.0');
    assert.equal(await rt.imageStatus('spring-server:1.0'), undefined);
  });

  it('pullAny pulls every reference, as from a registry that has every image', async () => {
    const rt = new FakeRuntime({ pullAny: true });
    const id = await rt.pullImage('registry.example:5000/team/app:2.1');
    assert.equal((await rt.imageStatus('registry.example:5000/team/app:2.1'))?.id, id);
    rt.setPullFailure('broken:1', 'registry says no');
    await assert.rejects(rt.pullImage('broken:1'), (e: unknown) => isCriError(e, 'ImagePullFailed'));
  });

  it('unmodelledProgram gives steps to programs that would run until stopped, and only to them', async () => {
    const clock = new FakeClock();
    const seen: [string, string][] = [];
    const rt = new FakeRuntime({
      clock,
      images: ['k8ts/busybox:1.0'],
      unmodelledProgram: (container, sandbox) => {
        seen.push([container.command?.[0] ?? '', sandbox.metadata.name]);
        return container.command?.[0] === 'perl'
          ? [
              { op: 'sleep', seconds: 2 },
              { op: 'exit', code: 0 },
            ]
          : undefined;
      },
    });
    const perl = await runContainer(rt, ['perl', '-e', 'print 1']);
    const server = await runContainer(rt, ['httpd', '-f']);
    const modelled = await runContainer(rt, ['sh', '-c', 'exit 3']);
    await clock.advance(1_999);
    assert.equal((await rt.containerStatus(perl)).state, 'CONTAINER_RUNNING');
    await clock.advance(1);
    assert.deepEqual(
      [await rt.containerStatus(perl), await rt.containerStatus(modelled)].map((c) => [c.state, c.exitCode]),
      [
        ['CONTAINER_EXITED', 0],
        ['CONTAINER_EXITED', 3],
      ],
    );
    // The hook said nothing for httpd: it runs until stopped, as without a hook.
    await clock.advance(60_000);
    assert.equal((await rt.containerStatus(server)).state, 'CONTAINER_RUNNING');
    assert.deepEqual(seen, [
      ['perl', 'p'],
      ['httpd', 'p'],
    ]);
  });

  it('stats are what the test set', async () => {
    const rt = new FakeRuntime({ images: ['k8ts/busybox:1.0'] });
    const id = await runContainer(rt, []);
    rt.setContainerStats(id, { cpuUsageCoreNanoSeconds: 5_000_000n, memoryWorkingSetBytes: 1 << 20 });
    const s = await rt.containerStats(id);
    assert.equal(s.cpuUsageCoreNanoSeconds, 5_000_000n);
    assert.equal(s.memoryWorkingSetBytes, 1 << 20);
  });

  it('a runtime that is down rejects Unavailable and reports conditions', async () => {
    const rt = new FakeRuntime();
    rt.setUnavailable(true);
    await assert.rejects(rt.listPodSandbox(), (e: unknown) => isCriError(e, 'Unavailable'));
    rt.setUnavailable(false);
    rt.setRuntimeCondition('NetworkReady', false, 'NetworkPluginNotReady', 'no bridge');
    const st = await rt.status();
    assert.deepEqual(
      st.conditions.find((c) => c.type === 'NetworkReady'),
      {
        type: 'NetworkReady',
        status: false,
        reason: 'NetworkPluginNotReady',
        message: 'no bridge',
      },
    );
    await rt.close();
    await assert.rejects(rt.version(), (e: unknown) => isCriError(e, 'Unavailable'));
  });

  it('gives each sandbox a distinct address of its pod CIDR and reuses released ones', async () => {
    const rt = new FakeRuntime({ podCIDR: '10.1.2.0/29' });
    const ids: string[] = [];
    const ips = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const id = await rt.runPodSandbox(sandboxConfig(`p${i}`));
      ids.push(id);
      ips.add((await rt.podSandboxStatus(id)).network.ip);
    }
    assert.deepEqual([...ips].sort(), ['10.1.2.2', '10.1.2.3', '10.1.2.4', '10.1.2.5', '10.1.2.6']);
    await assert.rejects(rt.runPodSandbox(sandboxConfig('full')), (e: unknown) => isCriError(e, 'Internal'));
    await rt.removePodSandbox(ids[2] as string);
    const again = await rt.runPodSandbox(sandboxConfig('again'));
    assert.equal((await rt.podSandboxStatus(again)).network.ip, '10.1.2.4');
  });

  it('refuses to create in a sandbox that is not ready', async () => {
    const rt = new FakeRuntime({ images: ['k8ts/busybox:1.0'] });
    const sb = sandboxConfig('p');
    const id = await rt.runPodSandbox(sb);
    await rt.stopPodSandbox(id);
    await assert.rejects(rt.createContainer(id, containerConfig(['true']), sb), (e: unknown) =>
      isCriError(e, 'FailedPrecondition'),
    );
  });
});
