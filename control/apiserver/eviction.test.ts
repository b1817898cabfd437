// POST pods/NAME/eviction (policy/v1 Eviction) against the real API server in-process.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { resources } from '../../api/client/resource.js';
import type { Pod } from '../../api/types.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';

let api: TestApi;
before(async () => {
  api = await startTestApi();
});
after(() => api.stop());

async function evict(pod: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${api.url}/api/v1/namespaces/default/pods/${pod}/eviction`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const pod = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'c', image: 'spring-server:1.0' }] },
});

test('an Eviction naming another pod is refused and deletes nothing; the right one evicts', async () => {
  await api.client.create(resources.pods, pod('victim'));
  const wrong = await evict('victim', {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name: 'other' },
  });
  assert.equal(wrong.status, 400);
  assert.equal(wrong.json.reason, 'BadRequest');
  assert.match(String(wrong.json.message), /name in URL does not match name in Eviction object/);
  const still = await api.client.get<Pod>(resources.pods, 'default', 'victim');
  assert.equal(still.metadata.deletionTimestamp, undefined);

  const right = await evict('victim', {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name: 'victim' },
  });
  assert.equal(right.status, 201);
  const list = await api.client.list<Pod>(resources.pods, { namespace: 'default' });
  assert.deepEqual(
    list.items.map((p) => p.metadata.name),
    [],
    'an unscheduled pod goes at once',
  );
});
