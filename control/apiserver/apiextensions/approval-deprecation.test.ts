// Two rules of apiextensions-apiserver that a fresh tester found missing: the approval
// annotation a CRD in a protected community group needs (validation.go validateAPIApproval,
// KEP-1111), and the Warning on every request to a deprecated version (crd_handler.go).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApi, type TestApi } from '../../../test/support/api.js';
import { call, crdPath, establish, widget, widgetCRD } from './testing.js';
import type { CustomResourceDefinition } from './types.js';

const SEE = 'see https://github.com/kubernetes/enhancements/pull/1111';

/** widgetCRD in `group` (name `widgets.<group>`), with `annotations`. */
function inGroup(group: string, annotations?: Record<string, string>): CustomResourceDefinition {
  const crd = widgetCRD({ group });
  crd.metadata = { name: `widgets.${group}`, ...(annotations ? { annotations } : {}) };
  return crd;
}

describe('CRDs in protected groups need api-approved.kubernetes.io', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.stop());

  it('refuses k8s.io, kubernetes.io and their subdomains without the annotation (422, nothing stored)', async () => {
    for (const group of ['k8s.io', 'foo.k8s.io', 'kubernetes.io', 'x.kubernetes.io']) {
      const r = await call(api, 'POST', crdPath(), inGroup(group));
      assert.equal(r.status, 422, `${group}: ${r.text}`);
      assert.match(
        (r.body as { message: string }).message,
        new RegExp(
          `metadata\\.annotations\\[api-approved\\.kubernetes\\.io\\]: Required value: protected groups must have approval annotation "api-approved\\.kubernetes\\.io", ${SEE.replace(/\./g, '\\.')}`,
        ),
      );
      assert.equal((await call(api, 'GET', crdPath(`widgets.${group}`))).status, 404);
    }
  });

  it('refuses a value that is neither a URL nor "unapproved…"; accepts both', async () => {
    const bad = await call(
      api,
      'POST',
      crdPath(),
      inGroup('bad.k8s.io', { 'api-approved.kubernetes.io': 'bad value' }),
    );
    assert.equal(bad.status, 422, bad.text);
    assert.match(
      (bad.body as { message: string }).message,
      /metadata\.annotations\[api-approved\.kubernetes\.io\]: Invalid value: "bad value": protected groups must have approval annotation "api-approved\.kubernetes\.io" with either a URL or a reason starting with "unapproved"/,
    );
    const url = inGroup('url.k8s.io', {
      'api-approved.kubernetes.io': 'https://github.com/kubernetes/kubernetes/pull/79724',
    });
    assert.equal((await call(api, 'POST', crdPath(), url)).status, 201);
    const bypassed = inGroup('bypass.k8s.io', { 'api-approved.kubernetes.io': 'unapproved, experimental' });
    assert.equal((await call(api, 'POST', crdPath(), bypassed)).status, 201);
  });

  it('ignores other groups, and an update that keeps the approval state', async () => {
    const other = inGroup('example.org', { 'api-approved.kubernetes.io': 'anything' });
    assert.equal((await call(api, 'POST', crdPath(), other)).status, 201);
    const path = crdPath('widgets.bypass.k8s.io');
    const labelled = await call(
      api,
      'PATCH',
      path,
      { metadata: { labels: { a: 'b' } } },
      'application/merge-patch+json',
    );
    assert.equal(labelled.status, 200, labelled.text);
    const dropped = await call(
      api,
      'PATCH',
      path,
      { metadata: { annotations: { 'api-approved.kubernetes.io': null } } },
      'application/merge-patch+json',
    );
    assert.equal(dropped.status, 422, dropped.text);
  });
});

describe('a deprecated version of a custom resource warns on every request', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
    const crd = widgetCRD();
    crd.spec.versions![1]!.deprecated = true; // v1beta1
    await establish(api, crd);
    const gadgets = widgetCRD({ names: { plural: 'gadgets', kind: 'Gadget' } });
    gadgets.metadata!.name = 'gadgets.example.com';
    gadgets.spec.versions![1]!.deprecated = true;
    gadgets.spec.versions![1]!.deprecationWarning = 'example.com/v1beta1 Gadget is going away; use v1';
    await establish(api, gadgets);
  });
  after(() => api.stop());

  it('the default text names the newest served version that is not deprecated', async () => {
    const path = '/apis/example.com/v1beta1/namespaces/default/widgets';
    const created = await call(api, 'POST', path, widget('w1', { size: 1 }, 'v1beta1'));
    assert.equal(created.status, 201, created.text);
    const want = '299 - "example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget"';
    assert.equal(created.headers.get('warning'), want);
    assert.equal((await call(api, 'GET', `${path}/w1`)).headers.get('warning'), want);
    assert.equal((await call(api, 'GET', path)).headers.get('warning'), want);
    assert.equal(
      (await call(api, 'GET', '/apis/example.com/v1/namespaces/default/widgets')).headers.get('warning'),
      null,
    );
  });

  it("the version's deprecationWarning when it has one", async () => {
    const r = await call(api, 'GET', '/apis/example.com/v1beta1/namespaces/default/gadgets');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('warning'), '299 - "example.com/v1beta1 Gadget is going away; use v1"');
  });
});
