/**
 * The baseline Pod Security Standard: the checks that block known privilege escalations
 * (k8s.io/pod-security-admission/policy check_*.go of the baseline level, with their
 * reasons and details word for word), up to the policy version k8ts serves (v1.32):
 *
 *   hostNamespaces           hostNetwork, hostPID, hostIPC
 *   privileged               securityContext.privileged
 *   capabilities_baseline    capabilities.add beyond Docker's defaults
 *   hostPathVolumes          hostPath volumes
 *   hostPorts                ports[*].hostPort
 *   appArmorProfile          AppArmor profiles other than RuntimeDefault / Localhost
 *   seLinuxOptions           SELinux types other than container_*; user and role
 *   procMount                procMount other than Default
 *   seccompProfile_baseline  seccomp Unconfined (annotations before v1.19)
 *   sysctls                  sysctls outside the safe set (which grows by version)
 *   windowsHostProcess       windowsOptions.hostProcess
 */
import {
  ALLOWED,
  containers,
  containersPhrase,
  forbidden,
  joinQuote,
  list,
  obj,
  pluralize,
  podSecurityContext,
  sortedSet,
  str,
  type Check,
  type CheckPod,
  type CheckResult,
  type Obj,
} from './checks.js';

const hostNamespaces: CheckPod = ({ spec }) => {
  const set = (['hostNetwork', 'hostPID', 'hostIPC'] as const).filter((f) => spec[f] === true);
  return set.length > 0 ? forbidden('host namespaces', set.map((f) => `${f}=true`).join(', ')) : ALLOWED;
};

const privileged: CheckPod = ({ spec }) => {
  const bad = containers(spec)
    .filter((c) => c.sc?.privileged === true)
    .map((c) => c.name);
  return bad.length > 0
    ? forbidden('privileged', `${containersPhrase(bad)} must not set securityContext.privileged=true`)
    : ALLOWED;
};

/** Docker's default capabilities, which baseline lets containers add back. */
const DEFAULT_CAPABILITIES = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);

export const CAPABILITIES_BASELINE_ID = 'capabilities_baseline';

const capabilitiesBaseline: CheckPod = ({ spec }) => {
  const bad: string[] = [];
  const caps: string[] = [];
  for (const c of containers(spec)) {
    const added = list(obj(c.sc?.capabilities)?.add).map(str);
    const extra = added.filter((cap) => !DEFAULT_CAPABILITIES.has(cap));
    if (extra.length > 0) {
      bad.push(c.name);
      caps.push(...extra);
    }
  }
  return bad.length > 0
    ? forbidden(
        'non-default capabilities',
        `${containersPhrase(bad)} must not include ${joinQuote(sortedSet(caps))} in securityContext.capabilities.add`,
      )
    : ALLOWED;
};

export const HOST_PATH_VOLUMES_ID = 'hostPathVolumes';

const hostPathVolumes: CheckPod = ({ spec }) => {
  const bad = list(spec.volumes)
    .map(obj)
    .filter((v): v is Obj => v !== undefined && v.hostPath !== undefined && v.hostPath !== null)
    .map((v) => str(v.name));
  return bad.length > 0
    ? forbidden('hostPath volumes', `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)}`)
    : ALLOWED;
};

const hostPorts: CheckPod = ({ spec }) => {
  const bad: string[] = [];
  const ports: string[] = [];
  for (const c of containers(spec)) {
    const used = list(c.c.ports)
      .map((p) => obj(p)?.hostPort)
      .filter((p): p is number => typeof p === 'number' && p !== 0);
    if (used.length > 0) {
      bad.push(c.name);
      ports.push(...used.map(String));
    }
  }
  if (bad.length === 0) return ALLOWED;
  const sorted = sortedSet(ports);
  return forbidden(
    'hostPort',
    `${containersPhrase(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('hostPort', 'hostPorts', sorted.length)} ${sorted.join(', ')}`,
  );
};

const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';

/**
 * Who sets `securityContext.<field>.type` to a type `allowed` refuses — `pod`, then the
 * containers' phrase — and the refused types.
 */
function badProfileTypes(
  spec: Obj,
  field: 'appArmorProfile' | 'seccompProfile',
  allowed: (type: unknown) => boolean,
): { setters: string[]; values: Set<string> } {
  const setters: string[] = [];
  const values = new Set<string>();
  const podProfile = obj(podSecurityContext(spec)?.[field]);
  if (podProfile && !allowed(podProfile.type)) {
    setters.push('pod');
    values.add(str(podProfile.type));
  }
  const bad: string[] = [];
  for (const c of containers(spec)) {
    const profile = obj(c.sc?.[field]);
    if (profile && !allowed(profile.type)) {
      bad.push(c.name);
      values.add(str(profile.type));
    }
  }
  if (bad.length > 0) setters.push(containersPhrase(bad));
  return { setters, values };
}

const appArmorProfile: CheckPod = ({ metadata, spec }) => {
  const { setters, values } = badProfileTypes(
    spec,
    'appArmorProfile',
    (t) => t === 'RuntimeDefault' || t === 'Localhost',
  );
  const annotations: string[] = [];
  for (const [k, v] of Object.entries(obj(metadata.annotations) ?? {})) {
    const value = str(v);
    const ok = value === '' || value === 'runtime/default' || value.startsWith('localhost/');
    if (k.startsWith(APPARMOR_ANNOTATION_PREFIX) && !ok) annotations.push(`${k}=${JSON.stringify(value)}`);
  }
  const valueList = sortedSet(values);
  if (annotations.length > 0) {
    valueList.push(...annotations.sort());
    setters.push(pluralize('annotation', 'annotations', annotations.length));
  }
  if (setters.length === 0) return ALLOWED;
  return forbidden(
    pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', valueList.length),
    `${setters.join(' and ')} must not set AppArmor profile type to ${joinQuote(valueList)}`,
  );
};

/** seLinuxOptions with the allowed types of one policy version. */
function seLinuxOptions(allowedTypes: ReadonlySet<string>): CheckPod {
  return ({ spec }) => {
    const setters: string[] = [];
    const badTypes = new Set<string>();
    let setUser = false;
    let setRole = false;
    const valid = (opts: Obj): boolean => {
      let ok = true;
      if (!allowedTypes.has(str(opts.type))) {
        ok = false;
        badTypes.add(str(opts.type));
      }
      if (str(opts.user) !== '') {
        ok = false;
        setUser = true;
      }
      if (str(opts.role) !== '') {
        ok = false;
        setRole = true;
      }
      return ok;
    };
    const podOpts = obj(podSecurityContext(spec)?.seLinuxOptions);
    if (podOpts && !valid(podOpts)) setters.push('pod');
    const bad = containers(spec)
      .filter((c) => {
        const opts = obj(c.sc?.seLinuxOptions);
        return opts !== undefined && !valid(opts);
      })
      .map((c) => c.name);
    if (bad.length > 0) setters.push(containersPhrase(bad));
    if (setters.length === 0) return ALLOWED;
    const data: string[] = [];
    if (badTypes.size > 0)
      data.push(`${pluralize('type', 'types', badTypes.size)} ${joinQuote(sortedSet(badTypes))}`);
    if (setUser) data.push('user may not be set');
    if (setRole) data.push('role may not be set');
    return forbidden(
      'seLinuxOptions',
      `${setters.join(' and ')} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}`,
    );
  };
}

const SELINUX_TYPES_1_0 = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t']);
const SELINUX_TYPES_1_31 = new Set([...SELINUX_TYPES_1_0, 'container_engine_t']);

const procMount: CheckPod = ({ spec }) => {
  const bad: string[] = [];
  const types = new Set<string>();
  for (const c of containers(spec)) {
    const value = c.sc?.procMount;
    if (value === undefined || value === null || value === 'Default') continue;
    bad.push(c.name);
    types.add(str(value));
  }
  return bad.length > 0
    ? forbidden(
        'procMount',
        `${containersPhrase(bad)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}`,
      )
    : ALLOWED;
};

export const SECCOMP_BASELINE_ID = 'seccompProfile_baseline';
const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_ANNOTATION_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';

/** seccompProfile_baseline before v1.19: the alpha annotations. */
const seccompBaselineAnnotations: CheckPod = ({ metadata, spec }) => {
  const annotations = obj(metadata.annotations) ?? {};
  const ok = (v: string) => v === 'runtime/default' || v === 'docker/default' || v.startsWith('localhost/');
  const bad = new Set<string>();
  const check = (key: string) => {
    if (!Object.hasOwn(annotations, key)) return;
    const v = str(annotations[key]);
    if (!ok(v)) bad.add(`${key}=${JSON.stringify(v)}`);
  };
  check(SECCOMP_POD_ANNOTATION);
  for (const c of containers(spec)) check(SECCOMP_CONTAINER_ANNOTATION_PREFIX + c.name);
  return bad.size > 0
    ? forbidden(
        'seccompProfile',
        `forbidden ${pluralize('annotation', 'annotations', bad.size)} ${sortedSet(bad).join(', ')}`,
      )
    : ALLOWED;
};

export const validSeccompType = (t: unknown): boolean => t === 'Localhost' || t === 'RuntimeDefault';

/** seccompProfile_baseline from v1.19: securityContext.seccompProfile.type. */
const seccompBaseline: CheckPod = ({ spec }) => {
  const { setters, values } = badProfileTypes(spec, 'seccompProfile', validSeccompType);
  return setters.length > 0
    ? forbidden(
        'seccompProfile',
        `${setters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(values))}`,
      )
    : ALLOWED;
};

/** sysctls with the safe set of one policy version. */
function sysctls(allowed: ReadonlySet<string>): CheckPod {
  return ({ spec }) => {
    const bad = list(podSecurityContext(spec)?.sysctls)
      .map((s) => str(obj(s)?.name))
      .filter((name) => !allowed.has(name));
    return bad.length > 0 ? forbidden('forbidden sysctls', bad.join(', ')) : ALLOWED;
  };
}

const SYSCTLS_1_0 = new Set([
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
]);
const SYSCTLS_1_27 = new Set([...SYSCTLS_1_0, 'net.ipv4.ip_local_reserved_ports']);
const SYSCTLS_1_29 = new Set([
  ...SYSCTLS_1_27,
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
]);
const SYSCTLS_1_32 = new Set([...SYSCTLS_1_29, 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem']);

const windowsHostProcess: CheckPod = ({ spec }): CheckResult => {
  const hostProcess = (sc: Obj | undefined) => obj(sc?.windowsOptions)?.hostProcess === true;
  const setters: string[] = [];
  if (hostProcess(podSecurityContext(spec))) setters.push('pod');
  const bad = containers(spec)
    .filter((c) => hostProcess(c.sc))
    .map((c) => c.name);
  if (bad.length > 0) setters.push(containersPhrase(bad));
  return setters.length > 0
    ? forbidden(
        'hostProcess',
        `${setters.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true`,
      )
    : ALLOWED;
};

/** The baseline checks, each with its versions. */
export const BASELINE_CHECKS: readonly Check[] = [
  { id: 'appArmorProfile', level: 'baseline', versions: [{ minVersion: 0, check: appArmorProfile }] },
  {
    id: CAPABILITIES_BASELINE_ID,
    level: 'baseline',
    versions: [{ minVersion: 0, check: capabilitiesBaseline }],
  },
  { id: 'hostNamespaces', level: 'baseline', versions: [{ minVersion: 0, check: hostNamespaces }] },
  { id: HOST_PATH_VOLUMES_ID, level: 'baseline', versions: [{ minVersion: 0, check: hostPathVolumes }] },
  { id: 'hostPorts', level: 'baseline', versions: [{ minVersion: 0, check: hostPorts }] },
  { id: 'privileged', level: 'baseline', versions: [{ minVersion: 0, check: privileged }] },
  { id: 'procMount', level: 'baseline', versions: [{ minVersion: 0, check: procMount }] },
  {
    id: 'seLinuxOptions',
    level: 'baseline',
    versions: [
      { minVersion: 0, check: seLinuxOptions(SELINUX_TYPES_1_0) },
      { minVersion: 31, check: seLinuxOptions(SELINUX_TYPES_1_31) },
    ],
  },
  {
    id: SECCOMP_BASELINE_ID,
    level: 'baseline',
    versions: [
      { minVersion: 0, check: seccompBaselineAnnotations },
      { minVersion: 19, check: seccompBaseline },
    ],
  },
  {
    id: 'sysctls',
    level: 'baseline',
    versions: [
      { minVersion: 0, check: sysctls(SYSCTLS_1_0) },
      { minVersion: 27, check: sysctls(SYSCTLS_1_27) },
      { minVersion: 29, check: sysctls(SYSCTLS_1_29) },
      { minVersion: 32, check: sysctls(SYSCTLS_1_32) },
    ],
  },
  { id: 'windowsHostProcess', level: 'baseline', versions: [{ minVersion: 0, check: windowsHostProcess }] },
];
