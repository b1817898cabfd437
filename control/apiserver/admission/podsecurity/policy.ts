/**
 * Pod Security levels, policy versions and the namespace labels that choose them
 * (k8s.io/pod-security-admission/api: constants.go, helpers.go).
 *
 *   pod-security.kubernetes.io/<mode>:          privileged | baseline | restricted
 *   pod-security.kubernetes.io/<mode>-version:  latest | v1.<minor>
 *   <mode>: enforce (refuse pods), audit (annotate the request), warn (warn the client)
 *
 * A mode without a label takes the server's default. An invalid level enforces
 * `restricted` and fails open (privileged) for audit and warn; an invalid version means
 * `latest`. Setting only the enforce label to something stricter than warn's level makes
 * warn follow it.
 */
import type { FieldError } from '../../../../api/meta/validation.js';
import { invalid, keyPath } from '../../../../api/meta/validation.js';
import { ownValue } from '../../../../api/meta/maps.js';

/** The Pod Security Standards' levels, least strict first. */
export const LEVELS = ['privileged', 'baseline', 'restricted'] as const;
export type Level = (typeof LEVELS)[number];

/** A policy version: a minor of Kubernetes 1.x, or `latest` (the newest this server knows). */
export type PolicyVersion = { readonly minor: number } | 'latest';

export interface LevelVersion {
  readonly level: Level;
  readonly version: PolicyVersion;
}

/** The level and version of each mode. */
export interface Policy {
  readonly enforce: LevelVersion;
  readonly audit: LevelVersion;
  readonly warn: LevelVersion;
}

export const MODES = ['enforce', 'audit', 'warn'] as const;
export type Mode = (typeof MODES)[number];

const LABEL_PREFIX = 'pod-security.kubernetes.io/';
/** `pod-security.kubernetes.io/<mode>`. */
export const levelLabel = (mode: Mode): string => `${LABEL_PREFIX}${mode}`;
/** `pod-security.kubernetes.io/<mode>-version`. */
export const versionLabel = (mode: Mode): string => `${LABEL_PREFIX}${mode}-version`;
/** The prefix of PodSecurity's audit annotations (`pod-security.kubernetes.io/enforce-policy`, ...). */
export const AUDIT_ANNOTATION_PREFIX = LABEL_PREFIX;

const LATEST: LevelVersion = { level: 'privileged', version: 'latest' };
/** Every mode privileged at the latest version: upstream's default configuration. */
export const PRIVILEGED_POLICY: Policy = { enforce: LATEST, audit: LATEST, warn: LATEST };

/** `restricted:latest`, `baseline:v1.29` (LevelVersion.String). */
export function levelVersionString(lv: LevelVersion): string {
  return `${lv.level}:${versionString(lv.version)}`;
}

export function versionString(v: PolicyVersion): string {
  return v === 'latest' ? 'latest' : `v1.${v.minor}`;
}

/** ParseLevel. @returns the level, or undefined for anything else. */
export function parseLevel(value: string): Level | undefined {
  return (LEVELS as readonly string[]).includes(value) ? (value as Level) : undefined;
}

/** ParseVersion: `latest` or `v1.<minor>` (no leading zero). @returns undefined otherwise. */
export function parseVersion(value: string): PolicyVersion | undefined {
  if (value === 'latest') return 'latest';
  const m = /^v1\.(0|[1-9][0-9]*)$/.exec(value);
  return m ? { minor: Number(m[1]) } : undefined;
}

export const LEVEL_ERROR = `must be one of ${LEVELS.join(', ')}`;
export const VERSION_ERROR = 'must be "latest" or "v1.x"';

/** CompareLevels: -1, 0 or 1 as `a` is less strict than, as strict as or stricter than `b`. */
export function compareLevels(a: Level, b: Level): number {
  return Math.sign(LEVELS.indexOf(a) - LEVELS.indexOf(b));
}

/** Whether two versions are the same (`latest` only equals `latest`). */
export function sameVersion(a: PolicyVersion, b: PolicyVersion): boolean {
  return a === 'latest' || b === 'latest' ? a === b : a.minor === b.minor;
}

/** LevelVersion.Equivalent: both privileged, or the same level and version. */
export function equivalent(a: LevelVersion, b: LevelVersion): boolean {
  return (
    (a.level === 'privileged' && b.level === 'privileged') ||
    (a.level === b.level && sameVersion(a.version, b.version))
  );
}

/** Whether every mode is privileged (nothing to evaluate). */
export function fullyPrivileged(p: Policy): boolean {
  return MODES.every((m) => p[m].level === 'privileged');
}

/**
 * PolicyToEvaluate: the policy a namespace's labels select, over `defaults` (see the file
 * comment). Always returns a usable policy; `errors` are the invalid labels, as the field
 * errors a Namespace write is refused with (`metadata.labels[pod-security.kubernetes.io/enforce]`).
 */
export function policyToEvaluate(
  labels: Readonly<Record<string, string>> | undefined,
  defaults: Policy,
): { policy: Policy; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const p: Record<Mode, { level: Level; version: PolicyVersion }> = {
    enforce: { ...defaults.enforce },
    audit: { ...defaults.audit },
    warn: { ...defaults.warn },
  };
  let hasEnforceLevel = false;
  for (const mode of MODES) {
    const level = ownValue(labels, levelLabel(mode));
    if (level !== undefined) {
      const parsed = parseLevel(level);
      if (parsed) p[mode].level = parsed;
      else {
        // Enforce fails closed; audit and warn fail open.
        p[mode].level = mode === 'enforce' ? 'restricted' : 'privileged';
        errors.push(invalid(keyPath('metadata.labels', levelLabel(mode)), level, LEVEL_ERROR));
      }
      if (mode === 'enforce') hasEnforceLevel = parsed !== undefined;
    }
    const version = ownValue(labels, versionLabel(mode));
    if (version !== undefined) {
      const parsed = parseVersion(version);
      p[mode].version = parsed ?? 'latest';
      if (!parsed)
        errors.push(invalid(keyPath('metadata.labels', versionLabel(mode)), version, VERSION_ERROR));
    }
  }
  const hasWarnLevel = ownValue(labels, levelLabel('warn')) !== undefined;
  const hasWarnVersion = ownValue(labels, versionLabel('warn')) !== undefined;
  if (!hasWarnLevel && hasEnforceLevel && compareLevels(p.enforce.level, p.warn.level) > 0) {
    p.warn.level = p.enforce.level;
    if (!hasWarnVersion) p.warn.version = p.enforce.version;
  }
  return { policy: p, errors };
}
