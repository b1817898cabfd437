/**
 * The PV protection controller: what it does with a volume's finalizer (table-driven),
 * and against the in-process API server (once PersistentVolumes are served): the finalizer
 * added, a Bound volume kept while being deleted, let go once it is Released.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resources } from '../../../../api/client/resource.js';
import type { PersistentVolume } from '../../../../api/storage/types.js';
import { findResource } from '../../../apiserver/resources.js';
import { getIfExists, until, untilGone, useControllers } from '../../testing.js';
import { pvProtectionAction } from './controller.js';
import { pvProtectionController } from './index.js';

const FINALIZER = 'kubernetes.io/pv-protection';

function volume(
  name: string,
  phase: NonNullable<PersistentVolume['status']>['phase'],
  o: { deleting?: boolean; finalizer?: boolean } = {},
): PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name,
      ...(o.finalizer ? { finalizers: [FINALIZER] } : {}),
      ...(o.deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}),
    },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      hostPath: { path: `/tmp/${name}` },
      persistentVolumeReclaimPolicy: 'Retain',
    },
    status: { phase },
  };
}

describe('pvProtectionAction', () => {
  const cases: [string, PersistentVolume, ReturnType<typeof pvProtectionAction>][] = [
    ['a new volume without the finalizer', volume('a', 'Available'), 'add'],
    ['a volume with it', volume('a', 'Bound', { finalizer: true }), undefined],
    ['a Bound volume being deleted', volume('a', 'Bound', { finalizer: true, deleting: true }), undefined],
    [
      'a Released volume being deleted',
      volume('a', 'Released', { finalizer: true, deleting: true }),
      'remove',
    ],
    [
      'an Available volume being deleted',
      volume('a', 'Available', { finalizer: true, deleting: true }),
      'remove',
    ],
    ['a volume being deleted without the finalizer', volume('a', 'Released', { deleting: true }), undefined],
  ];
  for (const [name, v, want] of cases) it(name, () => assert.equal(pvProtectionAction(v), want));
});

describe(
  'PVProtectionController',
  {
    timeout: 60_000,
    skip: findResource('', 'v1', 'persistentvolumes') ? false : 'PersistentVolumes are not served yet',
  },
  () => {
    const cluster = useControllers({ controllers: { 'pv-protection': pvProtectionController } });
    const get = (name: string) =>
      getIfExists<PersistentVolume>(cluster.api.client, resources.persistentvolumes, undefined, name);

    it('keeps a Bound volume being deleted and lets it go once it is Released', async () => {
      const { client } = cluster.api;
      await client.create(resources.persistentvolumes, volume('pv-held', undefined));
      await until('the finalizer', async () =>
        (await get('pv-held'))?.metadata.finalizers?.includes(FINALIZER),
      );
      const pv = (await get('pv-held'))!;
      await client.updateStatus(resources.persistentvolumes, { ...pv, status: { phase: 'Bound' } });
      await client.delete(resources.persistentvolumes, undefined, 'pv-held');
      const deleting = await until('terminating', async () => {
        const v = await get('pv-held');
        return v?.metadata.deletionTimestamp && v.status?.phase === 'Bound' ? v : undefined;
      });
      assert.ok(deleting.metadata.finalizers?.includes(FINALIZER));
      await client.updateStatus(resources.persistentvolumes, { ...deleting, status: { phase: 'Released' } });
      await untilGone(client, resources.persistentvolumes, undefined, 'pv-held');
    });
  },
);
