// One file for the folder (940 lines): its table-driven cases share the compiled schemas and one typical Deployment.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import {
  MAX_STRICT_ERRORS,
  applyFieldValidation,
  checkFieldTypes,
  checkPatchedFieldTypes,
  duplicateFields,
  fieldTypeError,
  fieldValidationDirective,
  formatGoValue,
  goQuote,
  loadFieldSchemas,
  pruneUnknownFields,
  strictDecodingErrors,
  warningHeader,
  warningHeaders,
} from './index.js';
import type { FieldValidationVerb, StrictDecodeTarget } from './index.js';
import { typicalDeployment as typicalDeploymentOf } from './testing.js';
import { GO_FIELD_TYPES } from '../encoding/go-types.js';
import { buildOpenAPIV2, modelDefinitionNames } from '../openapi/index.js';
import { RESOURCES } from '../resources.js';
import { ApiError } from '../status.js';

type Json = Record<string, unknown>;

const SPRING = parseYaml(
  readFileSync(new URL('../../../../shared/fixtures/spring-deployment.yaml', import.meta.url), 'utf8'),
) as Json;

function clone<T>(v: T): T {
  return structuredClone(v);
}

/** `at(obj, 'spec', 'template', 'spec', 'containers', 0)`: the value at that place (it must exist). */
function at(obj: unknown, ...path: (string | number)[]): Json {
  let v = obj;
  for (const p of path) v = (v as Record<string | number, unknown>)[p];
  assert.ok(v !== null && typeof v === 'object', `${path.join('.')} exists`);
  return v as Json;
}

const container = (o: Json, i = 0) => at(o, 'spec', 'template', 'spec', 'containers', i);
const podSpec = (o: Json) => at(o, 'spec', 'template', 'spec');

/** SPRING as the store holds it after a few writes (fieldvalidation-testing.ts). */
const typicalDeployment = (): Json => typicalDeploymentOf(SPRING);

before(async () => {
  const t0 = performance.now();
  await loadFieldSchemas();
  console.log(`# loadFieldSchemas (OpenAPI catalog included): ${(performance.now() - t0).toFixed(0)} ms`);
});

describe('pruneUnknownFields', () => {
  it('finds nothing in spring-deployment.yaml and leaves it unchanged', () => {
    const d = clone(SPRING);
    assert.deepEqual(pruneUnknownFields('V1Deployment', d), []);
    assert.deepEqual(d, SPRING);
  });

  it('finds nothing in a typical stored Deployment (maps, quantities, IntOrString, FieldsV1, status)', () => {
    const d = typicalDeployment();
    const before = clone(d);
    assert.deepEqual(pruneUnknownFields('V1Deployment', d), []);
    assert.deepEqual(d, before);
  });

  interface Case {
    name: string;
    model?: string;
    /** The object without typos; SPRING by default. */
    base?: () => Json;
    /** Adds what is valid (kept). */
    valid?: (o: Json) => void;
    /** Adds the unknown fields (removed). */
    typo?: (o: Json) => void;
    want: string[];
  }

  const cases: Case[] = [
    { name: 'top level', typo: (o) => (o.foo = 1), want: ['foo'] },
    { name: 'apiVersion, kind and metadata are known at the top', want: [] },
    { name: 'field names are case-sensitive', typo: (o) => (o.Spec = {}), want: ['Spec'] },
    { name: 'metadata', typo: (o) => (at(o, 'metadata').nmae = 'x'), want: ['metadata.nmae'] },
    { name: 'spec', typo: (o) => (at(o, 'spec').foo = 'bar'), want: ['spec.foo'] },
    {
      name: 'spec.selector (a LabelSelector)',
      typo: (o) => (at(o, 'spec', 'selector').matchLabel = { app: 'x' }),
      want: ['spec.selector.matchLabel'],
    },
    {
      name: 'template.spec',
      typo: (o) => (podSpec(o).restartPolicyy = 'Always'),
      want: ['spec.template.spec.restartPolicyy'],
    },
    {
      name: 'containers[0]',
      typo: (o) => (container(o).imagePullPolcy = 'Always'),
      want: ['spec.template.spec.containers[0].imagePullPolcy'],
    },
    {
      name: 'containers[1]',
      valid: (o) => (podSpec(o).containers as Json[]).push({ name: 'sidecar', image: 'busybox' }),
      typo: (o) => (container(o, 1).imagee = 'busybox:1'),
      want: ['spec.template.spec.containers[1].imagee'],
    },
    {
      name: 'ports[0]',
      typo: (o) => (at(container(o), 'ports', 0).containerPortt = 80),
      want: ['spec.template.spec.containers[0].ports[0].containerPortt'],
    },
    {
      name: 'metadata.labels is a map: any key',
      valid: (o) => {
        at(o, 'metadata').labels = { app: 'x', 'example.com/anything': 'y', imagePullPolcy: 'z' };
        at(o, 'spec', 'template', 'metadata', 'labels')['tier'] = 'web';
        at(o, 'metadata').annotations = { 'what/ever': '1' };
      },
      want: [],
    },
    {
      name: 'resources.limits is a map of quantities: any key, strings or numbers',
      valid: (o) =>
        (container(o).resources = {
          limits: { cpu: '500m', memory: '1Gi', 'nvidia.com/gpu': 1 },
          requests: { cpu: 0.5 },
        }),
      typo: (o) => (at(container(o), 'resources').limitss = { cpu: '1' }),
      want: ['spec.template.spec.containers[0].resources.limitss'],
    },
    {
      name: 'managedFields[].fieldsV1 is free-form; the entry itself is not',
      valid: (o) =>
        (at(o, 'metadata').managedFields = [
          {
            manager: 'kubectl',
            operation: 'Apply',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:spec': { 'f:replicas': {}, 'f:anything': { '.': {} } }, whatever: [1, 2] },
          },
        ]),
      typo: (o) => (at(o, 'metadata', 'managedFields', 0).managerr = 'x'),
      want: ['metadata.managedFields[0].managerr'],
    },
    {
      name: 'IntOrString takes integers and strings',
      valid: (o) => {
        at(o, 'spec').strategy = { rollingUpdate: { maxSurge: '25%', maxUnavailable: 0 } };
        container(o).readinessProbe = { httpGet: { port: 'http', path: '/' } };
        container(o).livenessProbe = { tcpSocket: { port: 8080 } };
      },
      want: [],
    },
    {
      name: 'an unknown field is reported once, not looked into',
      typo: (o) => (container(o).securityContextt = { runAsUser: 1, bogus: { deeper: true } }),
      want: ['spec.template.spec.containers[0].securityContextt'],
    },
    {
      name: 'several, in document order',
      typo: (o) => {
        at(o, 'metadata').a = 1; // metadata comes before spec in the fixture
        container(o).b = 2;
        at(o, 'spec').c = 3; // appended after template
        o.d = 4;
      },
      want: ['metadata.a', 'spec.template.spec.containers[0].b', 'spec.c', 'd'],
    },
    {
      name: 'status',
      valid: (o) => (o.status = { replicas: 1, conditions: [{ type: 'Available', status: 'True' }] }),
      typo: (o) => (at(o, 'status', 'conditions', 0).reasonn = 'x'),
      want: ['status.conditions[0].reasonn'],
    },
    {
      name: 'null values and values of the wrong type are not unknown fields',
      valid: (o) => {
        podSpec(o).nodeSelector = null;
        podSpec(o).volumes = 'not a list';
        at(o, 'spec').replicas = 'five';
        at(o, 'spec').strategy = [{ type: 'Recreate' }];
      },
      want: [],
    },
    {
      name: 'a map of structs (volumes[].projected, env[].valueFrom) checks each struct',
      valid: (o) =>
        (container(o).env = [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'c', key: 'k' } } }]),
      typo: (o) => (at(container(o), 'env', 0, 'valueFrom', 'configMapKeyRef').optinal = true),
      want: ['spec.template.spec.containers[0].env[0].valueFrom.configMapKeyRef.optinal'],
    },
    {
      name: 'Pod',
      model: 'V1Pod',
      base: () => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p' },
        spec: { containers: [{ name: 'c', image: 'i' }] },
      }),
      typo: (o) => (at(o, 'spec', 'containers', 0).envv = []),
      want: ['spec.containers[0].envv'],
    },
    {
      name: 'Service (targetPort is IntOrString)',
      model: 'V1Service',
      base: () => ({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 's' },
        spec: { type: 'NodePort', ports: [{ port: 80, targetPort: 'http', nodePort: 30080 }] },
      }),
      typo: (o) => (at(o, 'spec').tpye = 'ClusterIP'),
      want: ['spec.tpye'],
    },
    {
      name: 'ConfigMap (data is a map; there is no spec)',
      model: 'V1ConfigMap',
      base: () => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'c' },
        data: { 'application.yaml': 'a: 1', spec: 'fine here' },
      }),
      typo: (o) => (o.spec = { data: 1 }),
      want: ['spec'],
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const expected = c.base ? c.base() : clone(SPRING);
      c.valid?.(expected);
      const input = clone(expected);
      c.typo?.(input);
      assert.deepEqual(pruneUnknownFields(c.model ?? 'V1Deployment', input), c.want);
      assert.deepEqual(input, expected, 'after pruning only the unknown fields are gone');
    });
  }

  it(`reports at most ${MAX_STRICT_ERRORS} but removes them all`, () => {
    const d = clone(SPRING);
    for (let i = 0; i < 150; i++) d[`extra${i}`] = i;
    const found = pruneUnknownFields('V1Deployment', d);
    assert.equal(found.length, MAX_STRICT_ERRORS);
    assert.equal(found[0], 'extra0');
    assert.deepEqual(d, SPRING);
  });

  it('a non-object has no fields', () => {
    assert.deepEqual(pruneUnknownFields('V1Deployment', null), []);
    assert.deepEqual(pruneUnknownFields('V1Deployment', 'x'), []);
  });

  it('has a schema for every served kind and the subresource kinds', () => {
    for (const model of [...RESOURCES.map((r) => r.model), 'V1Scale', 'V1Binding', 'V1Eviction']) {
      const obj = { apiVersion: 'v1', kind: 'X', metadata: { name: 'n' }, bogus: 1 };
      assert.deepEqual(pruneUnknownFields(model, obj), ['bogus'], model);
    }
  });

  it('refuses a model it has no schema for', () => {
    assert.throws(() => pruneUnknownFields('V1NoSuchThing', {}), /no schema for model V1NoSuchThing/);
  });
});

describe('duplicateFields', () => {
  const cases: { name: string; json: string; model?: string; want: string[] }[] = [
    { name: 'none', json: JSON.stringify(SPRING), model: 'V1Deployment', want: [] },
    {
      name: 'struct field',
      json: '{"metadata":{"name":"a","name":"b"}}',
      model: 'V1Deployment',
      want: ['metadata.name'],
    },
    {
      name: 'map key',
      json: '{"metadata":{"labels":{"app":"a","app":"b"}}}',
      model: 'V1Deployment',
      want: ['metadata.labels.app'],
    },
    {
      name: 'in a list',
      json: '{"spec":{"template":{"spec":{"containers":[{"name":"a"},{"name":"b","image":"i","name":"c"}]}}}}',
      model: 'V1Deployment',
      want: ['spec.template.spec.containers[1].name'],
    },
    {
      name: 'each once, in document order',
      json: '{"kind":"Deployment","kind":"Deployment","spec":{"replicas":1,"replicas":2,"replicas":3},"kind":"x"}',
      model: 'V1Deployment',
      want: ['kind', 'spec.replicas'],
    },
    {
      name: 'not inside opaque values (fieldsV1) nor unknown fields; unknown keys are not duplicates',
      json: '{"metadata":{"managedFields":[{"fieldsV1":{"f:a":{},"f:a":{}}}]},"foo":{"x":1,"x":2},"foo":1}',
      model: 'V1Deployment',
      want: [],
    },
    {
      name: 'untyped (a merge patch): everywhere',
      json: '{"spec":{"foo":[{"x":1,"x":2}],"foo":1},"metadata":{"fieldsV1":{"a":1,"a":1}}}',
      want: ['spec.foo[0].x', 'spec.foo', 'metadata.fieldsV1.a'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(duplicateFields(c.json, { model: c.model }), c.want);
      const parsed: unknown = JSON.parse(c.json);
      assert.deepEqual(duplicateFields(c.json, { model: c.model, parsed }), c.want, 'with parsed');
    });
  }

  it('counts keys, not strings that look like keys, in the fast check', () => {
    const tricky = JSON.stringify({
      metadata: {
        name: 'a',
        annotations: { note: '{"name": "x", "name": "y"}', 'b\\"': 'c\\":' },
      },
    });
    assert.deepEqual(duplicateFields(tricky, { model: 'V1Deployment' }), []);
    assert.deepEqual(duplicateFields(`${tricky.slice(0, -1)}, "metadata": {}}`, {}), ['metadata']);
  });

  it('requires the schemas only with a model', () => {
    assert.throws(() => duplicateFields('{}', { model: 'V1Nope' }), /no schema for model V1Nope/);
  });
});

describe('fieldValidationDirective', () => {
  const ok: [string, string][] = [
    ['', 'Warn'],
    ['fieldValidation=', 'Warn'],
    ['fieldValidation=Strict', 'Strict'],
    ['fieldValidation=Warn', 'Warn'],
    ['fieldValidation=Ignore', 'Ignore'],
    ['fieldValidation=Ignore&fieldValidation=Strict', 'Ignore'],
    ['fieldManager=kubectl-client-side-apply&fieldValidation=Strict', 'Strict'],
  ];
  for (const [query, want] of ok) {
    it(`?${query} → ${want}`, () => {
      assert.equal(fieldValidationDirective(new URLSearchParams(query), 'create'), want);
    });
  }

  const bad: [string, FieldValidationVerb, string][] = [
    ['strict', 'create', 'CreateOptions'],
    ['Foo', 'update', 'UpdateOptions'],
    ['WARN', 'patch', 'PatchOptions'],
  ];
  for (const [value, verb, kind] of bad) {
    it(`${verb} ?fieldValidation=${value} → 422 on ${kind}`, () => {
      const body = `Unsupported value: "${value}": supported values: "", "Ignore", "Strict", "Warn"`;
      assert.throws(
        () => fieldValidationDirective(new URLSearchParams({ fieldValidation: value }), verb),
        (err: unknown) => {
          assert.ok(err instanceof ApiError);
          assert.equal(err.code, 422);
          assert.equal(err.reason, 'Invalid');
          assert.equal(err.message, `${kind}.meta.k8s.io "" is invalid: fieldValidation: ${body}`);
          assert.deepEqual(err.details, {
            group: 'meta.k8s.io',
            kind,
            causes: [{ reason: 'FieldValueNotSupported', message: body, field: 'fieldValidation' }],
          });
          return true;
        },
      );
    });
  }
});

describe('applyFieldValidation', () => {
  const create: StrictDecodeTarget = { verb: 'create', kind: 'Deployment', version: 'v1' };
  const two = { unknown: ['spec.foo', 'spec.bar'] };

  it('Strict on create/update: 400 with the strict decoding error', () => {
    assert.throws(
      () => applyFieldValidation('Strict', two, create),
      (err: unknown) => {
        assert.ok(err instanceof ApiError);
        assert.equal(err.code, 400);
        assert.equal(err.reason, 'BadRequest');
        assert.equal(
          err.message,
          'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: ' +
            'unknown field "spec.foo", unknown field "spec.bar"',
        );
        return true;
      },
    );
  });

  it('Strict with duplicates: duplicates first', () => {
    assert.throws(
      () =>
        applyFieldValidation(
          'Strict',
          { unknown: ['spec.foo'], duplicate: ['metadata.name'] },
          { verb: 'update', kind: 'Pod', version: 'v1' },
        ),
      {
        message:
          'Pod in version "v1" cannot be handled as a Pod: strict decoding error: ' +
          'duplicate field "metadata.name", unknown field "spec.foo"',
      },
    );
  });

  it('Strict on patch: 422 Invalid on field patch', () => {
    const badValue = '{"kind":"Deployment","spec":{"foo":1}}';
    const body =
      'Invalid value: "{\\"kind\\":\\"Deployment\\",\\"spec\\":{\\"foo\\":1}}": ' +
      'strict decoding error: unknown field "spec.foo"';
    assert.throws(
      () => applyFieldValidation('Strict', { unknown: ['spec.foo'] }, { verb: 'patch', badValue }),
      (err: unknown) => {
        assert.ok(err instanceof ApiError);
        assert.equal(err.code, 422);
        assert.equal(err.reason, 'Invalid');
        assert.equal(err.message, ` "" is invalid: patch: ${body}`);
        assert.deepEqual(err.details, {
          causes: [{ reason: 'FieldValueInvalid', message: body, field: 'patch' }],
        });
        return true;
      },
    );
  });

  const outcomes: { directive: 'Strict' | 'Warn' | 'Ignore'; unknown: string[]; warnings: string[] }[] = [
    { directive: 'Strict', unknown: [], warnings: [] },
    { directive: 'Warn', unknown: [], warnings: [] },
    {
      directive: 'Warn',
      unknown: ['spec.foo', 'spec.bar'],
      warnings: two.unknown.map((p) => `unknown field "${p}"`),
    },
    { directive: 'Ignore', unknown: ['spec.foo'], warnings: [] },
  ];
  for (const o of outcomes) {
    it(`${o.directive} with ${o.unknown.length} unknown → ${o.warnings.length} warnings`, () => {
      assert.deepEqual(applyFieldValidation(o.directive, { unknown: o.unknown }, create), {
        warnings: o.warnings,
      });
    });
  }

  it('words paths as Go quotes them, each once, at most 100', () => {
    assert.deepEqual(strictDecodingErrors({ unknown: ['a"b', 'tab\there', 'a"b'] }), [
      'unknown field "a\\"b"',
      'unknown field "tab\\there"',
    ]);
    const many = Array.from({ length: 120 }, (_, i) => `f${i}`);
    assert.equal(strictDecodingErrors({ unknown: many }).length, 100);
  });
});

describe('checkFieldTypes', () => {
  /** A body as kubectl would send it: spring-deployment.yaml with `edit` applied. */
  const spring = (edit: (d: Json) => void): Json => {
    const d = clone(SPRING);
    edit(d);
    return d;
  };
  const pod = (spec: Json, metadata: Json = { name: 'p' }): Json => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata,
    spec,
  });
  const cannot = (kind: string, err: string) =>
    `${kind} in version "v1" cannot be handled as a ${kind}: ${err}`;

  const cases: { name: string; model?: string; kind?: string; obj: Json; want: string }[] = [
    {
      name: 'spec.replicas "3" (a string for an int32)',
      obj: spring((d) => (at(d, 'spec').replicas = '3')),
      want: 'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32',
    },
    {
      name: 'spec.replicas 1.5 (not an integer)',
      obj: spring((d) => (at(d, 'spec').replicas = 1.5)),
      want: 'json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32',
    },
    {
      name: 'spec.replicas 99999999999 (int32 overflow)',
      obj: spring((d) => (at(d, 'spec').replicas = 99999999999)),
      want: 'json: cannot unmarshal number 99999999999 into Go struct field DeploymentSpec.spec.replicas of type int32',
    },
    {
      name: 'metadata.labels {"a":1}',
      obj: spring((d) => (at(d, 'metadata').labels = { a: 1 })),
      want: 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string',
    },
    {
      name: 'metadata.annotations {"a":{"b":1}}',
      obj: spring((d) => (at(d, 'metadata').annotations = { a: { b: 1 } })),
      want: 'json: cannot unmarshal object into Go struct field ObjectMeta.metadata.annotations of type string',
    },
    {
      name: 'Pod hostNetwork "yes"',
      model: 'V1Pod',
      kind: 'Pod',
      obj: pod({ hostNetwork: 'yes', containers: [] }),
      want: 'json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool',
    },
    {
      name: 'Pod terminationGracePeriodSeconds "30" (int64)',
      model: 'V1Pod',
      kind: 'Pod',
      obj: pod({ terminationGracePeriodSeconds: '30' }),
      want: 'json: cannot unmarshal string into Go struct field PodSpec.spec.terminationGracePeriodSeconds of type int64',
    },
    {
      name: 'metadata.finalizers "a/b" (a string for a list)',
      obj: spring((d) => (at(d, 'metadata').finalizers = 'a/b')),
      want: 'json: cannot unmarshal string into Go struct field ObjectMeta.metadata.finalizers of type []string',
    },
    {
      name: 'metadata.name 123',
      obj: spring((d) => (at(d, 'metadata').name = 123)),
      want: 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string',
    },
    {
      name: 'metadata "x"',
      obj: spring((d) => (d.metadata = 'x')),
      want: 'json: cannot unmarshal string into Go struct field Deployment.metadata of type v1.ObjectMeta',
    },
    {
      name: 'the template labels (the struct is the nearest one, the path the whole way)',
      obj: spring((d) => (at(d, 'spec', 'template', 'metadata', 'labels').app = true)),
      want: 'json: cannot unmarshal bool into Go struct field ObjectMeta.spec.template.metadata.labels of type string',
    },
    {
      name: 'an env value 1 (list indices are not in the path)',
      obj: spring((d) => (container(d).env = [{ name: 'A', value: 1 }])),
      want: 'json: cannot unmarshal number into Go struct field EnvVar.spec.template.spec.containers.env.value of type string',
    },
    {
      name: 'a container that is a string',
      obj: spring((d) => (podSpec(d).containers as unknown[]).push('web')),
      want: 'json: cannot unmarshal string into Go struct field PodSpec.spec.template.spec.containers of type v1.Container',
    },
    {
      name: 'a named string type (imagePullPolicy)',
      obj: spring((d) => (container(d).imagePullPolicy = 1)),
      want: 'json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.imagePullPolicy of type v1.PullPolicy',
    },
    {
      name: 'a container port "8080"',
      obj: spring((d) => (at(container(d), 'ports', 0).containerPort = '8080')),
      want: 'json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32',
    },
    {
      name: 'IntOrString true',
      obj: spring((d) => (at(d, 'spec').strategy = { rollingUpdate: { maxSurge: true } })),
      want: 'json: cannot unmarshal bool into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32',
    },
    {
      name: 'IntOrString 2.5',
      obj: spring((d) => (at(d, 'spec').strategy = { rollingUpdate: { maxUnavailable: 2.5 } })),
      want: 'json: cannot unmarshal number 2.5 into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxUnavailable of type int32',
    },
    {
      name: 'a quantity that does not parse',
      obj: spring((d) => (container(d).resources = { limits: { cpu: 'lots' } })),
      want: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    },
    {
      name: 'a quantity that is a boolean',
      obj: spring((d) => (container(d).resources = { requests: { memory: true } })),
      want: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    },
    {
      name: 'a quantity with an unknown suffix',
      obj: spring((d) => (container(d).resources = { requests: { memory: '1mi' } })),
      want: "unable to parse quantity's suffix",
    },
    {
      name: 'a Time that is a number',
      obj: spring((d) => (at(d, 'metadata').creationTimestamp = 1735689600)),
      want: 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string',
    },
    {
      name: 'a Time that is not RFC 3339',
      obj: spring((d) => (at(d, 'metadata').creationTimestamp = '2025-01-01 00:00:00')),
      want: 'parsing time "2025-01-01 00:00:00" as "2006-01-02T15:04:05Z07:00": cannot parse " 00:00:00" as "T"',
    },
    {
      name: 'a MicroTime without six fractional digits',
      model: 'V1Lease',
      kind: 'Lease',
      obj: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        spec: { renewTime: '2025-01-01T00:00:00Z' },
      },
      want: 'parsing time "2025-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"',
    },
    {
      name: 'Secret data that is not base64',
      model: 'V1Secret',
      kind: 'Secret',
      obj: { apiVersion: 'v1', kind: 'Secret', data: { password: 'hunter2' } },
      want: 'illegal base64 data at input byte 4',
    },
    {
      name: 'Secret data that is a number',
      model: 'V1Secret',
      kind: 'Secret',
      obj: { apiVersion: 'v1', kind: 'Secret', data: { port: 5432 } },
      want: 'json: cannot unmarshal number into Go struct field Secret.data of type []uint8',
    },
    {
      name: 'a Service port protocol 6',
      model: 'V1Service',
      kind: 'Service',
      obj: { apiVersion: 'v1', kind: 'Service', spec: { ports: [{ port: 80, protocol: 6 }] } },
      want: 'json: cannot unmarshal number into Go struct field ServicePort.spec.ports.protocol of type v1.Protocol',
    },
    {
      name: 'two mismatches: the first in document order',
      obj: spring((d) => {
        at(d, 'metadata').name = 5;
        at(d, 'spec').replicas = '3';
      }),
      want: 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string',
    },
    {
      name: 'two mismatches, the later one inside an IntOrString: that one (Go stops there)',
      obj: spring((d) => {
        at(d, 'spec').replicas = '3';
        at(d, 'spec').strategy = { rollingUpdate: { maxSurge: {} } };
      }),
      want: 'json: cannot unmarshal object into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32',
    },
  ];
  for (const c of cases) {
    it(`400: ${c.name}`, () => {
      const obj = clone(c.obj);
      const kind = c.kind ?? 'Deployment';
      assert.throws(
        () => checkFieldTypes(c.model ?? 'V1Deployment', obj, kind, 'v1'),
        (err: unknown) => {
          assert.ok(err instanceof ApiError);
          assert.equal(err.code, 400);
          assert.equal(err.reason, 'BadRequest');
          assert.equal(err.message, cannot(kind, c.want));
          return true;
        },
      );
      assert.deepEqual(obj, c.obj, 'a refused object is left as it was');
    });
  }

  it('400: apiVersion or kind that is not a string, as the serializer reads them first', () => {
    const body = '{"apiVersion":"apps/v1","kind":1,"metadata":{"name":5}}';
    assert.throws(() => checkFieldTypes('V1Deployment', JSON.parse(body), 'Deployment', 'v1', body), {
      message:
        "the object provided is unrecognized (must be of type Deployment): couldn't get version/kind; json parse error: " +
        'json: cannot unmarshal number into Go struct field .kind of type string ({"apiVersion":"apps/v1","kind" ...)',
    });
    const yaml = 'apiVersion: 1\nkind: Deployment\n';
    assert.throws(() => checkFieldTypes('V1Deployment', parseYaml(yaml), 'Deployment', 'v1', yaml), {
      message:
        "the object provided is unrecognized (must be of type Deployment): couldn't get version/kind; json parse error: " +
        'json: cannot unmarshal number into Go struct field .apiVersion of type string ' +
        `(${Buffer.from(yaml).subarray(0, 30).toString('hex')} ...)`,
    });
  });

  it('passes spring-deployment.yaml unchanged', () => {
    const d = clone(SPRING);
    checkFieldTypes('V1Deployment', d, 'Deployment', 'v1');
    assert.deepEqual(d, SPRING);
  });

  it('passes a typical stored Deployment unchanged (quantities, IntOrString, times, FieldsV1, status)', () => {
    const d = typicalDeployment();
    const before = clone(d);
    checkFieldTypes('V1Deployment', d, 'Deployment', 'v1');
    assert.deepEqual(d, before);
  });

  it('takes what Go takes', () => {
    const ok: { model: string; obj: Json }[] = [
      { model: 'V1Deployment', obj: spring((d) => (at(d, 'spec').replicas = 2 ** 31 - 1)) },
      { model: 'V1Deployment', obj: spring((d) => (at(d, 'spec').replicas = -(2 ** 31))) },
      { model: 'V1Pod', obj: pod({ activeDeadlineSeconds: 2 ** 53 + 2, terminationGracePeriodSeconds: -1 }) },
      {
        model: 'V1Deployment',
        obj: spring((d) => (at(d, 'spec').strategy = { rollingUpdate: { maxSurge: '50%' } })),
      },
      {
        model: 'V1Deployment',
        obj: spring(
          (d) => (container(d).resources = { limits: { cpu: 1.5, memory: '1e9' }, requests: { cpu: ' 1 ' } }),
        ),
      },
      {
        model: 'V1Deployment',
        obj: spring((d) => (at(d, 'metadata').creationTimestamp = '2025-01-01T10:00:00.5+01:00')),
      },
      { model: 'V1Secret', obj: { data: { a: 'aGk=', b: '', c: 'aGVs\nbG8=' }, stringData: { d: 'x' } } },
      { model: 'V1Lease', obj: { spec: { renewTime: '2025-01-01T00:00:00.000000Z', holderIdentity: 'a' } } },
      {
        model: 'V1Deployment',
        obj: spring(
          (d) =>
            (at(d, 'metadata').managedFields = [{ fieldsV1: { 'f:x': [1, 'two', null, { y: false }] } }]),
        ),
      },
    ];
    for (const c of ok) {
      const obj = clone(c.obj);
      assert.equal(fieldTypeError(c.model, obj), undefined, JSON.stringify(c.obj));
      assert.deepEqual(obj, c.obj);
    }
  });

  it('does not look into unknown fields (pruning reports them)', () => {
    const d = spring((d) => (at(d, 'spec').replica = 'three'));
    assert.equal(fieldTypeError('V1Deployment', d), undefined);
  });

  it('drops null fields, and gives null list elements and map values their zero value, as Go decodes them', () => {
    const d = spring((d) => {
      at(d, 'metadata').labels = { a: null, b: 'x' };
      at(d, 'metadata').annotations = null;
      at(d, 'metadata').creationTimestamp = null;
      at(d, 'spec').replicas = null;
      at(d, 'spec').strategy = { rollingUpdate: { maxSurge: null } };
      at(d, 'spec', 'template').metadata = null;
      Object.assign(container(d), {
        args: ['a', null],
        env: null,
        resources: { limits: { cpu: null } },
        securityContext: { runAsUser: null },
      });
      (podSpec(d).containers as unknown[]).push(null);
      at(d, 'metadata').managedFields = [{ manager: null, fieldsV1: { 'f:x': null } }];
      d.status = null;
    });
    checkFieldTypes('V1Deployment', d, 'Deployment', 'v1');
    const want = spring((d) => {
      at(d, 'metadata').labels = { a: '', b: 'x' };
      at(d, 'spec').strategy = { rollingUpdate: {} };
      delete at(d, 'spec').replicas;
      delete at(d, 'spec', 'template').metadata;
      Object.assign(container(d), {
        args: ['a', ''],
        resources: { limits: { cpu: '0' } },
        securityContext: {},
      });
      (podSpec(d).containers as unknown[]).push({});
      at(d, 'metadata').managedFields = [{ fieldsV1: { 'f:x': null } }];
    });
    assert.deepEqual(d, want);
  });

  it('keeps the nulls of an object it refuses', () => {
    const d = spring((d) => {
      at(d, 'metadata').labels = null;
      at(d, 'spec').replicas = 'five';
    });
    const before = clone(d);
    assert.throws(() => checkFieldTypes('V1Deployment', d, 'Deployment', 'v1'), { code: 400 });
    assert.deepEqual(d, before);
  });

  it('stores a []byte sent as an array of bytes as base64, as Go decodes and encodes it', () => {
    const s: Json = { data: { a: [104, 105, null] } };
    assert.equal(fieldTypeError('V1Secret', s), undefined);
    assert.deepEqual(s, { data: { a: 'aGkA' } });
    assert.equal(
      fieldTypeError('V1Secret', { data: { a: [256] } }),
      'json: cannot unmarshal number 256 into Go struct field Secret.data of type uint8',
    );
  });

  it('is the same check for every served kind (Pod, Service, ConfigMap, Event, EndpointSlice)', () => {
    const ok: [string, Json][] = [
      ['V1ConfigMap', { data: { a: 'b' }, binaryData: { c: 'AAE=' }, immutable: true }],
      [
        'CoreV1Event',
        { count: 3, firstTimestamp: '2025-01-01T00:00:00Z', eventTime: null, involvedObject: {} },
      ],
      ['EventsV1Event', { eventTime: '2025-01-01T00:00:00.123456Z', deprecatedCount: 2 }],
      [
        'V1EndpointSlice',
        { addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }] },
      ],
      ['V1Service', { spec: { ports: [{ port: 80, targetPort: 'http' }], clusterIPs: ['10.0.0.2'] } }],
    ];
    for (const [model, obj] of ok) assert.equal(fieldTypeError(model, clone(obj)), undefined, model);
    assert.equal(
      fieldTypeError('V1EndpointSlice', { endpoints: [{ addresses: '10.0.0.1' }] }),
      'json: cannot unmarshal string into Go struct field Endpoint.endpoints.addresses of type []string',
    );
  });
});

describe('checkPatchedFieldTypes', () => {
  const patchedSpring = (replicas: unknown): Json => {
    const d = clone(SPRING);
    at(d, 'spec').replicas = replicas;
    return d;
  };
  const invalid = (badValue: string, detail: string) => (err: unknown) => {
    assert.ok(err instanceof ApiError);
    assert.equal(err.code, 422);
    assert.equal(err.reason, 'Invalid');
    const body = `Invalid value: ${goQuote(badValue)}: ${detail}`;
    assert.equal(err.message, ` "" is invalid: patch: ${body}`);
    assert.deepEqual(err.details, {
      causes: [{ reason: 'FieldValueInvalid', message: body, field: 'patch' }],
    });
    return true;
  };

  for (const type of ['application/json-patch+json', 'application/merge-patch+json']) {
    it(`${type}: 422 naming the patched object, with the JSON decoder's error`, () => {
      const patched = patchedSpring('3');
      const json = JSON.stringify(patched);
      assert.throws(
        () => checkPatchedFieldTypes('V1Deployment', patched, type, '{"spec":{"replicas":"3"}}'),
        invalid(
          json,
          'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32',
        ),
      );
    });
  }

  it("strategic merge patch: 422 naming the patch (Go's %v), with the unstructured converter's error", () => {
    const patch = '{"spec":{"replicas":"3"}}';
    const smp = 'application/strategic-merge-patch+json';
    assert.throws(
      () => checkPatchedFieldTypes('V1Deployment', patchedSpring('3'), smp, patch),
      invalid('map[spec:map[replicas:3]]', 'unrecognized type: int32'),
    );
    const wordings: [Json, string][] = [
      [{ spec: { replicas: 1.5 } }, 'cannot convert float64 to int32'],
      [{ metadata: { name: 5 } }, 'cannot convert int64 to string'],
      [{ metadata: { labels: { a: true } } }, 'unrecognized type: string'],
      [{ metadata: 'x' }, 'cannot restore struct from: string'],
      [{ metadata: { finalizers: 'a/b' } }, 'cannot restore slice from string'],
      [{ metadata: { labels: ['a'] } }, 'cannot restore map from slice'],
      [
        { spec: { strategy: { rollingUpdate: { maxSurge: true } } } },
        'json: cannot unmarshal bool into Go value of type int32',
      ],
      [{ metadata: { creationTimestamp: 5 } }, 'json: cannot unmarshal number into Go value of type string'],
    ];
    for (const [obj, want] of wordings)
      assert.equal(fieldTypeError('V1Deployment', obj, 'unstructured'), want);
  });

  it('passes and drops nulls when the patched object decodes; leaves server-side apply to its own check', () => {
    const patched = patchedSpring(null);
    checkPatchedFieldTypes(
      'V1Deployment',
      patched,
      'application/merge-patch+json',
      '{"spec":{"replicas":null}}',
    );
    assert.equal('replicas' in at(patched, 'spec'), false);
    const applied = patchedSpring('3');
    checkPatchedFieldTypes('V1Deployment', applied, 'application/apply-patch+yaml', 'spec: {replicas: "3"}');
    assert.equal(at(applied, 'spec').replicas, '3');
  });
});

describe('Go field types', () => {
  it('names a field of the catalog in every GO_FIELD_TYPES entry (a client-node upgrade that renames one fails here)', async () => {
    const [names, doc] = await Promise.all([modelDefinitionNames(), buildOpenAPIV2()]);
    for (const key of Object.keys(GO_FIELD_TYPES)) {
      const dot = key.indexOf('.');
      const def = names.get(key.slice(0, dot));
      assert.ok(def !== undefined, `${key}: no such model`);
      assert.ok(doc.definitions[def]?.properties?.[key.slice(dot + 1)], `${key}: no such field`);
    }
  });
});

describe('Warning headers', () => {
  it('formats one as Kubernetes does', () => {
    assert.equal(warningHeader('unknown field "spec.foo"'), '299 - "unknown field \\"spec.foo\\""');
    assert.equal(warningHeader('a\\b'), '299 - "a\\\\b"');
    assert.equal(warningHeader('bad\ntext'), undefined);
  });

  it('sends non-ASCII text as UTF-8 bytes', () => {
    const h = warningHeader('unknown field "spec.이름"')!;
    assert.equal(Buffer.from(h, 'latin1').toString('utf8'), '299 - "unknown field \\"spec.이름\\""');
  });

  it('drops empty and repeated texts', () => {
    assert.deepEqual(warningHeaders(['a', '', 'b', 'a']), ['299 - "a"', '299 - "b"']);
  });

  it('truncates past 4096 runes as the warning recorder does', () => {
    const texts = Array.from({ length: 20 }, (_, i) => `${i}`.padStart(300, 'x'));
    const headers = warningHeaders(texts);
    // 13 × 300 runes fit; the 14th starts truncation: 256 runes each, 16 of them fill 4096.
    assert.equal(headers.length, 16);
    for (const [i, h] of headers.entries()) assert.equal(h, `299 - "${texts[i]!.slice(0, 256)}"`);
    assert.deepEqual(
      warningHeaders(texts.slice(0, 13)),
      texts.slice(0, 13).map((t) => `299 - "${t}"`),
    );
  });
});

describe('Go renderings', () => {
  const quotes: [string, string][] = [
    ['spec.foo', '"spec.foo"'],
    ['a"b\\c', '"a\\"b\\\\c"'],
    ['\n\t\x01\x7f', '"\\n\\t\\x01\\x7f"'],
    ['이름 é', '"이름 é"'],
    ['\u00ad\u2028', '"\\u00ad\\u2028"'],
  ];
  for (const [s, want] of quotes) it(`goQuote(${JSON.stringify(s)})`, () => assert.equal(goQuote(s), want));

  it('formatGoValue prints a decoded patch as %v does', () => {
    assert.equal(
      formatGoValue({ spec: { replicas: 3, foo: 'bar', list: [1, 'a', null, true], f: 1.5 }, a: {} }),
      'map[a:map[] spec:map[f:1.5 foo:bar list:[1 a <nil> true] replicas:3]]',
    );
    assert.equal(
      formatGoValue([0.0001, 0.00001, 123456.5, 1234567.5]),
      '[0.0001 1e-05 123456.5 1.2345675e+06]',
    );
  });
});
