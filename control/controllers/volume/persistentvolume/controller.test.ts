/**
 * The persistentvolume-binder with the protection controllers against the in-process API
 * server (real strategies and validation): a claim bound to a static volume, both Bound
 * with upstream's annotations; a claim deleted releases a Retain volume, which keeps its
 * claimRef, and the protection finalizers let both go; a provisioned volume (as the
 * local-path provisioner writes it) bound to its WaitForFirstConsumer claim once the node
 * is selected; a claim whose class names an external provisioner gets its annotations.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resources } from '../../../../api/client/resource.js';
import type { PersistentVolume, PersistentVolumeClaim, StorageClass } from '../../../../api/storage/types.js';
import { getIfExists, until, untilGone, useControllers } from '../../testing.js';
import { pvcProtectionController } from '../pvcprotection/index.js';
import { pvProtectionController } from '../pvprotection/index.js';
import { persistentVolumeBinderController } from './index.js';

const NS = 'default';

function staticVolume(name: string, capacity: string, className = 'manual'): PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name },
    spec: {
      capacity: { storage: capacity },
      accessModes: ['ReadWriteOnce'],
      storageClassName: className,
      persistentVolumeReclaimPolicy: 'Retain',
      hostPath: { path: `/tmp/k8ts-${name}` },
    },
  };
}

function claim(name: string, className: string, annotations?: Record<string, string>): PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: NS, ...(annotations ? { annotations } : {}) },
    spec: {
      storageClassName: className,
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
    },
  };
}

describe('PersistentVolumeController', { timeout: 90_000 }, () => {
  const cluster = useControllers({
    controllers: {
      'persistentvolume-binder': persistentVolumeBinderController,
      'pv-protection': pvProtectionController,
      'pvc-protection': pvcProtectionController,
    },
    setup: async (api) => {
      for (const [name, provisioner, mode] of [
        ['local-path', 'rancher.io/local-path', 'WaitForFirstConsumer'],
        ['nfs', 'example.com/nfs', 'Immediate'],
      ] as const)
        await api.client.create<StorageClass>(resources.storageclasses, {
          apiVersion: 'storage.k8s.io/v1',
          kind: 'StorageClass',
          metadata: { name },
          provisioner,
          volumeBindingMode: mode,
        });
    },
  });
  const pv = (name: string) =>
    getIfExists<PersistentVolume>(cluster.api.client, resources.persistentvolumes, undefined, name);
  const pvc = (name: string) =>
    getIfExists<PersistentVolumeClaim>(cluster.api.client, resources.persistentvolumeclaims, NS, name);

  it('binds a claim to the smallest fitting static volume; deleting the claim releases the Retain volume', async () => {
    const { client } = cluster.api;
    await client.create(resources.persistentvolumes, staticVolume('big', '10Gi'));
    await client.create(resources.persistentvolumes, staticVolume('fits', '2Gi'));
    await until(
      'both Available',
      async () =>
        (await pv('big'))?.status?.phase === 'Available' && (await pv('fits'))?.status?.phase === 'Available',
    );
    const created = await client.create(resources.persistentvolumeclaims, claim('data', 'manual'));
    const bound = await until('the claim Bound', async () => {
      const c = await pvc('data');
      return c?.status?.phase === 'Bound' ? c : undefined;
    });
    assert.equal(bound.spec.volumeName, 'fits');
    assert.equal(bound.metadata.annotations?.['pv.kubernetes.io/bind-completed'], 'yes');
    assert.equal(bound.metadata.annotations?.['pv.kubernetes.io/bound-by-controller'], 'yes');
    assert.deepEqual((bound.status as Record<string, unknown>).capacity, { storage: '2Gi' });
    const volume = await until('the volume Bound', async () => {
      const v = await pv('fits');
      return v?.status?.phase === 'Bound' ? v : undefined;
    });
    assert.equal(volume.spec?.claimRef?.uid, created.metadata.uid);
    assert.equal((await pv('big'))?.status?.phase, 'Available');

    await client.delete(resources.persistentvolumeclaims, NS, 'data');
    await untilGone(client, resources.persistentvolumeclaims, NS, 'data');
    const released = await until('the volume Released', async () => {
      const v = await pv('fits');
      return v?.status?.phase === 'Released' ? v : undefined;
    });
    assert.equal(released.spec?.claimRef?.name, 'data', 'a Retain volume keeps its claimRef');
    await client.delete(resources.persistentvolumes, undefined, 'fits');
    await untilGone(client, resources.persistentvolumes, undefined, 'fits');
  });

  it('binds a WaitForFirstConsumer claim to the volume provisioned for it on the selected node', async () => {
    const { client } = cluster.api;
    const c = await client.create(resources.persistentvolumeclaims, claim('wffc', 'local-path'));
    await until('WaitForFirstConsumer', async () => {
      const events = await client.list<
        { reason: string; involvedObject: { name: string } } & PersistentVolume
      >(resources.events, { namespace: NS });
      return events.items.some(
        (e) => e.reason === 'WaitForFirstConsumer' && e.involvedObject.name === 'wffc',
      );
    });
    assert.equal(
      (await pvc('wffc'))?.metadata.annotations?.['volume.kubernetes.io/storage-provisioner'],
      undefined,
    );
    // The scheduler's VolumeBinding PreBind selects the node.
    const latest = (await pvc('wffc'))!;
    latest.metadata.annotations = {
      ...latest.metadata.annotations,
      'volume.kubernetes.io/selected-node': 'n1',
    };
    await client.update(resources.persistentvolumeclaims, latest);
    await until(
      'the storage-provisioner annotation',
      async () =>
        (await pvc('wffc'))?.metadata.annotations?.['volume.kubernetes.io/storage-provisioner'] ===
        'rancher.io/local-path',
    );
    // The node's local-path provisioner creates the volume, pre-bound to the claim.
    const name = `pvc-${c.metadata.uid}`;
    await client.create<PersistentVolume>(resources.persistentvolumes, {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name, annotations: { 'pv.kubernetes.io/provisioned-by': 'rancher.io/local-path' } },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        storageClassName: 'local-path',
        persistentVolumeReclaimPolicy: 'Delete',
        hostPath: { path: `/tmp/${name}`, type: 'DirectoryOrCreate' },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n1'] }] },
            ],
          },
        },
        claimRef: {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          namespace: NS,
          name: 'wffc',
          uid: c.metadata.uid,
        },
      },
    });
    const bound = await until('the claim Bound', async () => {
      const x = await pvc('wffc');
      return x?.status?.phase === 'Bound' ? x : undefined;
    });
    assert.equal(bound.spec.volumeName, name);
    await until('the volume Bound', async () => (await pv(name))?.status?.phase === 'Bound');

    // Deleting the claim releases the Delete volume for its provisioner (which is not running here).
    await client.delete(resources.persistentvolumeclaims, NS, 'wffc');
    await until('the volume Released', async () => (await pv(name))?.status?.phase === 'Released');
  });

  it('asks an external provisioner for an Immediate claim', async () => {
    await cluster.api.client.create(resources.persistentvolumeclaims, claim('ext', 'nfs'));
    await until('the storage-provisioner annotations', async () => {
      const a = (await pvc('ext'))?.metadata.annotations ?? {};
      return (
        a['volume.kubernetes.io/storage-provisioner'] === 'example.com/nfs' &&
        a['volume.beta.kubernetes.io/storage-provisioner'] === 'example.com/nfs'
      );
    });
  });
});
