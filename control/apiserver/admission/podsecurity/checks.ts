/**
 * What a Pod Security check is (k8s.io/pod-security-admission/policy: checks.go,
 * visitor.go, helpers.go), and the helpers the checks of baseline.ts and restricted.ts
 * share. A check looks at a pod's metadata and spec (a Pod's, or a pod template's) and
 * says whether the level allows it; when not, a short reason ("host namespaces") and a
 * detail naming what is wrong ("hostNetwork=true").
 *
 * Checks are versioned: each version applies from a policy version (a Kubernetes minor)
 * on, and a restricted check may override baseline checks it supersedes.
 */

/** A JSON object of the pod (spec, securityContext, ...); wrong types read as absent. */
export type Obj = Record<string, unknown>;

/** The pod's metadata and spec, as plain JSON. */
export interface PodParts {
  readonly metadata: Obj;
  readonly spec: Obj;
}

/** CheckResult: allowed, or forbidden with a reason and an optional detail. */
export type CheckResult =
  { readonly allowed: true } | { readonly allowed: false; readonly reason: string; readonly detail: string };

export type CheckPod = (pod: PodParts) => CheckResult;

export interface VersionedCheck {
  /** The first policy version (Kubernetes minor, major 1) this version of the check applies to. */
  readonly minVersion: number;
  readonly check: CheckPod;
  /** Baseline checks this restricted check replaces while it applies. */
  readonly overrides?: readonly string[];
}

export interface Check {
  /** Upstream's check ID (`hostNamespaces`, `runAsNonRoot`, ...). */
  readonly id: string;
  /** Baseline checks apply to baseline and restricted; restricted ones to restricted only. */
  readonly level: 'baseline' | 'restricted';
  /** Strictly increasing minVersion. */
  readonly versions: readonly VersionedCheck[];
}

export const ALLOWED: CheckResult = { allowed: true };

export function forbidden(reason: string, detail = ''): CheckResult {
  return { allowed: false, reason, detail };
}

export function obj(v: unknown): Obj | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : undefined;
}

export function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** A container of the pod: its name and its JSON. */
export interface Container {
  readonly name: string;
  readonly c: Obj;
  /** `securityContext`, when set. */
  readonly sc: Obj | undefined;
}

/** visitContainers: init containers, containers, then ephemeral containers, in order. */
export function containers(spec: Obj): Container[] {
  const out: Container[] = [];
  for (const key of ['initContainers', 'containers', 'ephemeralContainers']) {
    for (const item of list(spec[key])) {
      const c = obj(item);
      if (c) out.push({ name: str(c.name), c, sc: obj(c.securityContext) });
    }
  }
  return out;
}

/** The pod-level securityContext, when set. */
export function podSecurityContext(spec: Obj): Obj | undefined {
  return obj(spec.securityContext);
}

/** joinQuote: `"a", "b"`. */
export function joinQuote(items: readonly string[]): string {
  return items.length === 0 ? '' : `"${items.join('", "')}"`;
}

export function pluralize(singular: string, plural: string, count: number): string {
  return count === 1 ? singular : plural;
}

/** `container "a"` / `containers "a", "b"`. */
export function containersPhrase(names: readonly string[]): string {
  return `${pluralize('container', 'containers', names.length)} ${joinQuote(names)}`;
}

/** A sorted, de-duplicated list (Go's sets.String.List()). */
export function sortedSet(items: Iterable<string>): string[] {
  return [...new Set(items)].sort();
}

/** Whether the pod says it runs on Windows (`spec.os.name: windows`): some restricted checks do not apply. */
export function isWindowsPod(spec: Obj): boolean {
  return str(obj(spec.os)?.name) === 'windows';
}
