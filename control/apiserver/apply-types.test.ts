// Server-side apply type-checks the applied configuration before merging it, as the field
// manager does (structured-merge-diff's typed validation): a label or a ConfigMap value
// that is not a string is refused with upstream's 500 (reason Unknown) `failed to create
// typed patch object (<ns>/<name>; <gvk>): ...`, where ns and name are the applied body's
// (kubectl sets the namespace in it), on the wire and as the real kubectl prints it
// (issue 23, A1).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApi, type TestApi } from '../../test/support/api.js';

const CM_PATH = '/api/v1/namespaces/default/configmaps';

describe('server-side apply checks scalar types', { timeout: 60_000 }, () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.stop());

  const apply = async (name: string, body: string) => {
    const res = await fetch(`${api.url}${CM_PATH}/${name}?fieldManager=test`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
      body,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  const cases: [string, string, string][] = [
    [
      'a YAML 1.1 boolean label',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ap1\n  labels:\n    v: yes\n',
      '.metadata.labels.v: expected string, got &value.valueUnstructured{Value:true}',
    ],
    [
      'a JSON boolean label',
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ap1', labels: { v: true } } }),
      '.metadata.labels.v: expected string, got &value.valueUnstructured{Value:true}',
    ],
    [
      'a number in data',
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ap1' }, data: { k: 5 } }),
      '.data.k: expected string, got &value.valueUnstructured{Value:5}',
    ],
  ];
  for (const [name, body, detail] of cases) {
    it(`refuses ${name} with a 500 naming the field, and stores nothing`, async () => {
      const res = await apply('ap1', body);
      assert.equal(res.status, 500);
      assert.deepEqual(res.body, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `failed to create typed patch object (/ap1; /v1, Kind=ConfigMap): ${detail}`,
        code: 500,
      });
      assert.equal((await fetch(`${api.url}${CM_PATH}/ap1`)).status, 404);
    });
  }

  it('refuses the same on an existing object', async () => {
    const ok = await apply('ap2', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ap2\n');
    assert.equal(ok.status, 201);
    const res = await apply(
      'ap2',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ap2\ndata:\n  k: 5\n',
    );
    assert.equal(res.status, 500);
    assert.equal(
      res.body.message,
      'failed to create typed patch object (/ap2; /v1, Kind=ConfigMap): .data.k: expected string, got &value.valueUnstructured{Value:5}',
    );
  });

  it('kubectl apply --server-side prints the errors as upstream does', async () => {
    // (kubectl itself refuses a non-string label before sending anything.)
    const manifest = [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata: {name: d}',
      'spec:',
      '  replicas: "2"',
      '  selector: {matchLabels: {a: b}}',
      '  template:',
      '    metadata: {labels: {a: b}}',
      '    spec: {containers: [{name: c, image: x, env: [{name: P, value: 587}]}]}',
      '',
    ].join('\n');
    const r = await api.kubectlIn(manifest, 'apply', '--server-side', '-f', '-');
    assert.notEqual(r.code, 0);
    assert.equal(
      r.stderr.trim(),
      [
        'Error from server: failed to create typed patch object (default/d; apps/v1, Kind=Deployment): errors:',
        '  .spec.replicas: expected numeric (int or float), got string',
        '  .spec.template.spec.containers[name="c"].env[name="P"].value: expected string, got &value.valueUnstructured{Value:587}',
      ].join('\n'),
    );
    const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ap3\ndata:\n  k: 5\n';
    const c = await api.kubectlIn(cm, 'apply', '--server-side', '-f', '-');
    assert.equal(
      c.stderr.trim(),
      'Error from server: failed to create typed patch object (default/ap3; /v1, Kind=ConfigMap): .data.k: expected string, got &value.valueUnstructured{Value:5}',
    );
  });
});
