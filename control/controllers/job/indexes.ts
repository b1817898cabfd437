/**
 * Completion indexes of Indexed Jobs (Kubernetes' pkg/controller/job/indexed_job_utils.go):
 * the index annotation on a pod, and `status.completedIndexes` as ordered ranges
 * (`1,3-5,7`).
 */
import type { Pod } from '../../../api/types.js';

/** The annotation (and label) carrying a pod's completion index. */
export const JOB_COMPLETION_INDEX_ANNOTATION = 'batch.kubernetes.io/job-completion-index';

/** The env var every container of an Indexed Job's pod gets its index in. */
export const JOB_COMPLETION_INDEX_ENV = 'JOB_COMPLETION_INDEX';

/** A pod's completion index (getCompletionIndex); undefined when absent or not a non-negative integer. */
export function completionIndex(pod: Pod): number | undefined {
  const v = pod.metadata.annotations?.[JOB_COMPLETION_INDEX_ANNOTATION];
  if (v === undefined || !/^(0|[1-9][0-9]*)$/.test(v)) return undefined;
  return Number(v);
}

/** `1,3-5` → {1,3,4,5} (parseIndexesFromString); malformed parts and indexes >= `completions` are dropped. */
export function parseIndexes(s: string | undefined, completions: number): Set<number> {
  const out = new Set<number>();
  for (const part of (s ?? '').split(',')) {
    const m = /^([0-9]+)(?:-([0-9]+))?$/.exec(part.trim());
    if (!m) continue;
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    for (let i = a; i <= b && i < completions; i++) out.add(i);
  }
  return out;
}

/** {1,3,4,5} → `1,3-5` (orderedIntervals.String). */
export function formatIndexes(indexes: Iterable<number>): string {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}
