// evictPod's compare-and-swap on the PodDisruptionBudget (eviction.ts), with registries
// that answer 409 on cue: a conflict reads the budget again and decides again.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../api/object.js';
import type { PodDisruptionBudget } from '../../api/policy.js';
import { evictPod, type EvictionDeps } from './eviction.js';
import type { Registry } from './registry.js';
import { ApiError, conflict } from './status.js';

const runningPod: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web-0', namespace: 'default', uid: 'u1', resourceVersion: '10', labels: { app: 'web' } },
  spec: {},
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
};

const budget = (rv: string, disruptionsAllowed: number): PodDisruptionBudget => ({
  apiVersion: 'policy/v1',
  kind: 'PodDisruptionBudget',
  metadata: { name: 'web', namespace: 'default', generation: 1, resourceVersion: rv },
  spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } },
  status: {
    observedGeneration: 1,
    disruptionsAllowed,
    currentHealthy: 2,
    desiredHealthy: 1,
    expectedPods: 2,
  },
});

/**
 * Registries for one pod and one PDB. The PDB list answers `listed`; each status update
 * whose resourceVersion is not `stored`'s answers 409 (as the real registry's precondition);
 * writes and deletes are recorded.
 */
function fakes(listed: PodDisruptionBudget, stored: PodDisruptionBudget) {
  const pdbWrites: PodDisruptionBudget[] = [];
  const deleted: string[] = [];
  let gets = 0;
  const pods = {
    get: () => Promise.resolve(structuredClone(runningPod)),
    guaranteedUpdate: async (_ns: string, _name: string, mutate: (o: KubeObject) => KubeObject) => ({
      ...(await mutate(structuredClone(runningPod))),
      metadata: { ...runningPod.metadata, resourceVersion: '11' },
    }),
    delete: (_ns: string, name: string) => {
      deleted.push(name);
      return Promise.resolve({ object: runningPod, deleted: true });
    },
    now: () => new Date(Date.UTC(2026, 0, 1)),
  };
  const pdbs = {
    list: () => Promise.resolve({ items: [structuredClone(listed)] }),
    get: () => {
      gets++;
      return Promise.resolve(structuredClone(stored));
    },
    update: (_ns: string, name: string, obj: PodDisruptionBudget) => {
      if (obj.metadata.resourceVersion !== stored.metadata.resourceVersion)
        return Promise.reject(conflict({ group: 'policy', resource: 'poddisruptionbudgets', name }));
      pdbWrites.push(obj);
      return Promise.resolve(obj);
    },
  };
  const deps: EvictionDeps = {
    pods: pods as unknown as Registry,
    podDisruptionBudgets: pdbs as unknown as Registry,
    now: () => new Date(Date.UTC(2026, 0, 1)),
  };
  return { deps, pdbWrites, deleted, gets: () => gets };
}

const eviction = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web-0' } };

describe('eviction compare-and-swap on the budget', () => {
  it('a stale budget conflicts; the fresh one still allows: one write, then the delete', async () => {
    const f = fakes(budget('5', 1), budget('6', 1));
    const r = await evictPod(f.deps, 'default', 'web-0', eviction, false);
    assert.equal(r.status, 'Success');
    assert.equal(f.gets(), 1, 'the budget was read again once');
    assert.equal(f.pdbWrites.length, 1);
    assert.equal(f.pdbWrites[0]!.status?.disruptionsAllowed, 0);
    assert.deepEqual(f.pdbWrites[0]!.status?.disruptedPods, { 'web-0': '2026-01-01T00:00:00Z' });
    assert.deepEqual(f.deleted, ['web-0']);
  });

  it('a stale budget conflicts; the fresh one allows nothing: 429, no write, no delete', async () => {
    const f = fakes(budget('5', 1), budget('6', 0));
    await assert.rejects(
      evictPod(f.deps, 'default', 'web-0', eviction, false),
      (err: unknown) => err instanceof ApiError && err.code === 429 && err.reason === 'TooManyRequests',
    );
    assert.equal(f.pdbWrites.length, 0);
    assert.deepEqual(f.deleted, []);
  });
});
