import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import {
  MAX_STRICT_ERRORS,
  applyFieldValidation,
  duplicateFields,
  fieldValidationDirective,
  formatGoValue,
  goQuote,
  loadFieldSchemas,
  pruneUnknownFields,
  strictDecodingErrors,
  warningHeader,
  warningHeaders,
} from './fieldvalidation.js';
import type { FieldValidationVerb, StrictDecodeTarget } from './fieldvalidation.js';
import { RESOURCES } from './resources.js';
import { ApiError } from './status.js';

type Json = Record<string, unknown>;

const SPRING = parseYaml(
  readFileSync(new URL('../../../shared/fixtures/spring-deployment.yaml', import.meta.url), 'utf8'),
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

/** A Deployment as the store holds it after a few writes: most of what a typical one carries. */
function typicalDeployment(): Json {
  const d = clone(SPRING);
  Object.assign(at(d, 'metadata'), {
    uid: '5a1d3c7e-0000-4000-8000-000000000001',
    resourceVersion: '42',
    generation: 3,
    creationTimestamp: '2025-01-01T00:00:00Z',
    labels: { app: 'backend-app', 'app.kubernetes.io/part-of': 'spring' },
    annotations: {
      'deployment.kubernetes.io/revision': '3',
      'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(SPRING),
    },
    managedFields: [
      {
        manager: 'kubectl-client-side-apply',
        operation: 'Update',
        apiVersion: 'apps/v1',
        time: '2025-01-01T00:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': {
            'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} },
          },
          'f:spec': { 'f:replicas': {}, 'f:template': { 'f:spec': { 'k:{"name":"spring-container"}': {} } } },
        },
      },
    ],
  });
  Object.assign(at(d, 'spec'), {
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
    revisionHistoryLimit: 10,
    progressDeadlineSeconds: 600,
  });
  Object.assign(podSpec(d), {
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    dnsPolicy: 'ClusterFirst',
    nodeSelector: { 'kubernetes.io/os': 'linux' },
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'backend', effect: 'NoSchedule' }],
    volumes: [
      { name: 'cache', emptyDir: { sizeLimit: '1Gi' } },
      { name: 'config', configMap: { name: 'spring-config', items: [{ key: 'a', path: 'a.yaml' }] } },
    ],
  });
  Object.assign(container(d), {
    env: [
      { name: 'JAVA_OPTS', value: '-Xmx512m' },
      { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
    ],
    resources: { limits: { cpu: '500m', memory: '512Mi' }, requests: { cpu: 0.25, memory: '256Mi' } },
    livenessProbe: { httpGet: { path: '/actuator/health', port: 8080, scheme: 'HTTP' }, periodSeconds: 10 },
    readinessProbe: { tcpSocket: { port: 'http' }, initialDelaySeconds: 5 },
    volumeMounts: [{ name: 'cache', mountPath: '/cache' }],
    terminationMessagePath: '/dev/termination-log',
  });
  d.status = {
    observedGeneration: 3,
    replicas: 5,
    readyReplicas: 5,
    conditions: [
      {
        type: 'Available',
        status: 'True',
        lastUpdateTime: '2025-01-01T00:00:00Z',
        lastTransitionTime: '2025-01-01T00:00:00Z',
        reason: 'MinimumReplicasAvailable',
        message: 'Deployment has minimum availability.',
      },
    ],
  };
  return d;
}

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

  it('costs a few microseconds per Deployment', () => {
    /** Mean µs per call, after a warm-up. */
    const perCall = (fn: () => unknown, n = 20_000): number => {
      for (let i = 0; i < n / 4; i++) fn();
      const t0 = performance.now();
      for (let i = 0; i < n; i++) fn();
      return ((performance.now() - t0) * 1000) / n;
    };
    const spring = clone(SPRING);
    const typical = typicalDeployment();
    const springUs = perCall(() => pruneUnknownFields('V1Deployment', spring));
    const typicalUs = perCall(() => pruneUnknownFields('V1Deployment', typical));
    console.log(
      `# pruneUnknownFields: spring-deployment.yaml ${springUs.toFixed(2)} µs, ` +
        `typical stored Deployment ${typicalUs.toFixed(2)} µs`,
    );

    const body = JSON.stringify(typicalDeployment());
    const parsed: unknown = JSON.parse(body);
    const withDup = body.replace('{"name":"spring-deployment"', '{"name":"x","name":"spring-deployment"');
    const withDupParsed: unknown = JSON.parse(withDup);
    const noneUs = perCall(() => duplicateFields(body, { model: 'V1Deployment', parsed }));
    const oneUs = perCall(() => duplicateFields(withDup, { model: 'V1Deployment', parsed: withDupParsed }));
    const parseUs = perCall(() => JSON.parse(body));
    console.log(
      `# duplicateFields(${body.length} B of JSON): none ${noneUs.toFixed(1)} µs, ` +
        `one ${oneUs.toFixed(1)} µs (JSON.parse alone: ${parseUs.toFixed(1)} µs)`,
    );
    // A generous bound, so that a slow CI machine does not fail; the point is the order of magnitude.
    assert.ok(typicalUs < 500, `${typicalUs} µs`);
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
