/**
 * The C heap's free memory handed back to the kernel, every few seconds, in the long-running
 * k8ts processes (`k8ts server`, `agent`, `hollow-nodes`).
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

/**
 * The addon's interface: trim() runs malloc_trim(0) on a thread of libuv's pool (never on
 * the event loop: giving back 1 GiB takes some 200 ms) and resolves to true when memory was
 * released.
 */
export interface MallocTrim {
  trim(): Promise<boolean>;
}

/** How often the processes trim, ms. */
export const MALLOC_TRIM_INTERVAL_MS = 10_000;

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
 * Calls `addon.trim()` every `intervalMs` (an unref'd timer: it keeps no process alive),
 * skipping a tick while the last trim still runs.
 * @returns stop(), which ends the timer; a no-op stop when there is no addon.
 */
export function startMallocTrim(
  addon: MallocTrim | undefined = loadMallocTrim(),
  intervalMs: number = MALLOC_TRIM_INTERVAL_MS,
): () => void {
  if (!addon) return () => undefined;
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    void addon
      .trim()
      .catch(() => false)
      .finally(() => (running = false));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
