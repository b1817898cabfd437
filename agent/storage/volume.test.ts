/**
 * The local-path provisioner's rulebook (volume.ts): which claims are this node's, which
 * it refuses and with what words, the PV it writes, and which volumes it deletes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PersistentVolume, PersistentVolumeClaim, StorageClass } from './types.js';
import {
  ANN_SELECTED_NODE,
  provisionedVolume,
  provisionRefusal,
  shouldDelete,
  shouldProvision,
  volumeOnNode,
} from './volume.js';

const localPath: StorageClass = {
  metadata: { name: 'local-path' },
  provisioner: 'rancher.io/local-path',
  reclaimPolicy: 'Delete',
  volumeBindingMode: 'WaitForFirstConsumer',
};

function claim(over: Partial<PersistentVolumeClaim['spec']> = {}, annotations: Record<string, string> = {}) {
  return {
    metadata: { name: 'data-web-0', namespace: 'default', uid: 'u-1', resourceVersion: '7', annotations },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
      storageClassName: 'local-path',
      ...over,
    },
  } satisfies PersistentVolumeClaim;
}

describe('local-path rulebook', () => {
  it('provisions only the unbound claims of its class selected for its node', () => {
    const selected = { [ANN_SELECTED_NODE]: 'n1' };
    const cases: [string, PersistentVolumeClaim, StorageClass | undefined, boolean][] = [
      ['selected for this node', claim({}, selected), localPath, true],
      ['selected for another node', claim({}, { [ANN_SELECTED_NODE]: 'n2' }), localPath, false],
      ['no node selected yet', claim(), localPath, false],
      ['already bound', claim({ volumeName: 'pv-x' }, selected), localPath, false],
      ['another provisioner', claim({}, selected), { ...localPath, provisioner: 'ebs.csi.aws.com' }, false],
      ['class missing', claim({}, selected), undefined, false],
    ];
    for (const [name, c, cls, want] of cases) assert.equal(shouldProvision(c, cls, 'n1'), want, name);
    const deleting = claim({}, selected);
    (deleting.metadata as { deletionTimestamp?: string }).deletionTimestamp = '2026-01-01T00:00:00Z';
    assert.equal(shouldProvision(deleting, localPath, 'n1'), false, 'being deleted');
  });

  it("refuses what local-path cannot serve, in the provisioner's words", () => {
    assert.equal(provisionRefusal(claim()), undefined);
    assert.equal(provisionRefusal(claim({ accessModes: ['ReadWriteOncePod'] })), undefined);
    assert.equal(
      provisionRefusal(claim({ selector: { matchLabels: { a: 'b' } } })),
      'claim.Spec.Selector is not supported',
    );
    assert.equal(
      provisionRefusal(claim({ volumeMode: 'Block' })),
      'rancher.io/local-path does not support block volume provisioning',
    );
    assert.match(provisionRefusal(claim({ accessModes: ['ReadOnlyMany'] }))!, /Only support ReadWriteOnce/);
  });

  it('writes a hostPath PV with node affinity, the claim request and a claimRef', () => {
    const pv = provisionedVolume({
      claim: claim(),
      storageClass: localPath,
      hostname: 'n1',
      path: '/d/storage/pvc-u-1',
    });
    assert.deepEqual(pv, {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: {
        name: 'pvc-u-1',
        annotations: { 'pv.kubernetes.io/provisioned-by': 'rancher.io/local-path' },
      },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: 'local-path',
        volumeMode: 'Filesystem',
        hostPath: { path: '/d/storage/pvc-u-1', type: 'DirectoryOrCreate' },
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
          namespace: 'default',
          name: 'data-web-0',
          uid: 'u-1',
          resourceVersion: '7',
        },
      },
    });
    const retain = provisionedVolume({
      claim: claim(),
      storageClass: { ...localPath, reclaimPolicy: 'Retain' },
      hostname: 'n1',
      path: '/p',
    });
    assert.equal(retain.spec?.persistentVolumeReclaimPolicy, 'Retain');
    assert.equal(volumeOnNode(retain, 'n1'), true);
    assert.equal(volumeOnNode(retain, 'n2'), false);
  });

  it('deletes its own Released Delete volumes of this node, nothing else', () => {
    const base = provisionedVolume({ claim: claim(), storageClass: localPath, hostname: 'n1', path: '/p' });
    const released: PersistentVolume = { ...base, status: { phase: 'Released' } };
    const cases: [string, PersistentVolume, boolean][] = [
      ['released, Delete, this node', released, true],
      ['bound', { ...base, status: { phase: 'Bound' } }, false],
      ['Retain', { ...released, spec: { ...released.spec, persistentVolumeReclaimPolicy: 'Retain' } }, false],
      ['not provisioned by local-path', { ...released, metadata: { name: 'pvc-u-1' } }, false],
      [
        'being deleted',
        { ...released, metadata: { ...released.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } },
        false,
      ],
    ];
    for (const [name, pv, want] of cases) assert.equal(shouldDelete(pv, 'n1'), want, name);
    assert.equal(shouldDelete(released, 'n2'), false, 'another node');
  });
});
