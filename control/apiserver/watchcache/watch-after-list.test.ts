// A client that lists one resource and then watches it from the list's resourceVersion
// must get the changes after it — even when other resources were written in between and
// nobody had watched this resource before (a watch cache created only then would start
// after the list's revision and answer 410 Gone).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { resources } from '../../../api/client/resource.js';
import { startTestApi, type TestApi } from '../../../test/support/api.js';

let api: TestApi;
before(async () => {
  api = await startTestApi();
});
after(() => api.stop());

test('a first watch from a list resourceVersion older than later writes elsewhere is served', async () => {
  const list = await api.client.list(resources.secrets, { namespace: 'default' });
  const rv = list.metadata?.resourceVersion;
  assert.ok(rv);
  for (let i = 0; i < 3; i++) {
    await api.client.create(resources.configmaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `between-${i}`, namespace: 'default' },
    });
  }
  await api.client.create(resources.secrets, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'after-list', namespace: 'default' },
  });
  const stream = await api.client.watch(resources.secrets, { namespace: 'default', resourceVersion: rv });
  // A watch that silently starts after the list would wait forever: give up after 10 s.
  const giveUp = setTimeout(() => stream.stop(), 10_000);
  // Each event's type and object name (an ERROR's message).
  const events: Array<{ type: string; name: string | undefined }> = [];
  try {
    for await (const ev of stream) {
      events.push(
        ev.type === 'ERROR'
          ? { type: ev.type, name: ev.object.message }
          : { type: ev.type, name: ev.object.metadata?.name },
      );
      break;
    }
  } finally {
    clearTimeout(giveUp);
    stream.stop();
  }
  assert.deepEqual(events, [{ type: 'ADDED', name: 'after-list' }]);
});
