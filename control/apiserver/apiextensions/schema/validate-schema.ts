/**
 * A CRD version's openAPIV3Schema checked, as apiextensions-apiserver does on create and
 * update: pkg/apis/apiextensions/validation/validation.go
 * (ValidateCustomResourceDefinitionOpenAPISchema: forbidden keywords, list and map types),
 * pkg/apiserver/schema/validation.go and complete.go (structural: a type at every level,
 * metadata restricted to name/generateName, no generic keywords inside allOf/anyOf/oneOf/
 * not), and pkg/apiserver/schema/defaulting/validation.go (each default pruned and valid).
 * Messages are upstream's; defaults are only checked once the schema is structural, as
 * upstream. `x-kubernetes-validations` (CEL) is refused: k8ts does not evaluate CEL rules.
 */
import {
  childPath,
  forbidden,
  indexPath,
  invalid,
  keyPath,
  notSupported,
  required,
  type FieldError,
} from '../../../../api/meta/field-errors.js';
import { pruneValue } from './prune.js';
import type { JSONSchemaProps } from './types.js';
import { compilePattern, isObject, validateOpenAPIValue } from './validate-value.js';

type Level = 'root' | 'item' | 'field';
const OPENAPI_V3_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

interface Ctx {
  insideResourceMeta: boolean;
  forbiddenDefaults?: string;
}

function apSchema(s: JSONSchemaProps): JSONSchemaProps | undefined {
  return isObject(s.additionalProperties) ? (s.additionalProperties as JSONSchemaProps) : undefined;
}

/** ValidateCustomResourceDefinitionOpenAPISchema with specStandardValidatorV3. */
function openAPIRules(s: JSONSchemaProps, p: string, ctx: Ctx, isRoot: boolean, errs: FieldError[]): void {
  if (s.type && !OPENAPI_V3_TYPES.includes(s.type))
    errs.push(notSupported(childPath(p, 'type'), s.type, OPENAPI_V3_TYPES));
  if (s.default !== undefined && ctx.forbiddenDefaults !== undefined)
    errs.push(forbidden(childPath(p, 'default'), `must not be set ${ctx.forbiddenDefaults}`));
  if (s.id) errs.push(forbidden(childPath(p, 'id'), 'id is not supported'));
  if (s.additionalItems !== undefined)
    errs.push(forbidden(childPath(p, 'additionalItems'), 'additionalItems is not supported'));
  if (s.patternProperties && Object.keys(s.patternProperties).length > 0)
    errs.push(forbidden(childPath(p, 'patternProperties'), 'patternProperties is not supported'));
  if (s.definitions && Object.keys(s.definitions).length > 0)
    errs.push(forbidden(childPath(p, 'definitions'), 'definitions is not supported'));
  if (s.dependencies !== undefined)
    errs.push(forbidden(childPath(p, 'dependencies'), 'dependencies is not supported'));
  if (s.$ref !== undefined) errs.push(forbidden(childPath(p, '$ref'), '$ref is not supported'));
  if (s.type === 'null')
    errs.push(forbidden(childPath(p, 'type'), 'type cannot be set to null, use nullable as an alternative'));
  if (Array.isArray(s.items))
    errs.push(forbidden(childPath(p, 'items'), 'items must be a schema object and not an array'));
  if (ctx.insideResourceMeta && s['x-kubernetes-embedded-resource'] === true)
    errs.push(
      forbidden(childPath(p, 'x-kubernetes-embedded-resource'), 'must not be used inside of resource meta'),
    );
  if (s.uniqueItems === true)
    errs.push(
      forbidden(
        childPath(p, 'uniqueItems'),
        'uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
      ),
    );
  const props = s.properties ?? {};
  if (s.additionalProperties !== undefined) {
    if (
      Object.keys(props).length > 0 &&
      (s.additionalProperties === false || isObject(s.additionalProperties))
    )
      errs.push(
        forbidden(
          childPath(p, 'additionalProperties'),
          'additionalProperties and properties are mutual exclusive',
        ),
      );
    const ap = apSchema(s);
    if (ap)
      openAPIRules(
        ap,
        childPath(p, 'additionalProperties'),
        ctx.insideResourceMeta
          ? { ...ctx, forbiddenDefaults: 'inside additionalProperties applying to object metadata' }
          : ctx,
        false,
        errs,
      );
  }
  for (const [k, ps] of Object.entries(props)) {
    let sub = ctx;
    if ((isRoot || s['x-kubernetes-embedded-resource'] === true) && META_FIELDS.has(k)) {
      sub = { ...sub, insideResourceMeta: true };
      if (isRoot) sub = { ...sub, forbiddenDefaults: `in top-level ${k}` };
    }
    openAPIRules(ps, keyPath(childPath(p, 'properties'), k), sub, false, errs);
  }
  if (s.not) openAPIRules(s.not, childPath(p, 'not'), ctx, false, errs);
  for (const key of ['allOf', 'oneOf', 'anyOf'] as const)
    (s[key] ?? []).forEach((x, i) => openAPIRules(x, indexPath(childPath(p, key), i), ctx, false, errs));
  if (s.items && !Array.isArray(s.items)) openAPIRules(s.items, childPath(p, 'items'), ctx, false, errs);
  if (s['x-kubernetes-preserve-unknown-fields'] === false)
    errs.push(
      invalid(childPath(p, 'x-kubernetes-preserve-unknown-fields'), false, 'must be true or undefined'),
    );
  const mapType = s['x-kubernetes-map-type'];
  if (mapType !== undefined && s.type !== 'object') {
    if (!s.type)
      errs.push(required(childPath(p, 'type'), 'must be object if x-kubernetes-map-type is specified'));
    else
      errs.push(
        invalid(childPath(p, 'type'), s.type, 'must be object if x-kubernetes-map-type is specified'),
      );
  }
  if (mapType !== undefined && mapType !== 'atomic' && mapType !== 'granular')
    errs.push(notSupported(childPath(p, 'x-kubernetes-map-type'), mapType, ['atomic', 'granular']));
  const listType = s['x-kubernetes-list-type'];
  const items = s.items && !Array.isArray(s.items) ? s.items : undefined;
  if (listType !== undefined && s.type !== 'array') {
    if (!s.type)
      errs.push(required(childPath(p, 'type'), 'must be array if x-kubernetes-list-type is specified'));
    else
      errs.push(
        invalid(childPath(p, 'type'), s.type, 'must be array if x-kubernetes-list-type is specified'),
      );
  } else if (listType === 'set' && items) {
    if (
      items.type === 'array' &&
      items['x-kubernetes-list-type'] !== undefined &&
      items['x-kubernetes-list-type'] !== 'atomic'
    )
      errs.push(
        invalid(
          childPath(p, 'items', 'x-kubernetes-list-type'),
          items['x-kubernetes-list-type'],
          'must be atomic as item of a list with x-kubernetes-list-type=set',
        ),
      );
    if (items.type === 'object' && items['x-kubernetes-map-type'] !== 'atomic')
      errs.push(
        invalid(
          childPath(p, 'items', 'x-kubernetes-map-type'),
          items['x-kubernetes-list-type'] ?? null,
          'must be atomic as item of a list with x-kubernetes-list-type=set',
        ),
      );
  }
  if (listType !== undefined && !['atomic', 'set', 'map'].includes(listType))
    errs.push(notSupported(childPath(p, 'x-kubernetes-list-type'), listType, ['atomic', 'set', 'map']));
  const mapKeys = s['x-kubernetes-list-map-keys'] ?? [];
  if (mapKeys.length > 0) {
    if (listType === undefined)
      errs.push(
        required(
          childPath(p, 'x-kubernetes-list-type'),
          'must be map if x-kubernetes-list-map-keys is non-empty',
        ),
      );
    else if (listType !== 'map')
      errs.push(
        invalid(
          childPath(p, 'x-kubernetes-list-type'),
          listType,
          'must be map if x-kubernetes-list-map-keys is non-empty',
        ),
      );
  }
  if (listType === 'map') {
    if (mapKeys.length === 0)
      errs.push(
        required(
          childPath(p, 'x-kubernetes-list-map-keys'),
          'must not be empty if x-kubernetes-list-type is map',
        ),
      );
    if (!s.items)
      errs.push(required(childPath(p, 'items'), 'must have a schema if x-kubernetes-list-type is map'));
    if (items && items.type !== 'object')
      errs.push(
        invalid(
          childPath(p, 'items', 'type'),
          items.type ?? '',
          "must be object if parent array's x-kubernetes-list-type is map",
        ),
      );
    if (items && items.type === 'object') {
      const seen = new Set<string>();
      for (const k of mapKeys) {
        const ks = items.properties?.[k];
        if (ks) {
          if (ks.type === 'array' || ks.type === 'object')
            errs.push(
              invalid(
                childPath(keyPath(childPath(p, 'items', 'properties'), k), 'type'),
                items.type,
                "must be a scalar type if parent array's x-kubernetes-list-type is map",
              ),
            );
        } else
          errs.push(
            invalid(
              childPath(p, 'x-kubernetes-list-map-keys'),
              mapKeys,
              'entries must all be names of item properties',
            ),
          );
        if (seen.has(k))
          errs.push(
            invalid(
              childPath(p, 'x-kubernetes-list-map-keys'),
              mapKeys,
              'must not contain duplicate entries',
            ),
          );
        seen.add(k);
      }
    }
  }
  if (items && (listType === 'set' || listType === 'map')) {
    if (items.nullable === true)
      errs.push(
        forbidden(
          childPath(p, 'items', 'nullable'),
          `cannot be nullable when x-kubernetes-list-type is ${listType}`,
        ),
      );
    if (listType === 'map') {
      const req = new Set(items.required ?? []);
      for (const k of mapKeys) {
        const ks = items.properties?.[k];
        if (!ks) continue;
        const kp = keyPath(childPath(p, 'items', 'properties'), k);
        if (!req.has(k) && ks.default === undefined)
          errs.push(
            required(
              childPath(kp, 'default'),
              'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property',
            ),
          );
        if (ks.nullable === true)
          errs.push(
            forbidden(
              childPath(kp, 'nullable'),
              'this property is in x-kubernetes-list-map-keys, so it cannot be nullable',
            ),
          );
      }
    }
  }
  const rules = s['x-kubernetes-validations'];
  if (rules !== undefined && rules.length > 0)
    errs.push(
      invalid(
        childPath(p, 'x-kubernetes-validations'),
        rules.map((r) => r.rule ?? ''),
        'CEL validation rules are not supported by k8ts; remove x-kubernetes-validations',
      ),
    );
}

function isIntOrStringAnyOf(alts: readonly JSONSchemaProps[] | undefined): boolean {
  return (
    alts !== undefined &&
    alts.length === 2 &&
    alts.every((a, i) => Object.keys(a).length === 1 && a.type === (i === 0 ? 'integer' : 'string'))
  );
}

/** validateNestedValueValidation: generic keywords are forbidden inside allOf/anyOf/oneOf/not. */
function nested(v: JSONSchemaProps | undefined, skipAnyOf: boolean, p: string, errs: FieldError[]): void {
  if (!v) return;
  valueValidation(v, skipAnyOf, false, p, errs);
  if (v.items && !Array.isArray(v.items)) nested(v.items, false, childPath(p, 'items'), errs);
  for (const [k, x] of Object.entries(v.properties ?? {}))
    nested(x, false, keyPath(childPath(p, 'properties'), k), errs);
  if (v.type) errs.push(forbidden(childPath(p, 'type'), 'must be empty to be structural'));
  if (v.additionalProperties !== undefined)
    errs.push(forbidden(childPath(p, 'additionalProperties'), 'must be undefined to be structural'));
  if (v.default !== undefined)
    errs.push(forbidden(childPath(p, 'default'), 'must be undefined to be structural'));
  if (v.title) errs.push(forbidden(childPath(p, 'title'), 'must be empty to be structural'));
  if (v.description) errs.push(forbidden(childPath(p, 'description'), 'must be empty to be structural'));
  if (v.nullable === true) errs.push(forbidden(childPath(p, 'nullable'), 'must be false to be structural'));
  for (const ext of [
    'x-kubernetes-preserve-unknown-fields',
    'x-kubernetes-embedded-resource',
    'x-kubernetes-int-or-string',
  ] as const)
    if (v[ext] === true) errs.push(forbidden(childPath(p, ext), 'must be false to be structural'));
  if ((v['x-kubernetes-list-map-keys'] ?? []).length > 0)
    errs.push(forbidden(childPath(p, 'x-kubernetes-list-map-keys'), 'must be empty to be structural'));
  if (v['x-kubernetes-list-type'] !== undefined)
    errs.push(forbidden(childPath(p, 'x-kubernetes-list-type'), 'must be undefined to be structural'));
  if (v['x-kubernetes-map-type'] !== undefined)
    errs.push(forbidden(childPath(p, 'x-kubernetes-map-type'), 'must be undefined to be structural'));
  if ((v['x-kubernetes-validations'] ?? []).length > 0)
    errs.push(forbidden(childPath(p, 'x-kubernetes-validations'), 'must be empty to be structural'));
  if (v.properties && Object.hasOwn(v.properties, 'metadata'))
    errs.push(
      forbidden(keyPath(childPath(p, 'properties'), 'metadata'), 'must not be specified in a nested context'),
    );
}

function valueValidation(
  s: JSONSchemaProps,
  skipAnyOf: boolean,
  skipFirstAllOfAnyOf: boolean,
  p: string,
  errs: FieldError[],
): void {
  if (!skipAnyOf)
    (s.anyOf ?? []).forEach((x, i) => nested(x, false, indexPath(childPath(p, 'anyOf'), i), errs));
  (s.allOf ?? []).forEach((x, i) =>
    nested(x, skipFirstAllOfAnyOf && i === 0, indexPath(childPath(p, 'allOf'), i), errs),
  );
  (s.oneOf ?? []).forEach((x, i) => nested(x, false, indexPath(childPath(p, 'oneOf'), i), errs));
  nested(s.not, false, childPath(p, 'not'), errs);
  if (s.pattern) {
    try {
      compilePattern(s.pattern);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      errs.push(
        invalid(childPath(p, 'pattern'), s.pattern, `must be a valid regular expression, but isn't: ${why}`),
      );
    }
  }
}

function metadataInvariants(
  m: JSONSchemaProps,
  checkMetadata: boolean,
  lvl: Level,
  p: string,
  errs: FieldError[],
): void {
  if (checkMetadata && m.type !== 'object')
    errs.push(invalid(childPath(p, 'type'), m.type ?? '', 'must be object'));
  if (lvl !== 'root') return;
  const rest: Record<string, unknown> = { ...m };
  delete rest.type;
  delete rest.default;
  delete rest.description;
  delete rest.title;
  const props = Object.keys(m.properties ?? {});
  const onlyNames = props.every((k) => k === 'name' || k === 'generateName');
  if (onlyNames) delete rest.properties;
  for (const k of Object.keys(rest)) if (rest[k] === undefined) delete rest[k];
  if (Object.keys(rest).length > 0)
    errs.push(
      forbidden(
        p,
        'must not specify anything other than name and generateName, but metadata is implicitly specified',
      ),
    );
}

/** validateStructuralInvariants. */
function invariants(s: JSONSchemaProps, lvl: Level, p: string, errs: FieldError[]): void {
  const items = s.items && !Array.isArray(s.items) ? s.items : undefined;
  if (s.type === 'array' && !items) errs.push(required(childPath(p, 'items'), 'must be specified'));
  if (items) invariants(items, 'item', childPath(p, 'items'), errs);
  for (const [k, ps] of Object.entries(s.properties ?? {}))
    invariants(ps, 'field', keyPath(childPath(p, 'properties'), k), errs);
  if (s.additionalProperties !== undefined) {
    if (lvl === 'root')
      errs.push(forbidden(childPath(p, 'additionalProperties'), 'must not be used at the root'));
    const ap = apSchema(s);
    if (ap) invariants(ap, 'field', childPath(p, 'additionalProperties'), errs);
  }
  const ios = s['x-kubernetes-int-or-string'] === true;
  const puf = s['x-kubernetes-preserve-unknown-fields'] === true;
  const emb = s['x-kubernetes-embedded-resource'] === true;
  if (ios && puf)
    errs.push(
      invalid(
        childPath(p, 'x-kubernetes-preserve-unknown-fields'),
        true,
        'must be false if x-kubernetes-int-or-string is true',
      ),
    );
  if (ios && emb)
    errs.push(
      invalid(
        childPath(p, 'x-kubernetes-embedded-resource'),
        true,
        'must be false if x-kubernetes-int-or-string is true',
      ),
    );
  const skipAnyOf = isIntOrStringAnyOf(s.anyOf);
  const skipFirstAllOfAnyOf = (s.allOf ?? []).length > 0 && isIntOrStringAnyOf(s.allOf![0]!.anyOf);
  valueValidation(s, skipAnyOf, skipFirstAllOfAnyOf, p, errs);
  const checkMetadata = lvl === 'root' || emb;
  if (emb && s.type !== 'object') {
    if (!s.type)
      errs.push(required(childPath(p, 'type'), 'must be object if x-kubernetes-embedded-resource is true'));
    else
      errs.push(
        invalid(childPath(p, 'type'), s.type, 'must be object if x-kubernetes-embedded-resource is true'),
      );
  } else if (!s.type && !ios && !puf) {
    const why =
      lvl === 'root'
        ? 'must not be empty at the root'
        : lvl === 'item'
          ? 'must not be empty for specified array items'
          : 'must not be empty for specified object fields';
    errs.push(required(childPath(p, 'type'), why));
  }
  if (emb && s.additionalProperties !== undefined)
    errs.push(
      forbidden(
        childPath(p, 'additionalProperties'),
        'must not be used if x-kubernetes-embedded-resource is set',
      ),
    );
  if (lvl === 'root' && s.type && s.type !== 'object')
    errs.push(invalid(childPath(p, 'type'), s.type, 'must be object at the root'));
  const props = s.properties ?? {};
  for (const k of ['kind', 'apiVersion'])
    if (Object.hasOwn(props, k) && checkMetadata && props[k]!.type !== 'string')
      errs.push(
        invalid(
          childPath(keyPath(childPath(p, 'properties'), k), 'type'),
          props[k]!.type ?? '',
          'must be string',
        ),
      );
  if (Object.hasOwn(props, 'metadata'))
    metadataInvariants(
      props.metadata!,
      checkMetadata,
      lvl,
      keyPath(childPath(p, 'properties'), 'metadata'),
      errs,
    );
  if (emb && !puf && Object.keys(props).length === 0)
    errs.push(
      required(
        childPath(p, 'properties'),
        'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields',
      ),
    );
}

/** validateStructuralCompleteness: what value validations name must exist in the structural part. */
function completeness(
  v: JSONSchemaProps,
  s: JSONSchemaProps | undefined,
  sPath: string,
  vPath: string,
  errs: FieldError[],
): void {
  const alts: [string, JSONSchemaProps][] = [];
  if (v.not) alts.push([childPath(vPath, 'not'), v.not]);
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const)
    (v[key] ?? []).forEach((x, i) => alts.push([indexPath(childPath(vPath, key), i), x]));
  for (const [vp, alt] of alts) nestedCompleteness(alt, s, sPath, vp, errs);
}

function nestedCompleteness(
  v: JSONSchemaProps,
  s: JSONSchemaProps | undefined,
  sPath: string,
  vPath: string,
  errs: FieldError[],
): void {
  if (!s) {
    errs.push(required(sPath, `because it is defined in ${vPath}`));
    return;
  }
  completeness(v, s, sPath, vPath, errs);
  if (v.items && !Array.isArray(v.items))
    nestedCompleteness(v.items, s.items, childPath(sPath, 'items'), childPath(vPath, 'items'), errs);
  for (const [k, x] of Object.entries(v.properties ?? {})) {
    const sp = keyPath(childPath(sPath, 'properties'), k);
    const vp = keyPath(childPath(vPath, 'properties'), k);
    if (!s.properties || !Object.hasOwn(s.properties, k))
      errs.push(required(sp, `because it is defined in ${vp}`));
    else nestedCompleteness(x, s.properties[k], sp, vp, errs);
  }
}

/** ValidateDefaults: each default pruned (no unknown fields) and valid against its schema. */
function defaults(s: JSONSchemaProps, p: string, insideMeta: boolean, errs: FieldError[]): void {
  if (s.default !== undefined && !insideMeta) {
    const dp = childPath(p, 'default');
    const copy = structuredClone(s.default);
    if (pruneValue(s, copy).length > 0) errs.push(invalid(dp, s.default, 'must not have unknown fields'));
    errs.push(...validateOpenAPIValue(s, s.default, dp));
  }
  if (s.items && !Array.isArray(s.items)) defaults(s.items, childPath(p, 'items'), insideMeta, errs);
  for (const [k, ps] of Object.entries(s.properties ?? {}))
    defaults(
      ps,
      keyPath(childPath(p, 'properties'), k),
      insideMeta || (s['x-kubernetes-embedded-resource'] === true && META_FIELDS.has(k)),
      errs,
    );
  const ap = apSchema(s);
  if (ap) defaults(ap, childPath(p, 'additionalProperties'), insideMeta, errs);
}

function fieldErrorText(e: FieldError): string {
  return `${e.field}: ${e.type} ${e.message}`;
}

/**
 * The CRD version's openAPIV3Schema checked (see the file's header): `schema` is
 * `spec.versions[i].schema.openAPIV3Schema` and `fldPath` its path, which prefixes every
 * error (`spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value:
 * must not be empty for specified object fields`). An empty list means the schema is
 * structural, its defaults pruned and valid, and it can be served.
 */
export function validateStructuralSchema(schema: JSONSchemaProps, fldPath: string): FieldError[] {
  const errs: FieldError[] = [];
  openAPIRules(schema, fldPath, { insideResourceMeta: false }, true, errs);
  const structural: FieldError[] = [];
  invariants(schema, 'root', fldPath, structural);
  completeness(schema, schema, fldPath, fldPath, structural);
  structural.sort((a, b) =>
    fieldErrorText(a) < fieldErrorText(b) ? -1 : fieldErrorText(a) > fieldErrorText(b) ? 1 : 0,
  );
  errs.push(...structural);
  if (errs.length === 0)
    defaults({ ...schema, 'x-kubernetes-embedded-resource': true }, fldPath, false, errs);
  return errs;
}
