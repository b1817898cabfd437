import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestApi, type TestApi } from '../../test/support/api.js';
import { FakeClock } from '../clock.js';
import type { CoreEvent, Pod } from '../types.js';
import { EventFlushTimeoutError, EventQueueFullError, EventRecorder, referenceOf } from './events.js';
import { resources } from './resource.js';

let api: TestApi;
before(async () => {
  api = await startTestApi();
});
after(() => api.stop());

const pod: Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web-0', namespace: 'default', uid: 'u-1', resourceVersion: '7' },
  spec: { containers: [] },
};

async function events(): Promise<CoreEvent[]> {
  return (await api.client.list<CoreEvent>(resources.events, { namespace: 'default' })).items;
}

test('referenceOf takes apiVersion, kind, namespace, name, uid and resourceVersion', () => {
  assert.deepEqual(referenceOf(pod), {
    apiVersion: 'v1',
    kind: 'Pod',
    namespace: 'default',
    name: 'web-0',
    uid: 'u-1',
    resourceVersion: '7',
  });
  assert.deepEqual(referenceOf({ kind: 'Node', name: 'n1' }), { kind: 'Node', name: 'n1' });
});

test('a repeated event increments count and lastTimestamp; a different message is a new Event', async () => {
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const recorder = new EventRecorder({
    client: api.client,
    component: 'test-controller',
    host: 'node-a',
    clock,
  });
  recorder.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container');
  await recorder.flush();
  await clock.advance(5_000);
  recorder.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container');
  recorder.event(pod, 'Normal', 'Pulled', 'Container image "x" already present on machine');
  await recorder.flush();
  const all = await events();
  assert.equal(all.length, 2);
  const backoff = all.find((e) => e.reason === 'BackOff')!;
  assert.equal(backoff.count, 2);
  assert.equal(backoff.type, 'Warning');
  assert.equal(backoff.firstTimestamp, '2026-01-01T00:00:00Z');
  assert.equal(backoff.lastTimestamp, '2026-01-01T00:00:05Z');
  assert.deepEqual(backoff.source, { component: 'test-controller', host: 'node-a' });
  assert.equal(backoff.involvedObject.uid, 'u-1');
  assert.match(backoff.metadata.name!, /^web-0\.[0-9a-f]+$/);
});

test('an event whose Event object was deleted is written anew; a cluster-scoped object reports in default', async () => {
  const recorder = new EventRecorder({ client: api.client, component: 'c' });
  const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n9', uid: 'n-9' } };
  recorder.event(node, 'Normal', 'NodeReady', 'Node n9 status is now: NodeReady');
  await recorder.flush();
  const first = (await events()).find((e) => e.reason === 'NodeReady')!;
  assert.equal(first.metadata.namespace, 'default');
  await api.client.delete(resources.events, 'default', first.metadata.name!);
  recorder.event(node, 'Normal', 'NodeReady', 'Node n9 status is now: NodeReady');
  await recorder.flush();
  const again = (await events()).filter((e) => e.reason === 'NodeReady');
  assert.equal(again.length, 1);
  assert.equal(again[0]!.count, 1);
  assert.notEqual(again[0]!.metadata.name, first.metadata.name);
});

test('a failed write is reported to onError and never thrown', async () => {
  const errors: unknown[] = [];
  const recorder = new EventRecorder({ client: api.client, component: 'c', onError: (e) => errors.push(e) });
  recorder.event({ kind: 'Pod', namespace: 'no-such-namespace', name: 'p' }, 'Normal', 'X', 'y');
  await recorder.flush();
  assert.equal(errors.length, 1);
});

test('events beyond maxQueued are dropped and reported; the queued ones are written in order, one at a time', async () => {
  const errors: unknown[] = [];
  let inFlight = 0;
  let most = 0;
  // The real client, with its concurrent creates counted.
  const client = Object.create(api.client) as typeof api.client;
  client.create = (async (...args: Parameters<typeof api.client.create>) => {
    most = Math.max(most, ++inFlight);
    try {
      return await api.client.create(...args);
    } finally {
      inFlight--;
    }
  }) as typeof api.client.create;
  const recorder = new EventRecorder({
    client,
    component: 'burst',
    maxQueued: 3,
    onError: (e) => errors.push(e),
  });
  for (let i = 0; i < 5; i++) recorder.event(pod, 'Normal', 'Burst', `event ${i}`);
  await recorder.flush();
  assert.equal(errors.length, 2);
  assert.ok(
    errors.every((e) => e instanceof EventQueueFullError),
    String(errors[0]),
  );
  assert.equal(most, 1);
  const burst = (await events()).filter((e) => e.reason === 'Burst');
  assert.deepEqual(burst.map((e) => e.message).sort(), ['event 0', 'event 1', 'event 2']);
  // The queue empties as it is written: later events are taken again.
  recorder.event(pod, 'Normal', 'Burst', 'event 5');
  await recorder.flush();
  assert.equal(errors.length, 2);
  assert.equal((await events()).filter((e) => e.reason === 'Burst').length, 4);
});

test('an event keeps the time it was recorded at, however late it is written', async () => {
  const clock = new FakeClock(Date.parse('2026-02-01T00:00:00Z'));
  // The write is held back until the clock has moved on.
  const { client, release } = heldClient();
  const recorder = new EventRecorder({ client, component: 'late', clock });
  recorder.event(pod, 'Normal', 'Late', 'recorded at midnight');
  await clock.advance(60_000);
  release();
  await recorder.flush();
  const late = (await events()).find((e) => e.reason === 'Late')!;
  assert.equal(late.firstTimestamp, '2026-02-01T00:00:00Z');
  assert.equal(late.lastTimestamp, '2026-02-01T00:00:00Z');
});

/** The real client, with every create held until `release()`. */
function heldClient(): { client: typeof api.client; release(): void } {
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => (release = r));
  const client = Object.create(api.client) as typeof api.client;
  client.create = (async (...args: Parameters<typeof api.client.create>) => {
    await gate;
    return api.client.create(...args);
  }) as typeof api.client.create;
  return { client, release };
}

test('flush(timeoutMs) gives up on a hung server: what is still queued is dropped and reported', async () => {
  const errors: unknown[] = [];
  const { client, release } = heldClient();
  const recorder = new EventRecorder({ client, component: 'hung', onError: (e) => errors.push(e) });
  for (let i = 0; i < 4; i++) recorder.event(pod, 'Normal', 'Hung', `event ${i}`);
  // Liveness, not speed: a flush that waited for the hung write would never end (the write
  // is held until release()), so it loses the race against a generous deadline.
  let deadline: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    recorder.flush(100).then(() => 'flushed'),
    new Promise<string>((resolve) => (deadline = setTimeout(() => resolve('still waiting'), 30_000))),
  ]);
  clearTimeout(deadline);
  assert.equal(outcome, 'flushed', 'flush waited for the hung write');
  // The first write was sent and is left to finish; the three behind it are dropped.
  assert.equal(errors.length, 3);
  assert.ok(
    errors.every((e) => e instanceof EventFlushTimeoutError),
    String(errors[0]),
  );
  release();
  await recorder.flush();
  const hung = (await events()).filter((e) => e.reason === 'Hung');
  assert.deepEqual(
    hung.map((e) => e.message),
    ['event 0'],
  );
  // The recorder still works afterwards.
  recorder.event(pod, 'Normal', 'Hung', 'after');
  await recorder.flush();
  assert.equal((await events()).filter((e) => e.reason === 'Hung').length, 2);
});

test('an onError that throws neither stops the writer nor reaches the caller of event()', async () => {
  const recorder = new EventRecorder({
    client: api.client,
    component: 'throwing',
    maxQueued: 1,
    onError: () => {
      throw new Error('onError failed');
    },
  });
  recorder.event({ kind: 'Pod', namespace: 'no-such-namespace', name: 'p' }, 'Normal', 'Throwing', 'refused');
  // Dropped (the queue holds one): onError throws inside event(), which must not.
  recorder.event(pod, 'Normal', 'Throwing', 'dropped');
  await recorder.flush();
  recorder.event(pod, 'Normal', 'Throwing', 'written');
  await recorder.flush();
  const written = (await events()).filter((e) => e.reason === 'Throwing').map((e) => e.message);
  assert.deepEqual(written, ['written']);
});
