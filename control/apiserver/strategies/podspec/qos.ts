/** A Pod's QoS class, as Kubernetes computes it on create (pkg/apis/core/helper/qos). */
import type { Obj } from '../meta.js';
import { asObj, eachObj, tryQuantity } from '../meta.js';

export type PodQOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

/**
 * The Pod's QoS class as Kubernetes computes it on create (qos.GetPodQOS over containers
 * and init containers, cpu and memory only, positive values only): BestEffort without any
 * request or limit; Guaranteed when every container limits both cpu and memory and the
 * summed requests equal the summed limits; Burstable otherwise. Requests missing but
 * limited count as equal to the limit, as SetDefaults_Pod makes them.
 */
export function podQOSClass(spec: Obj): PodQOSClass {
  const requests = new Map<string, bigint>();
  const limits = new Map<string, bigint>();
  let guaranteed = true;
  const add = (m: Map<string, bigint>, k: string, v: bigint): void => {
    m.set(k, (m.get(k) ?? 0n) + v);
  };
  for (const key of ['containers', 'initContainers']) {
    eachObj(spec[key], (c) => {
      const resources = asObj(c.resources) ?? {};
      const lim = asObj(resources.limits) ?? {};
      const req = { ...lim, ...(asObj(resources.requests) ?? {}) };
      const found = new Set<string>();
      for (const [name, raw] of Object.entries(req)) {
        const milli = tryQuantity(raw)?.milliValue();
        if ((name === 'cpu' || name === 'memory') && milli !== undefined && milli > 0n)
          add(requests, name, milli);
      }
      for (const [name, raw] of Object.entries(lim)) {
        const milli = tryQuantity(raw)?.milliValue();
        if ((name === 'cpu' || name === 'memory') && milli !== undefined && milli > 0n) {
          found.add(name);
          add(limits, name, milli);
        }
      }
      if (!found.has('cpu') || !found.has('memory')) guaranteed = false;
    });
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  for (const [name, req] of requests) if (limits.get(name) !== req) guaranteed = false;
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}
