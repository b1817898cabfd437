// One file for the folder (899 lines): its cases share the documents built once per process and two real-kubectl fixtures.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DocumentResponse } from '../document-response.js';
import {
  CONTENT_TYPE_OPENAPI_V2_PROTOBUF,
  CONTENT_TYPE_OPENAPI_V2_PROTOBUF_RESPONSE,
  CONTENT_TYPE_OPENAPI_V3_PROTOBUF,
  PATCH_CONTENT_TYPES,
  buildOpenAPIV2,
  buildOpenAPIV3,
  definitionName,
  modelDefinitionNames,
  openAPIResponse,
  openAPIV2,
  openAPIV3,
  openAPIV3Index,
  openAPIV3Paths,
  parseModelDocs,
  warmOpenAPI,
} from './index.js';
import type {
  OpenAPIV2Document,
  OpenAPIV3Document,
  OpenAPIV3Index,
  OperationV2,
  OperationV3,
  SchemaObject,
} from './index.js';
import { PATCH_META } from '../patch-meta.js';
import { RESOURCES, groupVersion } from '../resources.js';
import { kubectlFor, startDocsServer } from '../../../test/support/docs-server.js';
import type { DocsServer, Kubectl, RecordedRequest } from '../../../test/support/docs-server.js';

const MODELS_DIR = join(
  dirname(createRequire(import.meta.url).resolve('@kubernetes/client-node/package.json')),
  'dist/gen/models',
);

/** A field's description as the client-node `.d.ts` carries it. */
function dtsDescription(model: string, field: string): string {
  const docs = parseModelDocs(readFileSync(join(MODELS_DIR, `${model}.d.ts`), 'utf8'));
  const d = docs.fields.get(field)?.description;
  assert.ok(d, `${model}.${field} has a description`);
  return d;
}

function words(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

// Runs first, while nothing is built yet.
describe('startup cost', () => {
  it('builds and serializes every document once', async (t) => {
    global.gc?.();
    const heap0 = process.memoryUsage().heapUsed;
    const t0 = performance.now();
    await warmOpenAPI();
    const ms = performance.now() - t0;
    global.gc?.();
    const heapMB = (process.memoryUsage().heapUsed - heap0) / 1e6;
    const v2 = await openAPIV2();
    const v3 = await Promise.all(openAPIV3Paths().map((p) => openAPIV3(p)));
    const v3Bytes = v3.reduce((n, d) => n + (d?.body.length ?? 0), 0);
    t.diagnostic(
      `openapi: built in ${ms.toFixed(0)} ms, heap +${heapMB.toFixed(1)} MB; ` +
        `v2 ${(v2.body.length / 1024).toFixed(0)} KiB, v3 ${v3.length} documents ${(v3Bytes / 1024).toFixed(0)} KiB`,
    );
    // A second call is served from the cache: the very same documents, not rebuilt ones.
    await warmOpenAPI();
    assert.equal(await openAPIV2(), v2, 'v2 rebuilt');
    const again = await Promise.all(openAPIV3Paths().map((p) => openAPIV3(p)));
    again.forEach((d, i) => assert.equal(d, v3[i], `${openAPIV3Paths()[i]} rebuilt`));
  });
});

describe('definition names', () => {
  const cases: [string, string, string][] = [
    ['V1Deployment', 'apps', 'io.k8s.api.apps.v1.Deployment'],
    ['V1ObjectMeta', 'apps', 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'],
    ['V1LabelSelector', 'apps', 'io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector'],
    ['V1PodTemplateSpec', 'apps', 'io.k8s.api.core.v1.PodTemplateSpec'],
    ['V1ObjectReference', 'discovery', 'io.k8s.api.core.v1.ObjectReference'],
    ['CoreV1Event', 'core', 'io.k8s.api.core.v1.Event'],
    ['EventsV1Event', 'events', 'io.k8s.api.events.v1.Event'],
    ['DiscoveryV1EndpointPort', 'discovery', 'io.k8s.api.discovery.v1.EndpointPort'],
    ['CoreV1EndpointPort', 'core', 'io.k8s.api.core.v1.EndpointPort'],
    ['V1Scale', 'apps', 'io.k8s.api.autoscaling.v1.Scale'],
    ['V1Eviction', 'core', 'io.k8s.api.policy.v1.Eviction'],
    ['V1LeaseSpec', 'coordination', 'io.k8s.api.coordination.v1.LeaseSpec'],
    ['V2HorizontalPodAutoscaler', 'autoscaling', 'io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler'],
    ['V1beta1Foo', 'x', 'io.k8s.api.x.v1beta1.Foo'],
  ];
  for (const [model, inherited, expected] of cases) {
    it(`${model} (reached from ${inherited}) → ${expected}`, () =>
      assert.equal(definitionName(model, inherited), expected));
  }

  it('rejects what is not a model name', () => assert.throws(() => definitionName('Date', 'core')));

  it('names the models the documents reach as Kubernetes does', async () => {
    const names = await modelDefinitionNames();
    const expected: Record<string, string> = {
      V1Pod: 'io.k8s.api.core.v1.Pod',
      V1PodSpec: 'io.k8s.api.core.v1.PodSpec',
      V1Container: 'io.k8s.api.core.v1.Container',
      V1ResourceRequirements: 'io.k8s.api.core.v1.ResourceRequirements',
      V1DeploymentStrategy: 'io.k8s.api.apps.v1.DeploymentStrategy',
      V1RollingUpdateDeployment: 'io.k8s.api.apps.v1.RollingUpdateDeployment',
      V1PodTemplateSpec: 'io.k8s.api.core.v1.PodTemplateSpec',
      V1Endpoint: 'io.k8s.api.discovery.v1.Endpoint',
      V1EndpointConditions: 'io.k8s.api.discovery.v1.EndpointConditions',
      V1EndpointSubset: 'io.k8s.api.core.v1.EndpointSubset',
      V1EventSource: 'io.k8s.api.core.v1.EventSource',
      EventsV1EventSeries: 'io.k8s.api.events.v1.EventSeries',
      V1ScaleSpec: 'io.k8s.api.autoscaling.v1.ScaleSpec',
      V1DeleteOptions: 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions',
      V1Preconditions: 'io.k8s.apimachinery.pkg.apis.meta.v1.Preconditions',
      V1OwnerReference: 'io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference',
      V1Condition: 'io.k8s.apimachinery.pkg.apis.meta.v1.Condition',
    };
    for (const [model, name] of Object.entries(expected)) assert.equal(names.get(model), name, model);
    for (const r of RESOURCES)
      assert.ok(names.has(r.model) && (!r.verbs.includes('list') || names.has(`${r.model}List`)), r.model);
    assert.equal(
      names.get('V1SelfSubjectAccessReview'),
      'io.k8s.api.authorization.v1.SelfSubjectAccessReview',
    );
    assert.equal(names.get('V1ClusterRoleBinding'), 'io.k8s.api.rbac.v1.ClusterRoleBinding');
  });
});

describe('parseModelDocs', () => {
  it('reads class and field descriptions, unescapes them, and marks fields without ? required', () => {
    const docs = parseModelDocs(
      [
        '/**',
        ' * Kubernetes (license header)',
        ' */',
        "import { V1LabelSelector } from '../models/V1LabelSelector.js';",
        '/**',
        '* Thing is a thing.',
        '*/',
        'export declare class V1Thing {',
        '    /**',
        '    * Labels of the thing\\\'s \\"owner\\" (a \\\\ b).',
        '    */',
        "    'labels'?: {",
        '        [key: string]: string;',
        '    };',
        "    'selector': V1LabelSelector;",
        '    /**',
        '    * Count.',
        '    */',
        "    'count'?: number;",
        '}',
      ].join('\n'),
    );
    assert.equal(docs.description, 'Thing is a thing.');
    assert.deepEqual(docs.fields.get('labels'), {
      description: 'Labels of the thing\'s "owner" (a \\ b).',
      required: false,
    });
    assert.deepEqual(docs.fields.get('selector'), { description: undefined, required: true });
    assert.deepEqual(docs.fields.get('count'), { description: 'Count.', required: false });
  });
});

/** Every `$ref` in `value`. */
function refsIn(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) refsIn(v, out);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refsIn(v, out);
    }
  }
  return out;
}

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
      'apis/coordination.k8s.io/v1',
      'apis/discovery.k8s.io/v1',
      'apis/events.k8s.io/v1',
      'apis/rbac.authorization.k8s.io/v1',
      'apis/authorization.k8s.io/v1',
      'apis/authentication.k8s.io/v1',
    ]);
    for (const [key, { serverRelativeURL }] of Object.entries(index.paths)) {
      const body = (await openAPIV3(key))!.body;
      const hash = createHash('sha512').update(body).digest('hex').toUpperCase();
      assert.equal(serverRelativeURL, `/openapi/v3/${key}?hash=${hash}`);
    }
    assert.equal(await openAPIV3('apis/batch/v1'), undefined);
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

describe('openAPIResponse', () => {
  const kubectlV2Accept = CONTENT_TYPE_OPENAPI_V2_PROTOBUF;

  it('serves v2 as JSON, and as protobuf to client-go (more in v2-protobuf.test.ts)', async () => {
    const json = (await openAPIResponse({ path: '/openapi/v2', accept: 'application/json' }))!;
    assert.equal(json.status, 200);
    assert.equal(json.headers['Content-Type'], 'application/json');
    assert.equal(json.body, (await openAPIV2()).body);
    assert.equal((await openAPIResponse({ path: '/openapi/v2' }))!.status, 200);
    const proto = (await openAPIResponse({ path: '/openapi/v2', accept: kubectlV2Accept }))!;
    assert.equal(proto.status, 200);
    assert.equal(proto.headers['Content-Type'], CONTENT_TYPE_OPENAPI_V2_PROTOBUF_RESPONSE);
    const neither = (await openAPIResponse({ path: '/openapi/v2', accept: 'application/yaml' }))!;
    assert.equal(neither.status, 406);
    assert.equal((JSON.parse(neither.body.toString()) as { reason: string }).reason, 'NotAcceptable');
  });

  it('serves the v3 index and documents, honouring ?hash= as kube-openapi does', async () => {
    const indexRes = (await openAPIResponse({ path: '/openapi/v3', accept: 'application/json, */*' }))!;
    assert.equal(indexRes.status, 200);
    const url = new URL(
      (JSON.parse(indexRes.body.toString()) as OpenAPIV3Index).paths['apis/apps/v1']!.serverRelativeURL,
      'http://x',
    );

    const current = (await openAPIResponse({
      path: url.pathname,
      query: url.search,
      accept: 'application/json',
    }))!;
    assert.equal(current.status, 200);
    assert.equal(current.headers['Cache-Control'], 'public, immutable');
    assert.equal(current.headers['ETag'], `"${url.searchParams.get('hash')}"`);

    const stale = (await openAPIResponse({
      path: url.pathname,
      query: '?hash=0123',
      accept: 'application/json',
    }))!;
    assert.equal(stale.status, 301);
    assert.equal(stale.headers['Location'], `${url.pathname}${url.search}`);

    const unhashed = (await openAPIResponse({ path: url.pathname, accept: 'application/json' }))!;
    assert.equal(unhashed.status, 200);
    assert.equal(unhashed.headers['Cache-Control'], undefined);

    const cachedByClient = (await openAPIResponse({
      path: url.pathname,
      accept: 'application/json',
      ifNoneMatch: current.headers['ETag'],
    }))!;
    assert.equal(cachedByClient.status, 304);

    const cases: [string, string | undefined, number | undefined][] = [
      ['/openapi/v3/apis/batch/v1', 'application/json', 404],
      ['/openapi/v3/api/v1', CONTENT_TYPE_OPENAPI_V3_PROTOBUF, 406],
      ['/openapi/v3/api/v1/', undefined, 200],
      ['/openapi/v4', undefined, undefined],
      ['/api/v1', undefined, undefined],
    ];
    for (const [path, accept, status] of cases) {
      const res: DocumentResponse<string | Buffer> | undefined = await openAPIResponse({ path, accept });
      assert.equal(res?.status, status, path);
    }
  });
});

// ---------------------------------------------------------------------------------------
// Real kubectl

const SPRING = '/work/shared/fixtures/spring-deployment.yaml';

/** A Deployment as the store would hold it after `kubectl apply` of an older spring-deployment.yaml. */
function appliedSpring(image: string): Record<string, unknown> {
  const spec = {
    replicas: 5,
    selector: { matchLabels: { app: 'backend-app' } },
    template: {
      metadata: { labels: { app: 'backend-app' } },
      spec: {
        containers: [
          {
            name: 'spring-container',
            image,
            imagePullPolicy: 'IfNotPresent',
            ports: [{ containerPort: 8080 }],
          },
        ],
      },
    },
  };
  const lastApplied = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { annotations: {}, name: 'spring-deployment', namespace: 'default' },
    spec,
  };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'spring-deployment',
      namespace: 'default',
      uid: '6b1f0f6e-0000-4000-8000-000000000001',
      resourceVersion: '42',
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(lastApplied) },
    },
    spec,
  };
}

function json(status: number, body: unknown): DocumentResponse {
  return { status, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
}

function status(code: number, reason: string, message: string): DocumentResponse {
  return json(code, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    reason,
    message,
    code,
  });
}

const BAD_MANIFEST = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: bad
spec:
  foo: 1
  selector:
    matchLabels: {app: bad}
  template:
    metadata:
      labels: {app: bad}
    spec:
      containers: [{name: c, image: busybox}]
`;

describe('real kubectl', { timeout: 180_000 }, () => {
  let server: DocsServer;
  let kubectl: Kubectl;
  let existing: Record<string, unknown> | undefined;
  let badManifest: string;

  /** Fakes just enough of the deployments endpoints for create and apply. */
  function handle(req: RecordedRequest): DocumentResponse | undefined {
    const collection = '/apis/apps/v1/namespaces/default/deployments';
    if (req.path === `${collection}/spring-deployment`) {
      if (req.method === 'GET') {
        return existing
          ? json(200, existing)
          : status(404, 'NotFound', 'deployments.apps "spring-deployment" not found');
      }
      if (req.method === 'PATCH') return json(200, existing);
    }
    if (req.path === collection && req.method === 'POST') {
      // What a strict server says about the unknown field.
      if (req.query.get('fieldValidation') === 'Strict' && /"foo"/.test(req.body)) {
        return status(
          400,
          'BadRequest',
          'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.foo"',
        );
      }
      return json(201, JSON.parse(req.body));
    }
    return undefined;
  }

  before(async () => {
    server = await startDocsServer({ handle });
    kubectl = await kubectlFor(server.url);
    badManifest = join(kubectl.dir, 'bad.yaml');
    await writeFile(badManifest, BAD_MANIFEST);
  });
  after(async () => {
    await kubectl.cleanup();
    await server.close();
  });

  function since(n: number): RecordedRequest[] {
    return server.requests.slice(n);
  }

  it('kubectl explain deployment.spec.replicas prints the field type and the real description', async () => {
    const r = await kubectl.run(['explain', 'deployment.spec.replicas']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^GROUP:\s+apps\nKIND:\s+Deployment\nVERSION:\s+v1\n/);
    assert.match(r.stdout, /^FIELD: replicas <integer>$/m);
    const description = r.stdout.split('DESCRIPTION:')[1] ?? '';
    assert.equal(words(description), words(dtsDescription('V1DeploymentSpec', 'replicas')));
  });

  it('kubectl explain pods.spec.containers lists the container fields, name required', async () => {
    const r = await kubectl.run(['explain', 'pods.spec.containers']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^KIND:\s+Pod\nVERSION:\s+v1\n/);
    assert.match(r.stdout, /^FIELD: containers <\[\]Container>$/m);
    assert.match(r.stdout, /^ {2}name\t<string> -required-$/m);
    assert.match(r.stdout, /^ {2}image\t<string>$/m);
    assert.match(r.stdout, /^ {2}ports\t<\[\]ContainerPort>$/m);
    assert.match(r.stdout, /^ {2}resources\t<ResourceRequirements>$/m);
  });

  const fieldTypes: [string, string][] = [
    ['deployment.spec.strategy.rollingUpdate.maxSurge', 'maxSurge <IntOrString>'],
    ['pods.spec.containers.resources.limits', 'limits <map[string]Quantity>'],
    ['deployments.metadata.creationTimestamp', 'creationTimestamp <string>'],
    ['deployment.spec.template', 'template <PodTemplateSpec>'],
    ['services.spec.ports.targetPort', 'targetPort <IntOrString>'],
    ['configmaps.data', 'data <map[string]string>'],
    ['leases.spec.renewTime', 'renewTime <string>'],
    ['endpointslices.endpoints.targetRef', 'targetRef <ObjectReference>'],
    ['rs.spec.selector.matchExpressions', 'matchExpressions <[]LabelSelectorRequirement>'],
    ['nodes.status.capacity', 'capacity <map[string]Quantity>'],
  ];
  for (const [path, field] of fieldTypes) {
    it(`kubectl explain ${path} → FIELD: ${field}`, async () => {
      const r = await kubectl.run(['explain', path]);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.stdout.includes(`FIELD: ${field}\n`), r.stdout);
    });
  }

  it('kubectl explain tells the two Event kinds apart and walks a kind recursively', async () => {
    const events = await kubectl.run(['explain', 'events', '--api-version=events.k8s.io/v1']);
    assert.equal(events.code, 0, events.stderr);
    assert.match(events.stdout, /^GROUP:\s+events\.k8s\.io\nKIND:\s+Event\n/);
    assert.match(events.stdout, /^ {2}eventTime\t<string> -required-$/m);
    const recursive = await kubectl.run(['explain', 'deployment', '--recursive']);
    assert.equal(recursive.code, 0, recursive.stderr);
    assert.match(recursive.stdout, /^ {4}replicas\t<integer>$/m);
  });

  it('kubectl apply --dry-run=client --validate=strict uses OpenAPI v3 and never v2', async () => {
    existing = undefined;
    const n = server.requests.length;
    const r = await kubectl.run([
      'apply',
      '--dry-run=client',
      '--validate=strict',
      '-f',
      SPRING,
      '-o',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as {
      metadata: { annotations: Record<string, string> };
      spec: { replicas: number };
    };
    assert.equal(out.spec.replicas, 5);
    assert.ok(out.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);
    const paths = since(n).map((q) => q.path);
    assert.ok(paths.includes('/openapi/v3/apis/apps/v1'), `${paths}`);
    assert.ok(!paths.includes('/openapi/v2'), `${paths}`);
    assert.ok(!since(n).some((q) => q.method !== 'GET'), 'nothing written');
  });

  it('kubectl create --validate=strict leaves unknown fields to the server (fieldValidation=Strict)', async () => {
    // kubectl found `fieldValidation` on the PATCH operation, so it skips client-side
    // validation: a client dry run cannot notice spec.foo ...
    const dry = await kubectl.run([
      'create',
      '--dry-run=client',
      '--validate=strict',
      '-f',
      badManifest,
      '-o',
      'name',
    ]);
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(dry.stdout.trim(), 'deployment.apps/bad');
    // ... and a real create asks the server to be strict, and shows what it answers.
    const n = server.requests.length;
    const r = await kubectl.run(['create', '--validate=strict', '-f', badManifest]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /strict decoding error: unknown field "spec\.foo"/);
    const post = since(n).find((q) => q.method === 'POST');
    assert.equal(post?.query.get('fieldValidation'), 'Strict');
    assert.equal(post?.query.get('fieldManager'), 'kubectl-create');
  });

  it('kubectl apply of a changed manifest sends a strategic merge patch computed from v3', async () => {
    existing = appliedSpring('spring-server:0.9');
    const n = server.requests.length;
    const r = await kubectl.run(['apply', '--validate=strict', '-v=5', '-f', SPRING]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /deployment\.apps\/spring-deployment configured/);
    // Any problem with the v3 patch metadata shows up as a warning (then v2, then builtins).
    assert.doesNotMatch(r.stderr, /warning|OpenAPI V3 path does not/i);
    const patch = since(n).find((q) => q.method === 'PATCH');
    assert.ok(patch, 'a PATCH was sent');
    assert.equal(patch.contentType, 'application/strategic-merge-patch+json');
    assert.equal(patch.query.get('fieldValidation'), 'Strict');
    const body = JSON.parse(patch.body) as {
      spec: { template: { spec: Record<string, unknown> } };
    };
    // Merging containers by name (x-kubernetes-patch-merge-key) is what produces these keys.
    assert.deepEqual(body.spec.template.spec['$setElementOrder/containers'], [{ name: 'spring-container' }]);
    assert.deepEqual(body.spec.template.spec['containers'], [
      { image: 'spring-server:1.0', name: 'spring-container' },
    ]);
    assert.ok(!since(n).some((q) => q.path === '/openapi/v2'));
  });
});

/** Removes the `fieldValidation` query parameter from every operation of a v3 document. */
function withoutFieldValidation(doc: { paths: unknown }): void {
  const paths = doc.paths as Record<string, Record<string, { parameters?: { name: string }[] }>>;
  for (const item of Object.values(paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (method !== 'parameters' && op.parameters) {
        op.parameters = op.parameters.filter((p) => p.name !== 'fieldValidation');
      }
    }
  }
}

describe(
  'real kubectl, with fieldValidation removed from the v3 documents: client-side validation from v2',
  { timeout: 60_000 },
  () => {
    // v3's PATCH without fieldValidation is a definite "unsupported" (kubectl's fallback
    // verifier does not ask v2 then), so kubectl validates on the client, against the
    // definitions of /openapi/v2 — which it only reads as protobuf (kube-openapi's proto models).
    let server: DocsServer;
    let kubectl: Kubectl;
    before(async () => {
      server = await startDocsServer({
        rewriteOpenAPIV3: (doc) => withoutFieldValidation(doc as { paths: unknown }),
      });
      kubectl = await kubectlFor(server.url);
      await writeFile(join(kubectl.dir, 'bad.yaml'), BAD_MANIFEST);
      await writeFile(
        join(kubectl.dir, 'string-replicas.yaml'),
        BAD_MANIFEST.replace('  foo: 1\n', '  replicas: "2"\n'),
      );
      await writeFile(join(kubectl.dir, 'good.yaml'), BAD_MANIFEST.replace('  foo: 1\n', ''));
    });
    after(async () => {
      await kubectl.cleanup();
      await server.close();
    });

    const cases: [file: string, error: RegExp | undefined][] = [
      ['bad.yaml', /unknown field "foo" in io\.k8s\.api\.apps\.v1\.DeploymentSpec/],
      [
        'string-replicas.yaml',
        /invalid type for io\.k8s\.api\.apps\.v1\.DeploymentSpec\.replicas: got "string", expected "integer"/,
      ],
      ['good.yaml', undefined],
    ];
    for (const [file, error] of cases) {
      it(`kubectl validates ${file} on the client against the v2 (protobuf) definitions`, async () => {
        const n = server.requests.length;
        const r = await kubectl.run([
          'create',
          '--dry-run=client',
          '--validate=strict',
          '-f',
          join(kubectl.dir, file),
        ]);
        if (error) {
          assert.equal(r.code, 1, r.stdout);
          assert.match(r.stderr, /error validating data/);
          assert.match(r.stderr, error);
        } else {
          assert.equal(r.code, 0, r.stderr);
          assert.equal(r.stdout.trim(), 'deployment.apps/bad created (dry run)');
        }
        const v2 = requestsSince(server, n).find((q) => q.path === '/openapi/v2');
        assert.equal(v2?.status, 200);
      });
    }
  },
);

function requestsSince(server: DocsServer, n: number): RecordedRequest[] {
  return server.requests.slice(n);
}
