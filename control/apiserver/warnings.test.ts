// The kind's own warnings (Strategy.warningsOnCreate / warningsOnUpdate, upstream's
// WarningsOnCreate / WarningsOnUpdate) on the wire: `Warning: 299 - "<text>"` headers on
// create, update, each patch type and server-side apply, through the in-process API
// server; and the real kubectl printing them (issue 23 item 1).
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { startTestApi, type TestApi } from '../../test/support/api.js';

const HIDES_X =
  'spec.template.spec.containers[0].env[1]: hides previous definition of "X", which may be dropped when using apply';
/** The header kube-apiserver sends for HIDES_X (quotes escaped, warn-code 299, no agent). */
const HIDES_X_HEADER = `299 - "${HIDES_X.replace(/"/g, '\\"')}"`;

interface Reply {
  status: number;
  warnings: string[];
  body: string;
}

/** One HTTP request; `warnings` are the Warning header values, one per header as sent. */
function send(
  url: string,
  method: string,
  path: string,
  body?: string,
  contentType?: string,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, url),
      { method, headers: contentType ? { 'content-type': contentType } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const warnings: string[] = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2)
            if (res.rawHeaders[i]!.toLowerCase() === 'warning') warnings.push(res.rawHeaders[i + 1]!);
          resolve({ status: res.statusCode ?? 0, warnings, body: Buffer.concat(chunks).toString() });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function deployment(name: string, image = 'busybox:1.36'): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default' },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [
            {
              name: 'app',
              image,
              env: [
                { name: 'X', value: 'a' },
                { name: 'X', value: 'b' },
              ],
            },
          ],
        },
      },
    },
  };
}

const JSON_TYPE = 'application/json';
const BASE = '/apis/apps/v1/namespaces/default/deployments';

describe('strategy warnings on the wire', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.stop());

  it('create: the duplicate env of a Deployment template is a Warning: 299 header', async () => {
    const r = await send(api.url, 'POST', BASE, JSON.stringify(deployment('create')), JSON_TYPE);
    assert.equal(r.status, 201, r.body);
    assert.deepEqual(r.warnings, [HIDES_X_HEADER]);
  });

  it('update: a template change warns; an update that leaves the spec alone does not', async () => {
    await send(api.url, 'POST', BASE, JSON.stringify(deployment('update')), JSON_TYPE);
    const changed = await send(
      api.url,
      'PUT',
      `${BASE}/update`,
      JSON.stringify(deployment('update', 'busybox:1.37')),
      JSON_TYPE,
    );
    assert.equal(changed.status, 200, changed.body);
    assert.deepEqual(changed.warnings, [HIDES_X_HEADER]);

    const labelled = {
      ...deployment('update', 'busybox:1.37'),
      metadata: { name: 'update', namespace: 'default', labels: { tier: 'web' } },
    };
    const quiet = await send(api.url, 'PUT', `${BASE}/update`, JSON.stringify(labelled), JSON_TYPE);
    assert.equal(quiet.status, 200, quiet.body);
    assert.deepEqual(quiet.warnings, []);
  });

  for (const [type, patch] of [
    [
      'application/json-patch+json',
      [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'busybox:1.37' }],
    ],
    [
      'application/merge-patch+json',
      { spec: { template: { metadata: { labels: { app: 'patch', v: '2' } } } } },
    ],
    [
      'application/strategic-merge-patch+json',
      { spec: { template: { spec: { containers: [{ name: 'app', image: 'busybox:1.37' }] } } } },
    ],
  ] as const) {
    it(`patch (${type}): a template change warns`, async () => {
      const name = `patch-${type.split('/')[1]!.split('+')[0]}`;
      const created = await send(api.url, 'POST', BASE, JSON.stringify(deployment(name)), JSON_TYPE);
      assert.equal(created.status, 201, created.body);
      const body = JSON.stringify(patch).replaceAll('"patch"', JSON.stringify(name));
      const r = await send(api.url, 'PATCH', `${BASE}/${name}`, body, type);
      assert.equal(r.status, 200, r.body);
      assert.deepEqual(r.warnings, [HIDES_X_HEADER]);
      // The same patch again changes nothing: no new generation, no warning.
      const again = await send(api.url, 'PATCH', `${BASE}/${name}`, body, type);
      assert.equal(again.status, 200, again.body);
      assert.deepEqual(again.warnings, []);
    });
  }

  it('server-side apply: the create it makes and a later change warn', async () => {
    // An applied configuration may not repeat a list key (env X twice is a 400 from apply,
    // upstream too), so this template warns of a containerPort two containers share.
    const applied = (image: string) => {
      const d = deployment('applied', image);
      const spec = (d.spec as { template: { spec: { containers: unknown[] } } }).template.spec;
      spec.containers = [
        { name: 'a', image, ports: [{ containerPort: 80 }] },
        { name: 'b', image, ports: [{ containerPort: 80 }] },
      ];
      return JSON.stringify(d);
    };
    const dup =
      '299 - "spec.template.spec.containers[1].ports[0]: duplicate port definition with spec.template.spec.containers[0].ports[0]"';
    const path = `${BASE}/applied?fieldManager=test`;
    const created = await send(
      api.url,
      'PATCH',
      path,
      applied('busybox:1.36'),
      'application/apply-patch+yaml',
    );
    assert.equal(created.status, 201, created.body);
    assert.deepEqual(created.warnings, [dup]);
    const changed = await send(
      api.url,
      'PATCH',
      path,
      applied('busybox:1.37'),
      'application/apply-patch+yaml',
    );
    assert.equal(changed.status, 200, changed.body);
    assert.deepEqual(changed.warnings, [dup]);
  });

  it('scale: a replicas change moves the generation, so the template warnings come back (as upstream)', async () => {
    await send(api.url, 'POST', BASE, JSON.stringify(deployment('scaled')), JSON_TYPE);
    const scale = {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'scaled', namespace: 'default' },
      spec: { replicas: 3 },
    };
    const r = await send(api.url, 'PUT', `${BASE}/scaled/scale`, JSON.stringify(scale), JSON_TYPE);
    assert.equal(r.status, 200, r.body);
    assert.deepEqual(r.warnings, [HIDES_X_HEADER]);
  });

  it('dry run warns too, as upstream (the strategy runs before the write is skipped)', async () => {
    const r = await send(api.url, 'POST', `${BASE}?dryRun=All`, JSON.stringify(deployment('dry')), JSON_TYPE);
    assert.equal(r.status, 201, r.body);
    assert.deepEqual(r.warnings, [HIDES_X_HEADER]);
  });

  it('field validation and strategy warnings share the request: both headers, each once', async () => {
    const d = deployment('both');
    (d.spec as Record<string, unknown>).bogus = true;
    const r = await send(api.url, 'POST', `${BASE}?fieldValidation=Warn`, JSON.stringify(d), JSON_TYPE);
    assert.equal(r.status, 201, r.body);
    assert.deepEqual(r.warnings, ['299 - "unknown field \\"spec.bogus\\""', HIDES_X_HEADER]);
  });

  it('a Pod warns on create only, with paths from spec', async () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'default' },
      spec: {
        containers: [
          { name: 'a', image: 'busybox', ports: [{ containerPort: 80 }] },
          { name: 'b', image: 'busybox', ports: [{ containerPort: 80 }] },
        ],
      },
    };
    const created = await send(
      api.url,
      'POST',
      '/api/v1/namespaces/default/pods',
      JSON.stringify(pod),
      JSON_TYPE,
    );
    assert.equal(created.status, 201, created.body);
    assert.deepEqual(created.warnings, [
      '299 - "spec.containers[1].ports[0]: duplicate port definition with spec.containers[0].ports[0]"',
    ]);
    const patched = await send(
      api.url,
      'PATCH',
      '/api/v1/namespaces/default/pods/p',
      JSON.stringify({ metadata: { labels: { a: 'b' } } }),
      'application/merge-patch+json',
    );
    assert.equal(patched.status, 200, patched.body);
    assert.deepEqual(patched.warnings, []);
  });

  it('kubectl apply -f prints the warning on stderr as "Warning: <text>"', async () => {
    const yaml = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: kubectl-apply
  namespace: default
spec:
  selector:
    matchLabels: {app: kubectl-apply}
  template:
    metadata:
      labels: {app: kubectl-apply}
    spec:
      containers:
      - name: app
        image: busybox:1.36
        env:
        - {name: X, value: a}
        - {name: X, value: b}
`;
    const r = await api.kubectlIn(yaml, 'apply', '-f', '-');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /deployment.apps\/kubectl-apply created/);
    assert.ok(r.stderr.split('\n').includes(`Warning: ${HIDES_X}`), r.stderr);
    // Applying a changed template again (a client-side apply's patch) warns again.
    const again = await api.kubectlIn(yaml.replace('busybox:1.36', 'busybox:1.37'), 'apply', '-f', '-');
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /deployment.apps\/kubectl-apply configured/);
    assert.ok(again.stderr.split('\n').includes(`Warning: ${HIDES_X}`), again.stderr);
  });
});
