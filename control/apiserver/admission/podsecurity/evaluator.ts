/**
 * Evaluates a pod against a level and version (k8s.io/pod-security-admission/policy:
 * registry.go, checks.go's aggregation): privileged allows everything; baseline runs the
 * baseline checks of that version; restricted runs the restricted checks of that version
 * and the baseline ones none of them overrides. Checks run baseline first, then
 * restricted, each group by ID in byte order, so messages list violations in upstream's
 * order. A version newer than the newest known (`latest` included) is the newest known,
 * which this server caps at the Kubernetes minor it serves.
 */
import { BASELINE_CHECKS } from './baseline.js';
import type { Check, CheckPod, CheckResult, PodParts } from './checks.js';
import type { LevelVersion } from './policy.js';
import { RESTRICTED_CHECKS } from './restricted.js';

/** AggregateCheckResult: the forbidden reasons and details of the checks that failed, in order. */
export interface AggregateResult {
  readonly allowed: boolean;
  /** `host ports, privileged` (ForbiddenReason). */
  readonly reason: string;
  /** `host ports (8080), privileged (container "a" must not set ...)` (ForbiddenDetail). */
  readonly detail: string;
}

/** Aggregates check results (AggregateCheckResults, ForbiddenReason, ForbiddenDetail). */
export function aggregate(results: readonly CheckResult[]): AggregateResult {
  const failed = results.filter((r): r is Extract<CheckResult, { allowed: false }> => !r.allowed);
  const reason = (r: (typeof failed)[number]) => r.reason || 'unknown forbidden reason';
  return {
    allowed: failed.length === 0,
    reason: failed.map(reason).join(', '),
    detail: failed.map((r) => (r.detail ? `${reason(r)} (${r.detail})` : reason(r))).join(', '),
  };
}

/** The checks of each level at each policy version from 1.0 to `maxMinor`. */
export class Evaluator {
  private readonly maxMinor: number;
  private readonly baseline = new Map<number, CheckPod[]>();
  private readonly restricted = new Map<number, CheckPod[]>();

  /**
   * @param maxMinor the newest policy version to know (the served Kubernetes minor); the
   *   checks' own newest version if that is older.
   * @param checks the checks (default: baseline.ts and restricted.ts).
   * @throws Error for a check list upstream's validateChecks refuses (duplicate IDs,
   *   versions not increasing, overrides by or of the wrong level).
   */
  constructor(maxMinor: number, checks: readonly Check[] = [...BASELINE_CHECKS, ...RESTRICTED_CHECKS]) {
    validateChecks(checks);
    const newest = Math.max(...checks.map((c) => c.versions[c.versions.length - 1]!.minVersion));
    this.maxMinor = Math.min(maxMinor, newest);
    const ordered = [
      ...checks.filter((c) => c.level === 'baseline').sort(byId),
      ...checks.filter((c) => c.level === 'restricted').sort(byId),
    ];
    for (let v = 0; v <= this.maxMinor; v++) {
      const active = ordered.flatMap((c) => {
        const version = [...c.versions].reverse().find((cv) => cv.minVersion <= v);
        return version ? [{ check: c, version }] : [];
      });
      const overridden = new Set(
        active.flatMap((a) => (a.check.level === 'restricted' ? (a.version.overrides ?? []) : [])),
      );
      this.baseline.set(
        v,
        active.filter((a) => a.check.level === 'baseline').map((a) => a.version.check),
      );
      this.restricted.set(
        v,
        active
          .filter((a) => a.check.level === 'restricted' || !overridden.has(a.check.id))
          .map((a) => a.version.check),
      );
    }
  }

  /** The newest policy version this evaluator knows: what `latest` means. */
  get latestMinor(): number {
    return this.maxMinor;
  }

  /** EvaluatePod: the results of every check of `lv` on `pod` (none for privileged). */
  evaluate(lv: LevelVersion, pod: PodParts): CheckResult[] {
    if (lv.level === 'privileged') return [];
    const v = lv.version === 'latest' ? this.maxMinor : Math.min(lv.version.minor, this.maxMinor);
    const checks = (lv.level === 'baseline' ? this.baseline : this.restricted).get(v) ?? [];
    return checks.map((check) => check(pod));
  }

  /** evaluate, aggregated. */
  check(lv: LevelVersion, pod: PodParts): AggregateResult {
    return aggregate(this.evaluate(lv, pod));
  }
}

function byId(a: Check, b: Check): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function validateChecks(checks: readonly Check[]): void {
  const levels = new Map<string, Check['level']>();
  for (const c of checks) {
    if (levels.has(c.id)) throw new Error(`multiple checks registered for ID ${c.id}`);
    levels.set(c.id, c.level);
    if (c.versions.length === 0) throw new Error(`check ${c.id}: empty`);
    c.versions.forEach((v, i) => {
      if (i > 0 && v.minVersion <= c.versions[i - 1]!.minVersion)
        throw new Error(`check ${c.id}: versions must be strictly increasing`);
    });
  }
  for (const c of checks)
    for (const v of c.versions)
      for (const o of v.overrides ?? []) {
        if (c.level !== 'restricted')
          throw new Error(`check ${c.id}: only restricted checks may set overrides`);
        if (levels.get(o) !== undefined && levels.get(o) !== 'baseline')
          throw new Error(`check ${c.id}: overrides ${levels.get(o)} check ${o}`);
      }
}
