/**
 * StorageClasses: NAME PROVISIONER RECLAIMPOLICY VOLUMEBINDINGMODE ALLOWVOLUMEEXPANSION AGE
 * (printStorageClass). The default class's name is followed by ` (default)` (either
 * default-class annotation `true`); an unset reclaim policy prints Delete, an unset binding
 * mode Immediate, an unset allowVolumeExpansion false.
 */
import type { KubeObject } from '../../../api/object.js';
import { isDefaultClass } from '../strategies/storageclasses.js';
import { since } from './format.js';
import { AGE_COLUMN, NAME_COLUMN, column, nameOf, type PrintedRow, type TablePrinter } from './printer.js';

interface StorageClassWire extends KubeObject {
  provisioner?: string;
  reclaimPolicy?: string;
  volumeBindingMode?: string;
  allowVolumeExpansion?: boolean;
}

function printStorageClass(obj: KubeObject, now: Date): PrintedRow {
  const sc = obj as StorageClassWire;
  return {
    cells: [
      isDefaultClass(sc) ? `${nameOf(sc)} (default)` : nameOf(sc),
      sc.provisioner ?? '',
      sc.reclaimPolicy ?? 'Delete',
      sc.volumeBindingMode ?? 'Immediate',
      sc.allowVolumeExpansion === true,
      since(sc.metadata?.creationTimestamp, now),
    ],
  };
}

export const storageClassPrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Provisioner', 'string', 'The provisioner that makes volumes of this class.'),
    column('ReclaimPolicy', 'string', 'The reclaim policy of the volumes it makes.'),
    column(
      'VolumeBindingMode',
      'string',
      'When claims are bound and provisioned: Immediate or WaitForFirstConsumer.',
    ),
    column('AllowVolumeExpansion', 'string', 'Whether claims of this class may grow.'),
    AGE_COLUMN,
  ],
  row: printStorageClass,
};
