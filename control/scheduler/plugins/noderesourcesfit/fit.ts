/**
 * The predicate of NodeResourcesFit (pkg/scheduler/framework/plugins/noderesources/fit.go
 * `fitsRequest`): does a pod's request fit in what a node has left?
 */
import type { NodeInfo } from '../../framework/node-info.js';
import type { Resource } from '../../framework/resource.js';

/** Reason for a node that already holds `allocatable.pods` pods. */
export const ERR_REASON_TOO_MANY_PODS = 'Too many pods';

/** One resource that does not fit: the reason (`Insufficient cpu`) and the figures, in the resource's units. */
export interface InsufficientResource {
  resourceName: string;
  reason: string;
  requested: number;
  used: number;
  capacity: number;
}

/**
 * The resources for which `request` (a pod's requests) exceeds `node`'s allocatable minus
 * the requests of the pods bound or assumed there; empty when the pod fits. The pod count
 * is always checked; cpu, memory, ephemeral-storage and each extended resource only when
 * the pod asks for some of it.
 */
export function fitsRequest(request: Resource, node: NodeInfo): readonly InsufficientResource[] {
  let out: InsufficientResource[] | undefined;
  const alloc = node.allocatable;
  const used = node.requested;
  const podCount = node.pods.size;
  if (podCount + 1 > alloc.allowedPodNumber) {
    out = [
      {
        resourceName: 'pods',
        reason: ERR_REASON_TOO_MANY_PODS,
        requested: 1,
        used: podCount,
        capacity: alloc.allowedPodNumber,
      },
    ];
  }
  // The common case first, allocating nothing: this runs for every (pod, node) pair.
  if (
    (request.milliCPU === 0 || request.milliCPU <= alloc.milliCPU - used.milliCPU) &&
    (request.memory === 0 || request.memory <= alloc.memory - used.memory) &&
    (request.ephemeralStorage === 0 ||
      request.ephemeralStorage <= alloc.ephemeralStorage - used.ephemeralStorage) &&
    request.scalar.size === 0
  ) {
    return out ?? NONE;
  }
  out ??= [];
  insufficient(out, 'cpu', request.milliCPU, alloc.milliCPU, used.milliCPU);
  insufficient(out, 'memory', request.memory, alloc.memory, used.memory);
  insufficient(
    out,
    'ephemeral-storage',
    request.ephemeralStorage,
    alloc.ephemeralStorage,
    used.ephemeralStorage,
  );
  for (const [name, want] of request.scalar) {
    insufficient(out, name, want, alloc.scalar.get(name) ?? 0, used.scalar.get(name) ?? 0);
  }
  return out;
}

const NONE: readonly InsufficientResource[] = Object.freeze([]);

function insufficient(
  out: InsufficientResource[],
  name: string,
  want: number,
  have: number,
  taken: number,
): void {
  if (want > 0 && want > have - taken) {
    out.push({
      resourceName: name,
      reason: `Insufficient ${name}`,
      requested: want,
      used: taken,
      capacity: have,
    });
  }
}
