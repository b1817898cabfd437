/**
 * The PVC protection controller: which pods hold a claim (podUsesPVC, table-driven), and,
 * against the in-process API server, the finalizer added to a claim without it, kept while
 * a scheduled pod uses the claim (even a terminating one), removed once the pod is gone.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resources } from '../../../../api/client/resource.js';
import type { PersistentVolumeClaim, Pod } from '../../../../api/types.js';
import { getIfExists, until, untilGone, useControllers } from '../../testing.js';
import { podMayReleaseClaims, podUsesPVC } from './controller.js';
import { pvcProtectionController } from './index.js';

const FINALIZER = 'kubernetes.io/pvc-protection';

function claim(name: string, namespace = 'default'): PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  };
}

function pod(name: string, claimName: string, o: { node?: string; ephemeral?: boolean } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: {
      ...(o.node ? { nodeName: o.node } : {}),
      containers: [{ name: 'c', image: 'busybox' }],
      volumes: [
        o.ephemeral
          ? { name: 'data', ephemeral: { volumeClaimTemplate: { spec: {} } } }
          : { name: 'data', persistentVolumeClaim: { claimName } },
      ],
    },
  };
}

describe('podUsesPVC', () => {
  const c = claim('data');
  const owned = claim('web-data');
  owned.metadata.ownerReferences = [
    { apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'uid-web', controller: true },
  ];
  const finished = pod('done', 'data', { node: 'n1' });
  finished.status = { phase: 'Succeeded' };
  const shutDown = pod('web', '', { node: 'n1', ephemeral: true });
  shutDown.metadata.deletionTimestamp = '2024-01-01T00:00:00Z';
  shutDown.metadata.deletionGracePeriodSeconds = 0;
  const cases: [string, Pod, PersistentVolumeClaim, boolean][] = [
    ['a scheduled pod naming the claim', pod('p', 'data', { node: 'n1' }), c, true],
    ['an unscheduled pod naming it', pod('p', 'data'), c, false],
    ['a scheduled pod naming another claim', pod('p', 'other', { node: 'n1' }), c, false],
    ['a finished pod still naming it (as upstream)', finished, c, true],
    [
      'a pod of another namespace',
      { ...pod('p', 'data', { node: 'n1' }), metadata: { name: 'p', namespace: 'x' } },
      c,
      false,
    ],
    ['the owner of its ephemeral claim', pod('web', '', { node: 'n1', ephemeral: true }), owned, true],
    [
      'an ephemeral volume of the same name it does not own',
      pod('web', '', { node: 'n1', ephemeral: true }),
      claim('web-data'),
      false,
    ],
    ['the owner, shut down', shutDown, owned, false],
  ];
  for (const [name, p, cl, want] of cases) it(name, () => assert.equal(podUsesPVC(p, cl), want));

  it('only a gone, finished or unscheduled pod may release its claims', () => {
    assert.equal(podMayReleaseClaims(pod('p', 'data', { node: 'n1' }), false), false);
    assert.equal(podMayReleaseClaims(pod('p', 'data', { node: 'n1' }), true), true);
    assert.equal(podMayReleaseClaims(pod('p', 'data'), false), true);
    assert.equal(podMayReleaseClaims(finished, false), true);
  });
});

describe('PVCProtectionController', { timeout: 60_000 }, () => {
  const cluster = useControllers({ controllers: { 'pvc-protection': pvcProtectionController } });
  const get = (name: string) =>
    getIfExists<PersistentVolumeClaim>(cluster.api.client, resources.persistentvolumeclaims, 'default', name);

  it('adds the finalizer to a claim without it; an unused claim is then deleted at once', async () => {
    await cluster.api.client.create(resources.persistentvolumeclaims, claim('free'));
    await until('the finalizer', async () => (await get('free'))?.metadata.finalizers?.includes(FINALIZER));
    await cluster.api.client.delete(resources.persistentvolumeclaims, 'default', 'free');
    await untilGone(cluster.api.client, resources.persistentvolumeclaims, 'default', 'free');
  });

  it('keeps a claim a scheduled pod uses, also while the pod terminates, and lets it go with the pod', async () => {
    const { client } = cluster.api;
    await client.create(resources.persistentvolumeclaims, claim('held'));
    await until('the finalizer', async () => (await get('held'))?.metadata.finalizers?.includes(FINALIZER));
    await client.create(resources.pods, pod('user', 'held', { node: 'n1' }));
    await client.delete(resources.persistentvolumeclaims, 'default', 'held');
    await until('the claim terminating', async () => !!(await get('held'))?.metadata.deletionTimestamp);
    // A graceful deletion: the pod is still there (no kubelet finishes it), still using the claim.
    await client.delete(resources.pods, 'default', 'user', { gracePeriodSeconds: 30 });
    const terminating = await getIfExists<Pod>(client, resources.pods, 'default', 'user');
    assert.ok(terminating?.metadata.deletionTimestamp);
    // Give the controller a chance to (wrongly) let go: a sync of the claim happens on the pod update.
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(await get('held'), 'kept while its pod terminates');
    await client.delete(resources.pods, 'default', 'user', { gracePeriodSeconds: 0 });
    await untilGone(client, resources.persistentvolumeclaims, 'default', 'held');
  });
});
