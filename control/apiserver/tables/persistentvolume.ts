/**
 * PersistentVolumes: NAME CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS
 * VOLUMEATTRIBUTESCLASS REASON AGE, wide VOLUMEMODE (printPersistentVolume). STATUS is
 * `Terminating` once the volume is being deleted; CLAIM is `<namespace>/<name>` of the
 * claimRef; the class is the beta annotation's, else storageClassName
 * (GetPersistentVolumeClass); an unset volume attributes class or volume mode prints `<unset>`.
 */
import type { KubeObject } from '../../../api/object.js';
import { since } from './format.js';
import { accessModes, quantityString } from './persistentvolumeclaim.js';
import { AGE_COLUMN, NAME_COLUMN, column, nameOf, type PrintedRow, type TablePrinter } from './printer.js';

interface VolumeWire extends KubeObject {
  spec?: {
    capacity?: { storage?: string };
    accessModes?: string[];
    persistentVolumeReclaimPolicy?: string;
    claimRef?: { namespace?: string; name?: string };
    storageClassName?: string;
    volumeAttributesClassName?: string;
    volumeMode?: string;
  };
  status?: { phase?: string; reason?: string };
}

function printVolume(obj: KubeObject, now: Date): PrintedRow {
  const pv = obj as VolumeWire;
  const spec = pv.spec ?? {};
  const ref = spec.claimRef;
  return {
    cells: [
      nameOf(pv),
      quantityString(spec.capacity?.storage),
      accessModes(spec.accessModes),
      spec.persistentVolumeReclaimPolicy ?? '',
      pv.metadata?.deletionTimestamp ? 'Terminating' : (pv.status?.phase ?? ''),
      ref ? `${ref.namespace ?? ''}/${ref.name ?? ''}` : '',
      pv.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? spec.storageClassName ?? '',
      spec.volumeAttributesClassName ?? '<unset>',
      pv.status?.reason ?? '',
      since(pv.metadata?.creationTimestamp, now),
      spec.volumeMode ?? '<unset>',
    ],
  };
}

export const persistentVolumePrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Capacity', 'string', "The volume's capacity (spec.capacity.storage)."),
    column('Access Modes', 'string', 'The ways the volume can be mounted.'),
    column('Reclaim Policy', 'string', 'What happens to the volume when its claim is released.'),
    column('Status', 'string', 'The phase of the volume.'),
    column('Claim', 'string', 'The claim bound to the volume (namespace/name).'),
    column('StorageClass', 'string', 'StorageClass of the pv'),
    column('VolumeAttributesClass', 'string', 'VolumeAttributesClass of the pv'),
    column('Reason', 'string', 'Why the volume is in its phase, in a word.'),
    AGE_COLUMN,
    column('VolumeMode', 'string', 'Block or Filesystem.', { priority: 1 }),
  ],
  row: printVolume,
};
