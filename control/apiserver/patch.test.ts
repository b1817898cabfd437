import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import type { KubeObject } from '../../api/object.js';
import {
  applyPatch,
  createFromApply,
  LAST_APPLIED_ANNOTATION,
  managerOrUserAgent,
  PATCH_CONTENT_TYPES,
  recordUpdate,
  type ApplyPatchOptions,
} from './patch.js';
import { ApiError } from './status.js';
import { loadModels } from './openapi/index.js';

// The patch schemas come from the client-node models the OpenAPI catalog loads.
await loadModels();

const FIXTURE = readFileSync(
  new URL('../../../shared/fixtures/spring-deployment.yaml', import.meta.url),
  'utf8',
);
const T0 = new Date('2026-01-01T00:00:00Z');
const T1 = new Date('2026-01-01T00:05:00Z');

const JSON_PATCH = 'application/json-patch+json';
const MERGE_PATCH = 'application/merge-patch+json';
const SMP = 'application/strategic-merge-patch+json';
const APPLY = 'application/apply-patch+yaml';

type Json = Record<string, unknown>;

/** Go's json.Marshal of an unstructured object: keys sorted. */
function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Json;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sortedJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** The annotation `kubectl apply` writes: the manifest as JSON, with a newline. */
function lastApplied(manifest: Json): string {
  return `${sortedJson(manifest)}\n`;
}

/** Some of the defaults the API server fills into a Deployment. */
function withDefaults(obj: KubeObject): KubeObject {
  const spec = obj.spec as Json;
  spec.strategy ??= { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } };
  spec.revisionHistoryLimit ??= 10;
  const containers = ((spec.template as Json).spec as { containers: Json[] }).containers;
  for (const c of containers) {
    c.terminationMessagePath ??= '/dev/termination-log';
    for (const p of (c.ports ?? []) as Json[]) p.protocol ??= 'TCP';
  }
  return obj;
}

function patch(opts: Omit<ApplyPatchOptions, 'model'> & { model?: string }): KubeObject {
  const before = structuredClone(opts.original);
  const out = applyPatch({ model: 'V1Deployment', ...opts });
  assert.deepEqual(opts.original, before, 'the original object is never modified');
  return out;
}

function apiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ApiError, `expected an ApiError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected an ApiError');
}

function containers(obj: KubeObject): Json[] {
  return (((obj.spec as Json).template as Json).spec as { containers: Json[] }).containers;
}

/** A live Deployment `x` with containers as given, created by kubectl-create. */
function deployment(cs: Json[]): KubeObject {
  const obj: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'x', namespace: 'default', uid: 'u1', resourceVersion: '7' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'x' } },
      template: { metadata: { labels: { app: 'x' } }, spec: { containers: cs } },
    },
  };
  return recordUpdate(obj, undefined, 'kubectl-create', 'apps/v1', T0);
}

describe('applyPatch: what kubectl sends', () => {
  it('(a) kubectl apply of spring-deployment.yaml twice, with new replicas and image', () => {
    // First apply: the object does not exist, kubectl POSTs it with the annotation.
    const manifest = parseYaml(FIXTURE) as Json;
    const posted = structuredClone(manifest) as KubeObject;
    posted.metadata!.annotations = { [LAST_APPLIED_ANNOTATION]: lastApplied(manifest) };
    const live = recordUpdate(withDefaults(posted), undefined, 'kubectl-client-side-apply', 'apps/v1', T0);
    live.metadata!.uid = 'uid-1';

    // Second apply: kubectl's three-way patch from the annotation, the new manifest and live.
    const manifest2 = structuredClone(manifest);
    (manifest2.spec as Json).replicas = 3;
    ((((manifest2.spec as Json).template as Json).spec as Json).containers as Json[])[0]!.image =
      'spring-server:2.0';
    const body = {
      metadata: { annotations: { [LAST_APPLIED_ANNOTATION]: lastApplied(manifest2) } },
      spec: {
        replicas: 3,
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'spring-container' }],
            containers: [{ image: 'spring-server:2.0', name: 'spring-container' }],
          },
        },
      },
    };
    const patched = patch({ contentType: SMP, original: live, patch: JSON.stringify(body) });
    const next = recordUpdate(patched, live, 'kubectl-client-side-apply', 'apps/v1', T1);

    assert.equal((next.spec as Json).replicas, 3);
    assert.deepEqual(containers(next), [
      {
        name: 'spring-container',
        image: 'spring-server:2.0',
        imagePullPolicy: 'IfNotPresent',
        ports: [{ containerPort: 8080, protocol: 'TCP' }],
        terminationMessagePath: '/dev/termination-log',
      },
    ]);
    assert.equal(next.metadata?.annotations?.[LAST_APPLIED_ANNOTATION], lastApplied(manifest2));
    assert.deepEqual((next.spec as Json).strategy, live.spec && (live.spec as Json).strategy);
    const entries = next.metadata!.managedFields!;
    assert.equal(entries.length, 1);
    assert.equal(entries[0]!.manager, 'kubectl-client-side-apply');
    assert.equal(entries[0]!.time, '2026-01-01T00:05:00Z');

    // Third apply drops imagePullPolicy from the manifest: kubectl sends it as null.
    const manifest3 = structuredClone(manifest2);
    delete ((((manifest3.spec as Json).template as Json).spec as Json).containers as Json[])[0]!
      .imagePullPolicy;
    const body3 = {
      metadata: { annotations: { [LAST_APPLIED_ANNOTATION]: lastApplied(manifest3) } },
      spec: {
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'spring-container' }],
            containers: [{ imagePullPolicy: null, name: 'spring-container' }],
          },
        },
      },
    };
    const third = patch({ contentType: SMP, original: next, patch: JSON.stringify(body3) });
    assert.equal(containers(third)[0]!.imagePullPolicy, undefined);
    assert.equal(containers(third)[0]!.image, 'spring-server:2.0');
  });

  it('(b) kubectl patch of one container merges it by name and keeps its ports', () => {
    const live = deployment([
      { name: 'c', image: 'old', ports: [{ containerPort: 8080, protocol: 'TCP' }] },
      { name: 'sidecar', image: 'envoy' },
    ]);
    const out = patch({
      contentType: SMP,
      original: live,
      patch: '{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"new"}]}}}}',
    });
    assert.deepEqual(containers(out), [
      { name: 'c', image: 'new', ports: [{ containerPort: 8080, protocol: 'TCP' }] },
      { name: 'sidecar', image: 'envoy' },
    ]);
    assert.equal(out.metadata?.resourceVersion, '7');
  });

  it('(c) $patch: delete removes a container', () => {
    const live = deployment([
      { name: 'c', image: 'a' },
      { name: 'sidecar', image: 'envoy' },
    ]);
    const out = patch({
      contentType: SMP,
      original: live,
      patch: '{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}',
    });
    assert.deepEqual(containers(out), [{ name: 'c', image: 'a' }]);
  });

  it('(d) env merges by name', () => {
    const live = deployment([
      {
        name: 'c',
        env: [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ],
      },
    ]);
    const out = patch({
      contentType: SMP,
      original: live,
      patch: JSON.stringify({
        spec: {
          template: {
            spec: {
              containers: [
                {
                  name: 'c',
                  env: [
                    { name: 'B', value: 'two' },
                    { name: 'A', $patch: 'delete' },
                    { name: 'C', value: '3' },
                  ],
                },
              ],
            },
          },
        },
      }),
    });
    assert.deepEqual(containers(out)[0]!.env, [
      { name: 'B', value: 'two' },
      { name: 'C', value: '3' },
    ]);
  });
});

describe('applyPatch: JSON patch (RFC 6902)', () => {
  const live = deployment([{ name: 'c', image: 'a' }]);
  const ok: [string, unknown[], (o: KubeObject) => void][] = [
    [
      'add a label',
      [{ op: 'add', path: '/metadata/labels', value: { app: 'x' } }],
      (o) => assert.deepEqual(o.metadata?.labels, { app: 'x' }),
    ],
    [
      'replace the image',
      [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'b' }],
      (o) => assert.equal(containers(o)[0]!.image, 'b'),
    ],
    [
      'remove replicas after a passing test',
      [
        { op: 'test', path: '/spec/replicas', value: 1 },
        { op: 'remove', path: '/spec/replicas' },
      ],
      (o) => assert.equal('replicas' in (o.spec as Json), false),
    ],
    [
      'append a container',
      [{ op: 'add', path: '/spec/template/spec/containers/-', value: { name: 'd' } }],
      (o) =>
        assert.deepEqual(
          containers(o).map((c) => c.name),
          ['c', 'd'],
        ),
    ],
    [
      'remove apiVersion (restored)',
      [{ op: 'remove', path: '/apiVersion' }],
      (o) => assert.equal(o.apiVersion, 'apps/v1'),
    ],
  ];
  for (const [name, ops, check] of ok) {
    it(name, () => check(patch({ contentType: JSON_PATCH, original: live, patch: JSON.stringify(ops) })));
  }

  const failures: [string, string, number, string][] = [
    [
      'a failing test',
      '[{"op":"test","path":"/spec/replicas","value":5},{"op":"remove","path":"/spec/replicas"}]',
      422,
      'Invalid',
    ],
    ['removing a missing path', '[{"op":"remove","path":"/spec/paused"}]', 422, 'Invalid'],
    ['replacing a missing path', '[{"op":"replace","path":"/nope","value":1}]', 422, 'Invalid'],
    ['adding under a missing parent', '[{"op":"add","path":"/a/b","value":1}]', 422, 'Invalid'],
    ['an unknown op', '[{"op":"frob","path":"/spec"}]', 422, 'Invalid'],
    ['a body that is not an array', '{"op":"add"}', 400, 'BadRequest'],
    ['a body that is not JSON', '[{', 400, 'BadRequest'],
    ['changing the kind', '[{"op":"replace","path":"/kind","value":"Pod"}]', 422, 'Invalid'],
  ];
  for (const [name, body, code, reason] of failures) {
    it(`answers ${code} for ${name}`, () => {
      const err = apiError(() => patch({ contentType: JSON_PATCH, original: live, patch: body }));
      assert.equal(err.code, code);
      assert.equal(err.reason, reason);
    });
  }

  it('words a failed operation as Kubernetes does', () => {
    const err = apiError(() =>
      patch({
        contentType: JSON_PATCH,
        original: live,
        patch: '[{"op":"test","path":"/spec/replicas","value":5}]',
      }),
    );
    assert.equal(err.message, 'the server rejected our request due to an error in our request');
  });

  it('answers 413 past 10000 operations', () => {
    const ops = JSON.stringify(
      Array.from({ length: 10001 }, () => ({ op: 'test', path: '/kind', value: 'Deployment' })),
    );
    assert.equal(apiError(() => patch({ contentType: JSON_PATCH, original: live, patch: ops })).code, 413);
  });
});

describe('applyPatch: merge patch (RFC 7386)', () => {
  const live = deployment([{ name: 'c', image: 'a', ports: [{ containerPort: 80 }] }]);
  const cases: [string, unknown, (o: KubeObject) => void][] = [
    [
      'null removes a field',
      { spec: { replicas: null, paused: true } },
      (o) => assert.deepEqual([(o.spec as Json).replicas, (o.spec as Json).paused], [undefined, true]),
    ],
    ['objects merge', { metadata: { labels: { a: 'b' } } }, (o) => assert.equal(o.metadata?.name, 'x')],
    [
      'lists replace (unlike a strategic merge)',
      { spec: { template: { spec: { containers: [{ name: 'c', image: 'z' }] } } } },
      (o) => assert.deepEqual(containers(o), [{ name: 'c', image: 'z' }]),
    ],
    [
      'nulls inside new values are dropped',
      { metadata: { annotations: { a: 'b', c: null } } },
      (o) => assert.deepEqual(o.metadata?.annotations, { a: 'b' }),
    ],
  ];
  for (const [name, body, check] of cases) {
    it(name, () => check(patch({ contentType: MERGE_PATCH, original: live, patch: JSON.stringify(body) })));
  }

  it('answers 400 "Invalid JSON Patch" for a body that is not an object', () => {
    for (const body of ['[]', '"x"', '{', 'null']) {
      const err = apiError(() => patch({ contentType: MERGE_PATCH, original: live, patch: body }));
      assert.deepEqual([err.code, err.message], [400, 'Invalid JSON Patch']);
    }
  });
});

describe('applyPatch: server-side apply', () => {
  const applyBody = (spec: Json): string =>
    JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'spring-deployment' },
      spec,
    });

  function created(): KubeObject {
    const obj = createFromApply({
      patch: FIXTURE,
      model: 'V1Deployment',
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      fieldManager: 'kubectl',
      now: T0,
    });
    obj.metadata!.uid = 'uid-1';
    return obj;
  }

  it('(g) creates from the YAML manifest, comments and all', () => {
    const obj = created();
    assert.equal(obj.metadata?.name, 'spring-deployment');
    assert.equal((obj.spec as Json).replicas, 5);
    assert.deepEqual(
      obj.metadata?.managedFields?.map((e) => [e.manager, e.operation, e.apiVersion, e.time]),
      [['kubectl', 'Apply', 'apps/v1', '2026-01-01T00:00:00Z']],
    );
  });

  it('(g) re-applies with a change, conflicts with another manager, forces, drops a field', () => {
    const live = created();
    const manifest = parseYaml(FIXTURE) as Json;
    (manifest.spec as Json).replicas = 2;
    const reapplied = patch({
      contentType: APPLY,
      original: live,
      patch: JSON.stringify(manifest),
      fieldManager: 'kubectl',
      now: T1,
    });
    assert.equal((reapplied.spec as Json).replicas, 2);

    const err = apiError(() =>
      patch({
        contentType: APPLY,
        original: reapplied,
        patch: applyBody({ replicas: 9 }),
        fieldManager: 'autoscaler',
      }),
    );
    assert.deepEqual(
      [err.code, err.reason, err.message],
      [409, 'Conflict', 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas'],
    );

    const forced = patch({
      contentType: APPLY,
      original: reapplied,
      patch: applyBody({ replicas: 9 }),
      fieldManager: 'autoscaler',
      force: true,
      now: T1,
    });
    assert.equal((forced.spec as Json).replicas, 9);

    // kubectl drops replicas from its manifest: the autoscaler owns it now, so it stays.
    delete (manifest.spec as Json).replicas;
    const dropped = patch({
      contentType: APPLY,
      original: forced,
      patch: JSON.stringify(manifest),
      fieldManager: 'kubectl',
      now: T1,
    });
    assert.equal((dropped.spec as Json).replicas, 9);
    // ...and dropping imagePullPolicy, which only kubectl owned, removes it.
    delete ((((manifest.spec as Json).template as Json).spec as Json).containers as Json[])[0]!
      .imagePullPolicy;
    const pruned = patch({
      contentType: APPLY,
      original: dropped,
      patch: JSON.stringify(manifest),
      fieldManager: 'kubectl',
      now: T1,
    });
    assert.equal(containers(pruned)[0]!.imagePullPolicy, undefined);
    assert.equal(containers(pruned)[0]!.image, 'spring-server:1.0');
  });

  it('requires a fieldManager: 422 as Kubernetes words it', () => {
    const err = apiError(() => patch({ contentType: APPLY, original: created(), patch: applyBody({}) }));
    assert.equal(err.code, 422);
    assert.equal(err.reason, 'Invalid');
    assert.equal(
      err.message,
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    );
  });

  it('answers 400 for a body that is not YAML or not an object', () => {
    for (const body of ['a: [', '- 1\n- 2\n']) {
      const err = apiError(() =>
        patch({ contentType: APPLY, original: created(), patch: body, fieldManager: 'k' }),
      );
      assert.equal(err.code, 400);
      assert.match(err.message, /^error decoding YAML: /);
    }
  });
});

describe('applyPatch: requests', () => {
  const live = deployment([{ name: 'c' }]);

  it('answers 415 for another media type, listing the four', () => {
    const err = apiError(() => patch({ contentType: 'application/json', original: live, patch: '{}' }));
    assert.equal(err.code, 415);
    assert.equal(err.reason, 'UnsupportedMediaType');
    for (const t of PATCH_CONTENT_TYPES) assert.ok(err.message.includes(t), t);
  });

  it('ignores Content-Type parameters', () => {
    const out = patch({
      contentType: `${MERGE_PATCH}; charset=utf-8`,
      original: live,
      patch: '{"spec":{"paused":true}}',
    });
    assert.equal((out.spec as Json).paused, true);
  });

  it('refuses force on a non-apply patch and a malformed fieldManager (422)', () => {
    const forced = apiError(() =>
      patch({ contentType: MERGE_PATCH, original: live, patch: '{}', force: false }),
    );
    assert.equal(forced.code, 422);
    assert.match(forced.message, /force: Forbidden: may not be specified for non-apply patch$/);
    const long = apiError(() =>
      patch({ contentType: MERGE_PATCH, original: live, patch: '{}', fieldManager: 'm'.repeat(129) }),
    );
    assert.match(long.message, /fieldManager: Too long: may not be more than 128 bytes/);
    const bell = apiError(() =>
      patch({ contentType: MERGE_PATCH, original: live, patch: '{}', fieldManager: 'a\u0007' }),
    );
    assert.match(bell.message, /invalid character U\+0007 \(at position 1\)/);
  });

  it('derives a manager from the User-Agent when none is named', () => {
    assert.equal(
      managerOrUserAgent(undefined, 'kubectl/v1.32.0 (linux/amd64) kubernetes/70d3cc9'),
      'kubectl',
    );
    assert.equal(managerOrUserAgent('kubectl-edit', 'kubectl/v1.32.0'), 'kubectl-edit');
    assert.equal(managerOrUserAgent(undefined, undefined), '');
  });
});
