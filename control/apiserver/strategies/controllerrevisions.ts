/**
 * ControllerRevision (apps/v1): Kubernetes' pkg/registry/apps/controllerrevision/strategy.go
 * and ValidateControllerRevisionCreate / ValidateControllerRevisionUpdate
 * (pkg/apis/apps/validation). A revision is an immutable snapshot a DaemonSet or
 * StatefulSet controller writes of its pod template: `data` is required and never
 * changes; `revision` (>= 0) may be raised when an old template comes back (rollback).
 */
import { required } from '../../../api/meta/validation.js';
import { defineStrategy, immutable, nonNegative } from './meta.js';

/**
 * The ControllerRevision strategy: no status, no generation; `data` required (`data is
 * mandatory`), `revision` >= 0, and on update `data` immutable (`field is immutable`).
 */
export const controllerRevisionStrategy = defineStrategy({
  namespaced: true,
  validate(obj) {
    const errs = nonNegative(obj.revision, 'revision');
    if (obj.data === undefined || obj.data === null) errs.push(required('data', 'data is mandatory'));
    return errs;
  },
  validateUpdate: (obj, old) => immutable(obj.data, old.data, 'data'),
});
