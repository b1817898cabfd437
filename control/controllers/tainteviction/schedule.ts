/**
 * When to evict a pod from a node with NoExecute taints (pkg/controller/tainteviction
 * `processPodOnNode`), kept apart from the controller so that the arithmetic is tested
 * without a server: a pod that does not tolerate every NoExecute taint goes now; one that
 * does goes after the smallest tolerationSeconds of the tolerations it uses, counted from
 * when this controller first saw it needing eviction (Kubernetes' timed worker CreatedAt:
 * this controller's clock, not the taint's timeAdded); tolerations without
 * tolerationSeconds keep it forever. A schedule ends when the taints go, when the pod comes
 * to tolerate them forever, or after the eviction.
 */
import { getMatchingTolerations, minTolerationSeconds } from '../../../api/taints.js';
import type { Taint, Toleration } from '../../../api/types.js';

/** What to do with a pod now. */
export type EvictionDecision =
  /** Nothing; `cancelled` tells whether a scheduled eviction was dropped (Kubernetes records an event). */
  | { action: 'none'; cancelled: boolean }
  /** Delete the pod now. */
  | { action: 'evict' }
  /** Look again at `fireAt` (clock ms), when the pod's toleration runs out. */
  | { action: 'wait'; fireAt: number };

/** Scheduled evictions by pod key (`namespace/name`). */
export class EvictionSchedule {
  /** Clock ms when each pod's scheduled eviction started. */
  private readonly started = new Map<string, number>();

  /**
   * Decides for pod `key` with `tolerations` on a node whose NoExecute taints are
   * `noExecuteTaints`, at `now` (clock ms). Starts a schedule the first time a tolerated
   * pod is seen on a tainted node; a later call keeps the start, so a taint swapped for
   * another (not-ready → unreachable) does not restart the pod's time.
   */
  decide(
    key: string,
    noExecuteTaints: readonly Taint[],
    tolerations: readonly Toleration[] | undefined,
    now: number,
  ): EvictionDecision {
    if (noExecuteTaints.length === 0) return { action: 'none', cancelled: this.cancel(key) };
    const { allTolerated, used } = getMatchingTolerations(noExecuteTaints, tolerations);
    if (!allTolerated) {
      this.started.delete(key);
      return { action: 'evict' };
    }
    const seconds = minTolerationSeconds(used);
    if (seconds === Infinity) return { action: 'none', cancelled: this.cancel(key) };
    let start = this.started.get(key);
    if (start === undefined) {
      start = now;
      this.started.set(key, start);
    }
    const fireAt = start + seconds * 1000;
    return fireAt <= now ? { action: 'evict' } : { action: 'wait', fireAt };
  }

  /** Drops pod `key`'s scheduled eviction; true when there was one. */
  cancel(key: string): boolean {
    return this.started.delete(key);
  }

  /** Whether pod `key` has a scheduled eviction. */
  has(key: string): boolean {
    return this.started.has(key);
  }
}
