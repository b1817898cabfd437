import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseLabelSelector } from '../../api/meta/labels.js';
import { parseFieldSelector } from '../../api/meta/fields.js';
import { invalid as invalidField, type FieldError } from '../../api/meta/validation.js';
import type { KubeObject } from '../../api/object.js';
import { MemoryStore } from '../storage/memory.js';
import { Registry } from './registry.js';
import { findResource } from './resources.js';
import { ApiError } from './status.js';
import type { Strategy } from './strategy.js';

/** A Deployment-like strategy: spec with replicas, a status subresource, generation on spec. */
const testStrategy: Strategy = {
  prepareForCreate: (obj) => {
    obj.status = {};
  },
  prepareForUpdate: (obj, old) => {
    obj.status = old.status;
  },
  prepareForStatusUpdate: (obj, old) => {
    obj.spec = old.spec;
    obj.metadata!.labels = old.metadata!.labels!;
  },
  defaults: (obj) => {
    const spec = (obj.spec ??= {}) as { replicas?: number };
    spec.replicas ??= 1;
  },
  validate: (obj) => {
    const errs: FieldError[] = [];
    const r = (obj.spec as { replicas?: number }).replicas!;
    if (r < 0) errs.push(invalidField('spec.replicas', r, 'must be greater than or equal to 0'));
    return errs;
  },
  validateUpdate: () => [],
  validateStatusUpdate: () => [],
  generationFields: ['spec'],
  selectableFields: (obj) => ({
    'metadata.name': obj.metadata?.name ?? '',
    'metadata.namespace': obj.metadata?.namespace ?? '',
  }),
};

function setup() {
  const store = new MemoryStore();
  let n = 0;
  const registry = new Registry({
    store,
    resource: findResource('apps', 'v1', 'deployments')!,
    strategy: testStrategy,
    now: () => new Date(Date.UTC(2026, 10, 30, 12, 0, 0)),
    uid: () => `uid-${++n}`,
  });
  return { store, registry };
}

const deploy = (name: string, extra: Partial<KubeObject> = {}): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels: { app: name } },
  spec: { replicas: 2 },
  ...extra,
});

async function rejects(p: Promise<unknown>, code: number, reason: string): Promise<ApiError> {
  let caught: unknown;
  await assert.rejects(p, (e) => ((caught = e), true));
  assert.ok(caught instanceof ApiError, String(caught));
  assert.equal(caught.code, code, caught.message);
  assert.equal(caught.reason, reason);
  return caught;
}

describe('Registry', () => {
  it('create fills the system fields, defaults, and resourceVersion from the store', async () => {
    const { store, registry } = setup();
    const obj = await registry.create('default', {
      ...deploy('web'),
      metadata: { name: 'web', uid: 'client-sent', resourceVersion: '999', generation: 7 },
      status: { readyReplicas: 5 },
    });
    assert.equal(obj.metadata!.uid, 'uid-1');
    assert.equal(obj.metadata!.namespace, 'default');
    assert.equal(obj.metadata!.creationTimestamp, '2026-11-30T12:00:00Z');
    assert.equal(obj.metadata!.generation, 1);
    assert.equal(obj.metadata!.resourceVersion, String(await store.currentRevision()));
    assert.deepEqual(obj.status, {});
    const stored = JSON.parse((await store.get('/registry/deployments/default/web'))!.value) as KubeObject;
    assert.equal(stored.metadata!.resourceVersion, undefined, 'resourceVersion is not stored');
    assert.deepEqual(await registry.get('default', 'web'), obj);
  });

  it('generateName makes a name with a random suffix', async () => {
    const { registry } = setup();
    const obj = await registry.create('default', { ...deploy(''), metadata: { generateName: 'web-' } });
    assert.match(obj.metadata!.name!, /^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('rejects bad creates with the Kubernetes status and writes nothing', async () => {
    const { store, registry } = setup();
    await registry.create('default', deploy('web'));
    const rev = await store.currentRevision();
    const e = await rejects(registry.create('default', deploy('Bad_Name')), 422, 'Invalid');
    assert.match(
      e.message,
      /^Deployment\.apps "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
    );
    assert.equal(e.details?.causes?.[0]?.field, 'metadata.name');
    const neg = await rejects(
      registry.create('default', { ...deploy('neg'), spec: { replicas: -1 } }),
      422,
      'Invalid',
    );
    assert.deepEqual(neg.details?.causes, [
      {
        reason: 'FieldValueInvalid',
        field: 'spec.replicas',
        message: 'Invalid value: -1: must be greater than or equal to 0',
      },
    ]);
    await rejects(registry.create('default', { ...deploy('x'), metadata: {} }), 422, 'Invalid');
    await rejects(registry.create('default', deploy('web')), 409, 'AlreadyExists');
    await rejects(
      registry.create('default', { ...deploy('ns'), metadata: { name: 'ns', namespace: 'other' } }),
      400,
      'BadRequest',
    );
    await rejects(registry.create('default', { ...deploy('k'), kind: 'ReplicaSet' }), 400, 'BadRequest');
    await rejects(
      registry.create('default', { ...deploy('v'), apiVersion: 'apps/v1beta1' }),
      400,
      'BadRequest',
    );
    assert.equal(await store.currentRevision(), rev);
  });

  it('update: stale resourceVersion → 409; generation moves only with spec; status is kept from the stored object', async () => {
    const { registry } = setup();
    const v1 = await registry.create('default', deploy('web'));
    const stale = structuredClone(v1);
    const v2 = await registry.update('default', 'web', {
      ...v1,
      metadata: { ...v1.metadata, labels: { app: 'x' } },
    });
    assert.equal(v2.metadata!.generation, 1, 'a label change is not a spec change');
    await rejects(registry.update('default', 'web', stale), 409, 'Conflict');
    const v3 = await registry.update('default', 'web', {
      ...v2,
      spec: { replicas: 5 },
      status: { readyReplicas: 9 },
    });
    assert.equal(v3.metadata!.generation, 2);
    assert.deepEqual(v3.status, {}, 'the main resource ignores status');
    // Without a resourceVersion the update is unconditional.
    const { resourceVersion: _rv, ...meta } = v3.metadata!;
    const v4 = await registry.update('default', 'web', { ...v3, metadata: meta, spec: { replicas: 6 } });
    assert.equal(v4.metadata!.generation, 3);
    await rejects(
      registry.update('default', 'web', { ...v4, metadata: { ...v4.metadata, uid: 'other' } }),
      422,
      'Invalid',
    );
    await rejects(registry.update('default', 'other', v4), 400, 'BadRequest');
    await rejects(registry.update('default', 'missing', { ...deploy('missing') }), 404, 'NotFound');
  });

  it('status updates change only status, and not generation', async () => {
    const { registry } = setup();
    const v1 = await registry.create('default', deploy('web'));
    const s = await registry.update(
      'default',
      'web',
      { ...v1, spec: { replicas: 50 }, status: { readyReplicas: 2 } },
      { subresource: 'status' },
    );
    assert.deepEqual(s.spec, { replicas: 2 });
    assert.deepEqual(s.status, { readyReplicas: 2 });
    assert.equal(s.metadata!.generation, 1);
  });

  it('guaranteedUpdate retries on storage conflicts so concurrent changes of different fields both land', async () => {
    const { registry } = setup();
    await registry.create('default', deploy('web'));
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        registry.guaranteedUpdate('default', 'web', (cur) => {
          cur.metadata!.annotations = { ...cur.metadata!.annotations, [`a${i}`]: 'x' };
          return cur;
        }),
      ),
    );
    assert.equal(Object.keys((await registry.get('default', 'web')).metadata!.annotations!).length, 10);
  });

  it('delete removes at once without finalizers; with finalizers it marks and waits', async () => {
    const { registry } = setup();
    await registry.create('default', deploy('plain'));
    const r1 = await registry.delete('default', 'plain');
    assert.equal(r1.deleted, true);
    await rejects(registry.get('default', 'plain'), 404, 'NotFound');
    await rejects(registry.delete('default', 'plain'), 404, 'NotFound');

    await registry.create('default', {
      ...deploy('fin'),
      metadata: { name: 'fin', finalizers: ['example.com/x'] },
    });
    const r2 = await registry.delete('default', 'fin');
    assert.equal(r2.deleted, false);
    assert.equal(r2.object.metadata!.deletionTimestamp, '2026-11-30T12:00:00Z');
    const marked = await registry.get('default', 'fin');
    await rejects(
      registry.update('default', 'fin', {
        ...marked,
        metadata: { ...marked.metadata, finalizers: ['example.com/x', 'new'] },
      }),
      422,
      'Invalid',
    );
    const cleared = await registry.update('default', 'fin', {
      ...marked,
      metadata: { ...marked.metadata, finalizers: [] },
    });
    assert.equal(await registry.finishDeletionIfDone(cleared), true);
    await rejects(registry.get('default', 'fin'), 404, 'NotFound');
  });

  it('empty ownerReferences and finalizers are omitted, as ObjectMeta omitempty does', async () => {
    const { store, registry } = setup();
    const owner = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'o', uid: 'uid-o', controller: true };
    const created = await registry.create('default', {
      ...deploy('owned'),
      metadata: { name: 'owned', ownerReferences: [owner], finalizers: ['example.com/x'] },
    });
    const released = await registry.update('default', 'owned', {
      ...created,
      metadata: { ...created.metadata, ownerReferences: [], finalizers: [] },
    });
    assert.equal('ownerReferences' in released.metadata!, false);
    assert.equal('finalizers' in released.metadata!, false);
    const stored = JSON.parse((await store.get('/registry/deployments/default/owned'))!.value) as KubeObject;
    assert.equal('ownerReferences' in stored.metadata!, false);
    assert.equal('finalizers' in stored.metadata!, false);
    // Writing the empty lists again is no change: same resourceVersion.
    const again = await registry.update('default', 'owned', {
      ...released,
      metadata: { ...released.metadata, ownerReferences: [], finalizers: [] },
    });
    assert.equal(again.metadata!.resourceVersion, released.metadata!.resourceVersion);
  });

  it('delete with propagationPolicy Orphan or Foreground records the garbage collector finalizer', async () => {
    const { registry } = setup();
    await registry.create('default', deploy('o'));
    await registry.create('default', deploy('f'));
    assert.deepEqual(
      (await registry.delete('default', 'o', { propagationPolicy: 'Orphan' })).object.metadata!.finalizers,
      ['orphan'],
    );
    assert.deepEqual(
      (await registry.delete('default', 'f', { propagationPolicy: 'Foreground' })).object.metadata!
        .finalizers,
      ['foregroundDeletion'],
    );
  });

  it('delete preconditions: a different uid or resourceVersion → 409', async () => {
    const { registry } = setup();
    const obj = await registry.create('default', deploy('web'));
    await rejects(registry.delete('default', 'web', { preconditions: { uid: 'nope' } }), 409, 'Conflict');
    await rejects(
      registry.delete('default', 'web', { preconditions: { resourceVersion: '1' } }),
      409,
      'Conflict',
    );
    assert.equal(
      (await registry.delete('default', 'web', { preconditions: { uid: obj.metadata!.uid! } })).deleted,
      true,
    );
  });

  it('list filters by labels and fields, pages with limit/continue over one snapshot, and spans namespaces', async () => {
    const { registry } = setup();
    for (const ns of ['a', 'b']) for (const name of ['x', 'y', 'z']) await registry.create(ns, deploy(name));
    const inA = await registry.list('a');
    assert.deepEqual(
      inA.items.map((o) => o.metadata!.name),
      ['x', 'y', 'z'],
    );
    assert.equal(inA.kind, 'DeploymentList');
    assert.equal(inA.apiVersion, 'apps/v1');
    const all = await registry.list(undefined, { labelSelector: parseLabelSelector('app in (x,z)') });
    assert.deepEqual(
      all.items.map((o) => `${o.metadata!.namespace}/${o.metadata!.name}`),
      ['a/x', 'a/z', 'b/x', 'b/z'],
    );
    const byName = await registry.list(undefined, {
      fieldSelector: parseFieldSelector('metadata.name=y,metadata.namespace!=a'),
    });
    assert.deepEqual(
      byName.items.map((o) => `${o.metadata!.namespace}/${o.metadata!.name}`),
      ['b/y'],
    );
    const p1 = await registry.list(undefined, { limit: 4 });
    assert.equal(p1.items.length, 4);
    await registry.create('a', deploy('late'));
    const p2 = await registry.list(undefined, { limit: 4, continue: p1.metadata.continue! });
    assert.equal(p2.items.length, 2);
    assert.equal(p2.metadata.continue, undefined);
    assert.equal(p2.metadata.resourceVersion, p1.metadata.resourceVersion);
    await rejects(registry.list(undefined, { resourceVersion: 'abc' }), 400, 'BadRequest');
  });
});
