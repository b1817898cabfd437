/**
 * The restricted Pod Security Standard: baseline plus current pod hardening
 * (k8s.io/pod-security-admission/policy check_*.go of the restricted level, with their
 * reasons and details word for word), up to the policy version k8ts serves (v1.32):
 *
 *   restrictedVolumes          only configMap, csi, downwardAPI, emptyDir, ephemeral,
 *                              image, persistentVolumeClaim, projected, secret volumes
 *                              (replaces baseline's hostPathVolumes)
 *   allowPrivilegeEscalation   must be false (v1.8; Windows pods exempt from v1.25)
 *   runAsNonRoot               true on the pod or on every container
 *   runAsUser                  not 0 (v1.23)
 *   seccompProfile_restricted  RuntimeDefault or Localhost, set on the pod or every
 *                              container (v1.19; Windows pods exempt from v1.25; replaces
 *                              seccompProfile_baseline)
 *   capabilities_restricted    drop ALL, add at most NET_BIND_SERVICE (v1.22; Windows
 *                              pods exempt from v1.25; replaces capabilities_baseline)
 */
import {
  CAPABILITIES_BASELINE_ID,
  HOST_PATH_VOLUMES_ID,
  SECCOMP_BASELINE_ID,
  validSeccompType,
} from './baseline.js';
import {
  ALLOWED,
  containers,
  containersPhrase,
  forbidden,
  isWindowsPod,
  joinQuote,
  list,
  obj,
  pluralize,
  podSecurityContext,
  sortedSet,
  str,
  type Check,
  type CheckPod,
} from './checks.js';

/** The volume sources restricted allows. */
const ALLOWED_VOLUME_SOURCES = [
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'image',
  'persistentVolumeClaim',
  'projected',
  'secret',
];
/** The volume sources restricted names when it refuses them, in upstream's order. */
const RESTRICTED_VOLUME_SOURCES = [
  'hostPath',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'nfs',
  'iscsi',
  'glusterfs',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'fc',
  'azureFile',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'storageos',
];

const has = (o: Record<string, unknown>, key: string) => o[key] !== undefined && o[key] !== null;

const restrictedVolumes: CheckPod = ({ spec }) => {
  const bad: string[] = [];
  const types = new Set<string>();
  for (const item of list(spec.volumes)) {
    const v = obj(item);
    if (!v || ALLOWED_VOLUME_SOURCES.some((k) => has(v, k))) continue;
    bad.push(str(v.name));
    types.add(RESTRICTED_VOLUME_SOURCES.find((k) => has(v, k)) ?? 'unknown');
  }
  if (bad.length === 0) return ALLOWED;
  const sorted = sortedSet(types);
  return forbidden(
    'restricted volume types',
    `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('restricted volume type', 'restricted volume types', sorted.length)} ${joinQuote(sorted)}`,
  );
};

const allowPrivilegeEscalation_1_8: CheckPod = ({ spec }) => {
  const bad = containers(spec)
    .filter((c) => c.sc?.allowPrivilegeEscalation !== false)
    .map((c) => c.name);
  return bad.length > 0
    ? forbidden(
        'allowPrivilegeEscalation != false',
        `${containersPhrase(bad)} must set securityContext.allowPrivilegeEscalation=false`,
      )
    : ALLOWED;
};

/** From v1.25 a check does not apply to a pod whose `spec.os.name` is windows. */
const exceptWindows =
  (check: CheckPod): CheckPod =>
  (pod) =>
    isWindowsPod(pod.spec) ? ALLOWED : check(pod);

const runAsNonRoot: CheckPod = ({ spec }) => {
  const setters: string[] = [];
  const podValue = podSecurityContext(spec)?.runAsNonRoot;
  let podRunAsNonRoot = false;
  if (typeof podValue === 'boolean') {
    if (!podValue) setters.push('pod');
    else podRunAsNonRoot = true;
  }
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containers(spec)) {
    const v = c.sc?.runAsNonRoot;
    if (typeof v === 'boolean') {
      if (!v) explicit.push(c.name);
    } else if (!podRunAsNonRoot) implicit.push(c.name);
  }
  if (explicit.length > 0) setters.push(containersPhrase(explicit));
  if (setters.length > 0)
    return forbidden(
      'runAsNonRoot != true',
      `${setters.join(' and ')} must not set securityContext.runAsNonRoot=false`,
    );
  if (implicit.length > 0)
    return forbidden(
      'runAsNonRoot != true',
      `pod or ${containersPhrase(implicit)} must set securityContext.runAsNonRoot=true`,
    );
  return ALLOWED;
};

const runAsUser: CheckPod = ({ spec }) => {
  const setters: string[] = [];
  if (podSecurityContext(spec)?.runAsUser === 0) setters.push('pod');
  const bad = containers(spec)
    .filter((c) => c.sc?.runAsUser === 0)
    .map((c) => c.name);
  if (bad.length > 0) setters.push(containersPhrase(bad));
  return setters.length > 0
    ? forbidden('runAsUser=0', `${setters.join(' and ')} must not set runAsUser=0`)
    : ALLOWED;
};

const seccompRestricted: CheckPod = ({ spec }) => {
  const setters: string[] = [];
  const values = new Set<string>();
  let podSet = false;
  const podProfile = obj(podSecurityContext(spec)?.seccompProfile);
  if (podProfile) {
    if (!validSeccompType(podProfile.type)) {
      setters.push('pod');
      values.add(str(podProfile.type));
    } else podSet = true;
  }
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containers(spec)) {
    const profile = obj(c.sc?.seccompProfile);
    if (profile) {
      if (!validSeccompType(profile.type)) {
        explicit.push(c.name);
        values.add(str(profile.type));
      }
    } else if (!podSet) implicit.push(c.name);
  }
  if (explicit.length > 0) setters.push(containersPhrase(explicit));
  if (setters.length > 0)
    return forbidden(
      'seccompProfile',
      `${setters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(values))}`,
    );
  if (implicit.length > 0)
    return forbidden(
      'seccompProfile',
      `pod or ${containersPhrase(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
    );
  return ALLOWED;
};

const capabilitiesRestricted: CheckPod = ({ spec }) => {
  const missingDropAll: string[] = [];
  const addingForbidden: string[] = [];
  const forbiddenCaps: string[] = [];
  for (const c of containers(spec)) {
    const caps = obj(c.sc?.capabilities);
    if (!caps) {
      missingDropAll.push(c.name);
      continue;
    }
    if (!list(caps.drop).includes('ALL')) missingDropAll.push(c.name);
    const extra = list(caps.add)
      .map(str)
      .filter((cap) => cap !== 'NET_BIND_SERVICE');
    if (extra.length > 0) {
      addingForbidden.push(c.name);
      forbiddenCaps.push(...extra);
    }
  }
  const details: string[] = [];
  if (missingDropAll.length > 0)
    details.push(`${containersPhrase(missingDropAll)} must set securityContext.capabilities.drop=["ALL"]`);
  if (addingForbidden.length > 0)
    details.push(
      `${containersPhrase(addingForbidden)} must not include ${joinQuote(sortedSet(forbiddenCaps))} in securityContext.capabilities.add`,
    );
  return details.length > 0 ? forbidden('unrestricted capabilities', details.join('; ')) : ALLOWED;
};

/** The restricted checks, each with its versions and the baseline checks it replaces. */
export const RESTRICTED_CHECKS: readonly Check[] = [
  {
    id: 'allowPrivilegeEscalation',
    level: 'restricted',
    versions: [
      { minVersion: 8, check: allowPrivilegeEscalation_1_8 },
      { minVersion: 25, check: exceptWindows(allowPrivilegeEscalation_1_8) },
    ],
  },
  {
    id: 'capabilities_restricted',
    level: 'restricted',
    versions: [
      { minVersion: 22, check: capabilitiesRestricted, overrides: [CAPABILITIES_BASELINE_ID] },
      { minVersion: 25, check: exceptWindows(capabilitiesRestricted), overrides: [CAPABILITIES_BASELINE_ID] },
    ],
  },
  {
    id: 'restrictedVolumes',
    level: 'restricted',
    versions: [{ minVersion: 0, check: restrictedVolumes, overrides: [HOST_PATH_VOLUMES_ID] }],
  },
  { id: 'runAsNonRoot', level: 'restricted', versions: [{ minVersion: 0, check: runAsNonRoot }] },
  { id: 'runAsUser', level: 'restricted', versions: [{ minVersion: 23, check: runAsUser }] },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    versions: [
      { minVersion: 19, check: seccompRestricted, overrides: [SECCOMP_BASELINE_ID] },
      { minVersion: 25, check: exceptWindows(seccompRestricted), overrides: [SECCOMP_BASELINE_ID] },
    ],
  },
];
