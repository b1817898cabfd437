/**
 * Node (core/v1): Kubernetes' pkg/registry/core/node/strategy.go, SetDefaults_NodeStatus
 * and ValidateNode / ValidateNodeUpdate.
 */
import type { FieldError } from '../../../api/meta/validation.js';
import {
  childPath,
  duplicate,
  forbidden,
  indexPath,
  invalid,
  isIPv6String,
  isValidCIDR,
  isValidLabelValue,
} from '../../../api/meta/validation.js';
import type { KubeObject } from '../../../api/object.js';
import type { Obj } from './meta.js';
import {
  asObj,
  boolString,
  canonicalizeResourceList,
  clone,
  defineStrategy,
  eachObj,
  isObj,
  list,
  qualifiedName,
  quantityProblem,
  section,
  semanticEqual,
  str,
  tryQuantity,
} from './meta.js';
import { taintEffect } from './podspec/index.js';

/**
 * Node defaults: `status.allocatable` = `status.capacity` when unset (SetDefaults_NodeStatus),
 * canonical quantities, and `spec.podCIDR` / `spec.podCIDRs` mirroring each other (v1
 * conversion; a differing podCIDR wins).
 */
function defaultNode(obj: KubeObject): void {
  const spec = section(obj, 'spec');
  const podCIDR = str(spec.podCIDR);
  const cidrs = list(spec.podCIDRs);
  if (podCIDR !== '' && (cidrs.length === 0 || cidrs[0] !== podCIDR)) spec.podCIDRs = [podCIDR];
  else if (podCIDR === '' && typeof cidrs[0] === 'string' && cidrs[0] !== '') spec.podCIDR = cidrs[0];
  const status = asObj(obj.status);
  if (!status) return;
  if (status.allocatable === undefined && isObj(status.capacity)) status.allocatable = clone(status.capacity);
  canonicalizeResourceList(status, 'capacity');
  canonicalizeResourceList(status, 'allocatable');
}

/** validateNodeTaints: key a qualified name, value a label value, effect required, unique key+effect. */
function validateTaints(taints: unknown): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  eachObj(taints, (t, i) => {
    const p = indexPath('spec.taints', i);
    errs.push(...qualifiedName(str(t.key), childPath(p, 'key')));
    const msgs = isValidLabelValue(str(t.value));
    if (msgs.length > 0) errs.push(invalid(childPath(p, 'value'), str(t.value), msgs.join(';')));
    errs.push(...taintEffect(t.effect, childPath(p, 'effect')));
    const key = `${str(t.effect)}\u0000${str(t.key)}`;
    if (seen.has(key))
      errs.push({ ...duplicate(p, t), message: 'taints must be unique by key and effect pair' });
    seen.add(key);
  });
  return errs;
}

/** ValidateNodeResources: capacity and allocatable quantities parse and are >= 0. */
function validateResources(status: Obj): FieldError[] {
  const errs: FieldError[] = [];
  for (const list of ['capacity', 'allocatable']) {
    for (const [name, raw] of Object.entries(asObj(status[list]) ?? {})) {
      const p = `status.${list}.${name}`;
      const problem = quantityProblem(raw);
      if (problem !== undefined) errs.push(invalid(p, raw ?? null, problem));
      else if (tryQuantity(raw)!.sign < 0)
        errs.push(invalid(p, String(raw), 'must be greater than or equal to 0'));
    }
  }
  return errs;
}

/** ValidateNode: taints, resources, podCIDRs (valid CIDRs, one per family, no duplicates). */
function validateNode(obj: KubeObject): FieldError[] {
  const spec = asObj(obj.spec) ?? {};
  const errs = [...validateTaints(spec.taints), ...validateResources(asObj(obj.status) ?? {})];
  const cidrs = list(spec.podCIDRs).map(str);
  cidrs.forEach((c, i) => errs.push(...isValidCIDR(indexPath('spec.podCIDRs', i), c)));
  if (cidrs.length > 1) {
    const v6 = (cidr: string) => isIPv6String(cidr.split('/')[0]!);
    if (cidrs.length > 2 || v6(cidrs[0]!) === v6(cidrs[1]!)) {
      errs.push(invalid('spec.podCIDRs', cidrs, 'may specify no more than one CIDR for each IP family'));
    }
    cidrs.forEach((c, i) => {
      if (cidrs.indexOf(c) !== i) errs.push(duplicate(indexPath('spec.podCIDRs', i), c));
    });
  }
  return errs;
}

/**
 * ValidateNodeUpdate: podCIDRs and providerID may only be set once (`node updates may not
 * change podCIDR except from "" to valid`), resources valid, status addresses unique.
 */
function validateNodeUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const spec = asObj(obj.spec) ?? {};
  const oldSpec = asObj(old.spec) ?? {};
  const errs = validateResources(asObj(obj.status) ?? {});
  const seen: unknown[] = [];
  eachObj(asObj(obj.status)?.addresses, (a, i) => {
    if (seen.some((s) => semanticEqual(s, a))) errs.push(duplicate(indexPath('status.addresses', i), a));
    seen.push(a);
  });
  const oldCIDRs = list(oldSpec.podCIDRs);
  if (oldCIDRs.length > 0 && !semanticEqual(oldCIDRs, list(spec.podCIDRs))) {
    errs.push(forbidden('spec.podCIDRs', 'node updates may not change podCIDR except from "" to valid'));
  }
  if (str(oldSpec.providerID) !== '' && str(oldSpec.providerID) !== str(spec.providerID)) {
    errs.push(forbidden('spec.providerID', 'node updates may not change providerID except from "" to valid'));
  }
  if (str(spec.externalID) !== str(oldSpec.externalID))
    errs.push(forbidden('spec.externalID', 'may not be updated'));
  return errs;
}

/**
 * The Node strategy's fieldIsDeprecatedWarnings (pkg/registry/core/node/strategy.go), on
 * create and update: `spec.configSource` and `spec.externalID` set.
 */
export function nodeWarnings(obj: KubeObject): string[] {
  const spec = asObj(obj.spec) ?? {};
  const out: string[] = [];
  if (spec.configSource !== undefined && spec.configSource !== null)
    out.push('spec.configSource: the feature is removed');
  if (str(spec.externalID) !== '')
    out.push('spec.externalID: this field is deprecated, and is unused by Kubernetes');
  return out;
}

/**
 * The Node strategy: the kubelet registers a Node with its status, so status is kept on
 * create (Kubernetes: "Nodes allow *all* fields, including status, to be set on create")
 * and is kept from the old object on updates of the main resource. Field selector:
 * `spec.unschedulable` (cluster-scoped: no metadata.namespace).
 */
export const nodeStrategy = defineStrategy({
  namespaced: false,
  prepareForUpdate(obj, old) {
    if (old.status === undefined) delete obj.status;
    else obj.status = clone(old.status);
  },
  defaults: defaultNode,
  validate: validateNode,
  validateUpdate: validateNodeUpdate,
  validateStatusUpdate: (obj, old) => [...validateNode(obj), ...validateNodeUpdate(obj, old)],
  warningsOnCreate: nodeWarnings,
  warningsOnUpdate: (obj) => nodeWarnings(obj),
  fields: (obj) => ({ 'spec.unschedulable': boolString(asObj(obj.spec)?.unschedulable) }),
});
