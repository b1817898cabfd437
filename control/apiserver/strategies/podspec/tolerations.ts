/** Tolerations and taint effects (ValidateTolerations, validateTaintEffect); nodes share the latter. */
import type { FieldError } from '../../../../api/meta/validation.js';
import {
  childPath,
  indexPath,
  invalid,
  isValidLabelValue,
  notSupported,
} from '../../../../api/meta/validation.js';
import { eachObj, qualifiedName, str } from '../meta.js';
import { enumField } from './fields.js';

/**
 * ValidateTolerations: key a qualified name (or empty with operator Exists), operator
 * Equal/Exists (value a label value; none with Exists), tolerationSeconds only with
 * effect NoExecute, effect NoSchedule/PreferNoSchedule/NoExecute when set.
 */
export function validateTolerations(tolerations: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  eachObj(tolerations, (t, i) => {
    const p = indexPath(field, i);
    const key = str(t.key);
    const operator = str(t.operator);
    if (key !== '') errs.push(...qualifiedName(key, childPath(p, 'key')));
    if (key === '' && operator !== 'Exists') {
      errs.push(
        invalid(
          childPath(p, 'operator'),
          operator,
          'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        ),
      );
    }
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null && t.effect !== 'NoExecute') {
      errs.push(
        invalid(
          childPath(p, 'effect'),
          str(t.effect),
          "effect must be 'NoExecute' when `tolerationSeconds` is set",
        ),
      );
    }
    switch (operator) {
      case '':
      case 'Equal': {
        const msgs = isValidLabelValue(str(t.value));
        if (msgs.length > 0) errs.push(invalid(childPath(p, 'operator'), str(t.value), msgs.join(';')));
        break;
      }
      case 'Exists':
        if (str(t.value) !== '')
          errs.push(invalid(childPath(p, 'operator'), t, "value must be empty when `operator` is 'Exists'"));
        break;
      default:
        errs.push(notSupported(childPath(p, 'operator'), operator, ['Equal', 'Exists']));
    }
    if (str(t.effect) !== '') errs.push(...taintEffect(t.effect, childPath(p, 'effect')));
  });
  return errs;
}

/** validateTaintEffect: NoSchedule, PreferNoSchedule or NoExecute. */
export function taintEffect(effect: unknown, field: string): FieldError[] {
  return enumField(effect, field, ['NoSchedule', 'PreferNoSchedule', 'NoExecute']);
}
