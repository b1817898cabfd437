/**
 * A CRD version's `selectableFields` checked, as apiextensions-apiserver's
 * validateSelectableFields does (apis/apiextensions/validation/validation.go, with the
 * field-path walk of apiserver/schema/cel's ValidFieldPath, array notation off): each
 * `jsonPath` is a `.a.b` path through the version's schema's properties (or
 * additionalProperties) to a string, boolean or integer field outside metadata, listed
 * once; at most 8 of them. Messages are upstream's.
 */
import {
  childPath,
  duplicate,
  indexPath,
  invalid,
  keyPath,
  required,
  type FieldError,
} from '../../../api/meta/field-errors.js';
import type { JSONSchemaProps } from './schema/index.js';
import type { SelectableField } from './types.js';

/** How many selectable fields a version may have (maxSelectableFields). */
export const MAX_SELECTABLE_FIELDS = 8;

const SELECTABLE_TYPES = new Set(['string', 'boolean', 'integer']);

/**
 * ValidFieldPath over `schema`: the field path `jsonPath` names (`spec.color`, a map key as
 * `spec.labels[k]`) and the schema it reaches, or upstream's error text.
 */
function walk(
  jsonPath: string,
  schema: JSONSchemaProps,
): { path: string; schema: JSONSchemaProps } | { error: string } {
  // Tokens: the delimiters '.', '[' and ']' alone, everything between them as one token.
  const tokens = jsonPath.match(/[.[\]]|[^.[\]]+/g) ?? [];
  let s: JSONSchemaProps | undefined = schema;
  let path = '';
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i]!;
    if (tok === '[') return { error: 'array notation is not allowed' };
    if (tok !== '.') return { error: `expected [ or . but got: ${tok}` };
    const name = tokens[++i];
    if (name === undefined) return { error: 'unexpected end of JSON path' };
    if (s?.properties !== undefined) {
      path = childPath(path, name);
      if (!Object.hasOwn(s.properties, name)) return { error: 'does not refer to a valid field' };
      s = s.properties[name];
    } else if (s?.additionalProperties !== undefined) {
      path = keyPath(path, name);
      s = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
    } else {
      return { error: 'does not refer to a valid field' };
    }
  }
  return { path, schema: s ?? {} };
}

/**
 * The errors of `fields` (a version's selectableFields) against its `schema`, under
 * `fldPath` (`spec.versions[0].selectableFields`); [] when they are fine.
 */
export function validateSelectableFields(
  fields: readonly SelectableField[],
  schema: JSONSchemaProps,
  fldPath: string,
): FieldError[] {
  const errs: FieldError[] = [];
  const unique = new Set<string>();
  fields.forEach((f, i) => {
    const p = childPath(indexPath(fldPath, i), 'jsonPath');
    const jsonPath = typeof f.jsonPath === 'string' ? f.jsonPath : '';
    if (jsonPath === '') {
      errs.push(required(p, ''));
      return;
    }
    const found = walk(jsonPath, schema);
    if ('error' in found) {
      errs.push(invalid(p, jsonPath, `is an invalid path: ${found.error}`));
      return;
    }
    if (found.path.split(/[.[]/)[0] === 'metadata')
      errs.push(invalid(p, jsonPath, 'must not point to fields in metadata'));
    if (!SELECTABLE_TYPES.has(found.schema.type ?? ''))
      errs.push(
        invalid(
          p,
          jsonPath,
          'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
        ),
      );
    if (unique.has(found.path)) errs.push(duplicate(p, jsonPath));
    else unique.add(found.path);
  });
  if (unique.size > MAX_SELECTABLE_FIELDS)
    errs.push(invalid(fldPath, unique.size, `must have at most ${MAX_SELECTABLE_FIELDS} items`));
  return errs;
}
