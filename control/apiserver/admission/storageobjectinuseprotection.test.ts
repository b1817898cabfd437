/**
 * StorageObjectInUseProtection admission through the real API server: a new
 * PersistentVolume carries `kubernetes.io/pv-protection`, a new PersistentVolumeClaim
 * `kubernetes.io/pvc-protection`, once, beside the client's own finalizers; a DELETE then
 * only marks them terminating (the protection controllers remove the finalizers).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resources } from '../../../api/client/resource.js';
import type { KubeObject } from '../../../api/object.js';
import { startTestApi, type TestApi } from '../../../test/support/api.js';

describe('StorageObjectInUseProtection admission (real API server)', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.stop());

  it('adds the protection finalizers to new volumes and claims', async () => {
    const pv = await api.client.create<KubeObject>(resources.persistentvolumes, {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pv-1', finalizers: ['example.com/keep'] },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/pv-1' } },
    });
    assert.deepEqual(pv.metadata?.finalizers, ['example.com/keep', 'kubernetes.io/pv-protection']);
    const pvc = await api.client.create<KubeObject>(
      resources.persistentvolumeclaims,
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'data', namespace: 'default', finalizers: ['kubernetes.io/pvc-protection'] },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
      { namespace: 'default' },
    );
    assert.deepEqual(pvc.metadata?.finalizers, ['kubernetes.io/pvc-protection']);
    await api.client.delete(resources.persistentvolumeclaims, 'default', 'data');
    const terminating = await api.client.get<KubeObject>(resources.persistentvolumeclaims, 'default', 'data');
    assert.ok(terminating.metadata?.deletionTimestamp);
    // An update does not add it back once removed (only creates are admitted so).
    const released = await api.client.update<KubeObject>(resources.persistentvolumes, {
      ...pv,
      metadata: { ...pv.metadata, finalizers: [] },
    });
    assert.deepEqual(released.metadata?.finalizers ?? [], []);
  });
});
