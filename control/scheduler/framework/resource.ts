/**
 * Resource arithmetic of the scheduler (pkg/scheduler/framework/types.go `Resource` and
 * k8s.io/component-helpers resource.PodRequests): a node's allocatable and the sum of
 * its pods' requests as plain numbers, parsed once per object so that the filter loop
 * compares numbers, never quantity strings.
 *
 * Units: cpu in millicores, memory and ephemeral-storage in bytes, pods as a count, any
 * other (extended, hugepages-*) resource in its integer value (`Quantity.value()`).
 */
import { parseQuantity } from '../../../api/meta/quantity.js';
import type { Container, Node, Pod } from '../../../api/types.js';

/** Amounts of resources; `scalar` holds every resource besides the four named ones. */
export interface Resource {
  milliCPU: number;
  memory: number;
  ephemeralStorage: number;
  allowedPodNumber: number;
  scalar: Map<string, number>;
}

/** The request a container without a cpu request counts as when scoring: 100 millicores (DefaultMilliCPURequest). */
export const DEFAULT_MILLI_CPU_REQUEST = 100;
/** The request a container without a memory request counts as when scoring: 200 MiB (DefaultMemoryRequest). */
export const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;

/** A zero Resource. */
export function emptyResource(): Resource {
  return { milliCPU: 0, memory: 0, ephemeralStorage: 0, allowedPodNumber: 0, scalar: new Map() };
}

/**
 * The amount of `name` in `quantity` as the scheduler counts it: millicores for cpu, the
 * integer value (rounded up) for everything else. Unparseable quantities count as 0: the
 * API server validated them, and a scheduler must not crash on someone else's data.
 */
export function quantityAmount(name: string, quantity: string | number | undefined): number {
  if (quantity === undefined) return 0;
  const text = String(quantity);
  const memo = name === 'cpu' ? milliMemo : valueMemo;
  let v = memo.get(text);
  if (v === undefined) {
    try {
      const q = parseQuantity(text.trim());
      v = Number(name === 'cpu' ? q.milliValue() : q.value());
    } catch {
      v = 0;
    }
    // The same few strings ("100m", "128Mi", "4") come back all the time; bound the memo anyway.
    if (memo.size >= 4096) memo.clear();
    memo.set(text, v);
  }
  return v;
}

const milliMemo = new Map<string, number>();
const valueMemo = new Map<string, number>();

/** Adds `list` (a requests/allocatable map of quantity strings) into `r`. */
export function addResourceList(
  r: Resource,
  list: Readonly<Record<string, string>> | undefined,
  sign = 1,
): void {
  if (!list) return;
  for (const name in list) {
    const v = quantityAmount(name, list[name]) * sign;
    switch (name) {
      case 'cpu':
        r.milliCPU += v;
        break;
      case 'memory':
        r.memory += v;
        break;
      case 'ephemeral-storage':
        r.ephemeralStorage += v;
        break;
      case 'pods':
        r.allowedPodNumber += v;
        break;
      default:
        r.scalar.set(name, (r.scalar.get(name) ?? 0) + v);
    }
  }
}

function maxInto(r: Resource, other: Resource): void {
  r.milliCPU = Math.max(r.milliCPU, other.milliCPU);
  r.memory = Math.max(r.memory, other.memory);
  r.ephemeralStorage = Math.max(r.ephemeralStorage, other.ephemeralStorage);
  for (const [k, v] of other.scalar) r.scalar.set(k, Math.max(r.scalar.get(k) ?? 0, v));
}

function addInto(r: Resource, other: Resource): void {
  r.milliCPU += other.milliCPU;
  r.memory += other.memory;
  r.ephemeralStorage += other.ephemeralStorage;
  for (const [k, v] of other.scalar) r.scalar.set(k, (r.scalar.get(k) ?? 0) + v);
}

function containerRequests(c: Container, nonZero: boolean): Resource {
  const r = emptyResource();
  const requests = c.resources?.requests;
  addResourceList(r, requests);
  if (nonZero) {
    if (requests?.cpu === undefined) r.milliCPU = DEFAULT_MILLI_CPU_REQUEST;
    if (requests?.memory === undefined) r.memory = DEFAULT_MEMORY_REQUEST;
  }
  return r;
}

/**
 * What a pod asks of a node (resource.PodRequests): the sum of its containers' requests;
 * the larger of that and each init container's request (plus the restartable "sidecar"
 * init containers started before it, which keep running); plus `spec.overhead`.
 * `allowedPodNumber` is always 0 here (the pod itself counts as one pod).
 *
 * With `nonZero`, containers without a cpu or memory request count as 100m / 200Mi — the
 * figures the scoring plugins use so that request-less pods still spread
 * (schedutil.GetNonzeroRequests).
 */
export function podRequests(pod: Pod, nonZero = false): Resource {
  // Memoised per spec object: informer objects are never mutated, and one pod's requests
  // are asked for by several plugins per cycle. Callers must not modify the result.
  const memo = nonZero ? nonZeroMemo : plainMemo;
  let r = memo.get(pod.spec);
  if (!r) memo.set(pod.spec, (r = computePodRequests(pod, nonZero)));
  return r;
}

const plainMemo = new WeakMap<object, Resource>();
const nonZeroMemo = new WeakMap<object, Resource>();

function computePodRequests(pod: Pod, nonZero: boolean): Resource {
  const sum = emptyResource();
  for (const c of pod.spec.containers ?? []) addInto(sum, containerRequests(c, nonZero));
  const sidecars = emptyResource();
  const initMax = emptyResource();
  for (const c of pod.spec.initContainers ?? []) {
    const r = containerRequests(c, nonZero);
    if (c.restartPolicy === 'Always') {
      addInto(sidecars, r);
      maxInto(initMax, sidecars);
    } else {
      addInto(r, sidecars);
      maxInto(initMax, r);
    }
  }
  addInto(sum, sidecars);
  maxInto(sum, initMax);
  addResourceList(sum, pod.spec.overhead);
  return sum;
}

/** A node's `status.allocatable` (falling back to `capacity`, as the kubelet reports both). */
export function nodeAllocatable(node: Node): Resource {
  const r = emptyResource();
  addResourceList(r, node.status?.allocatable ?? node.status?.capacity);
  return r;
}
