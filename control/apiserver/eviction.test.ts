// POST pods/NAME/eviction (policy/v1 Eviction) against the real API server in-process.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { resources } from '../../api/client/resource.js';
import type { PodDisruptionBudget } from '../../api/policy.js';
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

// ---------------------------------------------------------------------------------------
// PodDisruptionBudgets (eviction.ts)

type Budget = PodDisruptionBudget;

/** A Running, Ready pod labelled app=<app> (status written as its kubelet would). */
async function runningPod(name: string, app: string, ready = true): Promise<Pod> {
  const p = pod(name);
  p.metadata.labels = { app };
  const created = await api.client.create<Pod>(resources.pods, p);
  return api.client.updateStatus<Pod>(resources.pods, {
    ...created,
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    },
  });
}

/** A PDB selecting app=<app> with the given spec and status (observedGeneration = generation unless told). */
async function budget(
  name: string,
  app: string,
  spec: Partial<Budget['spec']>,
  status: Partial<NonNullable<Budget['status']>>,
): Promise<Budget> {
  const created = await api.client.create<Budget>(resources.poddisruptionbudgets, {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace: 'default' },
    spec: { selector: { matchLabels: { app } }, ...spec },
  });
  return api.client.updateStatus<Budget>(resources.poddisruptionbudgets, {
    ...created,
    status: {
      disruptionsAllowed: 0,
      currentHealthy: 0,
      desiredHealthy: 0,
      expectedPods: 0,
      observedGeneration: created.metadata.generation!,
      ...status,
    },
  });
}

const getBudget = (name: string) => api.client.get<Budget>(resources.poddisruptionbudgets, 'default', name);
const podExists = async (name: string) =>
  (await api.client.list<Pod>(resources.pods, { namespace: 'default' })).items.some(
    (p) => p.metadata.name === name,
  );
const eviction = (name: string, deleteOptions?: Record<string, unknown>) => ({
  apiVersion: 'policy/v1',
  kind: 'Eviction',
  metadata: { name },
  ...(deleteOptions ? { deleteOptions } : {}),
});

test('a budget with no disruptions allowed refuses with 429 and the DisruptionBudget cause; nothing is written', async () => {
  await runningPod('guarded-0', 'guarded');
  const pdb = await budget(
    'guarded',
    'guarded',
    { minAvailable: 1 },
    { currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 },
  );
  const r = await evict('guarded-0', eviction('guarded-0'));
  assert.equal(r.status, 429);
  assert.equal(r.json.reason, 'TooManyRequests');
  assert.equal(r.json.message, "Cannot evict pod as it would violate the pod's disruption budget.");
  assert.deepEqual((r.json.details as { causes: unknown[] }).causes, [
    {
      reason: 'DisruptionBudget',
      message: 'The disruption budget guarded needs 1 healthy pods and has 1 currently',
    },
  ]);
  assert.equal((await getBudget('guarded')).metadata.resourceVersion, pdb.metadata.resourceVersion);
  const still = await api.client.get<Pod>(resources.pods, 'default', 'guarded-0');
  assert.equal(still.metadata.deletionTimestamp, undefined);
  assert.equal(
    still.status?.conditions?.some((c) => c.type === 'DisruptionTarget'),
    false,
    'no DisruptionTarget condition on a refused pod',
  );
});

test('an allowed eviction decrements disruptionsAllowed, records the pod in disruptedPods, and deletes it', async () => {
  await runningPod('spare-0', 'spare');
  await budget(
    'spare',
    'spare',
    { maxUnavailable: 1 },
    { disruptionsAllowed: 1, currentHealthy: 1, desiredHealthy: 0, expectedPods: 1 },
  );
  const r = await evict('spare-0', eviction('spare-0', { gracePeriodSeconds: 0 }));
  assert.equal(r.status, 201, JSON.stringify(r.json));
  const after = await getBudget('spare');
  assert.equal(after.status?.disruptionsAllowed, 0);
  assert.deepEqual(Object.keys(after.status?.disruptedPods ?? {}), ['spare-0']);
  const cond = after.status?.conditions?.find((c) => c.type === 'DisruptionAllowed');
  assert.equal(cond?.status, 'False');
  assert.equal(cond?.reason, 'InsufficientPods');
  assert.equal(await podExists('spare-0'), false);
});

test('two evictions racing for one allowed disruption: the PDB write is compare-and-swap, one wins and one gets 429', async () => {
  await runningPod('race-0', 'race');
  await runningPod('race-1', 'race');
  await budget(
    'race',
    'race',
    { minAvailable: 1 },
    { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2 },
  );
  const results = await Promise.all([
    evict('race-0', eviction('race-0')),
    evict('race-1', eviction('race-1')),
  ]);
  assert.deepEqual(
    results.map((r) => r.status).sort(),
    [201, 429],
    JSON.stringify(results.map((r) => r.json)),
  );
  const after = await getBudget('race');
  assert.equal(after.status?.disruptionsAllowed, 0);
  assert.equal(Object.keys(after.status?.disruptedPods ?? {}).length, 1);
  assert.equal((await podExists('race-0')) !== (await podExists('race-1')), true, 'exactly one pod is gone');
});

test('a budget the controller has not observed yet (observedGeneration < generation) refuses', async () => {
  await runningPod('stale-0', 'stale');
  await budget('stale', 'stale', { minAvailable: 0 }, { disruptionsAllowed: 5, observedGeneration: 0 });
  const r = await evict('stale-0', eviction('stale-0'));
  assert.equal(r.status, 429);
  assert.deepEqual((r.json.details as { causes: unknown[] }).causes, [
    {
      reason: 'DisruptionBudget',
      message: 'The disruption budget stale is still being processed by the server.',
    },
  ]);
  assert.equal(await podExists('stale-0'), true);
});

test('a pod selected by two budgets answers 500 and stays', async () => {
  await runningPod('double-0', 'double');
  await budget('double-a', 'double', { minAvailable: 0 }, { disruptionsAllowed: 1 });
  await budget('double-b', 'double', { minAvailable: 0 }, { disruptionsAllowed: 1 });
  const r = await evict('double-0', eviction('double-0'));
  assert.equal(r.status, 500);
  assert.equal(
    r.json.message,
    'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
  );
  assert.equal(await podExists('double-0'), true);
  assert.equal((await getBudget('double-a')).status?.disruptionsAllowed, 1);
});

test('Pending pods are evicted whatever the budget says; an unready pod goes while the budget is healthy (IfHealthyBudget) or always (AlwaysAllow)', async () => {
  const pending = pod('pend-0');
  pending.metadata.labels = { app: 'pend' };
  await api.client.create(resources.pods, pending);
  await budget('pend', 'pend', { minAvailable: 1 }, {});
  assert.equal((await evict('pend-0', eviction('pend-0'))).status, 201);
  assert.equal(await podExists('pend-0'), false);

  await runningPod('sick-0', 'sick', false);
  await budget(
    'sick',
    'sick',
    { minAvailable: 1 },
    { currentHealthy: 1, desiredHealthy: 1, expectedPods: 2 },
  );
  assert.equal((await evict('sick-0', eviction('sick-0'))).status, 201);
  assert.equal(await podExists('sick-0'), false);
  assert.equal((await getBudget('sick')).status?.disruptedPods, undefined, 'the budget is not touched');

  await runningPod('weak-0', 'weak', false);
  await budget(
    'weak',
    'weak',
    { minAvailable: 1 },
    { currentHealthy: 0, desiredHealthy: 1, expectedPods: 1 },
  );
  assert.equal(
    (await evict('weak-0', eviction('weak-0'))).status,
    429,
    'IfHealthyBudget with an unhealthy budget',
  );
  await api.client.patch(resources.poddisruptionbudgets, 'default', 'weak', 'merge', {
    spec: { unhealthyPodEvictionPolicy: 'AlwaysAllow' },
  });
  assert.equal((await evict('weak-0', eviction('weak-0'))).status, 201, 'AlwaysAllow');
});

test('dryRun evicts nothing and writes nothing; a failed precondition answers 409', async () => {
  await runningPod('dry-0', 'dry');
  const pdb = await budget(
    'dry',
    'dry',
    { minAvailable: 0 },
    { disruptionsAllowed: 1, currentHealthy: 1, expectedPods: 1 },
  );
  const r = await evict('dry-0', eviction('dry-0', { dryRun: ['All'] }));
  assert.equal(r.status, 201);
  assert.equal(await podExists('dry-0'), true);
  assert.equal((await getBudget('dry')).metadata.resourceVersion, pdb.metadata.resourceVersion);
  const wrong = await evict('dry-0', eviction('dry-0', { preconditions: { uid: 'not-the-uid' } }));
  assert.equal(wrong.status, 409);
  assert.equal(await podExists('dry-0'), true);
});

test('PodDisruptionBudget validation: upstream words, nothing stored', async () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [
      { minAvailable: 1, maxUnavailable: 1 },
      /spec: Invalid value: .*: minAvailable and maxUnavailable cannot be both set/,
    ],
    [{ minAvailable: -1 }, /spec\.minAvailable: Invalid value: -1: must be greater than or equal to 0/],
    [
      { maxUnavailable: '120%' },
      /spec\.maxUnavailable: Invalid value: "120%": must not be greater than 100%/,
    ],
    [
      { maxUnavailable: 'half' },
      /spec\.maxUnavailable: Invalid value: "half": a valid percent string must be/,
    ],
    [
      { minAvailable: 1, unhealthyPodEvictionPolicy: 'Never' },
      /spec\.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"/,
    ],
  ];
  for (const [spec, message] of cases) {
    const res = await fetch(`${api.url}/apis/policy/v1/namespaces/default/poddisruptionbudgets`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'bad' },
        spec,
      }),
    });
    const json = (await res.json()) as { reason: string; message: string };
    assert.equal(res.status, 422, JSON.stringify(json));
    assert.equal(json.reason, 'Invalid');
    assert.match(json.message, message);
  }
  const list = await api.client.list<Budget>(resources.poddisruptionbudgets, { namespace: 'default' });
  assert.equal(
    list.items.some((p) => p.metadata.name === 'bad'),
    false,
  );
});

test('kubectl get pdb prints NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE', async () => {
  await budget('table', 'table', { maxUnavailable: '25%' }, { disruptionsAllowed: 2 });
  const r = await api.kubectl('get', 'pdb', 'table', '-n', 'default');
  assert.equal(r.code, 0, r.stderr);
  const [header, row] = r.stdout.trim().split('\n');
  assert.deepEqual(header!.split(/\s{2,}/), [
    'NAME',
    'MIN AVAILABLE',
    'MAX UNAVAILABLE',
    'ALLOWED DISRUPTIONS',
    'AGE',
  ]);
  assert.deepEqual(row!.split(/\s+/).slice(0, 4), ['table', 'N/A', '25%', '2']);
});

test('kubectl create poddisruptionbudget (a protobuf body) stores the budget; kubectl describe shows it', async () => {
  const created = await api.kubectl(
    'create',
    'poddisruptionbudget',
    'pb',
    '--selector=app=pb',
    '--min-available=50%',
  );
  assert.equal(created.code, 0, created.stderr);
  const pdb = await getBudget('pb');
  assert.deepEqual(pdb.spec, { minAvailable: '50%', selector: { matchLabels: { app: 'pb' } } });
  const described = await api.kubectl('describe', 'pdb', 'pb');
  assert.equal(described.code, 0, described.stderr);
  assert.match(described.stdout, /Min available:\s+50%\nSelector:\s+app=pb\n/);
});
