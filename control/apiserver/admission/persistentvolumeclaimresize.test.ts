/**
 * PersistentVolumeClaimResize admission through the real API server: a bound claim of a
 * class with allowVolumeExpansion grows; one of a class without it, or an unbound one, is
 * refused with upstream's 403 and nothing is written.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiStatusError } from '../../../api/client/errors.js';
import { resources } from '../../../api/client/resource.js';
import type { KubeObject } from '../../../api/object.js';
import { startTestApi, type TestApi } from '../../../test/support/api.js';
import { findResource } from '../resources.js';
import { ApiError } from '../status.js';
import { persistentVolumeClaimResize } from './persistentvolumeclaimresize.js';

describe('PersistentVolumeClaimResize admission (plugin)', () => {
  it('refuses growing an unbound claim, passes a claim that keeps or lowers its request', async () => {
    const plugin = persistentVolumeClaimResize({ getStorageClass: () => Promise.resolve(undefined) });
    const claim = (storage: string, phase: string): KubeObject => ({
      metadata: { name: 'c', namespace: 'default' },
      spec: { storageClassName: 'x', resources: { requests: { storage } } },
      status: { phase },
    });
    const attrs = (obj: KubeObject, old: KubeObject) => ({
      operation: 'UPDATE' as const,
      resource: findResource('', 'v1', 'persistentvolumeclaims')!,
      subresource: undefined,
      namespace: 'default',
      name: 'c',
      user: { name: 'u', groups: [] },
      dryRun: false,
      object: obj,
      oldObject: old,
    });
    const recorder = { warn: () => {}, annotate: () => {} };
    await assert.rejects(
      Promise.resolve(plugin.validate!(attrs(claim('2Gi', 'Pending'), claim('1Gi', 'Pending')), recorder)),
      (e: unknown) =>
        e instanceof ApiError &&
        e.code === 403 &&
        e.message ===
          'persistentvolumeclaims "c" is forbidden: Only bound persistent volume claims can be expanded',
    );
    await plugin.validate!(attrs(claim('1Gi', 'Bound'), claim('1Gi', 'Bound')), recorder);
    await plugin.validate!(attrs(claim('1Gi', 'Bound'), claim('2Gi', 'Bound')), recorder);
  });
});

describe('PersistentVolumeClaimResize admission (real API server)', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
    for (const [name, allowVolumeExpansion] of [
      ['grows', true],
      ['fixed', false],
    ] as const)
      await api.client.create(resources.storageclasses, {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name },
        provisioner: 'example.com/p',
        allowVolumeExpansion,
      });
  });
  after(() => api.stop());

  const boundClaim = async (name: string, storageClassName: string, bound = true) => {
    const c = await api.client.create<KubeObject>(
      resources.persistentvolumeclaims,
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name, namespace: 'default' },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName,
          resources: { requests: { storage: '1Gi' } },
        },
      },
      { namespace: 'default' },
    );
    if (!bound) return c;
    return api.client.updateStatus<KubeObject>(resources.persistentvolumeclaims, {
      ...c,
      status: { phase: 'Bound', capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'] },
    });
  };
  const grow = (name: string) =>
    api.client.patch<KubeObject>(resources.persistentvolumeclaims, 'default', name, 'merge', {
      spec: { resources: { requests: { storage: '2Gi' } } },
    });
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => assert.fail('the resize was admitted'),
      (e: unknown) => {
        assert.ok(e instanceof ApiStatusError);
        return e.status;
      },
    );

  it('grows a bound claim whose class allows expansion', async () => {
    await boundClaim('ok', 'grows');
    const grown = await grow('ok');
    assert.equal(
      (grown.spec as { resources: { requests: { storage: string } } }).resources.requests.storage,
      '2Gi',
    );
  });

  it('refuses a class without allowVolumeExpansion, and an unbound claim', async () => {
    const c = await boundClaim('no', 'fixed');
    const status = await refusal(grow('no'));
    assert.equal(status.code, 403);
    assert.equal(
      status.message,
      'persistentvolumeclaims "no" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize',
    );
    const after = await api.client.get<KubeObject>(resources.persistentvolumeclaims, 'default', 'no');
    assert.equal(after.metadata?.resourceVersion, c.metadata?.resourceVersion);
    await boundClaim('pending', 'grows', false);
    // An unbound claim's spec is immutable: validation says so before admission.
    assert.equal((await refusal(grow('pending'))).code, 422);
  });
});
