/**
 * Score normalisation shared by plugins (pkg/scheduler/framework/plugins/helper
 * DefaultNormalizeScore).
 */
import type { NodeScore } from './interface.js';

/**
 * Scales `scores` in place so that the highest becomes `maxPriority` (integer division, as
 * Kubernetes); with `reverse`, the highest becomes 0 and a zero becomes `maxPriority`.
 * When every score is 0, they stay 0 — or all become `maxPriority` when reversed.
 */
export function defaultNormalizeScore(maxPriority: number, reverse: boolean, scores: NodeScore[]): void {
  let max = 0;
  for (const s of scores) if (s.score > max) max = s.score;
  if (max === 0) {
    if (reverse) for (const s of scores) s.score = maxPriority;
    return;
  }
  for (const s of scores) {
    let v = Math.trunc((maxPriority * s.score) / max);
    if (reverse) v = maxPriority - v;
    s.score = v;
  }
}
