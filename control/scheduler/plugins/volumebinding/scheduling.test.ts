/**
 * VolumeBinding in the real scheduler, with the PV controller and the protection
 * controllers, against the in-process API server and two fake nodes: a pod goes to the
 * node its static local volume lives on; a WaitForFirstConsumer claim of a provisioning
 * class is annotated with the chosen node, provisioned there (by a stand-in for the
 * agent's local-path provisioner) and bound before the pod is; a pod with an unbound
 * Immediate claim fails with upstream's message until a volume for the claim appears.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resources } from '../../../../api/client/resource.js';
import type { PersistentVolume, PersistentVolumeClaim, StorageClass } from '../../../../api/storage/types.js';
import type { CoreEvent, Pod } from '../../../../api/types.js';
import { startControllers, until, type ControllerTest } from '../../../controllers/testing.js';
import { persistentVolumeBinderController } from '../../../controllers/volume/persistentvolume/index.js';
import { pvcProtectionController } from '../../../controllers/volume/pvcprotection/index.js';
import { pvProtectionController } from '../../../controllers/volume/pvprotection/index.js';
import { makeNode } from '../../../../test/support/fake-nodes.js';
import { Scheduler } from '../../scheduler.js';

const NS = 'default';

function localVolume(name: string, node: string, className: string): PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      storageClassName: className,
      persistentVolumeReclaimPolicy: 'Retain',
      local: { path: `/mnt/${name}` },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] },
          ],
        },
      },
    },
  };
}

function claim(name: string, className: string): PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: NS },
    spec: {
      storageClassName: className,
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
    },
  };
}

function pod(name: string, claimName: string, nodeSelector?: Record<string, string>): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      containers: [{ name: 'c', image: 'busybox' }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
      ...(nodeSelector ? { nodeSelector } : {}),
    },
  };
}

describe('VolumeBinding in the scheduler', { timeout: 120_000 }, () => {
  let cluster: ControllerTest;
  let scheduler: Scheduler;
  const ac = new AbortController();
  let running: Promise<unknown>;

  /** Plays an agent's local-path provisioner: a volume on the selected node for each claim of `test.example/local`. */
  async function provisionLoop(): Promise<void> {
    const { client } = cluster.api;
    while (!ac.signal.aborted) {
      const claims = await client.list<PersistentVolumeClaim>(resources.persistentvolumeclaims, {
        namespace: NS,
      });
      for (const c of claims.items) {
        const node = c.metadata.annotations?.['volume.kubernetes.io/selected-node'];
        if (!node || c.spec.volumeName || c.spec.storageClassName !== 'provisioned') continue;
        const pv = localVolume(`pvc-${c.metadata.uid}`, node, 'provisioned');
        pv.metadata.annotations = { 'pv.kubernetes.io/provisioned-by': 'test.example/local' };
        pv.spec!.persistentVolumeReclaimPolicy = 'Delete';
        pv.spec!.claimRef = { namespace: NS, name: c.metadata.name!, uid: c.metadata.uid! };
        await client.create(resources.persistentvolumes, pv).catch(() => undefined);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  before(async () => {
    cluster = await startControllers({
      controllers: {
        'persistentvolume-binder': persistentVolumeBinderController,
        'pv-protection': pvProtectionController,
        'pvc-protection': pvcProtectionController,
      },
      nodes: [makeNode('node-a'), makeNode('node-b')],
      setup: async (api) => {
        for (const [name, provisioner, mode] of [
          ['static', 'kubernetes.io/no-provisioner', 'WaitForFirstConsumer'],
          ['provisioned', 'test.example/local', 'WaitForFirstConsumer'],
          ['immediate', 'kubernetes.io/no-provisioner', 'Immediate'],
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
    scheduler = new Scheduler({ client: cluster.api.client, podInitialBackoffMs: 100, podMaxBackoffMs: 500 });
    running = Promise.all([scheduler.run(ac.signal), provisionLoop()]);
  });

  after(async () => {
    ac.abort();
    await running;
    await cluster.stop();
  });

  const nodeOf = (name: string) =>
    until(`pod ${name} bound`, async () => {
      const p = await cluster.api.client.get<Pod>(resources.pods, NS, name);
      return p.spec.nodeName || undefined;
    });
  const getClaim = (name: string) =>
    cluster.api.client.get<PersistentVolumeClaim>(resources.persistentvolumeclaims, NS, name);

  it('places a pod on the node its static local volume lives on, and binds the claim to it', async () => {
    const { client } = cluster.api;
    await client.create(resources.persistentvolumes, localVolume('on-b', 'node-b', 'static'));
    await until('the volume Available', async () => {
      const v = await client.get<PersistentVolume>(resources.persistentvolumes, undefined, 'on-b');
      return v.status?.phase === 'Available';
    });
    await client.create(resources.persistentvolumeclaims, claim('static-data', 'static'));
    await client.create(resources.pods, pod('static-user', 'static-data'));
    assert.equal(await nodeOf('static-user'), 'node-b');
    const c = await getClaim('static-data');
    assert.equal(c.spec.volumeName, 'on-b');
    assert.equal(c.status?.phase, 'Bound');
  });

  it('provisions a WaitForFirstConsumer claim on the node chosen for its pod before binding the pod', async () => {
    const { client } = cluster.api;
    await client.create(resources.persistentvolumeclaims, claim('dyn-data', 'provisioned'));
    await client.create(resources.pods, pod('dyn-user', 'dyn-data', { 'kubernetes.io/hostname': 'node-a' }));
    assert.equal(await nodeOf('dyn-user'), 'node-a');
    const c = await getClaim('dyn-data');
    assert.equal(c.metadata.annotations?.['volume.kubernetes.io/selected-node'], 'node-a');
    assert.equal(c.spec.volumeName, `pvc-${c.metadata.uid}`, 'bound before the pod was');
    assert.equal(c.status?.phase, 'Bound');
  });

  it('keeps a pod with an unbound Immediate claim Pending until a volume for it appears', async () => {
    const { client } = cluster.api;
    await client.create(resources.persistentvolumeclaims, claim('imm-data', 'immediate'));
    await client.create(resources.pods, pod('imm-user', 'imm-data'));
    const event = await until('FailedScheduling', async () => {
      const list = await client.list<CoreEvent>(resources.events, { namespace: NS });
      return list.items.find((e) => e.involvedObject.name === 'imm-user' && e.reason === 'FailedScheduling');
    });
    assert.match(
      event.message ?? '',
      /^0\/2 nodes are available: pod has unbound immediate PersistentVolumeClaims\./,
    );
    await client.create(resources.persistentvolumes, localVolume('imm-on-a', 'node-a', 'immediate'));
    assert.equal(await nodeOf('imm-user'), 'node-a');
  });
});
