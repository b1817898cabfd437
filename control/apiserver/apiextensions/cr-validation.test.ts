// Structural schemas on the serving path (issue 18 items 5 and 7): a CRD's schema is checked
// as kube-apiserver checks it (non-structural and CEL refused, 422, nothing stored), and a
// custom resource's every write (create, update, status, JSON/merge/apply patch) is pruned,
// defaulted and validated by its version's schema, with upstream's messages.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApi, type TestApi } from '../../../test/support/api.js';
import { call, crdPath, establish, warnings, widget, widgetCRD, type Reply } from './testing.js';
import type { CustomResourceDefinition } from './types.js';

const WIDGETS = '/apis/example.com/v1/namespaces/default/widgets';
const P = 'spec.versions[0].schema.openAPIV3Schema';

/** The `field: message` of each cause of a 422. */
function causes(r: Reply): string[] {
  assert.equal(r.status, 422, r.text);
  return (r.body.details.causes as { field: string; message: string }[]).map(
    (c) => `${c.field}: ${c.message}`,
  );
}

describe('CRD schemas on the serving path', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
    await establish(api, widgetCRD());
  });
  after(() => api.stop());

  const gadget = (schema: Record<string, unknown>): CustomResourceDefinition => {
    const crd = widgetCRD({
      names: { plural: 'gadgets', kind: 'Gadget' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
    });
    crd.metadata!.name = 'gadgets.example.com';
    return crd;
  };

  describe('a CRD', () => {
    const refused: { name: string; schema: Record<string, unknown>; want: string[] }[] = [
      {
        name: 'a field without a type (not structural)',
        schema: {
          type: 'object',
          properties: {
            spec: { type: 'object', properties: { a: { properties: { b: { type: 'string' } } } } },
          },
        },
        want: [
          `${P}.properties[spec].properties[a].type: Required value: must not be empty for specified object fields`,
        ],
      },
      {
        name: 'x-kubernetes-validations (CEL is not evaluated)',
        schema: {
          type: 'object',
          properties: {
            spec: {
              type: 'object',
              properties: { a: { type: 'integer' } },
              'x-kubernetes-validations': [{ rule: 'self.a > 0' }],
            },
          },
        },
        want: [
          `${P}.properties[spec].x-kubernetes-validations: Invalid value: ["self.a > 0"]: CEL validation rules are not supported by k8ts; remove x-kubernetes-validations`,
        ],
      },
      {
        name: 'a default of the wrong type',
        schema: {
          type: 'object',
          properties: { spec: { type: 'object', properties: { a: { type: 'integer', default: 'one' } } } },
        },
        want: [
          `${P}.properties[spec].properties[a].default: Invalid value: "string":  in body must be of type integer: "string"`,
        ],
      },
      {
        name: 'metadata beyond name and generateName',
        schema: {
          type: 'object',
          properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } },
        },
        want: [
          `${P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
        ],
      },
    ];
    for (const c of refused)
      it(`is 422 with upstream's message, and not stored, for ${c.name}`, async () => {
        const r = await call(api, 'POST', crdPath(), gadget(c.schema));
        assert.deepEqual(causes(r), c.want);
        assert.equal(r.body.reason, 'Invalid');
        assert.match(
          r.body.message,
          /^CustomResourceDefinition\.apiextensions\.k8s\.io "gadgets\.example\.com" is invalid: /,
        );
        assert.equal((await call(api, 'GET', crdPath('gadgets.example.com'))).status, 404);
      });

    it('is 422 for selectable fields that are not string, boolean or integer fields of the schema', async () => {
      const crd = gadget({
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            properties: {
              color: { type: 'string' },
              labels: { type: 'object', additionalProperties: { type: 'string' } },
              list: { type: 'array', items: { type: 'string' } },
            },
          },
        },
      });
      crd.spec.versions![0]!.selectableFields = [
        { jsonPath: '.spec.color' },
        { jsonPath: '.spec.nothere' },
        { jsonPath: '.spec.labels' },
        { jsonPath: '.spec.list[0]' },
        { jsonPath: 'spec.color' },
        { jsonPath: '.spec.color' },
        { jsonPath: '' },
      ];
      const F = 'spec.versions[0].selectableFields';
      const r = await call(api, 'POST', crdPath(), crd);
      assert.deepEqual(causes(r), [
        `${F}[1].jsonPath: Invalid value: ".spec.nothere": is an invalid path: does not refer to a valid field`,
        `${F}[2].jsonPath: Invalid value: ".spec.labels": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.`,
        `${F}[3].jsonPath: Invalid value: ".spec.list[0]": is an invalid path: array notation is not allowed`,
        `${F}[4].jsonPath: Invalid value: "spec.color": is an invalid path: expected [ or . but got: spec`,
        `${F}[5].jsonPath: Duplicate value: ".spec.color"`,
        `${F}[6].jsonPath: Required value`,
      ]);
      assert.equal((await call(api, 'GET', crdPath('gadgets.example.com'))).status, 404);
    });

    it('keeps status.storedVersions true: every stored version in spec.versions, the storage version in it', async () => {
      const crd = widgetCRD({ names: { plural: 'levers', kind: 'Lever' } });
      crd.metadata!.name = 'levers.example.com';
      await establish(api, crd);
      const path = crdPath('levers.example.com');
      const get = async () => (await call(api, 'GET', path)).body as CustomResourceDefinition;
      // v1beta1 becomes the storage version: both are stored versions now.
      const a = await get();
      a.spec.versions![0]!.storage = false;
      a.spec.versions![1]!.storage = true;
      const moved = await call(api, 'PUT', path, a);
      assert.equal(moved.status, 200, moved.text);
      assert.deepEqual(moved.body.status.storedVersions, ['v1', 'v1beta1']);
      // Back to v1, dropping v1beta1 while objects may be stored in it: refused.
      const b = await get();
      b.spec.versions = [{ ...b.spec.versions![0]!, storage: true }];
      assert.deepEqual(causes(await call(api, 'PUT', path, b)), [
        'status.storedVersions[1]: Invalid value: "v1beta1": must appear in spec.versions',
      ]);
      // A status write must keep the storage version, and some version.
      const c = await get();
      c.status!.storedVersions = ['v1'];
      assert.deepEqual(causes(await call(api, 'PUT', `${path}/status`, c)), [
        'status.storedVersions: Invalid value: "v1beta1": must have the storage version v1beta1',
      ]);
      c.status!.storedVersions = [];
      assert.deepEqual(causes(await call(api, 'PUT', `${path}/status`, c)), [
        'status.storedVersions: Invalid value: []: must have at least one stored version',
      ]);
      // Trimming a version no object is stored in any more (after a migration) is fine.
      c.status!.storedVersions = ['v1beta1'];
      const trimmed = await call(api, 'PUT', `${path}/status`, c);
      assert.equal(trimmed.status, 200, trimmed.text);
      assert.deepEqual(trimmed.body.status.storedVersions, ['v1beta1']);
    });

    it('is 422 on an update to a schema with a CEL rule, and the stored CRD is unchanged', async () => {
      const stored = (await call(api, 'GET', crdPath('widgets.example.com')))
        .body as CustomResourceDefinition;
      const next = structuredClone(stored);
      const spec = next.spec.versions![0]!.schema!.openAPIV3Schema!.properties!.spec!;
      spec['x-kubernetes-validations'] = [{ rule: 'self.size < 10' }];
      const r = await call(api, 'PUT', crdPath('widgets.example.com'), next);
      assert.deepEqual(causes(r), [
        `${P}.properties[spec].x-kubernetes-validations: Invalid value: ["self.size < 10"]: CEL validation rules are not supported by k8ts; remove x-kubernetes-validations`,
      ]);
      const after = (await call(api, 'GET', crdPath('widgets.example.com'))).body as CustomResourceDefinition;
      assert.equal(after.metadata?.resourceVersion, stored.metadata?.resourceVersion);
    });
  });

  describe('a custom resource', () => {
    it("is 422 listing every failing field with upstream's words, and nothing is stored", async () => {
      const r = await call(api, 'POST', WIDGETS, widget('bad', { size: 0, color: 'green', replicas: 'two' }));
      assert.deepEqual(causes(r).sort(), [
        // The scale subresource's replicas path, read as upstream's unstructured.NestedInt64.
        '.spec.replicas: Invalid value: 0: .spec.replicas accessor error: two is of the type string, expected int64',
        'spec.color: Unsupported value: "green": supported values: "red", "blue"',
        'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
        'spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1',
      ]);
      assert.match(r.body.message, /^Widget\.example\.com "bad" is invalid: \[/);
      assert.equal(r.body.details.kind, 'Widget');
      assert.equal(r.body.details.group, 'example.com');
      assert.equal((await call(api, 'GET', `${WIDGETS}/bad`)).status, 404);
    });

    it('is 422 for a missing required field', async () => {
      const r = await call(api, 'POST', WIDGETS, widget('norequired', { color: 'red' }));
      assert.deepEqual(causes(r), ['spec.size: Required value']);
    });

    it('gets its schema defaults on create', async () => {
      const r = await call(api, 'POST', WIDGETS, widget('defaulted', { size: 2 }));
      assert.equal(r.status, 201, r.text);
      assert.deepEqual(r.body.spec, { size: 2, color: 'red' });
    });

    it('has unknown fields pruned, with a Warning by default and none under Ignore', async () => {
      const r = await call(api, 'POST', WIDGETS, widget('pruned', { size: 2, extra: 1, labels: { a: 'b' } }));
      assert.equal(r.status, 201, r.text);
      assert.deepEqual(warnings(r), ['unknown field "spec.extra"']);
      assert.deepEqual(r.body.spec, { size: 2, color: 'red', labels: { a: 'b' } });
      const stored = await call(api, 'GET', `${WIDGETS}/pruned`);
      assert.equal(stored.body.spec.extra, undefined);
      const quiet = await call(
        api,
        'POST',
        `${WIDGETS}?fieldValidation=Ignore`,
        widget('quiet', { size: 2, extra: 1 }),
      );
      assert.equal(quiet.status, 201, quiet.text);
      assert.deepEqual(warnings(quiet), []);
      assert.equal(quiet.body.spec.extra, undefined);
    });

    it('is refused under fieldValidation=Strict with an unknown field, as a built-in kind (400 on create)', async () => {
      const r = await call(
        api,
        'POST',
        `${WIDGETS}?fieldValidation=Strict`,
        widget('strict', { size: 2, extra: 1 }),
      );
      assert.equal(r.status, 400, r.text);
      assert.equal(
        r.body.message,
        'Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.extra"',
      );
      assert.equal((await call(api, 'GET', `${WIDGETS}/strict`)).status, 404);
    });

    it('is 400 for metadata of the wrong JSON types, as the CR decoder words it (JSON and YAML bodies)', async () => {
      const json = await call(api, 'POST', WIDGETS, {
        ...widget('x'),
        metadata: { name: true, namespace: 'default', labels: { a: 'b' } },
      });
      assert.equal(json.status, 400, json.text);
      assert.equal(json.body.reason, 'BadRequest');
      assert.equal(
        json.body.message,
        'Widget in version "v1" cannot be handled as a Widget: metadata: Invalid value: map[string]interface {}{"labels":map[string]interface {}{"a":"b"}, "name":true, "namespace":"default"}: json: cannot unmarshal bool into Go struct field ObjectMeta.name of type string',
      );
      // `y` is a YAML 1.1 boolean, as go-yaml v2 reads it.
      const yaml = await call(
        api,
        'POST',
        WIDGETS,
        'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: y}\nspec: {size: 2}\n',
        'application/yaml',
      );
      assert.equal(yaml.status, 400, yaml.text);
      assert.match(
        yaml.body.message,
        /json: cannot unmarshal bool into Go struct field ObjectMeta\.name of type string$/,
      );
      const labels = await call(api, 'POST', WIDGETS, {
        ...widget('x'),
        metadata: { name: 'x', labels: { n: 1 } },
      });
      assert.equal(labels.status, 400, labels.text);
      assert.match(labels.body.message, /Go struct field ObjectMeta\.labels of type string$/);
      assert.equal((await call(api, 'GET', `${WIDGETS}/x`)).status, 404);
    });

    it('is validated on PUT (422, stored object unchanged)', async () => {
      const cur = (await call(api, 'GET', `${WIDGETS}/defaulted`)).body;
      cur.spec.size = -1;
      const r = await call(api, 'PUT', `${WIDGETS}/defaulted`, cur);
      assert.deepEqual(causes(r), [
        'spec.size: Invalid value: -1: spec.size in body should be greater than or equal to 1',
      ]);
      assert.equal((await call(api, 'GET', `${WIDGETS}/defaulted`)).body.spec.size, 2);
    });

    it('is validated and defaulted after a merge patch', async () => {
      const bad = await call(
        api,
        'PATCH',
        `${WIDGETS}/defaulted`,
        { spec: { size: 0 } },
        'application/merge-patch+json',
      );
      assert.deepEqual(causes(bad), [
        'spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1',
      ]);
      const nulled = await call(
        api,
        'PATCH',
        `${WIDGETS}/defaulted`,
        { spec: { color: null, size: 3 } },
        'application/merge-patch+json',
      );
      assert.equal(nulled.status, 200, nulled.text);
      assert.deepEqual(nulled.body.spec, { size: 3, color: 'red' });
    });

    it('is validated after a JSON patch', async () => {
      const r = await call(
        api,
        'PATCH',
        `${WIDGETS}/defaulted`,
        [{ op: 'replace', path: '/spec/color', value: 'green' }],
        'application/json-patch+json',
      );
      assert.deepEqual(causes(r), [
        'spec.color: Unsupported value: "green": supported values: "red", "blue"',
      ]);
    });

    it('is validated after a server-side apply, also one that creates it', async () => {
      const apply = (name: string, spec: object) =>
        call(
          api,
          'PATCH',
          `${WIDGETS}/${name}?fieldManager=test`,
          JSON.stringify(widget(name, spec as Record<string, unknown>)),
          'application/apply-patch+yaml',
        );
      assert.deepEqual(causes(await apply('applied', { size: 'big' })), [
        'spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"',
      ]);
      assert.equal((await call(api, 'GET', `${WIDGETS}/applied`)).status, 404);
      const ok = await apply('applied', { size: 4 });
      assert.equal(ok.status, 201, ok.text);
      assert.equal(ok.body.spec.color, 'red');
      assert.deepEqual(causes(await apply('applied', { size: 4, color: 'pink' })), [
        'spec.color: Unsupported value: "pink": supported values: "red", "blue"',
      ]);
    });

    it('under Strict, a patch setting an unknown field is 422 naming it; under Warn a Warning', async () => {
      const strict = await call(
        api,
        'PATCH',
        `${WIDGETS}/defaulted?fieldValidation=Strict`,
        { spec: { extra: 1 } },
        'application/merge-patch+json',
      );
      assert.equal(strict.status, 422, strict.text);
      assert.match(strict.body.message, /strict decoding error: unknown field "spec\.extra"/);
      const warn = await call(
        api,
        'PATCH',
        `${WIDGETS}/defaulted`,
        { spec: { extra: 1 } },
        'application/merge-patch+json',
      );
      assert.equal(warn.status, 200, warn.text);
      assert.deepEqual(warnings(warn), ['unknown field "spec.extra"']);
      assert.equal(warn.body.spec.extra, undefined);
    });

    it('has its status validated by the schema on /status, and its scale status replicas', async () => {
      const cur = (await call(api, 'GET', `${WIDGETS}/defaulted`)).body;
      cur.status = { ready: 'yes' };
      const r = await call(api, 'PUT', `${WIDGETS}/defaulted/status`, cur);
      // Only the status is validated, by the schema's status property: the message is relative to it.
      assert.deepEqual(causes(r), [
        'status.ready: Invalid value: "string": ready in body must be of type boolean: "string"',
      ]);
      cur.status = { ready: true, unknown: 1 };
      const ok = await call(api, 'PUT', `${WIDGETS}/defaulted/status`, cur);
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual(ok.body.status, { ready: true });
      delete cur.metadata.resourceVersion;
      cur.status = { replicas: -2 };
      assert.deepEqual(causes(await call(api, 'PUT', `${WIDGETS}/defaulted/status`, cur)), [
        '.status.replicas: Invalid value: -2: should be a non-negative integer',
      ]);
    });
  });
});
