/**
 * Decides which EndpointSlices of a Service to create, update and delete (Kubernetes'
 * endpointslice Reconciler.reconcileByAddressType / reconcileByPortMapping / finalize),
 * as a pure function of the desired endpoints and the existing slices:
 *
 * 1. Endpoints are grouped by the set of ports they serve; each group has its own slices.
 * 2. In each existing slice, endpoints no longer desired are dropped and changed ones
 *    replaced; a slice left empty is deleted, a changed one updated (also when the
 *    Service's labels changed), the rest left untouched.
 * 3. Remaining new endpoints first fill the slices being updated anyway (fullest first),
 *    then one untouched slice that can take them all (the one closest to full), else new
 *    slices of at most `maxEndpointsPerSlice`.
 * 4. Slices of port sets no longer served, of another address type, or owned by another
 *    Service (an old one of the same name) are deleted; creates reuse slices about to be
 *    deleted (as updates) where possible.
 * 5. A Service with no endpoints keeps one empty "placeholder" slice.
 *
 * Only IPv4 slices are produced (k8ts' pods have IPv4 addresses).
 */
import type { Endpoint, EndpointPort, EndpointSlice, Service } from '../../../api/types.js';
import {
  endpointKey,
  endpointsEqualBeyondKey,
  newEndpointSlice,
  ownedBy,
  portMapKey,
  sliceLabels,
} from './endpoint.js';

/** The endpoints a Service should have for one port set. */
export interface DesiredPortSet {
  ports: EndpointPort[];
  /** By endpointKey(); filled in this order. */
  endpoints: Map<string, Endpoint>;
}

/** What to write. Slices in `update` and `create` are new objects; inputs are never modified. */
export interface SlicePlan {
  create: EndpointSlice[];
  update: EndpointSlice[];
  delete: EndpointSlice[];
}

/** Adds `ep` serving `ports` to `desired` (keyed by portMapKey). */
export function addDesired(desired: Map<string, DesiredPortSet>, ports: EndpointPort[], ep: Endpoint): void {
  const pk = portMapKey(ports);
  let set = desired.get(pk);
  if (!set) desired.set(pk, (set = { ports, endpoints: new Map() }));
  set.endpoints.set(endpointKey(ep), ep);
}

/**
 * The plan that makes `existing` (the slices this controller manages for `svc`, from the
 * cache) hold exactly `desired`. See the file comment.
 */
export function planSlices(
  svc: Service,
  desired: ReadonlyMap<string, DesiredPortSet>,
  existing: readonly EndpointSlice[],
  maxEndpointsPerSlice: number,
): SlicePlan {
  const plan: SlicePlan = { create: [], update: [], delete: [] };
  const ipv4 = existing.filter((s) => s.addressType === 'IPv4');
  plan.delete.push(...existing.filter((s) => s.addressType !== 'IPv4'));

  const existingByPorts = new Map<string, EndpointSlice[]>();
  const toDelete: EndpointSlice[] = [];
  for (const slice of ipv4) {
    if (!ownedBy(slice, svc)) {
      toDelete.push(slice);
      continue;
    }
    const pk = portMapKey(slice.ports);
    existingByPorts.set(pk, [...(existingByPorts.get(pk) ?? []), slice]);
  }

  for (const [pk, set] of desired) {
    const r = planPortSet(svc, existingByPorts.get(pk) ?? [], set, maxEndpointsPerSlice);
    plan.create.push(...r.create);
    plan.update.push(...r.update);
    toDelete.push(...r.delete);
  }
  for (const [pk, slices] of existingByPorts) if (!desired.has(pk)) toDelete.push(...slices);

  if (ipv4.length === toDelete.length && plan.create.length === 0) {
    const placeholder = newEndpointSlice(svc, []);
    if (toDelete.length === 1 && isPlaceholderOf(toDelete[0]!, placeholder)) toDelete.length = 0;
    else plan.create.push(placeholder);
  }

  // Turn creates into updates of slices that would be deleted: fewer writes, stable names.
  for (let i = 0; i < toDelete.length && plan.create.length > 0;) {
    const old = toDelete[i]!;
    if (ownedBy(old, svc)) {
      const slice = plan.create.pop()!;
      slice.metadata = { ...structuredClone(old.metadata), labels: slice.metadata.labels };
      plan.update.push(slice);
      toDelete.splice(i, 1);
    } else i++;
  }
  plan.delete.push(...toDelete);
  return plan;
}

/** True when `slice` is, as far as the controller cares, the same as the empty `placeholder`. */
function isPlaceholderOf(slice: EndpointSlice, placeholder: EndpointSlice): boolean {
  const sameMap = (a: Record<string, string> = {}, b: Record<string, string> = {}) =>
    Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);
  const refs = (s: EndpointSlice) => JSON.stringify(s.metadata.ownerReferences ?? []);
  return (
    slice.metadata.namespace === placeholder.metadata.namespace &&
    sameMap(slice.metadata.labels, placeholder.metadata.labels) &&
    refs(slice) === refs(placeholder) &&
    slice.addressType === placeholder.addressType &&
    (slice.endpoints ?? []).length === 0 &&
    (slice.ports ?? []).length === 0
  );
}

function planPortSet(
  svc: Service,
  existing: readonly EndpointSlice[],
  set: DesiredPortSet,
  max: number,
): SlicePlan {
  const remaining = new Map(set.endpoints);
  const byName = new Map<string, EndpointSlice>();
  const unchanged = new Set<string>();
  const toUpdate = new Set<string>();
  const toDelete = new Set<string>();

  for (const slice of existing) {
    const name = slice.metadata.name!;
    byName.set(name, slice);
    const kept: Endpoint[] = [];
    let endpointUpdated = false;
    for (const ep of slice.endpoints ?? []) {
      const key = endpointKey(ep);
      const want = remaining.get(key);
      if (!want) continue;
      kept.push(want);
      if (!endpointsEqualBeyondKey(want, ep)) endpointUpdated = true;
      remaining.delete(key);
    }
    const { labels, changed: labelsChanged } = sliceLabels(slice.metadata.labels, svc);
    if (endpointUpdated || kept.length !== (slice.endpoints ?? []).length) {
      if (kept.length === 0) toDelete.add(name);
      else {
        byName.set(name, {
          ...structuredClone(slice),
          endpoints: kept,
          metadata: { ...structuredClone(slice.metadata), labels },
        });
        toUpdate.add(name);
      }
    } else if (labelsChanged) {
      byName.set(name, {
        ...structuredClone(slice),
        metadata: { ...structuredClone(slice.metadata), labels },
      });
      toUpdate.add(name);
    } else unchanged.add(name);
  }

  const take = (slice: EndpointSlice) => {
    for (const [key, ep] of remaining) {
      if (slice.endpoints.length >= max) break;
      slice.endpoints.push(ep);
      remaining.delete(key);
    }
  };

  if (remaining.size > 0 && toUpdate.size > 0) {
    const fullestFirst = [...toUpdate]
      .map((n) => byName.get(n)!)
      .sort((a, b) => b.endpoints.length - a.endpoints.length);
    for (const slice of fullestFirst) take(slice);
  }

  const create: EndpointSlice[] = [];
  while (remaining.size > 0) {
    let slice: EndpointSlice | undefined;
    if (remaining.size < max && unchanged.size > 0) {
      const fit = sliceToFill(
        [...unchanged].map((n) => byName.get(n)!),
        remaining.size,
        max,
      );
      if (fit) {
        slice = structuredClone(fit);
        slice.endpoints ??= [];
        byName.set(slice.metadata.name!, slice);
      }
    }
    slice ??= newEndpointSlice(svc, set.ports);
    take(slice);
    if (slice.metadata.name) {
      toUpdate.add(slice.metadata.name);
      unchanged.delete(slice.metadata.name);
    } else create.push(slice);
  }

  return {
    create,
    update: [...toUpdate].map((n) => byName.get(n)!),
    delete: [...toDelete].map((n) => byName.get(n)!),
  };
}

/** The slice that ends closest to full when `n` endpoints are added to it, if one has room (getSliceToFill). */
function sliceToFill(slices: readonly EndpointSlice[], n: number, max: number): EndpointSlice | undefined {
  let best: EndpointSlice | undefined;
  let bestDiff = max;
  for (const s of slices) {
    const diff = max - (n + (s.endpoints ?? []).length);
    if (diff >= 0 && diff < bestDiff) {
      best = s;
      bestDiff = diff;
      if (diff === 0) break;
    }
  }
  return best;
}
