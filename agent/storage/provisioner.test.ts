/**
 * The local-path provisioner (provisioner.ts) against the in-process API server, on disk:
 * a claim selected for its node gets a directory and a PV with the upstream shape and the
 * external provisioner's events; a claim of another node or class is left alone; a
 * Released Delete volume loses its directory and its PV, a Retain one keeps both.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import winston from 'winston';
import { EventRecorder } from '../../api/client/events.js';
import { resources } from '../../api/client/resource.js';
import type { KubeObject } from '../../api/object.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';
import { until } from '../../test/support/wait.js';
import type { Mounter } from '../kubelet/pods/mount.js';
import { LocalPathProvisioner } from './provisioner.js';
import type { PersistentVolume, PersistentVolumeClaim } from './types.js';

const noMounts: Mounter = {
  bindMount: () => Promise.reject(new Error('unused')),
  mountTmpfs: () => Promise.reject(new Error('unused')),
  unmount: () => Promise.reject(new Error('unused')),
  mountPoints: () => Promise.resolve([]),
};

describe('LocalPathProvisioner', { timeout: 60_000 }, () => {
  let api: TestApi;
  let dataDir: string;
  let provisioner: LocalPathProvisioner;
  let recorder: EventRecorder;

  const claim = (name: string, node: string | undefined, storageClassName = 'local-path') =>
    api.client.create<PersistentVolumeClaim>(
      resources.persistentvolumeclaims,
      {
        metadata: {
          name,
          namespace: 'default',
          ...(node ? { annotations: { 'volume.kubernetes.io/selected-node': node } } : {}),
        },
        spec: {
          storageClassName,
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '1Gi' } },
        },
      },
      { namespace: 'default' },
    );
  const getVolume = (name: string) =>
    api.client.get<PersistentVolume>(resources.persistentvolumes, undefined, name).catch(() => undefined);
  const events = async (name: string) =>
    (
      await api.client.list<
        KubeObject & { reason: string; message: string; involvedObject: { name: string } }
      >(resources.events, { namespace: 'default' })
    ).items.filter((e) => e.involvedObject.name === name);

  before(async () => {
    api = await startTestApi();
    dataDir = mkdtempSync(join(tmpdir(), 'k8ts-provisioner-'));
    await api.client.create(resources.nodes, {
      metadata: { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1' } },
    });
    for (const [name, provisioner, reclaimPolicy] of [
      ['local-path', 'rancher.io/local-path', 'Delete'],
      ['keep', 'rancher.io/local-path', 'Retain'],
      ['other', 'example.com/other', 'Delete'],
    ] as const)
      await api.client.create(resources.storageclasses, {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name },
        provisioner,
        reclaimPolicy,
        volumeBindingMode: 'WaitForFirstConsumer',
      });
    recorder = new EventRecorder({ client: api.client, component: 'rancher.io/local-path_n1' });
    provisioner = new LocalPathProvisioner({
      client: api.client,
      nodeName: 'n1',
      dataDir,
      recorder,
      mounter: noMounts,
      logger: winston.createLogger({ silent: true }),
    });
    provisioner.start();
  });
  after(async () => {
    await provisioner.stop();
    await recorder.flush(2000);
    await api.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('provisions a claim selected for its node: a 0777 directory and a hostPath PV with node affinity', async () => {
    const c = await claim('data', 'n1');
    const name = `pvc-${c.metadata.uid}`;
    const pv = await until('the PV', () => getVolume(name), 20_000, 50);
    const path = join(dataDir, 'storage', name);
    assert.equal(statSync(path).mode & 0o777, 0o777);
    assert.deepEqual(pv.spec?.hostPath, { path, type: 'DirectoryOrCreate' });
    assert.deepEqual(pv.spec?.nodeAffinity, {
      required: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n1'] }] },
        ],
      },
    });
    assert.equal(pv.spec?.capacity?.storage, '1Gi');
    assert.equal(pv.spec?.persistentVolumeReclaimPolicy, 'Delete');
    assert.equal(pv.spec?.storageClassName, 'local-path');
    assert.equal(pv.spec?.claimRef?.uid, c.metadata.uid);
    assert.equal(pv.metadata.annotations?.['pv.kubernetes.io/provisioned-by'], 'rancher.io/local-path');
    await recorder.flush(2000);
    const reasons = (await events('data')).map((e) => [e.reason, e.message]);
    assert.deepEqual(reasons.sort(), [
      ['Provisioning', 'External provisioner is provisioning volume for claim "default/data"'],
      ['ProvisioningSucceeded', `Successfully provisioned volume ${name}`],
    ]);
  });

  it('leaves claims of other nodes, of other provisioners and not yet placed', async () => {
    const others = [
      await claim('elsewhere', 'n2'),
      await claim('unplaced', undefined),
      await claim('foreign', 'n1', 'other'),
    ];
    // A claim after them that is provisioned shows the others were seen and passed over.
    const marker = await claim('marker', 'n1');
    await until('the marker PV', () => getVolume(`pvc-${marker.metadata.uid}`), 20_000, 50);
    for (const c of others) {
      assert.equal(await getVolume(`pvc-${c.metadata.uid}`), undefined, c.metadata.name);
      assert.equal(existsSync(join(dataDir, 'storage', `pvc-${c.metadata.uid}`)), false);
    }
  });

  it('removes a Released Delete volume and its directory; keeps a Retain one', async () => {
    const del = await claim('gone', 'n1');
    const keep = await claim('kept', 'n1', 'keep');
    const names = [`pvc-${del.metadata.uid}`, `pvc-${keep.metadata.uid}`];
    for (const name of names) {
      const pv = await until('the PV', () => getVolume(name), 20_000, 50);
      // What the PV controller does once the claim is deleted.
      await api.client.updateStatus(resources.persistentvolumes, { ...pv, status: { phase: 'Released' } });
    }
    const [delName, keepName] = names as [string, string];
    await until(
      'the Delete PV gone or terminating',
      async () => {
        const pv = await getVolume(delName);
        return !pv || pv.metadata.deletionTimestamp ? true : undefined;
      },
      20_000,
      50,
    );
    assert.equal(existsSync(join(dataDir, 'storage', delName)), false);
    const kept = await getVolume(keepName);
    assert.ok(kept && !kept.metadata.deletionTimestamp);
    assert.ok(existsSync(join(dataDir, 'storage', keepName)));
  });
});
