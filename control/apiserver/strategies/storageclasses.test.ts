/**
 * The StorageClass strategy: upstream's defaults (Delete, Immediate), ValidateStorageClass
 * and ValidateStorageClassUpdate with their field paths and words.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../api/object.js';
import { assertErrors, create, created, modified, update, type Json } from './testing.js';

const SC = 'storage.k8s.io/v1/storageclasses';

const fast = (): KubeObject => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name: 'fast' },
  provisioner: 'example.com/ssd',
  parameters: { type: 'ssd' },
});

const messages = (errs: { field: string; message: string }[]) => errs.map((e) => `${e.field}: ${e.message}`);

describe('StorageClass strategy', () => {
  it('defaults reclaimPolicy Delete and volumeBindingMode Immediate, keeps given ones', () => {
    const obj = created(SC, fast()) as Json;
    assert.equal(obj.reclaimPolicy, 'Delete');
    assert.equal(obj.volumeBindingMode, 'Immediate');
    assert.equal(obj.status, undefined);
    const wffc = created(
      SC,
      modified(fast(), (c) => {
        c.reclaimPolicy = 'Retain';
        c.volumeBindingMode = 'WaitForFirstConsumer';
      }),
    ) as Json;
    assert.equal(wffc.reclaimPolicy, 'Retain');
    assert.equal(wffc.volumeBindingMode, 'WaitForFirstConsumer');
  });

  it('refuses a missing provisioner, unknown policies and bad topologies', () => {
    assertErrors(
      create(
        SC,
        modified(fast(), (c) => delete c.provisioner),
      ).errs,
      [['provisioner', 'Required']],
    );
    assertErrors(
      create(
        SC,
        modified(fast(), (c) => (c.provisioner = 'not a/name!')),
      ).errs,
      // Both parts of the qualified name are wrong: one Invalid each.
      [
        ['provisioner', 'Invalid'],
        ['provisioner', 'Invalid'],
      ],
    );
    assertErrors(
      create(
        SC,
        modified(fast(), (c) => {
          c.reclaimPolicy = 'Recycle';
          c.volumeBindingMode = 'Later';
          c.parameters = { '': 'x' };
        }),
      ).errs,
      [
        ['reclaimPolicy', 'NotSupported'],
        ['volumeBindingMode', 'NotSupported'],
        ['parameters', 'Invalid'],
      ],
    );
    const { errs } = create(
      SC,
      modified(
        fast(),
        (c) =>
          (c.allowedTopologies = [
            {
              matchLabelExpressions: [
                { key: 'topology.kubernetes.io/zone', values: ['a', 'a'] },
                { key: 'topology.kubernetes.io/zone', values: [] },
              ],
            },
            { matchLabelExpressions: [{ key: 'kubernetes.io/hostname', values: ['n1'] }] },
            { matchLabelExpressions: [{ key: 'kubernetes.io/hostname', values: ['n1'] }] },
          ]),
      ),
    );
    assertErrors(errs, [
      ['allowedTopologies[0].matchLabelExpressions[0].values[1]', 'Duplicate'],
      ['allowedTopologies[0].matchLabelExpressions[1].values', 'Required'],
      ['allowedTopologies[0].matchLabelExpressions[1].key', 'Duplicate'],
      ['allowedTopologies[2].matchLabelExpressions', 'Duplicate'],
    ]);
  });

  it('keeps provisioner, parameters, reclaimPolicy and volumeBindingMode; the rest may change', () => {
    const old = created(SC, fast());
    assert.deepEqual(
      update(
        SC,
        old,
        modified(old, (c) => {
          c.allowVolumeExpansion = true;
          c.mountOptions = ['noatime'];
          c.metadata.annotations = { 'storageclass.kubernetes.io/is-default-class': 'true' };
        }),
      ).errs,
      [],
    );
    const { errs } = update(
      SC,
      old,
      modified(old, (c) => {
        c.provisioner = 'example.com/hdd';
        c.parameters = { type: 'hdd' };
        c.reclaimPolicy = 'Retain';
        c.volumeBindingMode = 'WaitForFirstConsumer';
      }),
    );
    assertErrors(errs, [
      ['provisioner', 'Forbidden'],
      ['parameters', 'Forbidden'],
      ['reclaimPolicy', 'Forbidden'],
      ['volumeBindingMode', 'Invalid'],
    ]);
    assert.deepEqual(messages(errs).sort(), [
      'parameters: updates to parameters are forbidden.',
      'provisioner: updates to provisioner are forbidden.',
      'reclaimPolicy: updates to reclaimPolicy are forbidden.',
      'volumeBindingMode: field is immutable',
    ]);
  });
});
