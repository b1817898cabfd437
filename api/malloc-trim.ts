/**
 * The C heap's free memory handed back to the kernel, in a 10 s interval whose event loop
 * was mostly quiet, in the long-running k8ts processes (`k8ts server`, `agent`,
 * `hollow-nodes`).
 *
 * Why: Node's sockets, TLS records and Buffers are malloc'd by glibc, in blocks of a few KB to
 * a few MB that come and go by the thousand per second under load. glibc gives memory back to
 * the kernel only from the top of a heap, and raises its trim threshold after each large free
 * (up to 64 MiB), so the holes between live blocks stay resident. Measured in bench:scale at
 * 1,000 hollow nodes: 914 MiB RSS, of which the JS heap was 101 MiB live; one
 * malloc_trim(0) brought it to 624 MiB (290 MiB of free heap pages given back) with nothing
 * else changed.
 *
 * How: the optional dependency `k8ts-malloc-trim` (api/malloc-trim/, a native addon npm
 * builds with node-gyp) calls glibc's malloc_trim(0). Where it was not built (no compiler, a
 * libc other than glibc) nothing is trimmed and nothing else changes.
 */
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

/**
 * The addon's interface: trim() runs malloc_trim(0) on a thread of libuv's pool (never on
 * the event loop: giving back 1 GiB takes some 200 ms) and resolves to true when memory was
 * released.
 */
export interface MallocTrim {
  trim(): Promise<boolean>;
}

/** How often the processes look whether to trim, ms. */
export const MALLOC_TRIM_INTERVAL_MS = 10_000;

/**
 * The event-loop utilization (0-1, over the last interval) below which a process trims. A
 * trim holds the arenas' locks while it gives pages back, and the pages a busy process
 * allocates again must be faulted in and zeroed anew: trimming every 10 s in bench:scale's
 * deployment (event loop ~0.8 busy) took it from 28 to 36 s (2,000 pods, two runs with and
 * one without). So a process trims once it is mostly quiet, after a burst and while idle.
 */
export const MALLOC_TRIM_MAX_UTILIZATION = 0.3;

/** The addon, or undefined where it is not installed or does not load. */
export function loadMallocTrim(): MallocTrim | undefined {
  try {
    const addon = createRequire(import.meta.url)('k8ts-malloc-trim') as Partial<MallocTrim>;
    return typeof addon.trim === 'function' ? (addon as MallocTrim) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Calls `addon.trim()` every `intervalMs` (an unref'd timer: it keeps no process alive)
 * when the event loop was busy less than `maxUtilization` of the interval (`utilization`
 * gives it; default: performance.eventLoopUtilization over the interval), skipping a tick
 * while the last trim still runs.
 * @returns stop(), which ends the timer; a no-op stop when there is no addon.
 */
export function startMallocTrim(
  addon: MallocTrim | undefined = loadMallocTrim(),
  intervalMs: number = MALLOC_TRIM_INTERVAL_MS,
  utilization: () => number = intervalUtilization(),
  maxUtilization: number = MALLOC_TRIM_MAX_UTILIZATION,
): () => void {
  if (!addon) return () => undefined;
  let running = false;
  const timer = setInterval(() => {
    if (utilization() >= maxUtilization || running) return;
    running = true;
    void addon
      .trim()
      .catch(() => false)
      .finally(() => (running = false));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** The event loop's utilization since the last call (the first: since the process started). */
function intervalUtilization(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const u = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    return u;
  };
}
