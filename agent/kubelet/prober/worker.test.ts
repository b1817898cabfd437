import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../api/clock.js';
import type { Probe, ProbeType } from '../pods/types.js';
import type { ProbeVerdict } from './probe.js';
import { ProbeWorker, type ContainerView } from './worker.js';

/** A worker over a scripted probe; `verdicts` are returned in turn. */
type Scripted = ProbeVerdict | 'Warning';

function harness(type: ProbeType, probe: Probe, opts: { started?: boolean } = {}) {
  const clock = new FakeClock();
  const script: Scripted[] = [];
  const published: ProbeVerdict[] = [];
  const failures: string[] = [];
  const recorded: string[] = [];
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
      return { result, output: result === 'Success' ? '' : `${result.toLowerCase()} ${runs}` };
    },
    publish: (_id, r) => published.push(r),
    record: (o) => {
      recorded.push(`${o.result}: ${o.output}`);
      if (o.result === 'Failure') failures.push(o.output);
    },
  });
  return {
    clock,
    worker,
    script,
    published,
    failures,
    recorded,
    runs: () => runs,
    setView: (v: ContainerView | undefined) => (view = v),
  };
}

async function ticks(h: ReturnType<typeof harness>, verdicts: Scripted[]): Promise<void> {
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

  it('an errored run (Unknown) is recorded every time and its verdict thrown away', async () => {
    const h = harness('readiness', { failureThreshold: 1 });
    await ticks(h, ['Unknown', 'Unknown', 'Unknown']);
    assert.deepEqual(h.recorded, ['Unknown: unknown 1', 'Unknown: unknown 2', 'Unknown: unknown 3']);
    assert.deepEqual(h.published, ['Failure'], 'only the initial value: no threshold counts an error');
    await ticks(h, ['Success']);
    assert.deepEqual(h.published, ['Failure', 'Success']);
  });

  it('a Warning is recorded and counts as a Success', async () => {
    const h = harness('readiness', { successThreshold: 2 });
    await ticks(h, ['Success', 'Warning']);
    assert.deepEqual(h.published, ['Failure', 'Success']);
    assert.deepEqual(h.recorded, ['Warning: warning 2']);
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
