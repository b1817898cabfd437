// The OpenAPI 3.0 documents and their index (v3.ts), as kubectl explain and apply read them.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { PATCH_CONTENT_TYPES, buildOpenAPIV3, openAPIV3, openAPIV3Index, openAPIV3Paths } from './index.js';
import type { OpenAPIV3Document, OpenAPIV3Index, OperationV3 } from './index.js';
import { RESOURCES } from '../resources.js';
import { METHODS, dtsDescription, refsIn } from './testing.js';

describe('OpenAPI v3', () => {
  let index: OpenAPIV3Index;
  const docs = new Map<string, OpenAPIV3Document>();
  before(async () => {
    index = JSON.parse((await openAPIV3Index()).body) as OpenAPIV3Index;
    for (const key of openAPIV3Paths())
      docs.set(key, JSON.parse((await openAPIV3(key))!.body) as OpenAPIV3Document);
  });

  it('indexes one document per served group-version, by the hash of its body', async () => {
    assert.deepEqual(Object.keys(index.paths), [
      'api/v1',
      'apis/apps/v1',
      'apis/autoscaling/v2',
      'apis/autoscaling/v1',
      'apis/batch/v1',
      'apis/coordination.k8s.io/v1',
      'apis/discovery.k8s.io/v1',
      'apis/events.k8s.io/v1',
      'apis/rbac.authorization.k8s.io/v1',
      'apis/policy/v1',
      'apis/storage.k8s.io/v1',
      'apis/authorization.k8s.io/v1',
      'apis/authentication.k8s.io/v1',
      'apis/apiextensions.k8s.io/v1',
    ]);
    for (const [key, { serverRelativeURL }] of Object.entries(index.paths)) {
      const body = (await openAPIV3(key))!.body;
      const hash = createHash('sha512').update(body).digest('hex').toUpperCase();
      assert.equal(serverRelativeURL, `/openapi/v3/${key}?hash=${hash}`);
    }
    assert.equal(await openAPIV3('apis/networking.k8s.io/v1'), undefined);
  });

  it('makes each document self-contained and limited to its group-version', async () => {
    for (const [key, doc] of docs) {
      assert.equal(doc.openapi, '3.0.0');
      assert.deepEqual(doc, JSON.parse(JSON.stringify(await buildOpenAPIV3(key))));
      for (const ref of refsIn(doc)) {
        assert.ok(ref.startsWith('#/components/schemas/'), ref);
        assert.ok(
          doc.components.schemas[ref.slice('#/components/schemas/'.length)],
          `${key}: dangling ${ref}`,
        );
      }
      for (const path of Object.keys(doc.paths)) assert.ok(path.startsWith(`/${key}/`), `${key}: ${path}`);
    }
    assert.ok(!docs.get('apis/apps/v1')!.components.schemas['io.k8s.api.core.v1.Node'], 'no unrelated kinds');
  });

  it('lets kubectl explain find every kind: GVK on the resource paths and on one schema', () => {
    for (const r of RESOURCES) {
      const key = r.group === '' ? `api/${r.version}` : `apis/${r.group}/${r.version}`;
      const doc = docs.get(key)!;
      const prefix = r.group === '' ? '/api' : `/apis/${r.group}`;
      const candidates = [
        `${prefix}/${r.version}/${r.resource}`,
        `${prefix}/${r.version}/${r.resource}/{name}`,
        `${prefix}/${r.version}/namespaces/{namespace}/${r.resource}`,
        `${prefix}/${r.version}/namespaces/{namespace}/${r.resource}/{name}`,
      ];
      const gvk = { group: r.group, kind: r.kind, version: r.version };
      const found = candidates.some((p) =>
        METHODS.some((m) => {
          const op: OperationV3 | undefined = doc.paths[p]?.[m];
          return (
            op !== undefined && JSON.stringify(op['x-kubernetes-group-version-kind']) === JSON.stringify(gvk)
          );
        }),
      );
      assert.ok(found, `${r.resource}: a GET/POST/PUT/PATCH/DELETE carries ${JSON.stringify(gvk)}`);
      const schemas = Object.values(doc.components.schemas).filter((s) =>
        s['x-kubernetes-group-version-kind']?.some((g) => JSON.stringify(g) === JSON.stringify(gvk)),
      );
      assert.equal(schemas.length, 1, `${r.resource}: one schema carries the GVK`);
    }
  });

  it('tells kubectl to validate on the server and to compute strategic merge patches from it', () => {
    // kubectl takes the FIRST PATCH operation of the GVK it meets (Go map order), so all must qualify.
    for (const [key, doc] of docs) {
      for (const [path, item] of Object.entries(doc.paths)) {
        const op = item.patch;
        if (!op) continue;
        assert.ok(
          op.parameters.some((p) => p.name === 'fieldValidation' && p.in === 'query'),
          `${key} PATCH ${path}: fieldValidation`,
        );
        assert.deepEqual(
          Object.keys(op.requestBody?.content ?? {}),
          [...PATCH_CONTENT_TYPES],
          `${key} PATCH ${path}`,
        );
      }
    }
  });

  it('renders references as kubectl explain and strategicpatch read them', () => {
    // A field without a description of its own borrows its type's, beside $ref; one with
    // its own wraps the reference in allOf.
    const schemas = docs.get('apis/apps/v1')!.components.schemas;
    assert.deepEqual(schemas['io.k8s.api.apps.v1.Deployment']?.properties?.['spec'], {
      description: schemas['io.k8s.api.apps.v1.Deployment']?.properties?.['spec']?.description,
      $ref: '#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec',
    });
    const creation =
      schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta']?.properties?.['creationTimestamp'];
    assert.deepEqual(creation?.allOf, [
      { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time' },
    ]);
    assert.equal(creation?.description, dtsDescription('V1ObjectMeta', 'creationTimestamp'));
    assert.deepEqual(schemas['io.k8s.apimachinery.pkg.util.intstr.IntOrString']?.oneOf, [
      { type: 'integer' },
      { type: 'string' },
    ]);
    const containers = schemas['io.k8s.api.core.v1.PodSpec']?.properties?.['containers'];
    assert.equal(containers?.['x-kubernetes-patch-merge-key'], 'name');
    assert.equal(containers?.['x-kubernetes-patch-strategy'], 'merge');
  });
});
