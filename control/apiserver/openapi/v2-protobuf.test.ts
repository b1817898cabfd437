/**
 * The protobuf form of `/openapi/v2`: decoded with protobufjs from a .proto text written
 * here independently of the encoder's (from gnostic's openapiv2/OpenAPIv2.proto), mapped
 * back to Swagger 2.0 JSON and compared with the JSON form; then the real kubectl against
 * the in-process API server, which reads it through client-go and kube-openapi.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import protobuf from 'protobufjs';
import { parse as parseYaml } from 'yaml';
import { encodeOpenAPIV2Protobuf } from './v2-protobuf.js';
import {
  CONTENT_TYPE_OPENAPI_V2_PROTOBUF,
  CONTENT_TYPE_OPENAPI_V2_PROTOBUF_RESPONSE,
  openAPIResponse,
  openAPIV2,
  openAPIV2Protobuf,
} from './index.js';
import type { OpenAPIV2Document, SchemaObject } from './index.js';
import { startTestApi, type TestApi } from '../../../test/support/api.js';

// The decoder's view of openapi.v2 (field numbers from gnostic's OpenAPIv2.proto), only the
// messages and fields these tests read; anything else in the bytes is skipped.
const DECODER_PROTO = `
syntax = "proto3";
package openapi.v2;
message Document {
  string swagger = 1;
  Info info = 2;
  string host = 3;
  string base_path = 4;
  Paths paths = 8;
  Definitions definitions = 9;
  repeated SecurityRequirement security = 12;
  SecurityDefinitions security_definitions = 13;
}
message Info { string title = 1; string version = 2; }
message Any { string yaml = 2; }
message NamedAny { string name = 1; Any value = 2; }
message Paths { repeated NamedPathItem path = 2; }
message NamedPathItem { string name = 1; PathItem value = 2; }
message PathItem {
  Operation get = 2; Operation put = 3; Operation post = 4; Operation delete = 5;
  Operation options = 6; Operation head = 7; Operation patch = 8;
  repeated ParametersItem parameters = 9;
}
message Operation {
  repeated string tags = 1; string description = 3; string operation_id = 5;
  repeated string produces = 6; repeated string consumes = 7;
  repeated ParametersItem parameters = 8; Responses responses = 9;
  repeated string schemes = 10; repeated NamedAny vendor_extension = 13;
}
message ParametersItem { oneof oneof { Parameter parameter = 1; JsonReference json_reference = 2; } }
message JsonReference { string _ref = 1; }
message Parameter { oneof oneof { BodyParameter body_parameter = 1; NonBodyParameter non_body_parameter = 2; } }
message BodyParameter { string description = 1; string name = 2; string in = 3; bool required = 4; Schema schema = 5; }
message NonBodyParameter {
  oneof oneof {
    HeaderParameterSubSchema header_parameter_sub_schema = 1;
    FormDataParameterSubSchema form_data_parameter_sub_schema = 2;
    QueryParameterSubSchema query_parameter_sub_schema = 3;
    PathParameterSubSchema path_parameter_sub_schema = 4;
  }
}
message HeaderParameterSubSchema { string name = 4; }
message FormDataParameterSubSchema { string name = 4; }
message QueryParameterSubSchema {
  bool required = 1; string in = 2; string description = 3; string name = 4;
  string type = 6; bool unique_items = 20;
}
message PathParameterSubSchema {
  bool required = 1; string in = 2; string description = 3; string name = 4;
  string type = 5; bool unique_items = 19;
}
message Responses { repeated NamedResponseValue response_code = 1; }
message NamedResponseValue { string name = 1; ResponseValue value = 2; }
message ResponseValue { oneof oneof { Response response = 1; JsonReference json_reference = 2; } }
message Response { string description = 1; SchemaItem schema = 2; }
message SchemaItem { oneof oneof { Schema schema = 1; FileSchema file_schema = 2; } }
message FileSchema { string type = 6; }
message Definitions { repeated NamedSchema additional_properties = 1; }
message NamedSchema { string name = 1; Schema value = 2; }
message Schema {
  string _ref = 1; string format = 2; string description = 4; repeated string required = 19;
  AdditionalPropertiesItem additional_properties = 21; TypeItem type = 22; ItemsItem items = 23;
  repeated Schema all_of = 24; Properties properties = 25; repeated NamedAny vendor_extension = 31;
}
message TypeItem { repeated string value = 1; }
message ItemsItem { repeated Schema schema = 1; }
message Properties { repeated NamedSchema additional_properties = 1; }
message AdditionalPropertiesItem { oneof oneof { Schema schema = 1; bool boolean = 2; } }
message SecurityRequirement { repeated NamedStringArray additional_properties = 1; }
message NamedStringArray { string name = 1; StringArray value = 2; }
message StringArray { repeated string value = 1; }
message SecurityDefinitions { repeated NamedSecurityDefinitionsItem additional_properties = 1; }
message NamedSecurityDefinitionsItem { string name = 1; SecurityDefinitionsItem value = 2; }
message SecurityDefinitionsItem { oneof oneof { ApiKeySecurity api_key_security = 2; } }
message ApiKeySecurity { string type = 1; string name = 2; string in = 3; string description = 4; }
`;

// Decoded messages (protobufjs toObject, keepCase): loosely typed on purpose.
/* eslint-disable @typescript-eslint/no-explicit-any */
type M = any;

function decode(bytes: Uint8Array): M {
  const type = protobuf.parse(DECODER_PROTO, { keepCase: true }).root.lookupType('openapi.v2.Document');
  return type.toObject(type.decode(bytes), { oneofs: false });
}

/** `[{name, value}]` → `{name: f(value)}` (gnostic's ordered maps). */
function named(pairs: M[] | undefined, f: (v: M) => unknown): Record<string, any> {
  return Object.fromEntries((pairs ?? []).map((p: M) => [p.name, f(p.value)]));
}

function extensions(list: M[] | undefined): Record<string, unknown> {
  return named(list, (any: M) => parseYaml(any.yaml as string));
}

/** Drops undefined values, so that a decoded object compares equal to the JSON form. */
function defined(o: Record<string, unknown>): Record<string, any> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

function schemaFrom(s: M): SchemaObject {
  return defined({
    $ref: s._ref,
    format: s.format,
    description: s.description,
    required: s.required,
    additionalProperties: s.additional_properties?.schema && schemaFrom(s.additional_properties.schema),
    type: s.type?.value?.[0],
    items: s.items?.schema?.[0] && schemaFrom(s.items.schema[0]),
    allOf: s.all_of?.map(schemaFrom),
    properties: s.properties && named(s.properties.additional_properties, schemaFrom),
    ...extensions(s.vendor_extension),
  });
}

function parameterFrom(item: M): Record<string, unknown> {
  const p = item.parameter;
  if (p.body_parameter) {
    const b = p.body_parameter;
    return defined({
      name: b.name,
      in: b.in,
      required: b.required,
      description: b.description,
      schema: schemaFrom(b.schema),
    });
  }
  const sub =
    p.non_body_parameter.query_parameter_sub_schema ?? p.non_body_parameter.path_parameter_sub_schema;
  return defined({
    name: sub.name,
    in: sub.in,
    required: sub.required,
    description: sub.description,
    type: sub.type,
    uniqueItems: sub.unique_items,
  });
}

function operationFrom(o: M): Record<string, unknown> {
  return defined({
    tags: o.tags,
    description: o.description,
    operationId: o.operation_id,
    produces: o.produces,
    consumes: o.consumes,
    parameters: o.parameters?.map(parameterFrom) ?? [],
    responses: named(o.responses.response_code, (v: M) =>
      defined({
        description: v.response.description,
        schema: v.response.schema && schemaFrom(v.response.schema.schema),
      }),
    ),
    schemes: o.schemes,
    ...extensions(o.vendor_extension),
  });
}

/** The Swagger 2.0 JSON a decoded `openapi.v2.Document` stands for (gnostic's mapping, reversed). */
function swaggerFrom(d: M): Record<string, unknown> {
  return {
    swagger: d.swagger,
    info: d.info,
    paths: named(d.paths.path, (item: M) =>
      defined({
        get: item.get && operationFrom(item.get),
        put: item.put && operationFrom(item.put),
        post: item.post && operationFrom(item.post),
        delete: item.delete && operationFrom(item.delete),
        patch: item.patch && operationFrom(item.patch),
        parameters: item.parameters?.map(parameterFrom) ?? [],
      }),
    ),
    definitions: named(d.definitions.additional_properties, schemaFrom),
    securityDefinitions: named(d.security_definitions.additional_properties, (v: M) => v.api_key_security),
    security: d.security.map((r: M) => named(r.additional_properties, (v: M) => v.value ?? [])),
  };
}

describe('/openapi/v2 as gnostic protobuf', () => {
  let json: OpenAPIV2Document;
  let decoded: M;
  before(async () => {
    json = JSON.parse((await openAPIV2()).body) as OpenAPIV2Document;
    decoded = decode((await openAPIV2Protobuf()).body);
  });

  it('decodes to exactly the JSON document', () => {
    assert.deepStrictEqual(swaggerFrom(decoded), JSON.parse(JSON.stringify(json)));
  });

  it('carries Deployment: its properties, required fields and x-kubernetes-group-version-kind', () => {
    const defs = decoded.definitions.additional_properties as M[];
    const deployment = defs.find((d) => d.name === 'io.k8s.api.apps.v1.Deployment')?.value;
    assert.ok(deployment);
    assert.deepEqual(deployment.type.value, ['object']);
    const props = named(deployment.properties.additional_properties, (s: M) => s);
    assert.deepEqual(Object.keys(props).sort(), ['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    assert.equal(props['spec']._ref, '#/definitions/io.k8s.api.apps.v1.DeploymentSpec');
    assert.deepEqual(props['kind'].type.value, ['string']);
    const gvk = deployment.vendor_extension.find((e: M) => e.name === 'x-kubernetes-group-version-kind');
    assert.deepEqual(parseYaml(gvk.value.yaml), [{ group: 'apps', kind: 'Deployment', version: 'v1' }]);

    const spec = defs.find((d) => d.name === 'io.k8s.api.apps.v1.DeploymentSpec')?.value;
    assert.deepEqual([...spec.required].sort(), ['selector', 'template']);
    const replicas = spec.properties.additional_properties.find((p: M) => p.name === 'replicas').value;
    assert.deepEqual(replicas.type.value, ['integer']);
    assert.equal(replicas.format, 'int32');

    const podSpec = defs.find((d) => d.name === 'io.k8s.api.core.v1.PodSpec')?.value;
    const containers = podSpec.properties.additional_properties.find((p: M) => p.name === 'containers').value;
    assert.deepEqual(containers.type.value, ['array']);
    assert.equal(containers.items.schema[0]._ref, '#/definitions/io.k8s.api.core.v1.Container');
    const ext = extensions(containers.vendor_extension);
    assert.equal(ext['x-kubernetes-patch-merge-key'], 'name');
    assert.equal(ext['x-kubernetes-patch-strategy'], 'merge');

    const labels = defs
      .find((d) => d.name === 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta')
      ?.value.properties.additional_properties.find((p: M) => p.name === 'labels').value;
    assert.deepEqual(labels.additional_properties.schema.type.value, ['string']);
  });

  it('lists fieldValidation on the PATCH of Deployment, where kubectl QueryParamVerifier looks', () => {
    const item = (decoded.paths.path as M[]).find(
      (p) => p.name === '/apis/apps/v1/namespaces/{namespace}/deployments/{name}',
    )?.value;
    assert.ok(item?.patch);
    const gvk = item.patch.vendor_extension.find((e: M) => e.name === 'x-kubernetes-group-version-kind');
    assert.deepEqual(parseYaml(gvk.value.yaml), { group: 'apps', kind: 'Deployment', version: 'v1' });
    const action = item.patch.vendor_extension.find((e: M) => e.name === 'x-kubernetes-action');
    assert.equal(parseYaml(action.value.yaml), 'patch');
    const query = (item.patch.parameters as M[])
      .map((p) => p.parameter.non_body_parameter?.query_parameter_sub_schema)
      .filter(Boolean);
    const fieldValidation = query.find((q: M) => q.name === 'fieldValidation');
    assert.deepEqual(
      { in: fieldValidation.in, type: fieldValidation.type, unique: fieldValidation.unique_items },
      { in: 'query', type: 'string', unique: true },
    );
    assert.ok(item.patch.consumes.includes('application/strategic-merge-patch+json'));
    const body = item.patch.parameters[0].parameter.body_parameter;
    assert.deepEqual([body.name, body.in, body.required], ['body', 'body', true]);
    const pathParams = (item.parameters as M[]).map(
      (p) => p.parameter.non_body_parameter.path_parameter_sub_schema,
    );
    const name = pathParams.find((p: M) => p?.name === 'name');
    assert.deepEqual([name.in, name.required, name.type], ['path', true, 'string']);
  });

  it('rejects a schema Swagger 2.0 cannot express (oneOf)', () => {
    const doc = structuredClone(json);
    doc.definitions['x.Bad'] = { oneOf: [{ type: 'string' }, { type: 'integer' }] };
    assert.throws(() => encodeOpenAPIV2Protobuf(doc), /oneOf/);
  });
});

describe('/openapi/v2 content negotiation', () => {
  const PB = CONTENT_TYPE_OPENAPI_V2_PROTOBUF_RESPONSE;
  const cases: [accept: string | undefined, status: number, contentType: string][] = [
    [undefined, 200, 'application/json'],
    ['application/json', 200, 'application/json'],
    ['*/*', 200, 'application/json'],
    ['application/*', 200, 'application/json'],
    // client-go's OpenAPISchema() (the deprecated spelling) and the current one
    [CONTENT_TYPE_OPENAPI_V2_PROTOBUF, 200, PB],
    [PB, 200, PB],
    [`${CONTENT_TYPE_OPENAPI_V2_PROTOBUF}, application/json`, 200, PB],
    [`application/json;q=0.5, ${PB}`, 200, PB],
    [`${PB};q=0.5, application/json`, 200, 'application/json'],
    ['application/yaml', 406, 'application/json'],
    ['application/vnd.kubernetes.protobuf', 406, 'application/json'],
    ['text/plain', 406, 'application/json'],
  ];
  for (const [accept, status, contentType] of cases) {
    it(`Accept: ${accept ?? '(none)'} → ${status} ${contentType}`, async () => {
      const res = (await openAPIResponse({ path: '/openapi/v2', accept }))!;
      assert.equal(res.status, status);
      assert.equal(res.headers['Content-Type'], contentType);
      if (status === 406) {
        const s = JSON.parse(res.body.toString()) as { reason: string; code: number };
        assert.deepEqual([s.reason, s.code], ['NotAcceptable', 406]);
      }
    });
  }

  it('serves the protobuf form from a cache, with its own ETag and 304 for it', async () => {
    const pb = (await openAPIResponse({ path: '/openapi/v2', accept: CONTENT_TYPE_OPENAPI_V2_PROTOBUF }))!;
    const js = (await openAPIResponse({ path: '/openapi/v2', accept: 'application/json' }))!;
    assert.ok(Buffer.isBuffer(pb.body));
    assert.equal(pb.body, (await openAPIV2Protobuf()).body, 'the same cached bytes');
    assert.equal(pb.headers['Vary'], 'Accept');
    assert.match(pb.headers['ETag']!, /^"[0-9A-F]{128}"$/);
    assert.notEqual(pb.headers['ETag'], js.headers['ETag']);
    const again = (await openAPIResponse({
      path: '/openapi/v2',
      accept: CONTENT_TYPE_OPENAPI_V2_PROTOBUF,
      ifNoneMatch: pb.headers['ETag'],
    }))!;
    assert.equal(again.status, 304);
    assert.equal(again.body, '');
    const jsonTagForProtobuf = (await openAPIResponse({
      path: '/openapi/v2',
      accept: CONTENT_TYPE_OPENAPI_V2_PROTOBUF,
      ifNoneMatch: js.headers['ETag'],
    }))!;
    assert.equal(jsonTagForProtobuf.status, 200);
  });
});

const WIDGET = 'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n';

const BAD_DEPLOYMENT = `apiVersion: apps/v1
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

describe('real kubectl against the API server, where v3 has no document', { timeout: 120_000 }, () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api?.stop());

  it('kubectl apply of an unknown kind fails with "no matches for kind", and creates nothing', async () => {
    const r = await api.kubectlIn(WIDGET, 'apply', '-v=6', '-f', '-');
    assert.equal(r.code, 1, r.stderr);
    // The fallback this is about: v3 has no apis/example.com/v1, so kubectl read v2.
    assert.match(r.stderr, /GET \S+\/openapi\/v2\S* 200 OK/);
    assert.match(r.stderr, /no matches for kind "Widget" in version "example\.com\/v1"/);
    assert.match(r.stderr, /ensure CRDs are installed first/);
    assert.doesNotMatch(r.stderr, /failed to download openapi|error validating data/);
    // Nothing was written: no object named "w" of any kind kubectl could have mapped it to.
    const all = await api.kubectl(
      'get',
      'pods,services,deployments,replicasets,configmaps,secrets',
      '-A',
      '-o',
      'name',
    );
    assert.equal(all.code, 0, all.stderr);
    assert.doesNotMatch(all.stdout, /\/w$/m);
  });

  it('kubectl apply --validate=strict of a Deployment with an unknown field is still refused', async () => {
    const r = await api.kubectlIn(BAD_DEPLOYMENT, 'apply', '--validate=strict', '-f', '-');
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stderr, /unknown field "spec\.foo"/);
    const get = await api.kubectl('get', 'deployment', 'bad', '-n', 'default');
    assert.equal(get.code, 1);
    assert.match(get.stderr, /NotFound|not found/);
  });
});
