/**
 * PersistentVolumes, PersistentVolumeClaims and StorageClasses as the real kubectl sees
 * them on the in-process API server: `kubectl get pv,pvc,sc` prints upstream's columns
 * (with `(default)` after the default class, `<unset>` for unset fields, the claim as
 * namespace/name), `-o wide` adds VOLUMEMODE, the short names resolve through discovery;
 * `kubectl apply` of a claim that names no class stores it with the default class
 * (DefaultStorageClass admission) and the protection finalizer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resources } from '../../api/client/resource.js';
import type { KubeObject } from '../../api/object.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';

/**
 * `lines` as a pattern: ages (`0s`) match any age, and a run of two or more spaces any run
 * of spaces, so that a column a second wider (`10s`) does not fail the test.
 */
function table(lines: readonly string[]): RegExp {
  const body = lines
    .map((l) =>
      l
        .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
        .replace(/\b0s\b/g, '\\d+[smh]')
        .replace(/ {2,}/g, ' +'),
    )
    .join('\\s*\\n');
  return new RegExp(`^${body}\\s*$`);
}

describe('storage kinds through the real kubectl', { timeout: 120_000 }, () => {
  let api: TestApi;
  const kubectl = async (...args: string[]) => {
    const r = await api.kubectl(...args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };

  before(async () => {
    api = await startTestApi();
    const c = api.client;
    const sc = (name: string, extra: Record<string, unknown>): KubeObject => ({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name },
      ...extra,
    });
    await c.create(
      resources.storageclasses,
      sc('local-path', {
        metadata: {
          name: 'local-path',
          annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' },
        },
        provisioner: 'rancher.io/local-path',
        volumeBindingMode: 'WaitForFirstConsumer',
      }),
    );
    await c.create(
      resources.storageclasses,
      sc('fast', { provisioner: 'example.com/ssd', reclaimPolicy: 'Retain', allowVolumeExpansion: true }),
    );
    const bound = await c.create(resources.persistentvolumes, {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pv-a' },
      spec: {
        capacity: { storage: '2Gi' },
        accessModes: ['ReadOnlyMany', 'ReadWriteOnce'],
        storageClassName: 'fast',
        hostPath: { path: '/tmp/pv-a' },
        claimRef: { namespace: 'default', name: 'data' },
      },
    });
    await c.updateStatus(resources.persistentvolumes, { ...bound, status: { phase: 'Bound' } });
    await c.create(resources.persistentvolumes, {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pv-b' },
      spec: {
        capacity: { storage: '1.5Gi' },
        accessModes: ['ReadWriteOncePod'],
        persistentVolumeReclaimPolicy: 'Delete',
        hostPath: { path: '/tmp/pv-b' },
      },
    });
    const claim = await c.create(
      resources.persistentvolumeclaims,
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'data', namespace: 'default' },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: 'fast',
          volumeName: 'pv-a',
          resources: { requests: { storage: '1Gi' } },
        },
      },
      { namespace: 'default' },
    );
    await c.updateStatus(resources.persistentvolumeclaims, {
      ...claim,
      status: {
        phase: 'Bound',
        capacity: { storage: '2Gi' },
        accessModes: ['ReadWriteOnce', 'ReadOnlyMany'],
      },
    });
    await c.create(
      resources.persistentvolumeclaims,
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'scratch', namespace: 'default' },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: '',
          resources: { requests: { storage: '1Gi' } },
        },
      },
      { namespace: 'default' },
    );
  });
  after(() => api?.stop());

  it('kubectl get pv,pvc,sc prints upstream columns', async () => {
    const out = await kubectl('get', 'pv,pvc,sc', '-n', 'default');
    assert.match(
      out,
      table([
        'NAME                    CAPACITY   ACCESS MODES   RECLAIM POLICY   STATUS    CLAIM          STORAGECLASS   VOLUMEATTRIBUTESCLASS   REASON   AGE',
        'persistentvolume/pv-a   2Gi        RWO,ROX        Retain           Bound     default/data   fast           <unset>                          0s',
        'persistentvolume/pv-b   1536Mi     RWOP           Delete           Pending                                 <unset>                          0s',
        '',
        'NAME                            STATUS    VOLUME   CAPACITY   ACCESS MODES   STORAGECLASS   VOLUMEATTRIBUTESCLASS   AGE',
        'persistentvolumeclaim/data      Bound     pv-a     2Gi        RWO,ROX        fast           <unset>                 0s',
        'persistentvolumeclaim/scratch   Pending                                                     <unset>                 0s',
        '',
        'NAME                                               PROVISIONER             RECLAIMPOLICY   VOLUMEBINDINGMODE      ALLOWVOLUMEEXPANSION   AGE',
        'storageclass.storage.k8s.io/fast                   example.com/ssd         Retain          Immediate              true                   0s',
        'storageclass.storage.k8s.io/local-path (default)   rancher.io/local-path   Delete          WaitForFirstConsumer   false                  0s',
      ]),
    );
  });

  it('kubectl apply of a claim without a class gets the default class', async () => {
    const applied = await api.kubectlIn(
      [
        'apiVersion: v1',
        'kind: PersistentVolumeClaim',
        'metadata: { name: applied, namespace: default }',
        'spec:',
        '  accessModes: [ReadWriteOnce]',
        '  resources: { requests: { storage: 64Mi } }',
      ].join('\n'),
      'apply',
      '-f',
      '-',
    );
    assert.equal(applied.code, 0, applied.stderr);
    assert.equal(applied.stdout.trim(), 'persistentvolumeclaim/applied created');
    assert.equal(
      await kubectl(
        'get',
        'pvc',
        'applied',
        '-n',
        'default',
        '-o',
        'jsonpath={.spec.storageClassName} {.metadata.finalizers}',
      ),
      'local-path ["kubernetes.io/pvc-protection"]',
    );
    assert.match(
      await kubectl('get', 'pvc', 'applied', '-n', 'default'),
      table([
        'NAME      STATUS    VOLUME   CAPACITY   ACCESS MODES   STORAGECLASS   VOLUMEATTRIBUTESCLASS   AGE',
        'applied   Pending                                      local-path     <unset>                 0s',
      ]),
    );
    // Applied again unchanged: the class admission set is not a difference.
    const again = await api.kubectlIn(
      [
        'apiVersion: v1',
        'kind: PersistentVolumeClaim',
        'metadata: { name: applied, namespace: default }',
        'spec:',
        '  accessModes: [ReadWriteOnce]',
        '  resources: { requests: { storage: 64Mi } }',
      ].join('\n'),
      'apply',
      '-f',
      '-',
    );
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout.trim(), 'persistentvolumeclaim/applied unchanged');
  });

  it('-o wide adds VOLUMEMODE; the short names resolve', async () => {
    assert.match(
      await kubectl('get', 'pv', '-o', 'wide'),
      table([
        'NAME   CAPACITY   ACCESS MODES   RECLAIM POLICY   STATUS    CLAIM          STORAGECLASS   VOLUMEATTRIBUTESCLASS   REASON   AGE   VOLUMEMODE',
        'pv-a   2Gi        RWO,ROX        Retain           Bound     default/data   fast           <unset>                          0s    Filesystem',
        'pv-b   1536Mi     RWOP           Delete           Pending                                 <unset>                          0s    Filesystem',
      ]),
    );
    assert.match(
      await kubectl('get', 'pvc', 'data', '-n', 'default', '-o', 'wide'),
      table([
        'NAME   STATUS   VOLUME   CAPACITY   ACCESS MODES   STORAGECLASS   VOLUMEATTRIBUTESCLASS   AGE   VOLUMEMODE',
        'data   Bound    pv-a     2Gi        RWO,ROX        fast           <unset>                 0s    Filesystem',
      ]),
    );
    assert.match(
      await kubectl('api-resources', '--api-group=storage.k8s.io'),
      table([
        'NAME             SHORTNAMES   APIVERSION          NAMESPACED   KIND',
        'storageclasses   sc           storage.k8s.io/v1   false        StorageClass',
      ]),
    );
  });
});
