// Field types (field-types.ts): what decoding into the Go type refuses, in Go's words.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { checkFieldTypes, checkPatchedFieldTypes, fieldTypeError, goQuote } from './index.js';
import {
  SPRING,
  at,
  clone,
  container,
  loadSchemasTimed,
  podSpec,
  typicalDeployment,
} from './test-fixtures.js';
import type { Json } from './test-fixtures.js';
import { ApiError } from '../status.js';

before(loadSchemasTimed);

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
