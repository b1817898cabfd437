/**
 * The fields of a Service spec that allocation reads, and the rules over them that
 * Kubernetes' service REST uses (shouldAllocateNodePorts, NeedsHealthCheck, headless).
 */
import { canonicalIP } from '../../../api/meta/ip.js';
import type { KubeObject } from '../../../api/object.js';

type Obj = Record<string, unknown>;
interface PortSpec {
  port?: number;
  nodePort?: number;
  protocol?: string;
}
export interface ServiceSpec {
  type?: string;
  clusterIP?: string;
  clusterIPs?: string[];
  ports?: PortSpec[];
  ipFamilies?: string[];
  ipFamilyPolicy?: string;
  allocateLoadBalancerNodePorts?: boolean;
  externalTrafficPolicy?: string;
  healthCheckNodePort?: number;
}

export const specOf = (obj: KubeObject): ServiceSpec => ((obj as Obj).spec ??= {}) as ServiceSpec;
export const typeOf = (s: ServiceSpec): string => s.type ?? 'ClusterIP';
export const isHeadless = (s: ServiceSpec): boolean => s.clusterIPs?.[0] === 'None' || s.clusterIP === 'None';
export const hasNodePorts = (s: ServiceSpec): boolean =>
  typeOf(s) === 'NodePort' || typeOf(s) === 'LoadBalancer';
/** shouldAllocateNodePorts: NodePort, or LoadBalancer unless allocateLoadBalancerNodePorts is false. */
export const shouldAllocateNodePorts = (s: ServiceSpec): boolean =>
  typeOf(s) === 'NodePort' || (typeOf(s) === 'LoadBalancer' && s.allocateLoadBalancerNodePorts !== false);
/** apiservice.NeedsHealthCheck: a LoadBalancer with externalTrafficPolicy Local. */
export const needsHealthCheck = (s: ServiceSpec): boolean =>
  typeOf(s) === 'LoadBalancer' && s.externalTrafficPolicy === 'Local';
export const nodePortsOf = (s: ServiceSpec): number[] =>
  (s.ports ?? []).map((p) => p.nodePort ?? 0).filter((n) => n > 0);

/**
 * The allocation key of a clusterIP: its canonical form. A Service keeps the text it was
 * given (`10.43.000.50`, which 1.32's sloppy validation accepts), but the allocator
 * reserves the address it parses to (ipallocator.Allocate(netutils.ParseIPSloppy(ip))).
 */
export function ipKey(ip: string): string {
  return canonicalIP(ip) ?? ip;
}

/** The addresses and ports a stored Service holds allocations for (as releaseAllocatedResources reads them). */
export function allocatedItems(obj: KubeObject): { ips: string[]; ports: string[] } {
  const spec = specOf(structuredClone(obj));
  const ips =
    typeOf(spec) !== 'ExternalName' && !isHeadless(spec)
      ? (spec.clusterIPs ?? []).filter((ip) => ip).map(ipKey)
      : [];
  const ports = new Set(nodePortsOf(spec).map(String));
  if (needsHealthCheck(spec) && spec.healthCheckNodePort) ports.add(String(spec.healthCheckNodePort));
  return { ips, ports: [...ports] };
}
