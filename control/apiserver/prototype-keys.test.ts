// Map keys that are also names on Object.prototype (`constructor`, `toString`,
// `__proto__`, ...) are ordinary keys to Kubernetes: a ConfigMap may hold them in data or
// binaryData, an object may carry them as labels and annotations, a container may name an
// env var so, and selectors may match on them. Each is written through every verb and
// read back unchanged.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApi, type TestApi } from '../../test/support/api.js';

/** Names on Object.prototype, and `__proto__`, its accessor. */
const PROTOTYPE_KEYS = [
  'constructor',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  '__proto__',
  '__defineGetter__',
];
/** The ones that are also qualified names (label and annotation keys cannot start with `_`). */
const LABEL_KEYS = PROTOTYPE_KEYS.filter((k) => !k.startsWith('_'));

describe('map keys named like Object.prototype members', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.stop());

  const call = async (method: string, path: string, body?: unknown, type = 'application/json') => {
    const r = await fetch(api.url + path, {
      method,
      headers: { 'Content-Type': type },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    return { code: r.status, body: (await r.json()) as Record<string, unknown> & { message?: string } };
  };
  /** The JSON text of an object with exactly these own keys (JSON.stringify cannot write `__proto__` from a literal). */
  const mapOf = (keys: readonly string[], value: (k: string) => string) =>
    `{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(value(k))}`).join(',')}}`;
  const CM = '/api/v1/namespaces/default/configmaps';
  const ownKeys = (v: unknown) => Object.keys((v ?? {}) as object).sort();

  it('a ConfigMap holds them in data and binaryData, on create, update and every patch type', async () => {
    const b64 = (k: string) => Buffer.from(k).toString('base64');
    const created = await call(
      'POST',
      CM,
      `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"proto"},"data":${mapOf(PROTOTYPE_KEYS, (k) => `v-${k}`)}}`,
    );
    assert.equal(created.code, 201, created.body.message);
    assert.deepEqual(ownKeys(created.body.data), [...PROTOTYPE_KEYS].sort());
    assert.equal((created.body.data as Record<string, string>).constructor, 'v-constructor');
    // binaryData keys may not repeat data keys: a fresh ConfigMap with them in binaryData only.
    const binary = await call(
      'POST',
      CM,
      `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"proto-binary"},"binaryData":${mapOf(PROTOTYPE_KEYS, b64)}}`,
    );
    assert.equal(binary.code, 201, binary.body.message);
    assert.deepEqual(ownKeys(binary.body.binaryData), [...PROTOTYPE_KEYS].sort());
    // A key in both is still refused, by name.
    const both = await call(
      'POST',
      CM,
      `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"proto-both"},"data":{"toString":"a"},"binaryData":{"toString":"YQ=="}}`,
    );
    assert.equal(both.code, 422);
    assert.match(
      both.body.message ?? '',
      /data\[toString\]: Invalid value: "toString": duplicate of key present in binaryData/,
    );

    const patches: [string, string, (k: string) => string][] = [
      ['application/merge-patch+json', 'merge', (k) => `m-${k}`],
      ['application/strategic-merge-patch+json', 'strategic', (k) => `s-${k}`],
    ];
    for (const [type, what, value] of patches) {
      const r = await call('PATCH', `${CM}/proto`, `{"data":${mapOf(PROTOTYPE_KEYS, value)}}`, type);
      assert.equal(r.code, 200, `${what}: ${r.body.message}`);
      const data = r.body.data as Record<string, string>;
      assert.deepEqual(ownKeys(data), [...PROTOTYPE_KEYS].sort(), what);
      for (const k of PROTOTYPE_KEYS)
        assert.equal(Object.getOwnPropertyDescriptor(data, k)?.value, value(k), `${what} ${k}`);
    }
    const json = await call(
      'PATCH',
      `${CM}/proto`,
      [{ op: 'add', path: '/data/toString', value: 'j' }],
      'application/json-patch+json',
    );
    assert.equal(json.code, 200, json.body.message);
    assert.equal(Object.getOwnPropertyDescriptor(json.body.data, 'toString')?.value, 'j');
    // The one exception: a JSON patch path through `__proto__` is refused (fast-json-patch's
    // guard against prototype pollution), with a Status and nothing written or polluted.
    const proto = await call(
      'PATCH',
      `${CM}/proto`,
      [{ op: 'add', path: '/data/__proto__/polluted', value: 'yes' }],
      'application/json-patch+json',
    );
    assert.equal(proto.code, 422);
    assert.equal(proto.body.kind, 'Status');
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    // Server-side apply, by two managers.
    for (const [manager, value] of [
      ['one', (k: string) => `a-${k}`],
      ['two', (k: string) => `b-${k}`],
    ] as const) {
      const applied = await call(
        'PATCH',
        `${CM}/proto-apply?fieldManager=${manager}&force=true`,
        `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"proto-apply","labels":${mapOf(LABEL_KEYS, value)}},"data":${mapOf(PROTOTYPE_KEYS, value)}}`,
        'application/apply-patch+yaml',
      );
      assert.ok(applied.code === 200 || applied.code === 201, `apply ${manager}: ${applied.body.message}`);
      const data = applied.body.data as Record<string, string>;
      assert.deepEqual(ownKeys(data), [...PROTOTYPE_KEYS].sort(), `apply ${manager}`);
      for (const k of PROTOTYPE_KEYS)
        assert.equal(Object.getOwnPropertyDescriptor(data, k)?.value, value(k), `apply ${manager} ${k}`);
      const labels = (applied.body.metadata as { labels: Record<string, string> }).labels;
      assert.deepEqual(ownKeys(labels), [...LABEL_KEYS].sort(), `apply ${manager} labels`);
    }
    // PUT of the whole object, read back.
    const current = await call('GET', `${CM}/proto`);
    const put = await call(
      'PUT',
      `${CM}/proto`,
      `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"proto","resourceVersion":${JSON.stringify((current.body.metadata as { resourceVersion: string }).resourceVersion)}},"data":${mapOf(PROTOTYPE_KEYS, (k) => `p-${k}`)}}`,
    );
    assert.equal(put.code, 200, put.body.message);
    const read = await call('GET', `${CM}/proto`);
    assert.deepEqual(ownKeys(read.body.data), [...PROTOTYPE_KEYS].sort());
    assert.equal(Object.getOwnPropertyDescriptor(read.body.data, '__proto__')?.value, 'p-__proto__');
  });

  it('a Secret holds them in data and stringData', async () => {
    const r = await call(
      'POST',
      '/api/v1/namespaces/default/secrets',
      `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"proto"},"stringData":${mapOf(PROTOTYPE_KEYS, (k) => k)},"data":{"plain":"eA=="}}`,
    );
    assert.equal(r.code, 201, r.body.message);
    const data = r.body.data as Record<string, string>;
    assert.deepEqual(ownKeys(data), [...PROTOTYPE_KEYS, 'plain'].sort());
    assert.equal(
      Buffer.from(Object.getOwnPropertyDescriptor(data, '__proto__')!.value as string, 'base64').toString(),
      '__proto__',
    );
  });

  it('labels and annotations may use them, and label selectors match them as keys', async () => {
    const r = await call('POST', CM, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'labelled',
        labels: Object.fromEntries(LABEL_KEYS.map((k) => [k, 'yes'])),
        annotations: Object.fromEntries(LABEL_KEYS.map((k) => [k, 'note'])),
      },
    });
    assert.equal(r.code, 201, r.body.message);
    assert.deepEqual(ownKeys((r.body.metadata as { labels: object }).labels), [...LABEL_KEYS].sort());
    await call('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'unlabelled' } });
    const names = async (selector: string) =>
      (
        (await call('GET', `${CM}?labelSelector=${encodeURIComponent(selector)}`)).body.items as {
          metadata: { name: string };
        }[]
      )
        .map((i) => i.metadata.name)
        .filter((n) => n === 'labelled' || n === 'unlabelled');
    assert.deepEqual(await names('constructor'), ['labelled']);
    assert.deepEqual(await names('!toString'), ['unlabelled']);
    assert.deepEqual(await names('valueOf=yes'), ['labelled']);
  });

  it('a Deployment selector and template may match on them', async () => {
    const labels = { constructor: 'web', toString: 'x' };
    const r = await call('POST', '/apis/apps/v1/namespaces/default/deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'proto' },
      spec: {
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    });
    assert.equal(r.code, 201, r.body.message);
    // ... and a template without them does not match.
    const bad = await call('POST', '/apis/apps/v1/namespaces/default/deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'proto-bad' },
      spec: {
        selector: { matchLabels: { constructor: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    });
    assert.equal(bad.code, 422);
    assert.match(bad.body.message ?? '', /`selector` does not match template `labels`/);
  });

  it('a container may name env vars so', async () => {
    const env = PROTOTYPE_KEYS.map((name) => `{"name":${JSON.stringify(name)},"value":"v"}`).join(',');
    const r = await call(
      'POST',
      '/api/v1/namespaces/default/pods',
      `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"proto"},"spec":{"containers":[{"name":"c","image":"i","env":[${env}]}]}}`,
    );
    assert.equal(r.code, 201, r.body.message);
    const containers = (r.body.spec as { containers: { env: { name: string }[] }[] }).containers;
    assert.deepEqual(
      containers[0]!.env.map((e) => e.name),
      PROTOTYPE_KEYS,
    );
  });
});
