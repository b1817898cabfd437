/**
 * PodSecurity's server configuration: upstream's PodSecurityConfiguration
 * (pod-security.admission.config.k8s.io/v1, admission/api/v1/types.go), which kube-apiserver
 * reads from its --admission-control-config-file, and k8ts from
 * `--pod-security-admission-config-file` (as k3s names it). Either the object itself or an
 * AdmissionConfiguration (apiserver.config.k8s.io/v1) with it as the PodSecurity plugin's
 * configuration:
 *
 *   apiVersion: pod-security.admission.config.k8s.io/v1
 *   kind: PodSecurityConfiguration
 *   defaults:       # for namespaces without the labels; each defaults to privileged / latest
 *     enforce: baseline
 *     enforce-version: latest
 *     audit: restricted
 *     warn: restricted
 *   exemptions:     # never evaluated
 *     usernames: [system:serviceaccount:kube-system:replicaset-controller]
 *     namespaces: [kube-system]
 *     runtimeClasses: [kata]
 */
import { isDNS1123Label, nameIsDNSSubdomain } from '../../../../api/meta/validation.js';
import {
  LEVEL_ERROR,
  MODES,
  parseLevel,
  parseVersion,
  PRIVILEGED_POLICY,
  VERSION_ERROR,
  type Level,
  type Mode,
  type Policy,
} from './policy.js';

/** What the PodSecurity plugin is configured with (the parsed PodSecurityConfiguration). */
export interface PodSecuritySettings {
  /** The policy of namespaces without Pod Security labels. */
  readonly defaults: Policy;
  readonly exemptions: {
    readonly usernames: readonly string[];
    readonly namespaces: readonly string[];
    readonly runtimeClasses: readonly string[];
  };
}

/** Upstream's default configuration: everything privileged at latest, nothing exempt. */
export const DEFAULT_POD_SECURITY: PodSecuritySettings = {
  defaults: PRIVILEGED_POLICY,
  exemptions: { usernames: [], namespaces: [], runtimeClasses: [] },
};

const API_VERSIONS = [
  'pod-security.admission.config.k8s.io/v1',
  'pod-security.admission.config.k8s.io/v1beta1',
];

/**
 * The settings a PodSecurityConfiguration document (parsed YAML or JSON) gives, or an
 * AdmissionConfiguration holding one for the plugin `PodSecurity`.
 * @throws Error naming every invalid field (`defaults.enforce: Invalid value: "strict":
 *   must be one of privileged, baseline, restricted`), as ValidatePodSecurityConfiguration.
 */
export function parsePodSecurityConfiguration(doc: unknown): PodSecuritySettings {
  let config = asObj(doc);
  if (config?.kind === 'AdmissionConfiguration') {
    const plugin = list(config.plugins)
      .map(asObj)
      .find((p) => p?.name === 'PodSecurity');
    if (!plugin) throw new Error('AdmissionConfiguration: no plugin named PodSecurity');
    config = asObj(plugin.configuration);
  }
  if (!config) throw new Error('a PodSecurityConfiguration must be an object');
  if (config.kind !== 'PodSecurityConfiguration' || !API_VERSIONS.includes(String(config.apiVersion)))
    throw new Error(
      `expected kind PodSecurityConfiguration, apiVersion ${API_VERSIONS[0]}; got kind ${String(config.kind)}, apiVersion ${String(config.apiVersion)}`,
    );
  const errors: string[] = [];
  const defaults = asObj(config.defaults) ?? {};
  const policy = { ...PRIVILEGED_POLICY } as Record<Mode, Policy[Mode]>;
  for (const mode of MODES) {
    const level = defaults[mode];
    const version = defaults[`${mode}-version`];
    const parsedLevel = level === undefined || level === '' ? 'privileged' : parseLevel(String(level));
    const parsedVersion = version === undefined || version === '' ? 'latest' : parseVersion(String(version));
    if (!parsedLevel)
      errors.push(`defaults.${mode}: Invalid value: ${JSON.stringify(level)}: ${LEVEL_ERROR}`);
    if (!parsedVersion)
      errors.push(`defaults.${mode}-version: Invalid value: ${JSON.stringify(version)}: ${VERSION_ERROR}`);
    policy[mode] = { level: parsedLevel ?? 'privileged', version: parsedVersion ?? 'latest' };
  }
  const exemptions = asObj(config.exemptions) ?? {};
  const names = (field: string, check: (v: string) => string[]): string[] => {
    const seen = new Set<string>();
    list(exemptions[field]).forEach((v, i) => {
      const path = `exemptions.${field}[${i}]`;
      const value = typeof v === 'string' ? v : '';
      const problems = check(value);
      if (problems.length > 0)
        errors.push(`${path}: Invalid value: ${JSON.stringify(v)}: ${problems.join(', ')}`);
      else if (seen.has(value)) errors.push(`${path}: Duplicate value: ${JSON.stringify(value)}`);
      seen.add(value);
    });
    return [...seen];
  };
  const settings: PodSecuritySettings = {
    defaults: policy,
    exemptions: {
      namespaces: names('namespaces', isDNS1123Label),
      runtimeClasses: names('runtimeClasses', (v) => nameIsDNSSubdomain(v, false)),
      usernames: names('usernames', (v) => (v.trim() === '' ? ['must be non-empty'] : [])),
    },
  };
  if (errors.length > 0) throw new Error(`invalid PodSecurityConfiguration: ${errors.join('; ')}`);
  return settings;
}

/**
 * `settings` with every mode's default level set to `level` (k8ts' --pod-security-default-level:
 * the level of namespaces without labels), versions kept.
 */
export function withDefaultLevel(settings: PodSecuritySettings, level: Level): PodSecuritySettings {
  const d = settings.defaults;
  return {
    ...settings,
    defaults: {
      enforce: { ...d.enforce, level },
      audit: { ...d.audit, level },
      warn: { ...d.warn, level },
    },
  };
}

function asObj(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
