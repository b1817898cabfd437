import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../api/object.js';
import { MemoryStore } from '../storage/memory.js';
import { Registry } from './registry.js';
import { findResource } from './resources.js';
import { ApiError } from './status.js';
import { nameValidatorFor, strategyFor } from './strategies/index.js';
import { bindPod } from './subresources.js';

function podRegistry(): { store: MemoryStore; pods: Registry } {
  const store = new MemoryStore();
  const resource = findResource('', 'v1', 'pods')!;
  const pods = new Registry({
    store,
    resource,
    strategy: strategyFor(resource),
    validateName: nameValidatorFor(resource),
    now: () => new Date(Date.UTC(2026, 10, 30, 12, 0, 0)),
  });
  return { store, pods };
}

const pod = (name: string, spec: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels: { app: 'web' } },
  spec: { containers: [{ name: 'c', image: 'pause' }], ...spec },
});

const binding = (target: Record<string, unknown>, extra: Partial<KubeObject> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Binding',
  metadata: { name: 'web' },
  target,
  ...extra,
});

describe('bindPod', () => {
  it('sets spec.nodeName and PodScheduled=True and nothing else, and writes once', async () => {
    const { store, pods } = podRegistry();
    const created = await pods.create('default', pod('web'));
    const revision = await store.currentRevision();
    await bindPod(pods, 'default', 'web', binding({ kind: 'Node', name: 'node-1' }), false);
    const bound = await pods.get('default', 'web');
    assert.equal(await store.currentRevision(), revision + 1);
    assert.equal(bound.metadata!.resourceVersion, String(revision + 1));
    const { spec: boundSpec, metadata: boundMeta, ...boundRest } = bound;
    const { spec: createdSpec, metadata: createdMeta, ...createdRest } = created;
    assert.deepEqual(boundSpec, { ...(createdSpec as object), nodeName: 'node-1' });
    assert.deepEqual(
      { ...boundMeta, resourceVersion: undefined },
      { ...createdMeta, resourceVersion: undefined },
    );
    const { status: boundStatus, ...boundOthers } = boundRest as { status?: { conditions?: unknown[] } };
    const { status: createdStatus, ...createdOthers } = createdRest as {
      status?: { conditions?: unknown[] };
    };
    assert.deepEqual(boundOthers, createdOthers);
    assert.deepEqual(boundStatus, {
      ...createdStatus,
      conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: '2026-11-30T12:00:00Z' }],
    });
  });

  it('replaces an Unschedulable PodScheduled condition with True, as the binding REST does', async () => {
    const { pods } = podRegistry();
    await pods.create('default', pod('web'));
    await pods.updateInStorage('default', 'web', (p) => {
      p.status = {
        phase: 'Pending',
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'Unschedulable',
            message: '0/1 nodes are available: 1 Insufficient cpu.',
            lastTransitionTime: '2026-11-30T11:00:00Z',
          },
        ],
      };
    });
    await bindPod(pods, 'default', 'web', binding({ name: 'node-1' }), false);
    const bound = (await pods.get('default', 'web')) as { status?: { conditions?: unknown[] } };
    assert.deepEqual(bound.status!.conditions, [
      { type: 'PodScheduled', status: 'True', lastTransitionTime: '2026-11-30T12:00:00Z' },
    ]);
  });

  it('with dryRun writes nothing', async () => {
    const { store, pods } = podRegistry();
    await pods.create('default', pod('web'));
    const revision = await store.currentRevision();
    await bindPod(pods, 'default', 'web', binding({ name: 'node-1' }), true);
    assert.equal(await store.currentRevision(), revision);
    const spec = (await pods.get('default', 'web')).spec as { nodeName?: string };
    assert.equal(spec.nodeName, undefined);
  });

  const refusals: {
    name: string;
    stored?: (pods: Registry) => Promise<void>;
    binding: KubeObject;
    code: number;
    message: RegExp;
    field?: string;
  }[] = [
    {
      name: 'a Binding without target.name',
      binding: binding({ kind: 'Node' }),
      code: 422,
      message: /^Binding "web" is invalid: target.name: Required value$/,
      field: 'target.name',
    },
    {
      name: 'a target of another kind',
      binding: binding({ kind: 'Pod', name: 'node-1' }),
      code: 422,
      message: /target.kind: Unsupported value: "Pod"/,
      field: 'target.kind',
    },
    {
      name: 'another kind of body',
      binding: binding({ name: 'node-1' }, { kind: 'Eviction' }),
      code: 400,
      message: /expected a Binding, got Eviction/,
    },
    {
      name: 'a Binding named after another pod',
      binding: binding({ name: 'node-1' }, { metadata: { name: 'other' } }),
      code: 400,
      message: /does not match the pod name on the URL/,
    },
    {
      name: 'a node name that is not a DNS subdomain',
      binding: binding({ name: 'Node_1' }),
      code: 422,
      message:
        /^Pod "web" is invalid: spec.nodeName: Invalid value: "Node_1": a lowercase RFC 1123 subdomain/,
      field: 'spec.nodeName',
    },
    {
      name: 'a pod that is already bound',
      stored: async (pods) => {
        await bindPod(pods, 'default', 'web', binding({ name: 'node-0' }), false);
      },
      binding: binding({ name: 'node-1' }),
      code: 409,
      message: /pod web is already assigned to node "node-0"/,
    },
    {
      name: 'a pod being deleted',
      stored: async (pods) => {
        await pods.update('default', 'web', {
          ...(await pods.get('default', 'web')),
          metadata: { ...(await pods.get('default', 'web')).metadata, finalizers: ['example.com/hold'] },
        });
        await pods.delete('default', 'web');
      },
      binding: binding({ name: 'node-1' }),
      code: 409,
      message: /pod is being deleted, cannot be assigned to a host/,
    },
  ];
  for (const c of refusals) {
    it(`refuses ${c.name} (${c.code}) and writes nothing`, async () => {
      const { store, pods } = podRegistry();
      await pods.create('default', pod('web'));
      await c.stored?.(pods);
      const revision = await store.currentRevision();
      await assert.rejects(bindPod(pods, 'default', 'web', c.binding, false), (err: unknown) => {
        assert.ok(err instanceof ApiError, String(err));
        assert.equal(err.code, c.code);
        assert.match(err.message, c.message);
        if (c.field) assert.equal(err.details?.causes?.[0]?.field, c.field);
        return true;
      });
      assert.equal(await store.currentRevision(), revision);
    });
  }

  it('answers 404 for a missing pod', async () => {
    const { pods } = podRegistry();
    await assert.rejects(
      bindPod(pods, 'default', 'web', binding({ name: 'node-1' }), false),
      (err: unknown) => err instanceof ApiError && err.code === 404,
    );
  });

  it('binds exactly once when bindings race', async () => {
    const { pods } = podRegistry();
    await pods.create('default', pod('web'));
    const results = await Promise.allSettled(
      ['node-1', 'node-2', 'node-3'].map((n) => bindPod(pods, 'default', 'web', binding({ name: n }), false)),
    );
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    for (const r of results) {
      if (r.status === 'rejected') assert.equal((r.reason as ApiError).code, 409);
    }
  });
});
