import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ApiStatusError, isNotFound } from '../../api/client/errors.js';
import { Indexer } from '../../api/client/indexer.js';
import { Lister } from '../../api/client/lister.js';
import { resources } from '../../api/client/resource.js';
import type { ResourceRef } from '../../api/client/resource.js';
import { labelSelectorFromObject } from '../../api/meta/labels.js';
import type { KubeObject, OwnerReference } from '../../api/object.js';
import { controllerOf } from '../../api/podutil.js';
import type { Deployment, Pod, ReplicaSet } from '../../api/types.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';
import {
  adoptPatch,
  claimCandidates,
  CONTROLLER_INDEX,
  controllerIndexFunc,
  ControllerRefManager,
  freshOwnerGetter,
  ownersSelecting,
  recheckDeletionTimestamp,
  releasePatch,
  resolveControllerRef,
} from './ref-manager.js';

const RS_KIND = { apiVersion: 'apps/v1', kind: 'ReplicaSet' };

describe('claimCandidates (the controller-uid index)', () => {
  it("finds the owner's dependents and its namespace's orphans, not other controllers' pods", () => {
    const owned = (ns: string, name: string, controllerUid?: string): Pod =>
      ({
        metadata: {
          namespace: ns,
          name,
          uid: `pod-${ns}-${name}`,
          ...(controllerUid
            ? {
                ownerReferences: [
                  {
                    apiVersion: 'apps/v1',
                    kind: 'ReplicaSet',
                    name: 'x',
                    uid: controllerUid,
                    controller: true,
                  },
                ],
              }
            : {}),
        },
        spec: { containers: [] },
      }) as unknown as Pod;
    const ix = new Indexer<Pod>({ indexers: { [CONTROLLER_INDEX]: controllerIndexFunc } });
    ix.add(owned('a', 'mine-1', 'rs-1'));
    ix.add(owned('a', 'mine-2', 'rs-1'));
    ix.add(owned('a', 'theirs', 'rs-2'));
    ix.add(owned('a', 'orphan'));
    ix.add(owned('b', 'orphan-elsewhere'));
    ix.add(owned('b', 'mine-in-b', 'rs-1'));
    const owner = { metadata: { namespace: 'a', name: 'web', uid: 'rs-1' } } as KubeObject;
    const names = claimCandidates(new Lister(ix), owner)
      .map((p) => p.metadata?.name)
      .sort();
    assert.deepEqual(names, ['mine-1', 'mine-2', 'orphan']);
    // A pod that becomes another's leaves the owner's candidates.
    ix.update(owned('a', 'mine-2', 'rs-2'));
    assert.deepEqual(
      claimCandidates(new Lister(ix), owner)
        .map((p) => p.metadata?.name)
        .sort(),
      ['mine-1', 'orphan'],
    );
  });
});

describe("resolveControllerRef and ownersSelecting (the informer handlers' owner lookups)", () => {
  const rs = (ns: string, name: string, uid: string, selector?: Record<string, string>): ReplicaSet =>
    ({
      metadata: { namespace: ns, name, uid },
      spec: { selector: { matchLabels: selector } },
    }) as unknown as ReplicaSet;
  const ix = new Indexer<ReplicaSet>();
  ix.add(rs('a', 'web', 'u1', { app: 'web' }));
  ix.add(rs('a', 'all', 'u2', {}));
  ix.add(rs('b', 'web', 'u3', { app: 'web' }));
  const lister = new Lister(ix);
  const ref = (kind: string, name: string, uid: string): OwnerReference => ({
    apiVersion: 'apps/v1',
    kind,
    name,
    uid,
    controller: true,
  });

  it('resolves a ref only to a cached owner of that kind, namespace, name and uid', () => {
    const cases: [string, string | undefined, OwnerReference | undefined, string | undefined][] = [
      ['the owner', 'a', ref('ReplicaSet', 'web', 'u1'), 'u1'],
      ["the other namespace's owner", 'b', ref('ReplicaSet', 'web', 'u3'), 'u3'],
      ['a new object under the name (uid differs)', 'a', ref('ReplicaSet', 'web', 'u3'), undefined],
      ['another kind', 'a', ref('Deployment', 'web', 'u1'), undefined],
      ['not cached', 'a', ref('ReplicaSet', 'gone', 'u9'), undefined],
      ['no ref', 'a', undefined, undefined],
    ];
    for (const [what, ns, r, want] of cases)
      assert.equal(resolveControllerRef(lister, RS_KIND, ns, r)?.metadata.uid, want, what);
  });

  it('finds the owners of the namespace whose non-empty selector matches', () => {
    const selectorOf = (o: ReplicaSet) => labelSelectorFromObject(o.spec?.selector);
    const pod = (labels: Record<string, string>): Pod => ({
      metadata: { namespace: 'a', name: 'p', labels },
      spec: { containers: [] },
    });
    assert.deepEqual(
      ownersSelecting(lister, pod({ app: 'web' }), selectorOf).map((o) => o.metadata.uid),
      ['u1'],
    );
    assert.deepEqual(ownersSelecting(lister, pod({ app: 'db' }), selectorOf), []);
    assert.deepEqual(
      ownersSelecting(lister, pod({ app: 'web' }), () => undefined),
      [],
    );
  });
});

describe('patches', () => {
  it('adopt: the controllerRef keyed by uid plus the dependent uid', () => {
    const owner: KubeObject = { metadata: { name: 'web', uid: 'o1' } };
    assert.deepEqual(adoptPatch(owner, RS_KIND, 'p1'), {
      metadata: {
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            name: 'web',
            uid: 'o1',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
        uid: 'p1',
      },
    });
  });
  it('release: a $patch delete of the owner uid plus the dependent uid', () => {
    assert.deepEqual(releasePatch('o1', 'p1'), {
      metadata: { ownerReferences: [{ $patch: 'delete', uid: 'o1' }], uid: 'p1' },
    });
  });
});

describe('recheckDeletionTimestamp', () => {
  const cases: Array<{ name: string; get: () => Promise<KubeObject>; error?: RegExp }> = [
    { name: 'a live owner may adopt', get: async () => ({ metadata: { name: 'a', namespace: 'ns' } }) },
    {
      name: 'an owner being deleted may not',
      get: async () => ({
        metadata: { name: 'a', namespace: 'ns', deletionTimestamp: '2026-01-01T00:00:00Z' },
      }),
      error: /ns\/a has just been deleted at 2026-01-01T00:00:00Z$/,
    },
    {
      name: 'a failed read may not',
      get: async () => {
        throw new Error('boom');
      },
      error: /can't recheck DeletionTimestamp: boom$/,
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const p = recheckDeletionTimestamp(c.get)();
      if (c.error) await assert.rejects(p, c.error);
      else await p;
    });
  }
});

describe('ControllerRefManager against the API server', () => {
  let api: TestApi;
  let rs: ReplicaSet;
  let n = 0;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.stop());

  function rsObject(name: string, labels: Record<string, string>): ReplicaSet {
    return {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name, namespace: 'default', labels },
      spec: {
        replicas: 0,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
    };
  }

  beforeEach(async () => {
    n++;
    rs = await api.client.create<ReplicaSet>(
      resources.replicasets,
      rsObject(`web-${n}`, { app: `web-${n}` }),
    );
  });

  async function pod(
    labels: Record<string, string>,
    owners: OwnerReference[] = [],
    finalizers?: string[],
  ): Promise<Pod> {
    return api.client.create<Pod>(resources.pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: 'p-',
        namespace: 'default',
        labels,
        ownerReferences: owners,
        ...(finalizers ? { finalizers } : {}),
      },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
  }

  function refTo(o: KubeObject, controller = true): OwnerReference {
    return {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      name: o.metadata!.name!,
      uid: o.metadata!.uid!,
      controller,
      blockOwnerDeletion: true,
    };
  }

  function manager(owner: KubeObject = rs, canAdopt?: () => Promise<void>): ControllerRefManager<Pod> {
    return new ControllerRefManager<Pod>({
      client: api.client,
      resource: resources.pods,
      owner,
      ownerKind: RS_KIND,
      selector: labelSelectorFromObject((owner as ReplicaSet).spec.selector),
      canAdopt:
        canAdopt ?? recheckDeletionTimestamp(freshOwnerGetter(api.client, resources.replicasets, owner)),
    });
  }

  async function fresh(p: Pod): Promise<Pod> {
    return api.client.get<Pod>(resources.pods, 'default', p.metadata.name!);
  }

  it('claims its own, adopts matching orphans, releases non-matching own pods, ignores the rest', async () => {
    const sel = rs.spec.selector.matchLabels!;
    const other = await api.client.create<ReplicaSet>(resources.replicasets, rsObject(`other-${n}`, sel));
    const own = await pod(sel, [refTo(rs)]);
    const orphan = await pod({ ...sel, extra: '1' }, [refTo(other, false)]); // a non-controller owner only
    const stranger = await pod(sel, [refTo(other)]);
    const unmatchedOrphan = await pod({ app: 'nope' });
    const strayed = await pod({ app: 'nope' }, [refTo(rs)]);

    const claimed = await manager().claim([own, orphan, stranger, unmatchedOrphan, strayed]);
    assert.deepEqual(
      claimed.map((p) => p.metadata.name).sort(),
      [own.metadata.name, orphan.metadata.name].sort(),
    );

    const adopted = await fresh(orphan);
    assert.equal(controllerOf(adopted)?.uid, rs.metadata.uid);
    assert.equal(
      adopted.metadata.ownerReferences?.length,
      2,
      'the other, non-controller ownerReference stays',
    );
    assert.equal(controllerOf(await fresh(stranger))?.uid, other.metadata.uid);
    assert.deepEqual((await fresh(unmatchedOrphan)).metadata.ownerReferences ?? [], []);
    assert.deepEqual((await fresh(strayed)).metadata.ownerReferences ?? [], [], 'released');
  });

  it('a filter narrows what matches', async () => {
    const sel = rs.spec.selector.matchLabels!;
    const a = await pod(sel);
    const b = await pod(sel);
    const claimed = await manager().claim([a, b], [(p) => p.metadata.name === a.metadata.name]);
    assert.deepEqual(
      claimed.map((p) => p.metadata.name),
      [a.metadata.name],
    );
    assert.equal(controllerOf(await fresh(b)), undefined);
  });

  it('does not adopt orphans that are being deleted', async () => {
    const sel = rs.spec.selector.matchLabels!;
    const dying = await pod(sel, [], ['example.com/hold']);
    await api.client.delete(resources.pods, 'default', dying.metadata.name!);
    const cached = await fresh(dying);
    assert.ok(cached.metadata.deletionTimestamp);
    assert.deepEqual(await manager().claim([cached]), []);
    assert.equal(controllerOf(await fresh(dying)), undefined);
    await api.client.patch(resources.pods, 'default', dying.metadata.name!, 'merge', {
      metadata: { finalizers: null },
    });
  });

  it('neither adopts nor releases while the owner (as cached) is being deleted', async () => {
    const sel = rs.spec.selector.matchLabels!;
    const orphan = await pod(sel);
    const strayed = await pod({ app: 'nope' }, [refTo(rs)]);
    const dying: ReplicaSet = {
      ...rs,
      metadata: { ...rs.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' },
    };
    let asked = 0;
    const claimed = await manager(dying, async () => void asked++).claim([orphan, strayed]);
    assert.deepEqual(claimed, []);
    assert.equal(asked, 0);
    assert.equal(controllerOf(await fresh(orphan)), undefined);
    assert.equal(controllerOf(await fresh(strayed))?.uid, rs.metadata.uid);
  });

  it('rechecks the owner with a fresh GET once before adopting: a deleted owner adopts nothing', async () => {
    const sel = rs.spec.selector.matchLabels!;
    const orphans = [await pod(sel), await pod(sel)];
    await api.client.delete(resources.replicasets, 'default', rs.metadata.name!);
    const err = await manager()
      .claim(orphans)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(err instanceof AggregateError);
    assert.equal(err.errors.length, 2);
    assert.match(
      String((err.errors[0] as Error).message),
      /^can't adopt Pod default\/p-.* \(.*\): can't recheck/,
    );
    for (const o of orphans) assert.equal(controllerOf(await fresh(o)), undefined);
  });

  it('a recreated owner (same name, new uid) adopts nothing', async () => {
    const sel = rs.spec.selector.matchLabels!;
    const orphan = await pod(sel);
    await api.client.delete(resources.replicasets, 'default', rs.metadata.name!);
    await api.client.create(resources.replicasets, rsObject(rs.metadata.name!, sel));
    await assert.rejects(manager().claim([orphan]), (e: AggregateError) =>
      /original ReplicaSet default\/web-\d+ is gone: got uid .*, wanted/.test(e.message),
    );
  });

  it('calls canAdopt once for many adoptions', async () => {
    const sel = rs.spec.selector.matchLabels!;
    const orphans = [await pod(sel), await pod(sel), await pod(sel)];
    let asked = 0;
    const claimed = await manager(rs, async () => void asked++).claim(orphans);
    assert.equal(claimed.length, 3);
    assert.equal(asked, 1);
  });

  it('the dependent uid guards the patch: a pod recreated under the same name is not adopted', async () => {
    const sel = rs.spec.selector.matchLabels!;
    const old = await pod(sel);
    await api.client.delete(resources.pods, 'default', old.metadata.name!);
    await api.client.create<Pod>(resources.pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: old.metadata.name!, namespace: 'default', labels: sel },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
    const err = await manager()
      .adopt(old)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(err instanceof ApiStatusError, String(err));
    assert.equal(controllerOf(await fresh(old)), undefined);
  });

  it('a pod that vanished is skipped without error', async () => {
    const sel = rs.spec.selector.matchLabels!;
    const gone = await pod(sel);
    await api.client.delete(resources.pods, 'default', gone.metadata.name!);
    await assert.rejects(fresh(gone), (e) => isNotFound(e));
    assert.deepEqual(await manager().claim([gone]), []);
  });

  it('works for other kinds: a Deployment claims ReplicaSets', async () => {
    const labels = { app: `dep-${n}` };
    const dep = await api.client.create<Deployment>(resources.deployments, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: `dep-${n}`, namespace: 'default' },
      spec: {
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
    });
    const orphanRS = await api.client.create<ReplicaSet>(
      resources.replicasets,
      rsObject(`dep-${n}-abc`, labels),
    );
    const deploymentsRef: ResourceRef = resources.deployments;
    const m = new ControllerRefManager<ReplicaSet>({
      client: api.client,
      resource: resources.replicasets,
      owner: dep,
      ownerKind: { apiVersion: 'apps/v1', kind: 'Deployment' },
      selector: labelSelectorFromObject(dep.spec.selector),
      canAdopt: recheckDeletionTimestamp(freshOwnerGetter(api.client, deploymentsRef, dep)),
    });
    const claimed = await m.claim([orphanRS, rs]);
    assert.deepEqual(
      claimed.map((r) => r.metadata.name),
      [orphanRS.metadata.name],
    );
    const got = await api.client.get<ReplicaSet>(resources.replicasets, 'default', orphanRS.metadata.name!);
    assert.deepEqual(controllerOf(got), {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: dep.metadata.name,
      uid: dep.metadata.uid,
      controller: true,
      blockOwnerDeletion: true,
    });
  });
});
