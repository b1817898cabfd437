/**
 * From a Service's EndpointSlices to the endpoints of one of its ports, as kube-proxy's
 * endpoint slice cache does (pkg/proxy/endpointslicecache.go and the topology filter's
 * terminating fallback): a slice port matches the Service port by name and protocol; an
 * address is used when `conditions.ready` is true (unset counts as ready), and only when
 * no endpoint is ready, the ones that are serving and terminating (ProxyTerminatingEndpoints).
 * Duplicates across slices (during a slice move) count once. With `onlyNode` (a traffic
 * policy of Local) only the endpoints on that node count, and none elsewhere stand in when
 * it has none: traffic is then dropped, as kube-proxy does.
 */
import type { EndpointSlice } from '../../api/types.js';
import { endpointKey, type Endpoint } from './balancer.js';

/** Kubernetes' DefaultClientIPServiceAffinitySeconds: sessionAffinity ClientIP without a timeout. */
export const DEFAULT_AFFINITY_SECONDS = 10800;

/** The endpoints of a Service port: the ready ones, or serving-terminating when none is ready. */
export interface PortEndpoints {
  endpoints: Endpoint[];
  /** True when `endpoints` are the serving-but-terminating fallback. */
  terminatingFallback: boolean;
}

/**
 * The endpoints of the Service port named `portName` ('' for an unnamed single port) with
 * `protocol`, from `slices` (the Service's slices; other address types than IPv4/IPv6
 * are ignored), sorted by IP and port so that every proxy rotates in the same order.
 */
export function endpointsForPort(
  slices: readonly EndpointSlice[],
  portName: string,
  protocol: string,
  onlyNode?: string,
): PortEndpoints {
  const ready = new Map<string, Endpoint>();
  const terminating = new Map<string, Endpoint>();
  for (const slice of slices) {
    if (slice.addressType !== 'IPv4' && slice.addressType !== 'IPv6') continue;
    const port = (slice.ports ?? []).find(
      (p) => (p.name ?? '') === portName && (p.protocol ?? 'TCP') === protocol,
    );
    if (!port || typeof port.port !== 'number') continue;
    for (const ep of slice.endpoints ?? []) {
      const c = ep.conditions ?? {};
      const isReady = c.ready !== false;
      const servingTerminating = c.serving === true && c.terminating === true;
      // One address per endpoint is what Kubernetes uses (the others are for other families).
      const ip = ep.addresses?.[0];
      if (!ip) continue;
      if (onlyNode !== undefined && ep.nodeName !== onlyNode) continue;
      const e = { ip, port: port.port };
      if (isReady) ready.set(endpointKey(e), e);
      else if (servingTerminating) terminating.set(endpointKey(e), e);
    }
  }
  const sorted = (m: Map<string, Endpoint>): Endpoint[] =>
    [...m.values()].sort((a, b) => (a.ip === b.ip ? a.port - b.port : compareIP(a.ip, b.ip)));
  if (ready.size > 0) return { endpoints: sorted(ready), terminatingFallback: false };
  return { endpoints: sorted(terminating), terminatingFallback: terminating.size > 0 };
}

/** Numeric order for IPv4 dotted quads, text order otherwise. */
function compareIP(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  if (pa.length === 4 && pb.length === 4) {
    for (let i = 0; i < 4; i++) if (pa[i] !== pb[i]) return pa[i]! - pb[i]!;
    return 0;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}
