import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject, ManagedFieldsEntry } from '../../../api/object.js';
import { ApiError } from '../status.js';
import { LAST_APPLIED_ANNOTATION, serverSideApply, type ServerSideApplyOptions } from './apply.js';
import type { JsonObject } from './json.js';
import { recordUpdate } from './record-update.js';
import { loadModels } from '../openapi/index.js';

// The patch schemas come from the client-node models the OpenAPI catalog loads.
await loadModels();

const T0 = new Date('2026-01-01T00:00:00Z');
const T1 = new Date('2026-01-01T00:01:00Z');
const T2 = new Date('2026-01-01T00:02:00Z');

/** An applied Deployment configuration. */
function config(spec: JsonObject, metadata: JsonObject = {}): JsonObject {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', ...metadata }, spec };
}

function apply(
  live: KubeObject | undefined,
  applied: JsonObject,
  fieldManager: string,
  extra: Partial<ServerSideApplyOptions> = {},
): KubeObject {
  const out = serverSideApply({
    live,
    applied,
    model: 'V1Deployment',
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    fieldManager,
    force: false,
    now: T0,
    ...extra,
  });
  // What the registry would add on create.
  if (!live) out.metadata = { ...out.metadata, uid: 'uid-1', resourceVersion: '1' };
  return out;
}

function entry(obj: KubeObject, manager: string): ManagedFieldsEntry | undefined {
  return obj.metadata?.managedFields?.find((e) => e.manager === manager);
}

function spec(obj: KubeObject): JsonObject {
  return obj.spec as JsonObject;
}

function container(obj: KubeObject, i = 0): JsonObject {
  return ((spec(obj).template as JsonObject).spec as { containers: JsonObject[] }).containers[i]!;
}

const template = (containers: JsonObject[]): JsonObject => ({
  metadata: { labels: { app: 'web' } },
  spec: { containers },
});

const base = config({
  replicas: 2,
  selector: { matchLabels: { app: 'web' } },
  template: template([{ name: 'c', image: 'nginx:1', ports: [{ containerPort: 80 }] }]),
});

function conflictOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ApiError, `expected an ApiError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a conflict');
}

describe('serverSideApply', () => {
  it('creates: the object is the configuration, owned field by field by the applier', () => {
    const obj = apply(undefined, base, 'kubectl');
    assert.equal(spec(obj).replicas, 2);
    assert.deepEqual(obj.metadata?.managedFields, [
      {
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'apps/v1',
        time: '2026-01-01T00:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:spec': {
            'f:replicas': {},
            'f:selector': {},
            'f:template': {
              'f:metadata': { 'f:labels': { 'f:app': {} } },
              'f:spec': {
                'f:containers': {
                  'k:{"name":"c"}': {
                    '.': {},
                    'f:image': {},
                    'f:name': {},
                    'f:ports': {
                      'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} },
                    },
                  },
                },
              },
            },
          },
        },
      },
    ]);
  });

  it('re-applies a change: values move, ownership stays, the time advances', () => {
    const live = apply(undefined, base, 'kubectl');
    const changed = structuredClone(base);
    (changed.spec as JsonObject).replicas = 3;
    const obj = apply(live, changed, 'kubectl', { now: T1 });
    assert.equal(spec(obj).replicas, 3);
    assert.equal(entry(obj, 'kubectl')?.time, '2026-01-01T00:01:00Z');
    assert.deepEqual(entry(obj, 'kubectl')?.fieldsV1, entry(live, 'kubectl')?.fieldsV1);
    assert.equal(spec(live).replicas, 2, 'the live object is not modified');
  });

  it('a no-op apply keeps the time', () => {
    const live = apply(undefined, base, 'kubectl');
    const obj = apply(live, base, 'kubectl', { now: T1 });
    assert.equal(entry(obj, 'kubectl')?.time, '2026-01-01T00:00:00Z');
  });

  it('conflicts with another applier that owns a field it changes (409, causes)', () => {
    const live = apply(undefined, base, 'kubectl');
    const err = conflictOf(() => apply(live, config({ replicas: 5 }), 'hpa'));
    assert.equal(err.code, 409);
    assert.equal(err.reason, 'Conflict');
    assert.equal(err.message, 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas');
    assert.deepEqual(err.details, {
      causes: [
        { reason: 'FieldManagerConflict', message: 'conflict with "kubectl"', field: '.spec.replicas' },
      ],
    });
  });

  it('names an Update manager with its apiVersion, and lists several conflicts', () => {
    const live = apply(undefined, base, 'kubectl');
    const edited = structuredClone(live);
    spec(edited).replicas = 9;
    container(edited).image = 'nginx:2';
    recordUpdate(edited, live, 'kubectl-edit', 'apps/v1', T1);
    const err = conflictOf(() => apply(edited, base, 'kubectl'));
    assert.equal(
      err.message,
      'Apply failed with 2 conflicts: conflicts with "kubectl-edit" using apps/v1:\n' +
        '- .spec.replicas\n' +
        '- .spec.template.spec.containers[name="c"].image',
    );
  });

  it('shares a field applied with the value it already has', () => {
    const live = apply(undefined, base, 'kubectl');
    const obj = apply(live, config({ replicas: 2 }), 'hpa', { now: T1 });
    assert.deepEqual(entry(obj, 'hpa')?.fieldsV1, { 'f:spec': { 'f:replicas': {} } });
    assert.ok((entry(obj, 'kubectl')?.fieldsV1 as JsonObject)['f:spec']);
    assert.equal(entry(obj, 'hpa')?.time, undefined, 'nothing changed, so no time');
  });

  it('force takes the field over', () => {
    const live = apply(undefined, base, 'kubectl');
    const obj = apply(live, config({ replicas: 5 }), 'hpa', { force: true, now: T1 });
    assert.equal(spec(obj).replicas, 5);
    const kubectl = entry(obj, 'kubectl')?.fieldsV1 as { 'f:spec': JsonObject };
    assert.equal('f:replicas' in kubectl['f:spec'], false);
    assert.deepEqual(entry(obj, 'hpa')?.fieldsV1, { 'f:spec': { 'f:replicas': {} } });
    // kubectl re-applying its old value now conflicts with hpa.
    assert.match(
      conflictOf(() => apply(obj, base, 'kubectl')).message,
      /conflict with "hpa": \.spec\.replicas/,
    );
  });

  it('removes fields the applier dropped that nobody else owns', () => {
    const withExtra = structuredClone(base);
    (withExtra.metadata as JsonObject).labels = { team: 'a', tier: 'web' };
    container(withExtra as KubeObject).imagePullPolicy = 'Always';
    const live = apply(undefined, withExtra, 'kubectl');
    const obj = apply(live, base, 'kubectl', { now: T1 });
    assert.equal(obj.metadata?.labels, undefined, 'emptied labels are removed');
    assert.equal(container(obj).imagePullPolicy, undefined);
    assert.equal(container(obj).image, 'nginx:1');
  });

  it('keeps a dropped field another manager owns', () => {
    const live = apply(undefined, base, 'kubectl');
    const shared = apply(live, config({ replicas: 2 }), 'hpa', { now: T1 });
    const dropped = structuredClone(base);
    delete (dropped.spec as JsonObject).replicas;
    const obj = apply(shared, dropped, 'kubectl', { now: T2 });
    assert.equal(spec(obj).replicas, 2);
  });

  it('keeps dropped fields nobody applied (defaults, other writers)', () => {
    const live = apply(undefined, base, 'kubectl');
    const defaulted = structuredClone(live);
    container(defaulted).terminationMessagePath = '/dev/termination-log';
    const obj = apply(defaulted, base, 'kubectl', { now: T1 });
    assert.equal(container(obj).terminationMessagePath, '/dev/termination-log');
  });

  it('removes a dropped container, and a dropped port', () => {
    const two = config({
      template: template([
        { name: 'a', image: 'x', ports: [{ containerPort: 80 }, { containerPort: 443 }] },
        { name: 'b', image: 'y' },
      ]),
    });
    const live = apply(undefined, two, 'kubectl');
    const one = config({ template: template([{ name: 'a', image: 'x', ports: [{ containerPort: 443 }] }]) });
    const obj = apply(live, one, 'kubectl', { now: T1 });
    assert.deepEqual((spec(obj).template as JsonObject).spec, {
      containers: [{ name: 'a', image: 'x', ports: [{ containerPort: 443 }] }],
    });
  });

  it('removes a dropped container even when an updater changed a field inside it', () => {
    const two = config({ template: template([{ name: 'a' }, { name: 'b', image: 'y' }]) });
    const live = apply(undefined, two, 'kubectl');
    const edited = structuredClone(live);
    container(edited, 1).image = 'z';
    recordUpdate(edited, live, 'kubectl-edit', 'apps/v1', T1);
    const obj = apply(edited, config({ template: template([{ name: 'a' }]) }), 'kubectl', { now: T2 });
    assert.deepEqual(((spec(obj).template as JsonObject).spec as JsonObject).containers, [{ name: 'a' }]);
    assert.equal(entry(obj, 'kubectl-edit'), undefined, 'the updater lost the removed field');
  });

  it('merges containers by name and keeps live-only items in place', () => {
    const live = apply(undefined, config({ template: template([{ name: 'a' }, { name: 'b' }]) }), 'one');
    const obj = apply(
      live,
      config({ template: template([{ name: 'b', image: 'z' }, { name: 'c' }]) }),
      'two',
    );
    const names = ((spec(obj).template as JsonObject).spec as { containers: JsonObject[] }).containers;
    assert.deepEqual(names, [{ name: 'a' }, { name: 'b', image: 'z' }, { name: 'c' }]);
  });

  it('before the first apply, what an object holds belongs to "before-first-apply"', () => {
    const legacy: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', uid: 'u' },
      spec: { replicas: 1 },
    };
    const err = conflictOf(() => apply(legacy, config({ replicas: 4 }), 'kubectl'));
    assert.equal(
      err.message,
      'Apply failed with 1 conflict: conflict with "before-first-apply" using apps/v1: .spec.replicas',
    );
    const obj = apply(legacy, config({ replicas: 1, paused: true }), 'kubectl');
    assert.deepEqual(
      obj.metadata?.managedFields?.map((e) => [e.manager, e.operation]),
      [
        ['kubectl', 'Apply'],
        ['before-first-apply', 'Update'],
      ],
    );
  });

  it('lets `kubectl apply --server-side` take over fields of a client-side apply', () => {
    const manifest = config({ replicas: 2, selector: { matchLabels: { app: 'web' } } });
    const csa: KubeObject = structuredClone(manifest);
    csa.metadata!.annotations = { [LAST_APPLIED_ANNOTATION]: `${JSON.stringify(manifest)}\n` };
    recordUpdate(csa, undefined, 'kubectl-client-side-apply', 'apps/v1', T0);
    csa.metadata!.uid = 'u';

    const next = config({ replicas: 3, selector: { matchLabels: { app: 'web' } } });
    // Another manager conflicts with the client-side applier...
    assert.equal(
      conflictOf(() => apply(csa, next, 'ci')).message,
      'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas',
    );
    // ...kubectl's server-side apply takes the fields the annotation still describes.
    const obj = apply(csa, next, 'kubectl', { now: T1 });
    assert.equal(spec(obj).replicas, 3);
    assert.deepEqual(
      JSON.parse(obj.metadata!.annotations![LAST_APPLIED_ANNOTATION]!),
      next,
      'the last-applied annotation follows the server-side apply',
    );
    const csaFields = entry(obj, 'kubectl-client-side-apply')?.fieldsV1 as { 'f:spec'?: JsonObject };
    assert.equal(csaFields['f:spec']?.['f:replicas'], undefined);
  });

  it('does not take over fields changed since the client-side apply', () => {
    const manifest = config({ replicas: 2 });
    const csa: KubeObject = structuredClone(manifest);
    csa.metadata!.annotations = { [LAST_APPLIED_ANNOTATION]: `${JSON.stringify(manifest)}\n` };
    recordUpdate(csa, undefined, 'kubectl-client-side-apply', 'apps/v1', T0);
    csa.metadata!.uid = 'u';
    const scaled = structuredClone(csa);
    spec(scaled).replicas = 7;
    recordUpdate(scaled, csa, 'kubectl-client-side-apply', 'apps/v1', T1);
    assert.match(
      conflictOf(() => apply(scaled, config({ replicas: 3 }), 'kubectl')).message,
      /\.spec\.replicas/,
    );
  });

  it('never owns reset fields (status on the main resource)', () => {
    const obj = apply(undefined, { ...base, status: { replicas: 1 } }, 'kubectl', {
      resetFields: ['status'],
    });
    assert.equal('f:status' in (entry(obj, 'kubectl')?.fieldsV1 ?? {}), false);
  });

  const badRequests: [string, JsonObject, RegExp][] = [
    ['another kind', { ...base, kind: 'ReplicaSet' }, /^invalid object type: apps\/v1, Kind=ReplicaSet$/],
    ['no apiVersion', { kind: 'Deployment' }, /^invalid object type: \/, Kind=Deployment$/],
    [
      'managedFields in the configuration',
      config({}, { managedFields: [] }),
      /^metadata\.managedFields must be nil$/,
    ],
  ];
  for (const [name, applied, message] of badRequests) {
    it(`answers 400 BadRequest for ${name}`, () => {
      const err = conflictOf(() => apply(undefined, applied, 'kubectl'));
      assert.equal(err.code, 400);
      assert.match(err.message, message);
    });
  }

  // structured-merge-diff's typed/validate.go words, after "failed to create typed patch
  // object (/web; apps/v1, Kind=Deployment): "; a plain error upstream, so 500 without reason.
  const untyped: [string, JsonObject, string][] = [
    [
      'a field the schema does not declare',
      config({ replicas: 1, replica: 2 }),
      '.spec.replica: field not declared in schema',
    ],
    [
      'a container without a name',
      config({ template: template([{ image: 'x' }]) }),
      '.spec.template.spec.containers: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)',
    ],
    [
      'two containers with one name',
      config({ template: template([{ name: 'a' }, { name: 'a' }]) }),
      '.spec.template.spec.containers: duplicate entries for key [name="a"]',
    ],
    ['a list where a map belongs', config({ selector: [] }), '.spec.selector: expected map, got &{[]}'],
    [
      'a string where a list belongs',
      config({}, { finalizers: 'x' }),
      '.metadata.finalizers: expected list, got &{x}',
    ],
    [
      'a boolean label',
      config({}, { labels: { v: true } }),
      '.metadata.labels.v: expected string, got &value.valueUnstructured{Value:true}',
    ],
    [
      'a number label',
      config({}, { labels: { v: 5 } }),
      '.metadata.labels.v: expected string, got &value.valueUnstructured{Value:5}',
    ],
    [
      'a map annotation',
      config({}, { annotations: { a: { b: 'c', a: [1, 'x', null] } } }),
      '.metadata.annotations.a: expected string, got &value.valueUnstructured{Value:map[string]interface {}{"a":[]interface {}{1, "x", interface {}(nil)}, "b":"c"}}',
    ],
    [
      'a string replica count',
      config({ replicas: '2' }),
      '.spec.replicas: expected numeric (int or float), got string',
    ],
    [
      'a boolean replica count',
      config({ replicas: true }),
      '.spec.replicas: expected numeric (int or float), got bool',
    ],
    ['a string boolean', config({ paused: 'yes' }), '.spec.paused: expected boolean, got &{yes}'],
    [
      'a map where IntOrString belongs',
      config({ strategy: { rollingUpdate: { maxSurge: { a: 1 } } } }),
      '.spec.strategy.rollingUpdate.maxSurge: expected any scalar, got &{map[a:1]}',
    ],
  ];
  for (const [name, applied, detail] of untyped) {
    it(`answers 500 (reason Unknown) for ${name}`, () => {
      const err = conflictOf(() => apply(undefined, applied, 'kubectl'));
      assert.equal(err.code, 500);
      assert.equal(err.reason, '');
      assert.equal(
        err.message,
        `failed to create typed patch object (/web; apps/v1, Kind=Deployment): ${detail}`,
      );
    });
  }

  it('takes numbers, strings and booleans where the schema leaves the scalar open', () => {
    const obj = apply(
      undefined,
      config({
        selector: { matchLabels: { app: 'web' } },
        strategy: { rollingUpdate: { maxSurge: 1, maxUnavailable: '10%' } },
        template: template([{ name: 'c', image: 'x', resources: { limits: { cpu: 1, memory: '1Gi' } } }]),
      }),
      'kubectl',
    );
    assert.deepEqual(container(obj).resources, { limits: { cpu: 1, memory: '1Gi' } });
  });

  it('lists every error, one per line', () => {
    const err = conflictOf(() => apply(undefined, config({ replicas: 'x', paused: 1 }), 'kubectl'));
    assert.equal(
      err.message,
      [
        'failed to create typed patch object (/web; apps/v1, Kind=Deployment): errors:',
        '  .spec.replicas: expected numeric (int or float), got string',
        '  .spec.paused: expected boolean, got &{1}',
      ].join('\n'),
    );
  });
});

describe('recordUpdate', () => {
  const created = (): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', labels: { app: 'web' }, creationTimestamp: 'x', uid: 'u' },
    spec: {
      replicas: 1,
      strategy: { type: 'RollingUpdate' },
      template: template([{ name: 'c', image: 'nginx', resources: {} }]),
    },
  });

  it('records a create: the writer owns every field it set, with "." on new maps, lists and items', () => {
    const obj = recordUpdate(created(), undefined, 'kubectl-create', 'apps/v1', T0);
    assert.deepEqual(obj.metadata?.managedFields, [
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: 'apps/v1',
        time: '2026-01-01T00:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
          'f:spec': {
            'f:replicas': {},
            'f:strategy': { 'f:type': {} },
            'f:template': {
              'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
              'f:spec': {
                'f:containers': {
                  '.': {},
                  'k:{"name":"c"}': { '.': {}, 'f:image': {}, 'f:name': {}, 'f:resources': {} },
                },
              },
            },
          },
        },
      },
    ]);
  });

  it('moves changed fields to the writer and leaves the rest', () => {
    const v1 = recordUpdate(created(), undefined, 'kubectl-create', 'apps/v1', T0);
    const v2 = structuredClone(v1);
    spec(v2).replicas = 3;
    recordUpdate(v2, v1, 'kubectl-scale', 'apps/v1', T1);
    assert.deepEqual(entry(v2, 'kubectl-scale')?.fieldsV1, { 'f:spec': { 'f:replicas': {} } });
    const create = entry(v2, 'kubectl-create')?.fieldsV1 as { 'f:spec': JsonObject };
    assert.equal('f:replicas' in create['f:spec'], false);
    assert.equal(entry(v2, 'kubectl-create')?.time, '2026-01-01T00:00:00Z');
    assert.deepEqual(
      v2.metadata?.managedFields?.map((e) => e.manager),
      ['kubectl-create', 'kubectl-scale'],
      'Update entries oldest first',
    );
  });

  it('drops removed fields from every manager, and managers left with nothing', () => {
    const v1 = recordUpdate(created(), undefined, 'kubectl-create', 'apps/v1', T0);
    const v2 = structuredClone(v1);
    spec(v2).paused = true;
    recordUpdate(v2, v1, 'pauser', 'apps/v1', T1);
    const v3 = structuredClone(v2);
    delete spec(v3).paused;
    recordUpdate(v3, v2, 'kubectl-edit', 'apps/v1', T2);
    assert.deepEqual(
      v3.metadata?.managedFields?.map((e) => e.manager),
      ['kubectl-create'],
    );
  });

  it('does not bump the time of a write that changed nothing', () => {
    const v1 = recordUpdate(created(), undefined, 'kubectl-create', 'apps/v1', T0);
    const v2 = recordUpdate(structuredClone(v1), v1, 'kubectl-create', 'apps/v1', T1);
    assert.deepEqual(v2.metadata?.managedFields, v1.metadata?.managedFields);
  });

  it('leaves an existing untracked object untracked, and resets on an empty list', () => {
    const old = created();
    const next = created();
    spec(next).replicas = 2;
    assert.equal(recordUpdate(next, old, 'x', 'apps/v1', T1).metadata?.managedFields, undefined);
    const tracked = recordUpdate(created(), undefined, 'kubectl-create', 'apps/v1', T0);
    const reset = structuredClone(tracked);
    reset.metadata!.managedFields = [];
    assert.equal(recordUpdate(reset, tracked, 'x', 'apps/v1', T1).metadata?.managedFields, undefined);
  });

  it('records an unnamed writer as "unknown" and a subresource write separately', () => {
    const v1 = recordUpdate(created(), undefined, '', 'apps/v1', T0);
    assert.equal(v1.metadata?.managedFields?.[0]?.manager, 'unknown');
    const v2 = structuredClone(v1);
    v2.status = { replicas: 1 };
    recordUpdate(v2, v1, 'kube-controller-manager', 'apps/v1', T1, { subresource: 'status' });
    assert.deepEqual(entry(v2, 'kube-controller-manager'), {
      manager: 'kube-controller-manager',
      operation: 'Update',
      apiVersion: 'apps/v1',
      time: '2026-01-01T00:01:00Z',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:status': { 'f:replicas': {} } },
      subresource: 'status',
    });
  });

  it('folds the oldest of more than 10 Update managers into "ancient-changes"', () => {
    let obj = recordUpdate(created(), undefined, 'm0', 'apps/v1', T0);
    for (let i = 1; i <= 11; i++) {
      const next = structuredClone(obj);
      (next.metadata!.labels as Record<string, string>)[`k${i}`] = 'v';
      obj = recordUpdate(next, obj, `m${i}`, 'apps/v1', new Date(T0.getTime() + i * 1000));
    }
    const managers = obj.metadata!.managedFields!.map((e) => e.manager);
    assert.equal(managers.length, 10);
    assert.equal(managers.includes('ancient-changes'), true);
    assert.equal(managers.includes('m0') || managers.includes('m1'), false);
  });
});
