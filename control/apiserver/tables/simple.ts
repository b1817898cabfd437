/**
 * Kinds whose row is a field or two next to NAME and AGE: Namespaces (STATUS),
 * ConfigMaps (DATA: keys of data and binaryData), Secrets (TYPE, DATA), ServiceAccounts
 * (SECRETS) and Leases (HOLDER), as Kubernetes prints them.
 */
import type { KubeObject } from '../../../api/object.js';
import { since } from './format.js';
import { AGE_COLUMN, NAME_COLUMN, column, nameOf, type TablePrinter } from './printer.js';

function keyCount(m: unknown): number {
  return m && typeof m === 'object' ? Object.keys(m).length : 0;
}

function age(obj: KubeObject, now: Date): string {
  return since(obj.metadata?.creationTimestamp, now);
}

interface NamespaceWire extends KubeObject {
  status?: { phase?: string };
}

export const namespacePrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Status', 'string', 'Active, or Terminating while being deleted.'),
    AGE_COLUMN,
  ],
  row: (obj, now) => ({ cells: [nameOf(obj), (obj as NamespaceWire).status?.phase ?? '', age(obj, now)] }),
};

export const configMapPrinter: TablePrinter = {
  columns: [NAME_COLUMN, column('Data', 'string', 'The number of keys in data and binaryData.'), AGE_COLUMN],
  row: (obj, now) => ({ cells: [nameOf(obj), keyCount(obj.data) + keyCount(obj.binaryData), age(obj, now)] }),
};

export const secretPrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Type', 'string', 'The type of the secret, e.g. Opaque.'),
    column('Data', 'string', 'The number of keys in data.'),
    AGE_COLUMN,
  ],
  row: (obj, now) => ({
    cells: [nameOf(obj), typeof obj.type === 'string' ? obj.type : '', keyCount(obj.data), age(obj, now)],
  }),
};

export const serviceAccountPrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Secrets', 'string', 'The number of secrets listed by the account.'),
    AGE_COLUMN,
  ],
  row: (obj, now) => ({
    cells: [nameOf(obj), Array.isArray(obj.secrets) ? obj.secrets.length : 0, age(obj, now)],
  }),
};

interface LeaseWire extends KubeObject {
  spec?: { holderIdentity?: string | null };
}

export const leasePrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Holder', 'string', 'The identity of the current holder of the lease.'),
    AGE_COLUMN,
  ],
  row: (obj, now) => ({ cells: [nameOf(obj), (obj as LeaseWire).spec?.holderIdentity ?? '', age(obj, now)] }),
};
