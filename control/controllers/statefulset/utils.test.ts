/**
 * The pure rules of utils.ts and history.ts: names and ordinals, the revision a new pod
 * gets under a partition, the claim ownerReferences of each retention policy, maxUnavailable
 * scaling, and revisions (hash, equality, apply).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod, StatefulSet } from '../../../api/types.js';
import { applyRevision, equalRevision, hashRevision, newRevision, revisionData } from './history.js';
import {
  claimOwnerRefs,
  claimsOf,
  identityMatches,
  maxUnavailableOf,
  newStatefulSetPod,
  newVersionedStatefulSetPod,
  parentAndOrdinal,
  storageMatches,
} from './utils.js';

const set = (spec: Partial<StatefulSet['spec']> = {}): StatefulSet => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'web', namespace: 'ns', uid: 'set-uid' },
  spec: {
    replicas: 3,
    serviceName: 'nginx',
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    volumeClaimTemplates: [
      {
        metadata: { name: 'www' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    ],
    ...spec,
  },
});

describe('StatefulSet pod rules', () => {
  it('reads ordinals from names as getParentNameAndOrdinal', () => {
    const p = (name: string) => ({ metadata: { name }, spec: { containers: [] } }) as Pod;
    assert.deepEqual(parentAndOrdinal(p('web-12')), { parent: 'web', ordinal: 12 });
    assert.deepEqual(parentAndOrdinal(p('my-db-0')), { parent: 'my-db', ordinal: 0 });
    assert.deepEqual(parentAndOrdinal(p('web')), { parent: '', ordinal: -1 });
    assert.deepEqual(parentAndOrdinal(p('web-x')), { parent: '', ordinal: -1 });
  });

  it('builds a pod with identity (labels, hostname, subdomain) and its claim volume', () => {
    const s = set();
    const pod = newStatefulSetPod(s, 2);
    assert.equal(pod.metadata.name, 'web-2');
    assert.equal(pod.metadata.generateName, undefined);
    assert.equal(pod.metadata.labels?.['statefulset.kubernetes.io/pod-name'], 'web-2');
    assert.equal(pod.metadata.labels?.['apps.kubernetes.io/pod-index'], '2');
    assert.equal(pod.spec.hostname, 'web-2');
    assert.equal(pod.spec.subdomain, 'nginx');
    assert.deepEqual(pod.spec.volumes, [{ name: 'www', persistentVolumeClaim: { claimName: 'www-web-2' } }]);
    assert.ok(identityMatches(s, pod) && storageMatches(s, pod));
    const claim = claimsOf(s, pod).get('www')!;
    assert.equal(claim.metadata.name, 'www-web-2');
    assert.deepEqual(claim.metadata.labels, { app: 'web' });
  });

  it('gives ordinals below the partition the current revision', () => {
    const s = set({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } });
    const rev = (o: number) =>
      newVersionedStatefulSetPod(s, s, 'web-old', 'web-new', o).metadata.labels?.['controller-revision-hash'];
    assert.deepEqual([0, 1, 2].map(rev), ['web-old', 'web-old', 'web-new']);
    const onDelete = set({ updateStrategy: { type: 'OnDelete' } });
    assert.equal(
      newVersionedStatefulSetPod(onDelete, onDelete, 'a', 'b', 0).metadata.labels?.[
        'controller-revision-hash'
      ],
      'b',
    );
  });

  const cases: [string, StatefulSet['spec']['persistentVolumeClaimRetentionPolicy'], number, string[]][] = [
    ['Retain/Retain', { whenDeleted: 'Retain', whenScaled: 'Retain' }, 5, []],
    ['whenDeleted Delete, in range', { whenDeleted: 'Delete', whenScaled: 'Retain' }, 1, ['StatefulSet/web']],
    [
      'whenDeleted Delete, scaled down',
      { whenDeleted: 'Delete', whenScaled: 'Retain' },
      5,
      ['StatefulSet/web'],
    ],
    ['whenScaled Delete, in range', { whenDeleted: 'Retain', whenScaled: 'Delete' }, 1, []],
    ['whenScaled Delete, scaled down', { whenDeleted: 'Retain', whenScaled: 'Delete' }, 5, ['Pod/web-5']],
    ['both Delete, scaled down', { whenDeleted: 'Delete', whenScaled: 'Delete' }, 5, ['Pod/web-5']],
  ];
  for (const [what, policy, ordinal, want] of cases) {
    it(`claim ownerReferences: ${what}`, () => {
      const s = set({ persistentVolumeClaimRetentionPolicy: policy });
      const pod = newStatefulSetPod(s, ordinal);
      pod.metadata.uid = `pod-${ordinal}`;
      const claim = claimsOf(s, pod).get('www')!;
      claim.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'other', uid: 'x' }];
      const { refs, changed } = claimOwnerRefs(claim, s, pod);
      assert.deepEqual(
        refs.map((r) => `${r.kind}/${r.name}`),
        ['ConfigMap/other', ...want],
      );
      assert.equal(changed, want.length > 0);
      assert.ok(refs.every((r) => r.controller === undefined));
    });
  }

  it('scales maxUnavailable down, at least 1', () => {
    const mu = (v: number | string | undefined, n: number) =>
      maxUnavailableOf(
        set({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: v } } }),
        n,
      );
    assert.equal(mu(undefined, 5), 1);
    assert.equal(mu(2, 5), 2);
    assert.equal(mu('50%', 5), 2);
    assert.equal(mu('10%', 5), 1);
  });
});

describe('StatefulSet revisions', () => {
  it('stores the template as a replace patch, named <set>-<hash> and labelled with the hash', () => {
    const s = set();
    const r = newRevision(s, 1, 0);
    assert.deepEqual((r.data as { spec: { template: { $patch: string } } }).spec.template.$patch, 'replace');
    const hash = r.metadata.labels?.['controller-revision-hash'];
    assert.equal(r.metadata.name, `web-${hash}`);
    assert.equal(r.metadata.ownerReferences?.[0]?.controller, true);
    assert.notEqual(hashRevision(revisionData(s), 1), hash, 'a collision count changes the hash');
  });

  it('equal templates give equal revisions; applying one restores its template', () => {
    const a = newRevision(set(), 1, 0);
    const changed = set({
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'c', image: 'nginx:2' }] },
      },
    });
    const b = newRevision(changed, 2, 0);
    assert.ok(equalRevision(a, newRevision(set(), 7, 0)));
    assert.ok(!equalRevision(a, b));
    assert.equal(applyRevision(changed, a).spec.template.spec.containers[0]!.image, 'nginx');
    assert.equal(
      (applyRevision(changed, a).spec.template as unknown as Record<string, unknown>).$patch,
      undefined,
    );
  });
});
