/**
 * The PersistentVolume strategy: upstream's defaults (Retain, Filesystem, status Pending
 * with a transition time), ValidatePersistentVolume's rules with their field paths, types
 * and words, the immutable volume source, and the status flow.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../../api/object.js';
import { setPersistentVolumeClock } from './persistentvolumes.js';
import { assertErrors, create, created, modified, update, updateStatus, type Json } from './testing.js';

const PV = 'v1/persistentvolumes';

const volume = (): KubeObject => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name: 'pv-1' },
  spec: {
    capacity: { storage: '1.5Gi' },
    accessModes: ['ReadWriteOnce'],
    hostPath: { path: '/data/pv-1' },
  },
});

const messages = (errs: { field: string; message: string }[]) => errs.map((e) => `${e.field}: ${e.message}`);

describe('PersistentVolume strategy', () => {
  let restore: () => Date;
  before(() => {
    restore = setPersistentVolumeClock(() => new Date('2026-03-01T10:00:00.600Z'));
  });
  after(() => setPersistentVolumeClock(restore));

  it('defaults as SetDefaults_PersistentVolume; status Pending since now', () => {
    const obj = created(PV, volume()) as Json;
    assert.equal(obj.spec.persistentVolumeReclaimPolicy, 'Retain');
    assert.equal(obj.spec.volumeMode, 'Filesystem');
    assert.equal(obj.spec.capacity.storage, '1536Mi');
    assert.equal(obj.spec.hostPath.type, '');
    assert.deepEqual(obj.status, { phase: 'Pending', lastPhaseTransitionTime: '2026-03-01T10:00:00Z' });
    // A status sent with the create is not the client's to set.
    const sent = created(
      PV,
      modified(volume(), (v) => (v.status = { phase: 'Bound' })),
    ) as Json;
    assert.equal(sent.status.phase, 'Pending');
  });

  it('refuses what ValidatePersistentVolumeSpec refuses, in its words', () => {
    const cases: [string, (v: Json) => void, [string, string][], string[]?][] = [
      [
        'no access mode, capacity or source',
        (v) => (v.spec = {}),
        [
          ['spec.accessModes', 'Required'],
          ['spec.capacity', 'Required'],
          ['spec.capacity', 'NotSupported'],
          ['spec', 'Required'],
        ],
        ['spec: must specify a volume type'],
      ],
      [
        'an unknown access mode, RWOP with another',
        (v) => (v.spec.accessModes = ['ReadWriteOncePod', 'ReadWriteOnce', 'Sometimes']),
        [
          ['spec.accessModes', 'NotSupported'],
          ['spec.accessModes', 'Forbidden'],
        ],
        ['spec.accessModes: may not use ReadWriteOncePod with other access modes'],
      ],
      [
        'a zero and a foreign capacity',
        (v) => (v.spec.capacity = { storage: '0', cpu: '1' }),
        [
          ['spec.capacity', 'NotSupported'],
          ['spec.capacity[storage]', 'Invalid'],
        ],
        ['spec.capacity[storage]: must be greater than zero'],
      ],
      [
        'a reclaim policy, volume mode and class name it does not know',
        (v) => {
          v.spec.persistentVolumeReclaimPolicy = 'Keep';
          v.spec.volumeMode = 'Raw';
          v.spec.storageClassName = 'Fast_SSD';
        },
        [
          ['spec.persistentVolumeReclaimPolicy', 'NotSupported'],
          ['spec.volumeMode', 'NotSupported'],
          ['spec.storageClassName', 'Invalid'],
        ],
      ],
      [
        'two sources',
        (v) => (v.spec.nfs = { server: 'nfs.example', path: '/export' }),
        [['spec.nfs', 'Forbidden']],
        ['spec.nfs: may not specify more than 1 volume type'],
      ],
      [
        'a hostPath with .. and an unknown type',
        (v) => (v.spec.hostPath = { path: '/data/../etc', type: 'Folder' }),
        [
          ['spec.hostPath.path', 'Invalid'],
          ['spec.hostPath.type', 'NotSupported'],
        ],
        ["spec.hostPath.path: must not contain '..'"],
      ],
      [
        'Recycle of /',
        (v) => {
          v.spec.hostPath = { path: '/' };
          v.spec.persistentVolumeReclaimPolicy = 'Recycle';
        },
        [['spec.persistentVolumeReclaimPolicy', 'Forbidden']],
        ["spec.persistentVolumeReclaimPolicy: may not be 'recycle' for a hostPath mount of '/'"],
      ],
      [
        'a local volume without node affinity',
        (v) => {
          delete v.spec.hostPath;
          v.spec.local = { path: '/mnt/disk1' };
        },
        [['spec.nodeAffinity', 'Required']],
        ['spec.nodeAffinity: Local volume requires node affinity'],
      ],
      [
        'node affinity without terms, and a bad requirement',
        (v) =>
          (v.spec.nodeAffinity = {
            required: {
              nodeSelectorTerms: [
                {
                  matchExpressions: [
                    { key: 'kubernetes.io/hostname', operator: 'In', values: [] },
                    { key: 'zone', operator: 'Near', values: ['a'] },
                  ],
                  matchFields: [{ key: 'spec.nodeName', operator: 'In', values: ['n1'] }],
                },
              ],
            },
          }),
        [
          ['spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values', 'Required'],
          ['spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[1].operator', 'Invalid'],
          ['spec.nodeAffinity.required.nodeSelectorTerms[0].matchFields[0].key', 'Invalid'],
        ],
        [
          "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values: must be specified when `operator` is 'In' or 'NotIn'",
          'spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[1].operator: not a valid selector operator',
          'spec.nodeAffinity.required.nodeSelectorTerms[0].matchFields[0].key: not a valid field selector key',
        ],
      ],
      [
        'node affinity without required terms',
        (v) => (v.spec.nodeAffinity = { required: { nodeSelectorTerms: [] } }),
        [['spec.nodeAffinity.required.nodeSelectorTerms', 'Required']],
        ['spec.nodeAffinity.required.nodeSelectorTerms: must have at least one node selector term'],
      ],
      [
        'a csi volume without a volume handle, a class of attributes without csi',
        (v) => {
          delete v.spec.hostPath;
          v.spec.csi = { driver: 'hostpath.csi.k8s.io' };
          v.spec.volumeAttributesClassName = '';
        },
        [
          ['spec.csi.volumeHandle', 'Required'],
          ['spec.volumeAttributesClassName', 'Required'],
        ],
        ['spec.volumeAttributesClassName: an empty string is disallowed'],
      ],
      [
        'mount options annotated on a hostPath volume',
        (v) => (v.metadata.annotations = { 'volume.beta.kubernetes.io/mount-options': 'ro' }),
        [['metadata.annotations.volume.beta.kubernetes.io/mount-options', 'Forbidden']],
        [
          'metadata.annotations.volume.beta.kubernetes.io/mount-options: may not specify mount options for this volume type',
        ],
      ],
    ];
    for (const [what, patch, want, words] of cases) {
      const { errs } = create(PV, modified(volume(), patch));
      assertErrors(errs, want);
      for (const w of words ?? [])
        assert.ok(messages(errs).includes(w), `${what}: ${messages(errs).join('; ')}`);
    }
  });

  it('keeps the volume source, volume mode and node affinity; other fields may change', () => {
    const old = created(PV, {
      ...volume(),
      spec: {
        ...(volume().spec as Json),
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n1'] }] },
            ],
          },
        },
      },
    });
    const changed = modified(old, (v) => {
      v.spec.capacity.storage = '2Gi';
      v.spec.persistentVolumeReclaimPolicy = 'Delete';
      v.spec.claimRef = { namespace: 'default', name: 'data' };
      v.spec.storageClassName = 'manual';
    });
    assert.deepEqual(update(PV, old, changed).errs, []);
    const { errs } = update(
      PV,
      old,
      modified(old, (v) => {
        v.spec.hostPath.path = '/elsewhere';
        v.spec.volumeMode = 'Block';
        v.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values = ['n2'];
      }),
    );
    assertErrors(errs, [
      ['spec.persistentvolumesource', 'Forbidden'],
      ['volumeMode', 'Invalid'],
      ['nodeAffinity', 'Invalid'],
    ]);
    assert.ok(
      messages(errs).includes(
        'spec.persistentvolumesource: spec.persistentvolumesource is immutable after creation',
      ),
    );
    assert.ok(messages(errs).includes('volumeMode: field is immutable'));
    // A status sent with an update is ignored: status is its subresource's.
    const withStatus = update(
      PV,
      old,
      modified(old, (v) => (v.status = { phase: 'Bound' })),
    ).obj as Json;
    assert.equal(withStatus.status.phase, 'Pending');
  });

  it('stamps lastPhaseTransitionTime on a phase change, keeps it otherwise; the spec is kept', () => {
    const old = created(PV, volume());
    setPersistentVolumeClock(() => new Date('2026-03-01T10:05:00Z'));
    const available = updateStatus(
      PV,
      old,
      modified(old, (v) => {
        v.status = { phase: 'Available' };
        v.spec.capacity.storage = '9Gi';
      }),
    );
    assert.deepEqual(available.errs, []);
    assert.deepEqual((available.obj as Json).status, {
      phase: 'Available',
      lastPhaseTransitionTime: '2026-03-01T10:05:00Z',
    });
    assert.equal((available.obj as Json).spec.capacity.storage, '1536Mi');
    setPersistentVolumeClock(() => new Date('2026-03-01T10:09:00Z'));
    const same = updateStatus(
      PV,
      available.obj,
      modified(available.obj, (v) => (v.status = { phase: 'Available', message: 'ok' })),
    ).obj as Json;
    assert.equal(same.status.lastPhaseTransitionTime, '2026-03-01T10:05:00Z');
    const given = updateStatus(
      PV,
      available.obj,
      modified(
        available.obj,
        (v) => (v.status = { phase: 'Bound', lastPhaseTransitionTime: '2026-01-01T00:00:00Z' }),
      ),
    ).obj as Json;
    assert.equal(given.status.lastPhaseTransitionTime, '2026-01-01T00:00:00Z');
  });
});
