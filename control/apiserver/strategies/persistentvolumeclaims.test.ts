/**
 * The PersistentVolumeClaim strategy beyond its StatefulSet uses (statefulsets.test.ts):
 * ValidatePersistentVolumeClaimSpec's selector, class and data-source rules, and
 * ValidatePersistentVolumeClaimUpdate: volumeName once, a class for a claim without one,
 * requests only of a bound claim and never below its capacity, the beta annotation; and
 * the status rules.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../api/object.js';
import { assertErrors, create, created, modified, update, updateStatus, type Json } from './testing.js';

const PVC = 'v1/persistentvolumeclaims';

const claim = (): KubeObject => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'data', namespace: 'default' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
});

const messages = (errs: { field: string; message: string }[]) => errs.map((e) => `${e.field}: ${e.message}`);

describe('PersistentVolumeClaim strategy', () => {
  it('validates the selector, the class name and the data sources', () => {
    assertErrors(
      create(
        PVC,
        modified(claim(), (c) => {
          c.spec.selector = { matchExpressions: [{ key: 'tier', operator: 'In', values: [] }] };
          c.spec.storageClassName = 'Local_Path';
          c.spec.dataSource = { kind: 'Snapshot', name: 'snap' };
        }),
      ).errs,
      [
        ['spec.selector.matchExpressions[0].values', 'Required'],
        ['spec.storageClassName', 'Invalid'],
        ['spec.dataSource', 'Invalid'],
        // dataSourceRef is the mirror of dataSource (NormalizeDataSources), so it is refused too.
        ['spec.dataSourceRef', 'Invalid'],
      ],
    );
    const mirrored = created(
      PVC,
      modified(claim(), (c) => (c.spec.dataSource = { kind: 'PersistentVolumeClaim', name: 'src' })),
    ) as Json;
    assert.deepEqual(mirrored.spec.dataSourceRef, { kind: 'PersistentVolumeClaim', name: 'src' });
    const { errs } = create(
      PVC,
      modified(claim(), (c) => {
        c.spec.dataSource = { kind: 'PersistentVolumeClaim', name: 'a' };
        c.spec.dataSourceRef = { kind: 'PersistentVolumeClaim', name: 'b' };
      }),
    );
    assertErrors(errs, [['spec', 'Invalid']]);
    assert.deepEqual(messages(errs), ['spec: must match dataSourceRef']);
  });

  it('lets volumeName and a missing class be set once; keeps the rest of the spec', () => {
    const old = created(PVC, claim());
    assert.deepEqual(
      update(
        PVC,
        old,
        modified(old, (c) => {
          c.spec.volumeName = 'pv-1';
          c.spec.storageClassName = 'local-path';
        }),
      ).errs,
      [],
    );
    const named = created(
      PVC,
      modified(claim(), (c) => {
        c.spec.volumeName = 'pv-1';
        c.spec.storageClassName = 'local-path';
      }),
    );
    const { errs } = update(
      PVC,
      named,
      modified(named, (c) => {
        c.spec.volumeName = 'pv-2';
        c.spec.storageClassName = 'other';
        c.spec.volumeMode = 'Block';
      }),
    );
    assertErrors(errs, [
      ['spec', 'Forbidden'],
      ['volumeMode', 'Invalid'],
    ]);
    assert.ok(
      messages(errs).includes(
        'spec: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims',
      ),
    );
    // "" asks for no class; it is a class name that was set and may not be changed.
    const none = created(
      PVC,
      modified(claim(), (c) => (c.spec.storageClassName = '')),
    );
    assertErrors(
      update(
        PVC,
        none,
        modified(none, (c) => (c.spec.storageClassName = 'local-path')),
      ).errs,
      [['spec', 'Forbidden']],
    );
  });

  it('moves the beta class annotation into storageClassName, and keeps the annotation', () => {
    const old = created(
      PVC,
      modified(
        claim(),
        (c) => (c.metadata.annotations = { 'volume.beta.kubernetes.io/storage-class': 'slow' }),
      ),
    );
    assert.deepEqual(
      update(
        PVC,
        old,
        modified(old, (c) => (c.spec.storageClassName = 'slow')),
      ).errs,
      [],
    );
    assertErrors(
      update(
        PVC,
        old,
        modified(old, (c) => (c.metadata.annotations['volume.beta.kubernetes.io/storage-class'] = 'fast')),
      ).errs,
      [['metadata.annotations.volume.beta.kubernetes.io/storage-class', 'Invalid']],
    );
  });

  it('a bound claim may grow, and shrink only down to above its capacity', () => {
    const old = modified(created(PVC, claim()), (c) => {
      c.spec.volumeName = 'pv-1';
      c.status = { phase: 'Bound', capacity: { storage: '1Gi' } };
    });
    const grown = modified(old, (c) => (c.spec.resources.requests.storage = '3Gi'));
    assert.deepEqual(update(PVC, old, grown).errs, []);
    // After a failed expansion to 3Gi, back to 2Gi (above the 1Gi capacity) is allowed.
    assert.deepEqual(
      update(
        PVC,
        grown,
        modified(grown, (c) => (c.spec.resources.requests.storage = '2Gi')),
      ).errs,
      [],
    );
    const { errs } = update(
      PVC,
      grown,
      modified(grown, (c) => (c.spec.resources.requests.storage = '1Gi')),
    );
    assertErrors(errs, [['spec.resources.requests.storage', 'Forbidden']]);
    assert.deepEqual(messages(errs), [
      'spec.resources.requests.storage: field can not be less than status.capacity',
    ]);
  });

  it('status: accessModes required, capacities valid, resize statuses known; the spec is kept', () => {
    const old = created(PVC, claim());
    const ok = updateStatus(
      PVC,
      old,
      modified(old, (c) => {
        c.status = { phase: 'Bound', capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'] };
        c.spec.resources.requests.storage = '5Gi';
      }),
    );
    assert.deepEqual(ok.errs, []);
    assert.equal((ok.obj as Json).spec.resources.requests.storage, '1Gi');
    assertErrors(
      updateStatus(
        PVC,
        old,
        modified(old, (c) => {
          c.status = {
            phase: 'Bound',
            capacity: { storage: '-1Gi' },
            allocatedResourceStatuses: { storage: 'Resizing', cpu: 'NodeResizePending' },
          };
        }),
      ).errs,
      [
        ['status.capacity[storage]', 'Invalid'],
        ['status.allocatedResourceStatus', 'NotSupported'],
        ['status.allocatedResourceStatus', 'NotSupported'],
      ],
    );
  });
});
