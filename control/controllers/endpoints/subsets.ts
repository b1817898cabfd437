/**
 * The pure part of the Endpoints controller: the subsets a Service's Endpoints should have
 * (syncService's loop + RepackSubsets), their comparison ignoring pods' resourceVersions,
 * and truncation to 1000 addresses (pkg/controller/endpoint, pkg/api/v1/endpoints).
 */
import { isDeepStrictEqual } from 'node:util';
import { isPodReady } from '../../../api/podutil.js';
import type { EndpointAddress, EndpointPort, EndpointSubset, Pod, Service } from '../../../api/types.js';
import {
  findPort,
  isHeadlessService,
  podIPv4,
  podReference,
  servicePortProtocol,
  shouldPodBeInEndpoints,
  shouldSetHostname,
} from '../endpoints-common.js';

/** Most addresses an Endpoints object carries (maxCapacity); beyond, it is truncated and annotated. */
export const MAX_ENDPOINTS_CAPACITY = 1000;

/** Annotation set on a truncated Endpoints object (v1.EndpointsOverCapacity). */
export const ANNOTATION_OVER_CAPACITY = 'endpoints.kubernetes.io/over-capacity';

/** One address serving one port (or no port: a headless Service without ports), ready or not. */
interface AddressPort {
  address: EndpointAddress;
  ready: boolean;
  port: EndpointPort | undefined;
}

/** The address of a pod in a Service's Endpoints (podToEndpointAddressForService + hostname). */
export function podEndpointAddress(pod: Pod, svc: Service): EndpointAddress | undefined {
  const ip = podIPv4(pod);
  if (!ip) return undefined;
  const address: EndpointAddress = { ip };
  if (shouldSetHostname(pod, svc)) address.hostname = pod.spec.hostname!;
  if (pod.spec.nodeName) address.nodeName = pod.spec.nodeName;
  address.targetRef = podReference(pod);
  return address;
}

/**
 * The subsets of the Endpoints of `svc` given the pods its selector matches. A pod is
 * listed when it has an IP and is neither terminal nor terminating (terminating pods too
 * with publishNotReadyAddresses); it is ready when its Ready condition is True, or always
 * with publishNotReadyAddresses. Each Service port resolves per pod (findPort): a pod
 * lacking a named port is left out of that port, so pods with different port sets end up
 * in different subsets. A headless Service without ports lists the addresses alone.
 * The result is packed and sorted (repackSubsets), so equal inputs give equal outputs.
 */
export function desiredSubsets(svc: Service, pods: readonly Pod[]): EndpointSubset[] {
  const publishNotReady = svc.spec.publishNotReadyAddresses === true;
  const entries: AddressPort[] = [];
  const ports = svc.spec.ports ?? [];
  for (const pod of pods) {
    if (!shouldPodBeInEndpoints(pod, publishNotReady)) continue;
    const address = podEndpointAddress(pod, svc);
    if (!address) continue;
    const ready = publishNotReady || isPodReady(pod);
    if (ports.length === 0) {
      if (isHeadlessService(svc)) entries.push({ address, ready, port: undefined });
      continue;
    }
    for (const sp of ports) {
      const n = findPort(pod, sp);
      if (n === undefined) continue;
      const port: EndpointPort = { port: n, protocol: servicePortProtocol(sp) };
      if (sp.name) port.name = sp.name;
      if (sp.appProtocol) port.appProtocol = sp.appProtocol;
      entries.push({ address, ready, port });
    }
  }
  return repack(entries);
}

const addressKey = (a: EndpointAddress) => `${a.ip}\u0000${a.targetRef?.uid ?? ''}`;
const portKey = (p: EndpointPort | undefined) =>
  p ? JSON.stringify([p.name ?? '', p.port, p.protocol ?? 'TCP', p.appProtocol ?? '']) : '';

/**
 * Groups address/port pairs into subsets (RepackSubsets): each port maps to the set of
 * addresses serving it (ready wins when an address is both), and ports with the same
 * address set share a subset. Addresses are sorted by IP then pod UID, ports by name then
 * number, subsets by their first port.
 */
function repack(entries: readonly AddressPort[]): EndpointSubset[] {
  const byPort = new Map<string, { port: EndpointPort | undefined; addrs: Map<string, AddressPort> }>();
  for (const e of entries) {
    const pk = portKey(e.port);
    let group = byPort.get(pk);
    if (!group) byPort.set(pk, (group = { port: e.port, addrs: new Map() }));
    const ak = addressKey(e.address);
    const prev = group.addrs.get(ak);
    if (!prev || (!prev.ready && e.ready)) group.addrs.set(ak, e);
  }
  const byAddressSet = new Map<string, { addrs: AddressPort[]; ports: EndpointPort[] }>();
  for (const { port, addrs } of byPort.values()) {
    const list = [...addrs.values()].sort((a, b) => compare(addressKey(a.address), addressKey(b.address)));
    const setKey = list.map((a) => `${addressKey(a.address)}\u0000${a.ready}`).join('\u0001');
    let subset = byAddressSet.get(setKey);
    if (!subset) byAddressSet.set(setKey, (subset = { addrs: list, ports: [] }));
    if (port) subset.ports.push(port);
  }
  const subsets: EndpointSubset[] = [];
  for (const { addrs, ports } of byAddressSet.values()) {
    const subset: EndpointSubset = {};
    const ready = addrs.filter((a) => a.ready).map((a) => a.address);
    const notReady = addrs.filter((a) => !a.ready).map((a) => a.address);
    if (ready.length > 0) subset.addresses = ready;
    if (notReady.length > 0) subset.notReadyAddresses = notReady;
    if (ports.length > 0) subset.ports = ports.sort((a, b) => compare(portKey(a), portKey(b)));
    subsets.push(subset);
  }
  return subsets.sort((a, b) => compare(subsetKey(a), subsetKey(b)));
}

function subsetKey(s: EndpointSubset): string {
  return `${(s.ports ?? []).map(portKey).join('\u0001')}\u0002${addressKey((s.addresses ?? s.notReadyAddresses ?? [])[0] ?? { ip: '' })}`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * True when two subset lists are the same, ignoring the pods' resourceVersions in
 * targetRefs and absent-versus-empty lists (endpointSubsetsEqualIgnoreResourceVersion),
 * so that a pod update that changes nothing endpoint-related writes nothing.
 */
export function subsetsEqual(
  a: readonly EndpointSubset[] | undefined,
  b: readonly EndpointSubset[] | undefined,
): boolean {
  return isDeepStrictEqual(normalize(a), normalize(b));
}

function normalize(subsets: readonly EndpointSubset[] | undefined): unknown {
  const addr = (a: EndpointAddress) => {
    const { targetRef, ...rest } = a;
    if (!targetRef) return rest;
    const { resourceVersion: _rv, ...ref } = targetRef;
    return { ...rest, targetRef: ref };
  };
  return (subsets ?? []).map((s) => ({
    addresses: (s.addresses ?? []).map(addr),
    notReadyAddresses: (s.notReadyAddresses ?? []).map(addr),
    ports: (s.ports ?? []).map((p) => ({ ...p, protocol: p.protocol ?? 'TCP' })),
  }));
}

/** Number of addresses (ready and not) in `subsets`. */
export function countAddresses(subsets: readonly EndpointSubset[]): number {
  return subsets.reduce((n, s) => n + (s.addresses?.length ?? 0) + (s.notReadyAddresses?.length ?? 0), 0);
}

/**
 * Cuts `subsets` down to `max` addresses (truncateEndpoints): ready addresses are kept
 * before not-ready ones, each subset keeping its share of the total (rounded up, the last
 * ones getting what is left). Returns the subsets unchanged when within capacity.
 */
export function truncateSubsets(
  subsets: readonly EndpointSubset[],
  max = MAX_ENDPOINTS_CAPACITY,
): { subsets: EndpointSubset[]; truncated: boolean } {
  const totalReady = subsets.reduce((n, s) => n + (s.addresses?.length ?? 0), 0);
  const totalNotReady = subsets.reduce((n, s) => n + (s.notReadyAddresses?.length ?? 0), 0);
  if (totalReady + totalNotReady <= max) return { subsets: [...subsets], truncated: false };
  const truncateReady = totalReady > max;
  const budget = truncateReady ? max : max - totalReady;
  const total = truncateReady ? totalReady : totalNotReady;
  let left = budget;
  const out = subsets.map((s) => {
    const inSubset = (truncateReady ? s.addresses : s.notReadyAddresses)?.length ?? 0;
    const take = Math.min(Math.ceil((inSubset / total) * budget), left);
    const next: EndpointSubset = { ...s };
    if (truncateReady) {
      next.addresses = (s.addresses ?? []).slice(0, take);
      delete next.notReadyAddresses;
      left -= next.addresses.length;
    } else {
      next.notReadyAddresses = (s.notReadyAddresses ?? []).slice(0, take);
      left -= next.notReadyAddresses.length;
    }
    return next;
  });
  // A subset left without addresses would be invalid (it needs addresses or notReadyAddresses).
  const kept = out
    .map((s) => {
      const next = { ...s };
      if (next.addresses?.length === 0) delete next.addresses;
      if (next.notReadyAddresses?.length === 0) delete next.notReadyAddresses;
      return next;
    })
    .filter((s) => s.addresses || s.notReadyAddresses);
  return { subsets: kept, truncated: true };
}
