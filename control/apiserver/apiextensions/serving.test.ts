// Custom resources served from CustomResourceDefinitions with nothing restarted (issue 18
// items 4, 6 and 7), on the in-process API server: discovery, CRUD, list and watch with
// selectors, the patch types, the status and scale subresources, both scopes, several
// versions over one storage version, the naming conditions, deletion through the cleanup
// finalizer, and bad input refused with nothing stored.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApi, type TestApi } from '../../../test/support/api.js';
import { until } from '../../../test/support/wait.js';
import { call, crdPath, establish, removeCRD, widget, widgetCRD } from './testing.js';
import {
  CUSTOM_RESOURCE_CLEANUP_FINALIZER,
  type CustomResourceDefinition,
  type CustomResourceDefinitionCondition,
} from './types.js';

const NS = '/apis/example.com/v1/namespaces/default/widgets';
const NS_BETA = '/apis/example.com/v1beta1/namespaces/default/widgets';

interface WatchEvent {
  type: string;
  object: { metadata: { name: string; resourceVersion: string }; [k: string]: unknown };
}

/**
 * Opens a watch on `path` (a list URL with `watch=1` added) and collects events until
 * `done(events)` is true, failing after 5 s. The connection is closed either way.
 */
async function watchUntil(
  api: TestApi,
  path: string,
  done: (events: WatchEvent[]) => boolean,
  start?: () => Promise<void>,
): Promise<WatchEvent[]> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 5_000);
  const events: WatchEvent[] = [];
  try {
    const res = await fetch(`${api.url}${path}${path.includes('?') ? '&' : '?'}watch=1`, {
      signal: ac.signal,
    });
    assert.equal(res.status, 200);
    await start?.();
    const decoder = new TextDecoder();
    let buf = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) events.push(JSON.parse(line) as WatchEvent);
      }
      if (done(events)) return events;
    }
    assert.fail(`watch ended after ${events.length} events`);
  } catch (err) {
    if (ac.signal.aborted) assert.fail(`watch of ${path}: timed out with ${JSON.stringify(events)}`);
    throw err;
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
}

function condition(
  crd: CustomResourceDefinition,
  type: string,
): CustomResourceDefinitionCondition | undefined {
  return crd.status?.conditions?.find((c) => c.type === type);
}

describe('custom resources served from CRDs', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
    await establish(api, widgetCRD());
  });
  after(() => api.stop());

  describe('discovery', () => {
    it('lists the group in /apis with both versions, v1 preferred', async () => {
      const r = await call(api, 'GET', '/apis');
      const g = (
        r.body.groups as {
          name: string;
          versions: { version: string }[];
          preferredVersion: { version: string };
        }[]
      ).find((x) => x.name === 'example.com');
      assert.ok(g, 'example.com is in /apis');
      assert.deepEqual(
        g.versions.map((v) => v.version),
        ['v1', 'v1beta1'],
      );
      assert.equal(g.preferredVersion.version, 'v1');
      const group = await call(api, 'GET', '/apis/example.com');
      assert.equal(group.status, 200);
      assert.equal(group.body.kind, 'APIGroup');
    });

    it('lists the resource with its short names, categories, verbs and subresources', async () => {
      const r = await call(api, 'GET', '/apis/example.com/v1');
      assert.equal(r.body.groupVersion, 'example.com/v1');
      const byName = new Map(
        (r.body.resources as { name: string }[]).map((x) => [x.name, x as Record<string, unknown>]),
      );
      const w = byName.get('widgets')!;
      assert.equal(w.kind, 'Widget');
      assert.equal(w.singularName, 'widget');
      assert.equal(w.namespaced, true);
      assert.deepEqual(w.shortNames, ['wd']);
      assert.deepEqual(w.categories, ['all', 'toys']);
      assert.deepEqual(w.verbs, [
        'create',
        'delete',
        'deletecollection',
        'get',
        'list',
        'patch',
        'update',
        'watch',
      ]);
      assert.deepEqual(byName.get('widgets/status')?.verbs, ['get', 'patch', 'update']);
      assert.deepEqual(byName.get('widgets/scale')?.verbs, ['get', 'patch', 'update']);
      assert.equal(byName.get('widgets/scale')?.kind, 'Scale');
    });

    it('is in the aggregated discovery document (apidiscovery.k8s.io/v2)', async () => {
      const res = await fetch(`${api.url}/apis`, {
        headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' },
      });
      const doc = (await res.json()) as {
        items: {
          metadata: { name: string };
          versions: { version: string; resources: { resource: string; shortNames?: string[] }[] }[];
        }[];
      };
      const g = doc.items.find((x) => x.metadata.name === 'example.com');
      assert.ok(g);
      assert.deepEqual(
        g.versions.map((v) => v.version),
        ['v1', 'v1beta1'],
      );
      assert.deepEqual(g.versions[0]!.resources.find((x) => x.resource === 'widgets')?.shortNames, ['wd']);
    });
  });

  describe('CRUD, list and watch', () => {
    it('creates, gets, updates and deletes a custom resource', async () => {
      const created = await call(api, 'POST', NS, widget('crud', { size: 2 }));
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.metadata.generation, 1);
      assert.ok(created.body.metadata.uid);
      const got = await call(api, 'GET', `${NS}/crud`);
      assert.equal(got.status, 200);
      assert.deepEqual(got.body.spec, { size: 2, color: 'red' });
      got.body.spec.size = 5;
      const updated = await call(api, 'PUT', `${NS}/crud`, got.body);
      assert.equal(updated.status, 200, updated.text);
      assert.equal(updated.body.spec.size, 5);
      assert.equal(updated.body.metadata.generation, 2);
      const dup = await call(api, 'POST', NS, widget('crud', { size: 2 }));
      assert.equal(dup.status, 409);
      assert.equal(dup.body.reason, 'AlreadyExists');
      const del = await call(api, 'DELETE', `${NS}/crud`);
      assert.equal(del.status, 200, del.text);
      assert.equal((await call(api, 'GET', `${NS}/crud`)).status, 404);
    });

    it('lists with label and field selectors (metadata.name, metadata.namespace)', async () => {
      await call(api, 'POST', '/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'other' },
      });
      const mk = (name: string, ns: string, labels: Record<string, string>) =>
        call(api, 'POST', `/apis/example.com/v1/namespaces/${ns}/widgets`, {
          ...widget(name),
          metadata: { name, namespace: ns, labels },
        });
      for (const r of [
        await mk('l-a', 'default', { tier: 'front' }),
        await mk('l-b', 'default', { tier: 'back' }),
        await mk('l-c', 'other', { tier: 'front' }),
      ])
        assert.equal(r.status, 201, r.text);
      const names = async (path: string) => {
        const r = await call(api, 'GET', path);
        assert.equal(r.status, 200, r.text);
        assert.equal(r.body.kind, 'WidgetList');
        assert.equal(r.body.apiVersion, 'example.com/v1');
        return (r.body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name).sort();
      };
      assert.deepEqual(await names(`${NS}?labelSelector=tier%3Dfront`), ['l-a']);
      assert.deepEqual(await names('/apis/example.com/v1/widgets?labelSelector=tier%3Dfront'), [
        'l-a',
        'l-c',
      ]);
      assert.deepEqual(await names('/apis/example.com/v1/widgets?labelSelector=tier'), ['l-a', 'l-b', 'l-c']);
      assert.deepEqual(await names('/apis/example.com/v1/widgets?fieldSelector=metadata.name%3Dl-b'), [
        'l-b',
      ]);
      assert.deepEqual(await names('/apis/example.com/v1/widgets?fieldSelector=metadata.namespace%3Dother'), [
        'l-c',
      ]);
      assert.deepEqual(
        await names(
          '/apis/example.com/v1/widgets?fieldSelector=metadata.namespace!%3Dother&labelSelector=tier%3Dfront',
        ),
        ['l-a'],
      );
      const bad = await call(api, 'GET', `${NS}?fieldSelector=spec.size%3D1`);
      assert.equal(bad.status, 400, bad.text);
      assert.match(bad.body.message, /field label not supported: spec\.size/);
    });

    it('lists by a selectable field of the CRD version, and refuses other spec fields', async () => {
      const crd = widgetCRD({ names: { plural: 'knobs', kind: 'Knob' } });
      crd.metadata!.name = 'knobs.example.com';
      crd.spec.versions![0]!.selectableFields = [{ jsonPath: '.spec.color' }];
      await establish(api, crd);
      const path = '/apis/example.com/v1/namespaces/default/knobs';
      for (const [name, color] of [
        ['k-red', 'red'],
        ['k-blue', 'blue'],
      ])
        assert.equal(
          (await call(api, 'POST', path, { ...widget(name!, { size: 1, color }), kind: 'Knob' })).status,
          201,
        );
      const r = await call(api, 'GET', `${path}?fieldSelector=spec.color%3Dblue`);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(
        (r.body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name),
        ['k-blue'],
      );
      const bad = await call(api, 'GET', `${path}?fieldSelector=spec.size%3D1`);
      assert.equal(bad.status, 400, bad.text);
    });

    it('watches with a label selector and a field selector, from a resourceVersion', async () => {
      const list = await call(api, 'GET', NS);
      const rv = list.body.metadata.resourceVersion as string;
      const events = await watchUntil(
        api,
        `${NS}?resourceVersion=${rv}&labelSelector=watch%3Dyes&fieldSelector=metadata.name!%3Dw-skip`,
        (evs) => evs.some((e) => e.type === 'DELETED'),
        async () => {
          const mk = (name: string, labels: Record<string, string>) =>
            call(api, 'POST', NS, { ...widget(name), metadata: { name, namespace: 'default', labels } });
          await mk('w-no', { watch: 'no' });
          await mk('w-skip', { watch: 'yes' });
          await mk('w-yes', { watch: 'yes' });
          await call(api, 'PATCH', `${NS}/w-yes`, { spec: { size: 9 } }, 'application/merge-patch+json');
          await call(api, 'DELETE', `${NS}/w-yes`);
        },
      );
      assert.deepEqual(
        events.map((e) => `${e.type} ${e.object.metadata.name}`),
        ['ADDED w-yes', 'MODIFIED w-yes', 'DELETED w-yes'],
      );
      assert.equal(events[1]!.object.apiVersion, 'example.com/v1');
      assert.equal((events[1]!.object.spec as { size: number }).size, 9);
    });

    it('answers a Table with the printer columns', async () => {
      await call(api, 'POST', NS, widget('tbl', { size: 3, color: 'blue' }));
      const res = await fetch(`${api.url}${NS}/tbl`, {
        headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
      });
      const t = (await res.json()) as {
        kind: string;
        columnDefinitions: { name: string; type: string }[];
        rows: { cells: unknown[] }[];
      };
      assert.equal(t.kind, 'Table');
      assert.deepEqual(
        t.columnDefinitions.map((c) => `${c.name}:${c.type}`),
        ['Name:string', 'Size:integer', 'Color:string', 'Ready:boolean', 'Age:date'],
      );
      const [name, size, color, ready, age] = t.rows[0]!.cells;
      assert.deepEqual(
        [name, size, color, ready],
        ['tbl', 3, 'blue', ''],
        'a path that finds nothing is empty',
      );
      assert.match(String(age), /^\d+s$/);
    });
  });

  describe('patch types', () => {
    before(async () => {
      const r = await call(api, 'POST', NS, widget('p', { size: 1, labels: { a: '1' } }));
      assert.equal(r.status, 201, r.text);
    });

    it('takes a JSON patch', async () => {
      const r = await call(
        api,
        'PATCH',
        `${NS}/p`,
        [
          { op: 'replace', path: '/spec/size', value: 2 },
          { op: 'add', path: '/spec/labels/b', value: '2' },
        ],
        'application/json-patch+json',
      );
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body.spec, { size: 2, color: 'red', labels: { a: '1', b: '2' } });
    });

    it('takes a merge patch', async () => {
      const r = await call(
        api,
        'PATCH',
        `${NS}/p`,
        { spec: { labels: { a: null }, color: 'blue' } },
        'application/merge-patch+json',
      );
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body.spec, { size: 2, color: 'blue', labels: { b: '2' } });
    });

    it('takes a server-side apply, with managedFields of its manager and conflicts', async () => {
      const body = JSON.stringify({ ...widget('p', { size: 7 }) });
      const r = await call(api, 'PATCH', `${NS}/p?fieldManager=tool`, body, 'application/apply-patch+yaml');
      assert.equal(r.status, 409, r.text);
      assert.equal(r.body.reason, 'Conflict');
      const forced = await call(
        api,
        'PATCH',
        `${NS}/p?fieldManager=tool&force=true`,
        body,
        'application/apply-patch+yaml',
      );
      assert.equal(forced.status, 200, forced.text);
      assert.equal(forced.body.spec.size, 7);
      const managers = (forced.body.metadata.managedFields as { manager: string; operation: string }[]).map(
        (m) => `${m.manager}/${m.operation}`,
      );
      assert.ok(managers.includes('tool/Apply'), managers.join(','));
    });

    it('refuses a strategic merge patch with 415, naming the types it takes', async () => {
      const r = await call(
        api,
        'PATCH',
        `${NS}/p`,
        { spec: { size: 3 } },
        'application/strategic-merge-patch+json',
      );
      assert.equal(r.status, 415, r.text);
      assert.equal(r.body.reason, 'UnsupportedMediaType');
      assert.equal(
        r.body.message,
        'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
      );
      assert.equal((await call(api, 'GET', `${NS}/p`)).body.spec.size, 7);
    });
  });

  describe('status and scale subresources', () => {
    before(async () => {
      const r = await call(api, 'POST', NS, {
        ...widget('s', { size: 1, replicas: 2 }),
        status: { ready: true },
      });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.status, undefined, 'status is dropped on create');
    });

    it('changes status only through /status, and spec only through the main resource', async () => {
      const cur = (await call(api, 'GET', `${NS}/s`)).body;
      const gen = cur.metadata.generation as number;
      const viaMain = await call(api, 'PUT', `${NS}/s`, { ...cur, status: { ready: true } });
      assert.equal(viaMain.status, 200, viaMain.text);
      assert.equal(viaMain.body.status, undefined);
      const viaStatus = await call(api, 'PUT', `${NS}/s/status`, {
        ...viaMain.body,
        spec: { size: 99 },
        status: { ready: true, replicas: 1 },
      });
      assert.equal(viaStatus.status, 200, viaStatus.text);
      assert.deepEqual(viaStatus.body.status, { ready: true, replicas: 1 });
      assert.equal(viaStatus.body.spec.size, 1, 'spec kept on a status write');
      assert.equal(viaStatus.body.metadata.generation, gen, 'a status write does not bump generation');
      const patched = await call(
        api,
        'PATCH',
        `${NS}/s/status`,
        { status: { ready: false } },
        'application/merge-patch+json',
      );
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.body.status.ready, false);
      const got = await call(api, 'GET', `${NS}/s/status`);
      assert.equal(got.status, 200);
      assert.equal(got.body.kind, 'Widget');
    });

    it('reads and writes replicas through /scale (autoscaling/v1 Scale)', async () => {
      const scale = await call(api, 'GET', `${NS}/s/scale`);
      assert.equal(scale.status, 200, scale.text);
      assert.equal(scale.body.apiVersion, 'autoscaling/v1');
      assert.equal(scale.body.kind, 'Scale');
      assert.equal(scale.body.spec.replicas, 2);
      assert.equal(scale.body.status.replicas, 1);
      const put = await call(api, 'PUT', `${NS}/s/scale`, { ...scale.body, spec: { replicas: 4 } });
      assert.equal(put.status, 200, put.text);
      assert.equal(put.body.spec.replicas, 4);
      const patched = await call(
        api,
        'PATCH',
        `${NS}/s/scale`,
        { spec: { replicas: 5 } },
        'application/merge-patch+json',
      );
      assert.equal(patched.status, 200, patched.text);
      const obj = (await call(api, 'GET', `${NS}/s`)).body;
      assert.equal(obj.spec.replicas, 5);
      assert.equal(obj.status.replicas, 1);
    });
  });

  describe('versions (conversion None) and scopes', () => {
    it('serves one object under every served version, stored once in the storage version', async () => {
      const created = await call(api, 'POST', NS_BETA, widget('multi', { size: 4 }, 'v1beta1'));
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.apiVersion, 'example.com/v1beta1');
      const v1 = await call(api, 'GET', `${NS}/multi`);
      assert.equal(v1.body.apiVersion, 'example.com/v1');
      assert.deepEqual(v1.body.spec, { size: 4, color: 'red' });
      const beta = await call(api, 'GET', `${NS_BETA}/multi`);
      assert.equal(beta.body.apiVersion, 'example.com/v1beta1');
      assert.equal(beta.body.metadata.resourceVersion, v1.body.metadata.resourceVersion);
      const list = await call(api, 'GET', NS_BETA);
      assert.equal(list.body.apiVersion, 'example.com/v1beta1');
      assert.ok(
        (list.body.items as { apiVersion: string }[]).every((i) => i.apiVersion === 'example.com/v1beta1'),
      );
      const stored = await api.store.get('/registry/example.com/widgets/default/multi');
      assert.ok(stored, 'stored under /registry/<group>/<plural>/');
      assert.equal((JSON.parse(stored.value) as { apiVersion: string }).apiVersion, 'example.com/v1');
    });

    it('answers 404 for a version that is not served, and serves it once it is', async () => {
      const crd = widgetCRD({ names: { plural: 'gizmos', kind: 'Gizmo' } });
      crd.metadata!.name = 'gizmos.example.com';
      crd.spec.versions![1]!.served = false;
      await establish(api, crd);
      const body = { ...widget('g', { size: 1 }, 'v1beta1'), kind: 'Gizmo' };
      const r = await call(api, 'POST', '/apis/example.com/v1beta1/namespaces/default/gizmos', body);
      assert.equal(r.status, 404, r.text);
      assert.equal(r.body.reason, 'NotFound');
      assert.equal((await call(api, 'GET', '/apis/example.com/v1/namespaces/default/gizmos/g')).status, 404);
      assert.equal(
        (await call(api, 'GET', '/apis/example.com/v1beta1/namespaces/default/gizmos')).status,
        404,
      );
      const stored = (await call(api, 'GET', crdPath('gizmos.example.com'))).body as CustomResourceDefinition;
      stored.spec.versions![1]!.served = true;
      assert.equal((await call(api, 'PUT', crdPath('gizmos.example.com'), stored)).status, 200);
      await until(
        'v1beta1 of gizmos served',
        async () =>
          (await call(api, 'GET', '/apis/example.com/v1beta1/namespaces/default/gizmos')).status === 200
            ? true
            : undefined,
        10_000,
        20,
      );
      const again = await call(api, 'POST', '/apis/example.com/v1beta1/namespaces/default/gizmos', body);
      assert.equal(again.status, 201, again.text);
    });

    it('serves a cluster-scoped resource at the cluster path only', async () => {
      const crd = widgetCRD({
        scope: 'Cluster',
        names: { plural: 'planets', kind: 'Planet', shortNames: ['pl'] },
      });
      crd.metadata!.name = 'planets.example.com';
      await establish(api, crd);
      const r = await call(api, 'POST', '/apis/example.com/v1/planets', {
        apiVersion: 'example.com/v1',
        kind: 'Planet',
        metadata: { name: 'earth' },
        spec: { size: 3 },
      });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.metadata.namespace, undefined);
      assert.equal((await call(api, 'GET', '/apis/example.com/v1/planets/earth')).status, 200);
      assert.equal(
        (await call(api, 'GET', '/apis/example.com/v1/namespaces/default/planets/earth')).status,
        404,
      );
      const d = await call(api, 'GET', '/apis/example.com/v1');
      assert.equal(
        (d.body.resources as { name: string; namespaced: boolean }[]).find((x) => x.name === 'planets')
          ?.namespaced,
        false,
      );
      const sel = await call(
        api,
        'GET',
        '/apis/example.com/v1/planets?fieldSelector=metadata.namespace%3Ddefault',
      );
      assert.equal(sel.status, 400, 'a cluster-scoped kind has no metadata.namespace field');
    });
  });

  describe('a schema change', () => {
    it("prunes and defaults stored objects on read by the storage version's new schema", async () => {
      const crd = widgetCRD({ names: { plural: 'sprockets', kind: 'Sprocket' } });
      crd.metadata!.name = 'sprockets.example.com';
      await establish(api, crd);
      const path = '/apis/example.com/v1/namespaces/default/sprockets';
      const body = {
        apiVersion: 'example.com/v1',
        kind: 'Sprocket',
        metadata: { name: 'old' },
        spec: { size: 2 },
      };
      assert.equal((await call(api, 'POST', path, body)).status, 201);
      const stored = (await call(api, 'GET', crdPath('sprockets.example.com')))
        .body as CustomResourceDefinition;
      const spec = stored.spec.versions![0]!.schema!.openAPIV3Schema!.properties!.spec!;
      delete spec.properties!.color;
      spec.properties!.shape = { type: 'string', default: 'round' };
      const r = await call(api, 'PUT', crdPath('sprockets.example.com'), stored);
      assert.equal(r.status, 200, r.text);
      const read = await until(
        'the object read by the new schema',
        async () => {
          const got = await call(api, 'GET', `${path}/old`);
          return got.body?.spec?.shape === 'round' ? got.body : undefined;
        },
        10_000,
        20,
      );
      assert.deepEqual(read.spec, { size: 2, shape: 'round' });
      const list = await call(api, 'GET', path);
      assert.deepEqual(list.body.items[0].spec, { size: 2, shape: 'round' });
    });
  });

  describe('names and conditions', () => {
    it("sets NamesAccepted and Established with upstream's reasons, and status.acceptedNames", async () => {
      const crd = (await call(api, 'GET', crdPath('widgets.example.com'))).body as CustomResourceDefinition;
      assert.equal(condition(crd, 'NamesAccepted')?.status, 'True');
      assert.equal(condition(crd, 'NamesAccepted')?.reason, 'NoConflicts');
      assert.equal(condition(crd, 'Established')?.status, 'True');
      assert.equal(condition(crd, 'Established')?.reason, 'InitialNamesAccepted');
      assert.deepEqual(crd.status?.acceptedNames, {
        plural: 'widgets',
        singular: 'widget',
        kind: 'Widget',
        listKind: 'WidgetList',
        shortNames: ['wd'],
        categories: ['all', 'toys'],
      });
      assert.deepEqual(crd.status?.storedVersions, ['v1']);
      // The cleanup finalizer comes with the DELETE (see 'deletion'), not before.
      assert.equal(crd.metadata?.finalizers, undefined);
    });

    it('a CRD whose short name another CRD of the group took is NamesAccepted False and not served', async () => {
      const crd = widgetCRD({ names: { plural: 'doodads', kind: 'Doodad', shortNames: ['wd'] } });
      crd.metadata!.name = 'doodads.example.com';
      const r = await call(api, 'POST', crdPath(), crd);
      assert.equal(r.status, 201, r.text);
      const got = await until(
        'doodads NamesAccepted False',
        async () => {
          const c = (await call(api, 'GET', crdPath('doodads.example.com'))).body as CustomResourceDefinition;
          return condition(c, 'NamesAccepted')?.status === 'False' ? c : undefined;
        },
        10_000,
        20,
      );
      assert.equal(condition(got, 'NamesAccepted')?.reason, 'ShortNamesConflict');
      assert.equal(condition(got, 'NamesAccepted')?.message, '"wd" is already in use');
      assert.equal(condition(got, 'Established')?.status, 'False');
      assert.equal(condition(got, 'Established')?.reason, 'NotAccepted');
      // Each name is accepted on its own, as upstream's naming controller: all but the short name.
      assert.deepEqual(got.status?.acceptedNames, {
        plural: 'doodads',
        singular: 'doodad',
        kind: 'Doodad',
        listKind: 'DoodadList',
      });
      assert.equal((await call(api, 'GET', '/apis/example.com/v1/namespaces/default/doodads')).status, 404);
      const d = await call(api, 'GET', '/apis/example.com/v1');
      assert.ok(!(d.body.resources as { name: string }[]).some((x) => x.name === 'doodads'));
      // Fixing the names lets it be accepted and served.
      got.spec.names!.shortNames = ['dd'];
      assert.equal((await call(api, 'PUT', crdPath('doodads.example.com'), got)).status, 200);
      await until(
        'doodads served',
        async () =>
          (await call(api, 'GET', '/apis/example.com/v1/namespaces/default/doodads')).status === 200
            ? true
            : undefined,
        10_000,
        20,
      );
    });
  });

  describe('name conflicts', () => {
    const named = (plural: string, kind: string, shortNames: string[]) => {
      const crd = widgetCRD({ names: { plural, kind, shortNames } });
      crd.metadata!.name = `${plural}.example.com`;
      return crd;
    };
    const namesAccepted = (name: string, status: string) =>
      until(
        `${name} NamesAccepted ${status}`,
        async () => {
          const c = (await call(api, 'GET', crdPath(name))).body as CustomResourceDefinition;
          return condition(c, 'NamesAccepted')?.status === status ? c : undefined;
        },
        10_000,
        20,
      );

    it("a plural that is another CRD's short name is a PluralConflict", async () => {
      // widgets.example.com has the short name wd.
      // (Its singular, wdthing, is free; with kind Wd it would be wd too, and the singular's
      // conflict, checked after the plural's, would be the reason.)
      assert.equal((await call(api, 'POST', crdPath(), named('wd', 'WdThing', []))).status, 201);
      const got = await namesAccepted('wd.example.com', 'False');
      assert.equal(condition(got, 'NamesAccepted')?.reason, 'PluralConflict');
      assert.equal(condition(got, 'NamesAccepted')?.message, '"wd" is already in use');
      assert.equal(got.status?.acceptedNames?.plural, undefined);
      assert.equal(got.status?.acceptedNames?.kind, 'WdThing');
      assert.equal(got.status?.acceptedNames?.singular, 'wdthing');
    });

    it('a name freed by a deleted CRD is taken by the CRD that asked for it', async () => {
      await establish(api, named('nuts', 'Nut', ['nu']));
      assert.equal((await call(api, 'POST', crdPath(), named('nails', 'Nail', ['nu']))).status, 201);
      await namesAccepted('nails.example.com', 'False');
      await removeCRD(api, 'nuts.example.com');
      const got = await namesAccepted('nails.example.com', 'True');
      assert.deepEqual(got.status?.acceptedNames?.shortNames, ['nu']);
      assert.equal(condition(got, 'Established')?.status, 'True');
    });

    it('a served CRD that asks for a taken short name keeps serving under the names it had', async () => {
      await establish(api, named('bolts', 'Bolt', ['bo']));
      const cur = (await call(api, 'GET', crdPath('bolts.example.com'))).body as CustomResourceDefinition;
      cur.spec.names!.shortNames = ['bo', 'wd'];
      assert.equal((await call(api, 'PUT', crdPath('bolts.example.com'), cur)).status, 200);
      const got = await namesAccepted('bolts.example.com', 'False');
      assert.equal(condition(got, 'NamesAccepted')?.reason, 'ShortNamesConflict');
      assert.equal(condition(got, 'Established')?.status, 'True');
      assert.deepEqual(got.status?.acceptedNames?.shortNames, ['bo']);
      const d = await call(api, 'GET', '/apis/example.com/v1');
      const bolts = (d.body.resources as { name: string; shortNames?: string[] }[]).find(
        (x) => x.name === 'bolts',
      );
      assert.deepEqual(bolts?.shortNames, ['bo']);
      assert.equal((await call(api, 'GET', '/apis/example.com/v1/namespaces/default/bolts')).status, 200);
    });
  });

  describe('deletion', () => {
    it('deletes every custom resource first through the cleanup finalizer, then the CRD', async () => {
      const crd = widgetCRD({ names: { plural: 'gears', kind: 'Gear' } });
      crd.metadata!.name = 'gears.example.com';
      await establish(api, crd);
      const path = '/apis/example.com/v1/namespaces/default/gears';
      const gear = (name: string, finalizers?: string[]) => ({
        apiVersion: 'example.com/v1',
        kind: 'Gear',
        metadata: { name, namespace: 'default', ...(finalizers ? { finalizers } : {}) },
        spec: { size: 1 },
      });
      for (const g of [gear('a'), gear('b'), gear('held', ['example.com/hold'])])
        assert.equal((await call(api, 'POST', path, g)).status, 201);
      const del = await call(api, 'DELETE', crdPath('gears.example.com'));
      assert.equal(del.status, 200, del.text);
      assert.ok(del.body.metadata.deletionTimestamp);
      assert.deepEqual(del.body.metadata.finalizers, [CUSTOM_RESOURCE_CLEANUP_FINALIZER]);
      // The finalizer deletes a and b; held waits on its own finalizer, and so does the CRD.
      const terminating = await until(
        'a and b gone, held terminating',
        async () => {
          const list = await call(api, 'GET', path);
          if (list.status !== 200) return undefined;
          const items = list.body.items as { metadata: { name: string; deletionTimestamp?: string } }[];
          return items.length === 1 && items[0]!.metadata.deletionTimestamp ? items : undefined;
        },
        10_000,
        20,
      );
      assert.equal(terminating[0]!.metadata.name, 'held');
      const mid = await until(
        'Terminating InstanceDeletionInProgress',
        async () => {
          const c = (await call(api, 'GET', crdPath('gears.example.com'))).body as CustomResourceDefinition;
          return condition(c, 'Terminating')?.reason === 'InstanceDeletionInProgress' ? c : undefined;
        },
        10_000,
        20,
      );
      assert.equal(condition(mid, 'Terminating')?.status, 'True');
      const refused = await call(api, 'POST', path, gear('late'));
      assert.equal(refused.status, 405, refused.text);
      assert.equal(
        refused.body.message,
        'create not allowed while custom resource definition is terminating',
      );
      // Releasing the last object lets the finalizer finish and the CRD go.
      const r = await call(
        api,
        'PATCH',
        `${path}/held`,
        { metadata: { finalizers: null } },
        'application/merge-patch+json',
      );
      assert.equal(r.status, 200, r.text);
      await until(
        'CRD gears gone',
        async () =>
          (await call(api, 'GET', crdPath('gears.example.com'))).status === 404 ? true : undefined,
        10_000,
        20,
      );
      assert.equal((await call(api, 'GET', path)).status, 404);
      const left = await api.store.list('/registry/example.com/gears/');
      assert.equal(left.items.length, 0, 'no object of the CRD is left in the store');
    });

    it('serves a CRD created again after its deletion, empty', async () => {
      const crd = widgetCRD({ names: { plural: 'cogs', kind: 'Cog' } });
      crd.metadata!.name = 'cogs.example.com';
      await establish(api, crd);
      const path = '/apis/example.com/v1/namespaces/default/cogs';
      const cog = { apiVersion: 'example.com/v1', kind: 'Cog', metadata: { name: 'c' }, spec: { size: 1 } };
      assert.equal((await call(api, 'POST', path, cog)).status, 201);
      await removeCRD(api, 'cogs.example.com');
      await establish(api, crd);
      const list = await call(api, 'GET', path);
      assert.equal(list.status, 200, list.text);
      assert.deepEqual(list.body.items, []);
      assert.equal((await call(api, 'POST', path, cog)).status, 201);
    });
  });

  describe('bad CRDs are 422 and nothing is stored', () => {
    const cases: { name: string; mutate: (c: CustomResourceDefinition) => void; want: RegExp }[] = [
      {
        name: 'a group the API server serves itself',
        mutate: (c) => {
          c.spec.group = 'storage.k8s.io';
          c.metadata!.name = 'widgets.storage.k8s.io';
        },
        want: /spec\.group: Invalid value: "storage\.k8s\.io": is a group the API server serves itself/,
      },
      {
        name: 'the apiextensions group itself',
        mutate: (c) => {
          c.spec.group = 'apiextensions.k8s.io';
          c.metadata!.name = 'widgets.apiextensions.k8s.io';
        },
        want: /spec\.group: Invalid value: "apiextensions\.k8s\.io"/,
      },
      {
        name: 'a name other than <plural>.<group>',
        mutate: (c) => {
          c.metadata!.name = 'things.example.com';
        },
        want: /metadata\.name: Invalid value: "things\.example\.com": must be spec\.names\.plural\+"\."\+spec\.group/,
      },
      {
        name: 'two storage versions',
        mutate: (c) => {
          c.spec.versions![1]!.storage = true;
        },
        want: /spec\.versions: Invalid value: .*must have exactly one version marked as storage version/,
      },
      {
        name: 'a conversion webhook',
        mutate: (c) => {
          c.spec.conversion = { strategy: 'Webhook' };
        },
        want: /spec\.conversion\.strategy/,
      },
      {
        name: 'a version without a schema',
        mutate: (c) => {
          delete c.spec.versions![0]!.schema;
        },
        want: /spec\.versions\[0\]\.schema\.openAPIV3Schema: Required value/,
      },
    ];
    for (const c of cases)
      it(c.name, async () => {
        const crd = widgetCRD({ names: { plural: 'widgets', kind: 'Widget' } });
        c.mutate(crd);
        const r = await call(api, 'POST', crdPath(), crd);
        assert.equal(r.status, 422, r.text);
        assert.equal(r.body.reason, 'Invalid');
        assert.match(r.body.message, c.want);
        if (crd.metadata!.name !== 'widgets.example.com')
          assert.equal((await call(api, 'GET', crdPath(crd.metadata!.name))).status, 404);
      });

    it('a group colliding with a built-in one serves nothing and leaves the built-in kind alone', async () => {
      const crd = widgetCRD({ group: 'apps', names: { plural: 'deployments', kind: 'Deployment' } });
      crd.metadata!.name = 'deployments.apps';
      const r = await call(api, 'POST', crdPath(), crd);
      assert.equal(r.status, 422, r.text);
      assert.equal((await call(api, 'GET', crdPath('deployments.apps'))).status, 404);
      const d = await call(api, 'GET', '/apis/apps/v1/namespaces/default/deployments');
      assert.equal(d.body.kind, 'DeploymentList');
    });
  });
});
