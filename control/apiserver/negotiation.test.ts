// Output negotiation of resource requests (negotiation.ts), as kube-apiserver's
// handlers/negotiation with RequestScope.AllowsMediaTypeTransform, unit and over HTTP
// against a real API server: YAML answers, PartialObjectMetadata(List) for client-go's
// metadata client and informers, and 406 NotAcceptable before anything is written.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { resources } from '../../api/client/resource.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';
import { ApiError } from './status.js';
import {
  asPartialObjectMetadataList,
  encodeOutput,
  negotiateOutput,
  tryNegotiateOutput,
  type OutputMedia,
} from './negotiation.js';

/** What client-go's metadata client sends for a list (and a watch, with PartialObjectMetadata). */
const METADATA_LIST_ACCEPT =
  'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const METADATA_ACCEPT =
  'application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

describe('negotiateOutput', () => {
  const cases: [string | undefined, OutputMedia | undefined, boolean?][] = [
    [undefined, { contentType: 'application/json' }],
    ['', { contentType: 'application/json' }],
    ['*/*', { contentType: 'application/json' }],
    ['application/json, */*', { contentType: 'application/json' }],
    ['application/yaml', { contentType: 'application/yaml' }],
    ['application/yaml;q=0.5,application/json', { contentType: 'application/json' }],
    ['application/vnd.kubernetes.protobuf', { contentType: 'application/json' }],
    ['text/html', undefined],
    ['text/html,application/yaml', { contentType: 'application/yaml' }],
    ['application/yaml', undefined, true],
    ['application/yaml,application/json', { contentType: 'application/json' }, true],
    [
      'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
      { contentType: 'application/json', convert: { kind: 'Table', version: 'v1' } },
    ],
    ['application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io', undefined],
    [
      METADATA_LIST_ACCEPT,
      { contentType: 'application/json', convert: { kind: 'PartialObjectMetadataList', version: 'v1' } },
    ],
    [
      'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1',
      { contentType: 'application/json', convert: { kind: 'PartialObjectMetadata', version: 'v1beta1' } },
    ],
    ['application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2', undefined],
    ['application/json;as=Secret;g=meta.k8s.io;v=v1,application/json', { contentType: 'application/json' }],
  ];
  for (const [accept, want, stream] of cases) {
    it(`${JSON.stringify(accept)}${stream ? ' (watch)' : ''} → ${want ? JSON.stringify(want) : '406'}`, () => {
      assert.deepEqual(tryNegotiateOutput(accept, { stream }), want);
      if (want === undefined) {
        assert.throws(
          () => negotiateOutput(accept, { stream }),
          (err: unknown) =>
            err instanceof ApiError &&
            err.code === 406 &&
            err.reason === 'NotAcceptable' &&
            err.message ===
              'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf',
        );
      }
    });
  }

  it('a PartialObjectMetadataList keeps the list metadata and gives each item its metadata', () => {
    const list = asPartialObjectMetadataList(
      {
        kind: 'PodList',
        metadata: { resourceVersion: '7', continue: 'c' },
        items: [{ kind: 'Pod', metadata: { name: 'a', labels: { x: 'y' } }, spec: {} }],
      },
      'v1',
    );
    assert.deepEqual(list, {
      apiVersion: 'meta.k8s.io/v1',
      kind: 'PartialObjectMetadataList',
      metadata: { resourceVersion: '7', continue: 'c' },
      items: [
        {
          apiVersion: 'meta.k8s.io/v1',
          kind: 'PartialObjectMetadata',
          metadata: { name: 'a', labels: { x: 'y' } },
        },
      ],
    });
  });

  it('YAML has sorted keys and sequences at their key’s indentation, as sigs.k8s.io/yaml writes them', () => {
    assert.equal(
      encodeOutput(
        { kind: 'Pod', apiVersion: 'v1', spec: { containers: [{ name: 'a' }] } },
        'application/yaml',
      ),
      'apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n',
    );
  });
});

describe('negotiated answers of a real API server', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
    await api.client.create(resources.configmaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'one', namespace: 'default', labels: { app: 'x' } },
      data: { key: 'value' },
    });
  });
  after(() => api.stop());

  const path = '/api/v1/namespaces/default/configmaps';
  const get = (p: string, accept: string) => fetch(`${api.url}${p}`, { headers: { Accept: accept } });

  it('GET with Accept: application/yaml answers YAML', async () => {
    const res = await get(`${path}/one`, 'application/yaml');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/yaml');
    const obj = YAML.parse(await res.text());
    assert.equal(obj.kind, 'ConfigMap');
    assert.equal(obj.data.key, 'value');
  });

  it('a 404 asked for in YAML is a YAML Status', async () => {
    const res = await get(`${path}/missing`, 'application/yaml');
    assert.equal(res.status, 404);
    assert.equal(res.headers.get('content-type'), 'application/yaml');
    assert.equal(YAML.parse(await res.text()).reason, 'NotFound');
  });

  it('a list asked for as PartialObjectMetadataList (client-go metadata client) has only metadata', async () => {
    const res = await get(path, METADATA_LIST_ACCEPT);
    assert.equal(res.status, 200);
    const list = (await res.json()) as {
      kind: string;
      apiVersion: string;
      metadata: { resourceVersion?: string };
      items: { kind: string; metadata: { name: string; managedFields?: unknown[] }; data?: unknown }[];
    };
    assert.equal(list.kind, 'PartialObjectMetadataList');
    assert.equal(list.apiVersion, 'meta.k8s.io/v1');
    assert.ok(list.metadata.resourceVersion);
    const one = list.items.find((i) => i.metadata.name === 'one');
    assert.equal(one?.kind, 'PartialObjectMetadata');
    assert.equal(one?.data, undefined);
    assert.ok(one?.metadata.managedFields?.length, 'metadata is whole, managedFields included');
  });

  it('one object asked for as PartialObjectMetadata', async () => {
    const res = await get(`${path}/one`, METADATA_ACCEPT);
    const obj = (await res.json()) as { kind: string; metadata: { labels: Record<string, string> } };
    assert.equal(obj.kind, 'PartialObjectMetadata');
    assert.deepEqual(obj.metadata.labels, { app: 'x' });
  });

  it('a watch asked for as PartialObjectMetadata sends metadata events, bookmarks too', async () => {
    const ac = new AbortController();
    const res = await fetch(
      `${api.url}${path}?watch=true&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`,
      {
        headers: { Accept: METADATA_ACCEPT },
        signal: ac.signal,
      },
    );
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    const events: { type: string; object: { kind: string; metadata: { name?: string } } }[] = [];
    let buf = '';
    const deadline = Date.now() + 10_000;
    while (!events.some((e) => e.type === 'BOOKMARK') && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += Buffer.from(value).toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        events.push(JSON.parse(buf.slice(0, nl)));
        buf = buf.slice(nl + 1);
      }
    }
    ac.abort();
    const added = events.find((e) => e.type === 'ADDED' && e.object.metadata.name === 'one');
    assert.equal(added?.object.kind, 'PartialObjectMetadata');
    const bookmark = events.find((e) => e.type === 'BOOKMARK');
    assert.equal(bookmark?.object.kind, 'PartialObjectMetadata');
  });

  it('a create whose Accept nothing satisfies is 406 and creates nothing', async () => {
    const res = await fetch(`${api.url}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'text/html' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'refused' } }),
    });
    assert.equal(res.status, 406);
    assert.equal(((await res.json()) as { reason: string }).reason, 'NotAcceptable');
    const after = await get(`${path}/refused`, 'application/json');
    assert.equal(after.status, 404);
  });

  it('a create asking for PartialObjectMetadataList (a list, of one object) is 406 and creates nothing', async () => {
    const res = await fetch(`${api.url}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: METADATA_LIST_ACCEPT.split(',')[1]! },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'refused2' } }),
    });
    assert.equal(res.status, 406);
    assert.equal((await get(`${path}/refused2`, 'application/json')).status, 404);
  });

  it('a watch asked for in YAML only is 406', async () => {
    const res = await get(`${path}?watch=true`, 'application/yaml');
    assert.equal(res.status, 406);
  });
});
