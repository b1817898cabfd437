/**
 * ControllerRevisions: NAME CONTROLLER REVISION AGE (printControllerRevision). CONTROLLER
 * is the controller owner as `<kind>.<group>/<name>` in lower-case kind and group
 * (`daemonset.apps/web`), `<none>` without one.
 */
import type { KubeObject } from '../../../api/object.js';
import { since } from './format.js';
import { AGE_COLUMN, NAME_COLUMN, column, nameOf, type PrintedRow, type TablePrinter } from './printer.js';

/** formatResourceName(GroupKind, name, withKind=true) of the controller ownerReference. */
function controllerOf(obj: KubeObject): string {
  const ref = obj.metadata?.ownerReferences?.find((r) => r.controller === true);
  if (!ref) return '<none>';
  const slash = ref.apiVersion.indexOf('/');
  const group = slash < 0 ? '' : ref.apiVersion.slice(0, slash);
  const kind = group === '' ? ref.kind : `${ref.kind}.${group}`;
  return kind === '' ? ref.name : `${kind.toLowerCase()}/${ref.name}`;
}

function printControllerRevision(obj: KubeObject, now: Date): PrintedRow {
  const revision = typeof obj.revision === 'number' ? obj.revision : 0;
  return {
    cells: [nameOf(obj), controllerOf(obj), revision, since(obj.metadata?.creationTimestamp, now)],
  };
}

export const controllerRevisionPrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Controller', 'string', 'Controller of the object'),
    column('Revision', 'integer', 'Revision of the ControllerRevision'),
    AGE_COLUMN,
  ],
  row: printControllerRevision,
};
