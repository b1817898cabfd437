/**
 * PersistentVolumeClaims: NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS
 * VOLUMEATTRIBUTESCLASS AGE, wide VOLUMEMODE (printPersistentVolumeClaim). Capacity and
 * access modes are the bound volume's (status), empty while the claim has no volumeName;
 * the class is the beta annotation's, else storageClassName (GetPersistentVolumeClaimClass).
 */
import { Quantity } from '../../../api/meta/quantity.js';
import type { KubeObject } from '../../../api/object.js';
import { since } from './format.js';
import { AGE_COLUMN, NAME_COLUMN, column, nameOf, type PrintedRow, type TablePrinter } from './printer.js';

interface ClaimWire extends KubeObject {
  spec?: {
    volumeName?: string;
    storageClassName?: string;
    volumeMode?: string;
    volumeAttributesClassName?: string;
  };
  status?: { phase?: string; capacity?: { storage?: string }; accessModes?: string[] };
}

const SHORT_MODES: Readonly<Record<string, string>> = {
  ReadWriteOnce: 'RWO',
  ReadOnlyMany: 'ROX',
  ReadWriteMany: 'RWX',
  ReadWriteOncePod: 'RWOP',
};

/** GetAccessModesAsString: the short forms, each once, in Kubernetes' order (RWO, ROX, RWX, RWOP). */
export function accessModes(modes: readonly string[] | undefined): string {
  const have = new Set(modes ?? []);
  return Object.entries(SHORT_MODES)
    .filter(([m]) => have.has(m))
    .map(([, s]) => s)
    .join(',');
}

/** A quantity as Quantity.String() prints it (`0` when absent, the text as given when it does not parse). */
export function quantityString(v: string | undefined): string {
  if (v === undefined) return '0';
  try {
    return Quantity.parse(v).toString();
  } catch {
    return v;
  }
}

function printClaim(obj: KubeObject, now: Date): PrintedRow {
  const pvc = obj as ClaimWire;
  const spec = pvc.spec ?? {};
  const status = pvc.status ?? {};
  const bound = !!spec.volumeName;
  return {
    cells: [
      nameOf(pvc),
      pvc.metadata?.deletionTimestamp ? 'Terminating' : (status.phase ?? ''),
      spec.volumeName ?? '',
      bound ? quantityString(status.capacity?.storage) : '',
      bound ? accessModes(status.accessModes) : '',
      pvc.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? spec.storageClassName ?? '',
      spec.volumeAttributesClassName ?? '<unset>',
      since(pvc.metadata?.creationTimestamp, now),
      spec.volumeMode ?? '<unset>',
    ],
  };
}

export const persistentVolumeClaimPrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Status', 'string', 'The phase of the claim.'),
    column('Volume', 'string', 'The PersistentVolume bound to the claim.'),
    column('Capacity', 'string', 'The capacity of the bound volume.'),
    column('Access Modes', 'string', 'The access modes of the bound volume.'),
    column('StorageClass', 'string', 'The StorageClass the claim asks for.'),
    column('VolumeAttributesClass', 'string', 'The VolumeAttributesClass of the claim.'),
    AGE_COLUMN,
    column('VolumeMode', 'string', 'Block or Filesystem.', { priority: 1 }),
  ],
  row: printClaim,
};
