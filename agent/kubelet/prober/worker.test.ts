import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../api/clock.js';
import type { Probe, ProbeType } from '../pods/types.js';
import type { ProbeVerdict } from './probe.js';
import { ProbeWorker, type ContainerView } from './worker.js';

/** A worker over a scripted probe; `verdicts` are returned in turn. */
function harness(type: ProbeType, probe: Probe, opts: { started?: boolean } = {}) {
  const clock = new FakeClock();
  const script: ProbeVerdict[] = [];
  const published: ProbeVerdict[] = [];
  const failures: string[] = [];
  let runs = 0;
  let view: ContainerView | undefined = {
    containerId: 'c1',
    running: true,
    startedAt: clock.now(),
    podIP: '10.0.0.2',
  };
  const worker = new ProbeWorker({
    type,
    probe,
    clock,
    view: () => view,
    started: () => opts.started ?? true,
    run: async () => {
      runs++;
      const result = script.shift() ?? 'Success';
      return { result, output: result === 'Failure' ? `failure ${runs}` : '' };
    },
    publish: (_id, r) => published.push(r),
    onFailure: (o) => failures.push(o.output),
  });
  return {
    clock,
    worker,
    script,
    published,
    failures,
    runs: () => runs,
    setView: (v: ContainerView | undefined) => (view = v),
  };
}

async function ticks(h: ReturnType<typeof harness>, verdicts: ProbeVerdict[]): Promise<void> {
  h.script.push(...verdicts);
  for (let i = 0; i < verdicts.length; i++) await h.worker.tick();
}

describe('ProbeWorker', () => {
  it('readiness: starts Failure, Success after successThreshold, Failure after failureThreshold', async () => {
    const h = harness('readiness', { successThreshold: 2, failureThreshold: 3 });
    await ticks(h, ['Success']);
    assert.deepEqual(h.published, ['Failure'], 'the initial value only: one success is below the threshold');
    await ticks(h, ['Success']);
    assert.deepEqual(h.published, ['Failure', 'Success']);
    await ticks(h, ['Failure', 'Failure']);
    assert.equal(h.published.at(-1), 'Success', 'two failures are below the threshold of 3');
    await ticks(h, ['Failure']);
    assert.equal(h.published.at(-1), 'Failure');
    assert.deepEqual(h.failures, ['failure 3', 'failure 4', 'failure 5'], 'every failed run is reported');
  });

  it('a success in between resets the failure count', async () => {
    const h = harness('liveness', { failureThreshold: 3 });
    await ticks(h, ['Failure', 'Failure', 'Success', 'Failure', 'Failure']);
    assert.ok(!h.published.includes('Failure'));
    await ticks(h, ['Failure']);
    assert.equal(h.published.at(-1), 'Failure');
  });

  it('liveness: on hold after a published failure until the container is replaced', async () => {
    const h = harness('liveness', { failureThreshold: 1 });
    assert.deepEqual(h.published, []);
    await ticks(h, ['Failure']);
    assert.deepEqual(h.published, ['Success', 'Failure']);
    const before = h.runs();
    await ticks(h, ['Success', 'Success']);
    assert.equal(h.runs(), before, 'no probing while on hold');
    h.setView({ containerId: 'c2', running: true, startedAt: h.clock.now(), podIP: '10.0.0.2' });
    await ticks(h, ['Success']);
    assert.deepEqual(h.published.slice(-1), ['Success'], 'a new container starts from the initial value');
    assert.ok(h.runs() > before);
  });

  it('initialDelaySeconds: nothing is probed before it passed', async () => {
    const h = harness('readiness', { initialDelaySeconds: 5 });
    await ticks(h, ['Success']);
    assert.equal(h.runs(), 0);
    await h.clock.advance(5_000);
    await h.worker.tick();
    assert.equal(h.runs(), 1);
    assert.equal(h.published.at(-1), 'Success');
  });

  it('liveness and readiness wait for the startup probe', async () => {
    const h = harness('readiness', {}, { started: false });
    await ticks(h, ['Success', 'Success']);
    assert.equal(h.runs(), 0);
    assert.deepEqual(h.published, ['Failure']);
  });

  it('startup: stops probing once it succeeded', async () => {
    const h = harness('startup', { failureThreshold: 30 });
    await ticks(h, ['Failure', 'Success']);
    assert.deepEqual(h.published, ['Unknown', 'Success']);
    await ticks(h, ['Failure']);
    assert.equal(h.runs(), 2);
  });

  it('a stopped container is not probed; readiness reads Failure', async () => {
    const h = harness('readiness', {});
    await ticks(h, ['Success']);
    assert.equal(h.published.at(-1), 'Success');
    h.setView({ containerId: 'c1', running: false, startedAt: 0, podIP: '' });
    await h.worker.tick();
    assert.equal(h.published.at(-1), 'Failure');
    assert.equal(h.runs(), 1);
  });

  it('run() ticks every periodSeconds on the clock', async () => {
    const h = harness('readiness', { periodSeconds: 3 });
    const ac = new AbortController();
    const done = h.worker.run(ac.signal);
    await h.clock.advance(0);
    assert.equal(h.runs(), 1);
    await h.clock.advance(2_999);
    assert.equal(h.runs(), 1);
    await h.clock.advance(1);
    assert.equal(h.runs(), 2);
    await h.clock.advance(9_000);
    assert.equal(h.runs(), 5);
    ac.abort();
    await done;
  });
});
