// The Swagger 2.0 document (v2.ts): definitions, GVKs, patch strategies, paths and operations.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { PATCH_CONTENT_TYPES, buildOpenAPIV2, modelDefinitionNames, openAPIV2 } from './index.js';
import type { OpenAPIV2Document, OperationV2, SchemaObject } from './index.js';
import { PATCH_META } from '../patch-meta.js';
import { RESOURCES, groupVersion } from '../resources.js';
import { METHODS, dtsDescription, refsIn } from './testing.js';

describe('OpenAPI v2', () => {
  let doc: OpenAPIV2Document;
  before(async () => {
    doc = JSON.parse((await openAPIV2()).body) as OpenAPIV2Document;
  });
  const def = (name: string): SchemaObject => {
    const d = doc.definitions[name];
    assert.ok(d, `definition ${name}`);
    return d;
  };
  const prop = (name: string, field: string): SchemaObject => {
    const p = def(name).properties?.[field];
    assert.ok(p, `${name}.${field}`);
    return p;
  };

  it('is what buildOpenAPIV2() builds, and every $ref resolves', async () => {
    assert.deepEqual(doc, JSON.parse(JSON.stringify(await buildOpenAPIV2())));
    assert.equal(doc.swagger, '2.0');
    for (const ref of refsIn(doc)) {
      assert.ok(ref.startsWith('#/definitions/'), ref);
      assert.ok(doc.definitions[ref.slice('#/definitions/'.length)], `dangling ${ref}`);
    }
  });

  it('marks every served kind and list with x-kubernetes-group-version-kind', () => {
    const names = new Map<string, SchemaObject>(Object.entries(doc.definitions));
    for (const r of RESOURCES) {
      for (const kind of r.verbs.includes('list') ? [r.kind, r.listKind] : [r.kind]) {
        const found = [...names.values()].filter((d) =>
          d['x-kubernetes-group-version-kind']?.some(
            (g) => g.group === r.group && g.version === r.version && g.kind === kind,
          ),
        );
        assert.equal(found.length, 1, `${groupVersion(r)} ${kind}`);
      }
    }
    assert.deepEqual(def('io.k8s.api.autoscaling.v1.Scale')['x-kubernetes-group-version-kind'], [
      { group: 'autoscaling', kind: 'Scale', version: 'v1' },
    ]);
  });

  it('carries every strategic-merge key of patch-meta.ts', async () => {
    const names = await modelDefinitionNames();
    for (const [key, meta] of Object.entries(PATCH_META)) {
      const [model = '', field = ''] = key.split('.');
      const name = names.get(model);
      assert.ok(name, `${model} is in the documents`);
      const p = prop(name, field);
      assert.equal(p['x-kubernetes-patch-strategy'], meta.strategy, key);
      assert.equal(p['x-kubernetes-patch-merge-key'], meta.mergeKey, key);
    }
    assert.equal(prop('io.k8s.api.core.v1.Container', 'command')['x-kubernetes-patch-strategy'], undefined);
  });

  // [definition, field, expected property schema (description removed)]
  const types: [string, string, SchemaObject][] = [
    ['io.k8s.api.apps.v1.DeploymentSpec', 'replicas', { type: 'integer', format: 'int32' }],
    ['io.k8s.api.apps.v1.DeploymentSpec', 'paused', { type: 'boolean' }],
    ['io.k8s.api.core.v1.PodSpec', 'activeDeadlineSeconds', { type: 'integer', format: 'int64' }],
    [
      'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
      'creationTimestamp',
      { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time' },
    ],
    [
      'io.k8s.api.coordination.v1.LeaseSpec',
      'renewTime',
      { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime' },
    ],
    [
      'io.k8s.api.apps.v1.RollingUpdateDeployment',
      'maxSurge',
      { $ref: '#/definitions/io.k8s.apimachinery.pkg.util.intstr.IntOrString' },
    ],
    [
      'io.k8s.api.core.v1.ResourceRequirements',
      'limits',
      {
        type: 'object',
        additionalProperties: { $ref: '#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity' },
      },
    ],
    [
      'io.k8s.api.core.v1.EmptyDirVolumeSource',
      'sizeLimit',
      { $ref: '#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity' },
    ],
    [
      'io.k8s.api.core.v1.Secret',
      'data',
      { type: 'object', additionalProperties: { type: 'string', format: 'byte' } },
    ],
    ['io.k8s.api.core.v1.ConfigMap', 'data', { type: 'object', additionalProperties: { type: 'string' } }],
    [
      'io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry',
      'fieldsV1',
      { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1' },
    ],
    ['io.k8s.api.core.v1.Container', 'args', { type: 'array', items: { type: 'string' } }],
    [
      'io.k8s.api.core.v1.PodSpec',
      'containers',
      {
        type: 'array',
        items: { $ref: '#/definitions/io.k8s.api.core.v1.Container' },
        'x-kubernetes-patch-merge-key': 'name',
        'x-kubernetes-patch-strategy': 'merge',
      },
    ],
    [
      'io.k8s.api.core.v1.PodSpec',
      'volumes',
      {
        type: 'array',
        items: { $ref: '#/definitions/io.k8s.api.core.v1.Volume' },
        'x-kubernetes-patch-merge-key': 'name',
        'x-kubernetes-patch-strategy': 'merge,retainKeys',
      },
    ],
    [
      'io.k8s.api.discovery.v1.EndpointSlice',
      'ports',
      { type: 'array', items: { $ref: '#/definitions/io.k8s.api.discovery.v1.EndpointPort' } },
    ],
  ];
  for (const [name, field, expected] of types) {
    it(`types ${name.split('.').pop()}.${field}`, () => {
      const p = { ...prop(name, field) };
      delete p.description;
      assert.deepEqual(p, expected);
    });
  }

  it('names the fields the upstream schema requires', () => {
    assert.deepEqual(def('io.k8s.api.apps.v1.DeploymentSpec').required, ['selector', 'template']);
    assert.deepEqual(def('io.k8s.api.core.v1.Container').required, ['name']);
    assert.deepEqual(def('io.k8s.api.core.v1.ContainerPort').required, ['containerPort']);
    assert.deepEqual(def('io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement').required, [
      'key',
      'operator',
    ]);
    assert.equal(def('io.k8s.api.apps.v1.Deployment').required, undefined);
  });

  it('describes fields with the client-node documentation', () => {
    assert.equal(
      prop('io.k8s.api.apps.v1.DeploymentSpec', 'replicas').description,
      dtsDescription('V1DeploymentSpec', 'replicas'),
    );
    assert.match(
      def('io.k8s.api.apps.v1.Deployment').description ?? '',
      /^Deployment enables declarative updates/,
    );
    // Fields referring to a model have no description of their own in the models: the type's.
    assert.equal(
      prop('io.k8s.api.apps.v1.DeploymentSpec', 'selector').description,
      def('io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector').description,
    );
  });

  it('has GET/POST/PUT/PATCH/DELETE with the right consumes, and fieldValidation on every write', () => {
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of METHODS) {
        const op: OperationV2 | undefined = item[method];
        if (!op) continue;
        assert.ok(!ids.has(op.operationId), `unique operationId ${op.operationId}`);
        ids.add(op.operationId);
        assert.ok(op['x-kubernetes-group-version-kind'].kind, `${method} ${path} has a GVK`);
        if (method === 'patch') {
          assert.deepEqual(op.consumes, [...PATCH_CONTENT_TYPES]);
        }
        if (
          method === 'patch' ||
          method === 'put' ||
          (method === 'post' && op['x-kubernetes-action'] === 'post')
        ) {
          assert.ok(
            op.parameters.some((p) => p.name === 'fieldValidation' && p.in === 'query'),
            `${method} ${path} takes fieldValidation`,
          );
          assert.ok(
            op.parameters.some((p) => p.in === 'body' && p.required),
            `${method} ${path} has a body`,
          );
        }
      }
    }
    const deployment = doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'];
    assert.deepEqual(
      METHODS.filter((m) => deployment?.[m]),
      ['get', 'put', 'patch', 'delete'],
    );
    const scale = doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale'];
    assert.deepEqual(scale?.patch?.['x-kubernetes-group-version-kind'], {
      group: 'autoscaling',
      kind: 'Scale',
      version: 'v1',
    });
    assert.deepEqual(doc.paths['/api/v1/namespaces/{namespace}/pods/{name}/log']?.get?.produces, [
      'text/plain',
    ]);
    assert.equal(
      doc.paths['/api/v1/namespaces/{namespace}/pods/{name}/exec']?.post?.['x-kubernetes-action'],
      'connect',
    );
    assert.ok(doc.paths['/api/v1/pods']?.get, 'pods in all namespaces');
    assert.ok(doc.paths['/api/v1/nodes/{name}/status']?.patch, 'cluster-scoped status');
    assert.equal(doc.paths['/api/v1/namespaces']?.delete, undefined, 'namespaces have no deletecollection');
  });
});
