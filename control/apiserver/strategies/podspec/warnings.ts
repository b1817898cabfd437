/**
 * The warnings of a pod spec, as Kubernetes 1.32 sends them for Pods and for every pod
 * template (pkg/api/pod/warnings.go `GetWarningsForPod` / `GetWarningsForPodTemplate`,
 * with pkg/api/node/util.go's deprecated node labels and pkg/api/persistentvolumeclaim's
 * claim-spec warnings). Each warning is `<field path>: <text>`; a template's paths start
 * at its own path (`spec.template.spec.containers[0].env[1]`), a Pod's at `spec`.
 *
 * The rulebook, in upstream's order (each check runs on the defaulted, valid object):
 *
 *   1. deprecated node labels (`beta.kubernetes.io/arch`, ...) in `nodeSelector`, in
 *      required and preferred node-affinity match expressions, and as a
 *      topologySpreadConstraint's `topologyKey`; a constraint without `labelSelector`
 *   2. deprecated annotations (critical-pod, the alpha sysctls annotations)
 *   3. deprecated and removed volume plugins (photonPersistentDisk, gitRepo, scaleIO,
 *      flocker, storageOS, quobyte, glusterfs, cephfs, rbd); fractional bytes in an
 *      ephemeral volume's claim template
 *   4. overlapping paths within a configMap, secret, downwardAPI or projected volume; a
 *      projected source that sets nothing
 *   5. duplicate hostAliases IPs, duplicate and empty imagePullSecrets names
 *   6. fractional bytes in `overhead` and in each container's memory / ephemeral-storage
 *      limits and requests
 *   7. seccomp annotations without the field; AppArmor annotations without the field
 *      (templates only: upstream warns for Pods in their version-skew handling, which k8ts
 *      does not implement)
 *   8. an env var that hides an earlier one of the same name
 *   9. a port with hostIP but no hostPort; the same containerPort/protocol twice across all
 *      containers (duplicate, overlapping or dangerously ambiguous by hostIP/hostPort)
 *  10. a negative terminationGracePeriodSeconds; pod (anti-)affinity terms without
 *      `labelSelector`
 *
 *  9b. the same port name in two containers (from 1.33, taken here as the issue asks)
 *
 * Not in 1.32 and so not here: label-value checks of node affinity (1.33), IP-format
 * warnings for pods (1.33).
 */
import { childPath, indexPath, isDNS1123Label, keyPath } from '../../../../api/meta/validation.js';
import { goQuote } from '../../encoding/go-format.js';
import type { KubeObject } from '../../../../api/object.js';
import type { Obj } from '../meta.js';
import { asObj, isObj, list, num, str, strMap, tryQuantity } from '../meta.js';

/** pkg/api/node's deprecatedNodeLabels of 1.32: label → why. */
const DEPRECATED_NODE_LABELS: Readonly<Record<string, string>> = {
  'beta.kubernetes.io/arch': 'deprecated since v1.14; use "kubernetes.io/arch" instead',
  'beta.kubernetes.io/os': 'deprecated since v1.14; use "kubernetes.io/os" instead',
  'failure-domain.beta.kubernetes.io/region':
    'deprecated since v1.17; use "topology.kubernetes.io/region" instead',
  'failure-domain.beta.kubernetes.io/zone':
    'deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
  'beta.kubernetes.io/instance-type':
    'deprecated since v1.17; use "node.kubernetes.io/instance-type" instead',
};

/** The deprecation message of a node label (GetNodeLabelDeprecatedMessage), or undefined. */
export function nodeLabelDeprecation(key: string): string | undefined {
  return Object.hasOwn(DEPRECATED_NODE_LABELS, key) ? DEPRECATED_NODE_LABELS[key] : undefined;
}

const DEPRECATED_ANNOTATIONS: readonly { key: string; message: string }[] = [
  {
    key: 'scheduler.alpha.kubernetes.io/critical-pod',
    message: 'non-functional in v1.16+; use the "priorityClassName" field instead',
  },
  {
    key: 'security.alpha.kubernetes.io/sysctls',
    message: 'non-functional in v1.11+; use the "sysctls" field instead',
  },
  {
    key: 'security.alpha.kubernetes.io/unsafe-sysctls',
    message: 'non-functional in v1.11+; use the "sysctls" field instead',
  },
];

/** Volume plugins upstream warns about: field → message. */
const DEPRECATED_VOLUMES: readonly (readonly [string, string])[] = [
  ['photonPersistentDisk', 'deprecated in v1.11, non-functional in v1.16+'],
  ['gitRepo', 'deprecated in v1.11'],
  ['scaleIO', 'deprecated in v1.16, non-functional in v1.22+'],
  ['flocker', 'deprecated in v1.22, non-functional in v1.25+'],
  ['storageOS', 'deprecated in v1.22, non-functional in v1.25+'],
  ['quobyte', 'deprecated in v1.22, non-functional in v1.25+'],
  ['glusterfs', 'deprecated in v1.25, non-functional in v1.26+'],
];
const DEPRECATED_VOLUMES_AFTER_EPHEMERAL: readonly (readonly [string, string])[] = [
  ['cephfs', 'deprecated in v1.28, non-functional in v1.31+'],
  ['rbd', 'deprecated in v1.28, non-functional in v1.31+'],
];

const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_ANNOTATION_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';
const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';

/** A JSON field that Go would decode to a non-nil pointer or slice (present and not null). */
function isSet(v: unknown): boolean {
  return v !== undefined && v !== null;
}

/** Go's `%v` of a []string: `[a b]`. */
export function goStringSlice(items: readonly string[]): string {
  return `[${items.join(' ')}]`;
}

/**
 * The fractional-bytes warning of one quantity (memory, ephemeral-storage, storage): a value
 * whose milli-value is not a whole number of bytes, shown in canonical form.
 */
function fractionalBytes(path: string, v: unknown): string[] {
  if (!isSet(v)) return [];
  const q = tryQuantity(v);
  if (!q || q.milliValue() % 1000n === 0n) return [];
  return [`${path}: fractional byte value ${goQuote(q.toString())} is invalid, must be an integer`];
}

/**
 * pkg/api/persistentvolumeclaim GetWarningsForPersistentVolumeClaimSpec: fractional bytes in
 * `resources.requests.storage` and `resources.limits.storage` of a claim spec at `path`.
 */
export function claimSpecWarnings(path: string, spec: unknown): string[] {
  const resources = asObj(asObj(spec)?.resources) ?? {};
  return [
    ...fractionalBytes(
      keyPath(childPath(path, 'resources', 'requests'), 'storage'),
      asObj(resources.requests)?.storage,
    ),
    ...fractionalBytes(
      keyPath(childPath(path, 'resources', 'limits'), 'storage'),
      asObj(resources.limits)?.storage,
    ),
  ];
}

/** GetWarningsForNodeSelectorTerm: deprecated labels among a term's match expressions. */
function nodeSelectorTermWarnings(term: unknown, path: string): string[] {
  const out: string[] = [];
  list(asObj(term)?.matchExpressions).forEach((e, i) => {
    const key = str(asObj(e)?.key);
    const msg = nodeLabelDeprecation(key);
    if (msg !== undefined)
      out.push(`${childPath(indexPath(childPath(path, 'matchExpressions'), i), 'key')}: ${key} is ${msg}`);
  });
  return out;
}

/** Each container with its path, in VisitContainersWithPath's order: init, regular, ephemeral. */
function eachContainer(spec: Obj, specPath: string, fn: (c: Obj, path: string) => void): void {
  for (const kind of ['initContainers', 'containers', 'ephemeralContainers'] as const) {
    list(spec[kind]).forEach((c, i) => {
      if (isObj(c)) fn(c, indexPath(childPath(specPath, kind), i));
    });
  }
}

interface PathAndSource {
  path: string;
  source: string;
}

function describe(ps: PathAndSource): string {
  return ps.source !== '' ? `${goQuote(ps.path)} (${ps.source})` : goQuote(ps.path);
}

/** checkForOverlap: the earlier paths that `needle` equals, or is inside, or contains. */
function overlaps(haystack: readonly PathAndSource[], needle: PathAndSource): PathAndSource[] {
  if (needle.path === '') return [];
  return haystack.filter(
    (item) =>
      item.path !== '' &&
      ((item.path === needle.path && item.source === needle.source) ||
        `${item.path}/`.startsWith(`${needle.path}/`) ||
        `${needle.path}/`.startsWith(`${item.path}/`)),
  );
}

/** strings.TrimRight(path, "/"). */
function trimSlashes(path: string): string {
  return path.replace(/\/+$/, '');
}

function itemPaths(items: unknown, source: string): PathAndSource[] {
  return list(items).map((it) => ({ path: str(asObj(it)?.path), source }));
}

/** checkVolumeMappingForOverlap: `"b" with "a"` for each later path that overlaps an earlier one. */
function mappingOverlaps(paths: readonly PathAndSource[]): string[] {
  const out: string[] = [];
  const seen: PathAndSource[] = [];
  for (const p of paths) {
    const ps = { ...p, path: trimSlashes(p.path) };
    for (const c of overlaps(seen, ps)) out.push(`${describe(ps)} with ${describe(c)}`);
    seen.push(ps);
  }
  return out;
}

const PROJECTION_SOURCES = [
  'secret',
  'downwardAPI',
  'configMap',
  'serviceAccountToken',
  'clusterTrustBundle',
];

/** warningsForOverlappingVirtualPaths (1.32): keys mapped onto the same or nested paths of one volume. */
function overlappingPathWarnings(volumes: unknown): string[] {
  const out: string[] = [];
  const warn = (vol: string, desc: string, body: string) =>
    out.push(`volume ${goQuote(vol)} (${desc}): overlapping paths: ${body}`);
  for (const raw of list(volumes)) {
    const v = asObj(raw);
    if (!v) continue;
    const name = str(v.name);
    const cm = asObj(v.configMap);
    if (cm && isSet(cm.items))
      for (const o of mappingOverlaps(itemPaths(cm.items, '')))
        warn(name, `ConfigMap ${goQuote(str(cm.name))}`, o);
    const secret = asObj(v.secret);
    if (secret && isSet(secret.items))
      for (const o of mappingOverlaps(itemPaths(secret.items, '')))
        warn(name, `Secret ${goQuote(str(secret.secretName))}`, o);
    const downward = asObj(v.downwardAPI);
    if (downward && isSet(downward.items))
      for (const o of mappingOverlaps(itemPaths(downward.items, ''))) warn(name, 'DownwardAPI', o);
    const projected = asObj(v.projected);
    if (!projected) continue;
    // As 1.32: the source list of the previous projection is kept when a projection lists
    // no items (fixed upstream later), so it is checked again.
    let sourcePaths: PathAndSource[] = [];
    const all: PathAndSource[] = [];
    for (const s of list(projected.sources)) {
      const src = asObj(s) ?? {};
      if (!PROJECTION_SOURCES.some((k) => isSet(src[k]))) {
        out.push(`volume ${goQuote(name)} (Projected) has no sources provided`);
        continue;
      }
      const pcm = asObj(src.configMap);
      const psecret = asObj(src.secret);
      const pdownward = asObj(src.downwardAPI);
      const token = asObj(src.serviceAccountToken);
      const bundle = asObj(src.clusterTrustBundle);
      if (pcm && isSet(pcm.items)) sourcePaths = itemPaths(pcm.items, `ConfigMap ${goQuote(str(pcm.name))}`);
      else if (psecret && isSet(psecret.items))
        sourcePaths = itemPaths(psecret.items, `Secret ${goQuote(str(psecret.name))}`);
      else if (pdownward && isSet(pdownward.items)) sourcePaths = itemPaths(pdownward.items, 'DownwardAPI');
      else if (token) sourcePaths = [{ path: str(token.path), source: 'ServiceAccountToken' }];
      else if (bundle) {
        const bundleName = isSet(bundle.name) ? str(bundle.name) : str(bundle.signerName);
        sourcePaths = [{ path: str(bundle.path), source: `ClusterTrustBundle ${goQuote(bundleName)}` }];
      }
      for (const p of sourcePaths) {
        const ps = { ...p, path: trimSlashes(p.path) };
        for (const c of overlaps(all, ps)) warn(name, 'Projected', `${describe(ps)} with ${describe(c)}`);
        all.push(ps);
      }
    }
  }
  return out;
}

/** Go's `%+v` of a core ContainerPort: `{Name:http HostPort:0 ContainerPort:80 Protocol:TCP HostIP:1.2.3.4}`. */
function goContainerPort(p: Obj): string {
  return `{Name:${str(p.name)} HostPort:${num(p.hostPort) ?? 0} ContainerPort:${num(p.containerPort) ?? 0} Protocol:${str(p.protocol)} HostIP:${str(p.hostIP)}}`;
}

function portWarnings(spec: Obj, specPath: string): string[] {
  const out: string[] = [];
  const all = new Map<string, { field: string; hostIP: string; hostPort: number }[]>();
  eachContainer(spec, specPath, (c, cpath) => {
    list(c.ports).forEach((raw, i) => {
      const port = asObj(raw) ?? {};
      const field = indexPath(childPath(cpath, 'ports'), i);
      const hostIP = str(port.hostIP);
      const hostPort = num(port.hostPort) ?? 0;
      if (hostIP !== '' && hostPort === 0)
        out.push(`${field}: hostIP set without hostPort: ${goContainerPort(port)}`);
      const key = `${num(port.containerPort) ?? 0}/${str(port.protocol)}`;
      const others = all.get(key);
      if (!others) {
        all.set(key, [{ field, hostIP, hostPort }]);
        return;
      }
      // Someone else has this protocol and port; it may still not be a conflict.
      for (const other of others) {
        if (hostIP === other.hostIP && hostPort === other.hostPort)
          out.push(`${field}: duplicate port definition with ${other.field}`);
        else if (hostPort === 0 || other.hostPort === 0)
          out.push(`${field}: overlapping port definition with ${other.field}`);
        else if (hostPort === other.hostPort && (hostIP === '') !== (other.hostIP === ''))
          out.push(`${field}: dangerously ambiguous port definition with ${other.field}`);
      }
      others.push({ field, hostIP, hostPort });
    });
  });
  return out;
}

/**
 * The same port name in two containers (regular and sidecar, i.e. init containers with
 * restartPolicy Always): a Service's or probe's named targetPort finds the first. Upstream
 * added it in 1.33 (kubernetes#122170); here because a name that resolves to another
 * container's port is the surprise the warning exists for.
 */
function portNameWarnings(spec: Obj, specPath: string): string[] {
  const out: string[] = [];
  const first = new Map<string, string>();
  eachContainer(spec, specPath, (c, cpath) => {
    if (cpath.includes('.ephemeralContainers[')) return;
    if (cpath.includes('.initContainers[') && str(c.restartPolicy) !== 'Always') return;
    list(c.ports).forEach((raw, i) => {
      const name = str(asObj(raw)?.name);
      if (name === '') return;
      const field = indexPath(childPath(cpath, 'ports'), i);
      const other = first.get(name);
      if (other === undefined) first.set(name, field);
      else
        out.push(
          `${field}: duplicate port name ${goQuote(name)} with ${other}, services and probes that select ports by name will use ${other}`,
        );
    });
  });
  return out;
}

/** The duplicate-env rule: a later `name` hides the earlier one unless it only extends it (`X=$(X)suffix`). */
function envWarnings(c: Obj, cpath: string): string[] {
  const out: string[] = [];
  const env = list(c.env);
  if (env.length <= 1) return out;
  const names = new Set<string>();
  env.forEach((raw, i) => {
    const item = asObj(raw) ?? {};
    const name = str(item.name);
    if (!names.has(name)) {
      names.add(name);
      return;
    }
    const ref = `$(${name})`;
    const value = str(item.value);
    if (isSet(item.valueFrom) || value === ref || !value.includes(ref))
      out.push(
        `${indexPath(childPath(cpath, 'env'), i)}: hides previous definition of ${goQuote(name)}, which may be dropped when using apply`,
      );
  });
  return out;
}

function affinityTermWarnings(terms: unknown, path: string, weighted: boolean): string[] {
  const out: string[] = [];
  list(terms).forEach((raw, i) => {
    const term = asObj(raw) ?? {};
    const selector = weighted ? asObj(term.podAffinityTerm)?.labelSelector : term.labelSelector;
    if (!isSet(selector)) {
      const p = weighted
        ? childPath(indexPath(path, i), 'podAffinityTerm', 'labelSelector')
        : childPath(indexPath(path, i), 'labelSelector');
      out.push(`${p}: a null labelSelector results in matching no pod`);
    }
  });
  return out;
}

/**
 * warningsForPodSpecAndMeta: the warnings of a pod spec and its metadata, whose paths start
 * at `prefix` ('' for a Pod, `spec.template` for a template). See the file comment for the
 * rules. Never throws; malformed values are skipped.
 */
function podSpecWarnings(
  prefix: string,
  specValue: unknown,
  metaValue: unknown,
  isTemplate: boolean,
): string[] {
  const spec = asObj(specValue) ?? {};
  const annotations = strMap(asObj(metaValue)?.annotations);
  const specPath = childPath(prefix, 'spec');
  const annotationsPath = childPath(prefix, 'metadata', 'annotations');
  const out: string[] = [];

  // 1. Deprecated node labels in selectors, affinity and topology.
  for (const key of Object.keys(strMap(spec.nodeSelector))) {
    const msg = nodeLabelDeprecation(key);
    if (msg !== undefined) out.push(`${keyPath(childPath(specPath, 'nodeSelector'), key)}: ${msg}`);
  }
  const affinity = asObj(spec.affinity);
  const nodeAffinity = asObj(affinity?.nodeAffinity);
  if (nodeAffinity) {
    const required = asObj(nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution);
    if (required) {
      const termsPath = childPath(
        specPath,
        'affinity',
        'nodeAffinity',
        'requiredDuringSchedulingIgnoredDuringExecution',
        'nodeSelectorTerms',
      );
      list(required.nodeSelectorTerms).forEach((t, i) =>
        out.push(...nodeSelectorTermWarnings(t, indexPath(termsPath, i))),
      );
    }
    const preferredPath = childPath(
      specPath,
      'affinity',
      'nodeAffinity',
      'preferredDuringSchedulingIgnoredDuringExecution',
    );
    list(nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution).forEach((t, i) =>
      out.push(
        ...nodeSelectorTermWarnings(
          asObj(t)?.preference,
          childPath(indexPath(preferredPath, i), 'preference'),
        ),
      ),
    );
  }
  list(spec.topologySpreadConstraints).forEach((raw, i) => {
    const t = asObj(raw) ?? {};
    const tpath = indexPath(childPath(specPath, 'topologySpreadConstraints'), i);
    const key = str(t.topologyKey);
    const msg = nodeLabelDeprecation(key);
    if (msg !== undefined) out.push(`${childPath(tpath, 'topologyKey')}: ${key} is ${msg}`);
    if (!isSet(t.labelSelector))
      out.push(`${childPath(tpath, 'labelSelector')}: a null labelSelector results in matching no pod`);
  });

  // 2. Deprecated annotations.
  for (const d of DEPRECATED_ANNOTATIONS)
    if (Object.hasOwn(annotations, d.key)) out.push(`${keyPath(annotationsPath, d.key)}: ${d.message}`);

  // 3. Deprecated and removed volume plugins.
  list(spec.volumes).forEach((raw, i) => {
    const v = asObj(raw) ?? {};
    const vpath = indexPath(childPath(specPath, 'volumes'), i);
    for (const [field, msg] of DEPRECATED_VOLUMES)
      if (isSet(v[field])) out.push(`${childPath(vpath, field)}: ${msg}`);
    const claimTemplate = asObj(asObj(v.ephemeral)?.volumeClaimTemplate);
    if (claimTemplate)
      out.push(
        ...claimSpecWarnings(
          childPath(vpath, 'ephemeral', 'volumeClaimTemplate', 'spec'),
          claimTemplate.spec,
        ),
      );
    for (const [field, msg] of DEPRECATED_VOLUMES_AFTER_EPHEMERAL)
      if (isSet(v[field])) out.push(`${childPath(vpath, field)}: ${msg}`);
  });

  // 4. Overlapping paths inside one volume.
  out.push(...overlappingPathWarnings(spec.volumes));

  // 5. Duplicate hostAliases and imagePullSecrets.
  const aliases = list(spec.hostAliases);
  if (aliases.length > 1) {
    const ips = new Set<string>();
    aliases.forEach((a, i) => {
      const ip = str(asObj(a)?.ip);
      if (ips.has(ip))
        out.push(
          `${childPath(indexPath(childPath(specPath, 'hostAliases'), i), 'ip')}: duplicate ip ${goQuote(ip)}`,
        );
      else ips.add(ip);
    });
  }
  const pullSecrets = list(spec.imagePullSecrets);
  const pullSecretPath = (i: number) =>
    childPath(indexPath(childPath(specPath, 'imagePullSecrets'), i), 'name');
  if (pullSecrets.length > 1) {
    const names = new Set<string>();
    pullSecrets.forEach((s, i) => {
      const name = str(asObj(s)?.name);
      if (names.has(name)) out.push(`${pullSecretPath(i)}: duplicate name ${goQuote(name)}`);
      else names.add(name);
    });
  }
  pullSecrets.forEach((s, i) => {
    const name = str(asObj(s)?.name);
    if (name === '') out.push(`${pullSecretPath(i)}: invalid empty name ${goQuote(name)}`);
  });

  // 6. (part) Fractional bytes in the pod overhead.
  const overhead = asObj(spec.overhead) ?? {};
  out.push(...fractionalBytes(keyPath(childPath(specPath, 'overhead'), 'memory'), overhead.memory));
  out.push(
    ...fractionalBytes(
      keyPath(childPath(specPath, 'overhead'), 'ephemeral-storage'),
      overhead['ephemeral-storage'],
    ),
  );

  // 7. (part) The pod seccomp annotation without the field.
  const podSecurity = asObj(spec.securityContext);
  if (!isSet(podSecurity?.seccompProfile) && Object.hasOwn(annotations, SECCOMP_POD_ANNOTATION))
    out.push(
      `${keyPath(annotationsPath, SECCOMP_POD_ANNOTATION)}: non-functional in v1.27+; use the "seccompProfile" field instead`,
    );
  const podAppArmor = isSet(podSecurity?.appArmorProfile);

  eachContainer(spec, specPath, (c, cpath) => {
    const name = str(c.name);
    const security = asObj(c.securityContext);
    // 7. Container seccomp and AppArmor annotations without the fields.
    const seccompKey = SECCOMP_CONTAINER_ANNOTATION_PREFIX + name;
    if (!isSet(security?.seccompProfile) && Object.hasOwn(annotations, seccompKey))
      out.push(
        `${keyPath(annotationsPath, seccompKey)}: non-functional in v1.27+; use the "seccompProfile" field instead`,
      );
    const appArmorKey = APPARMOR_ANNOTATION_PREFIX + name;
    if (
      isTemplate &&
      !podAppArmor &&
      !isSet(security?.appArmorProfile) &&
      Object.hasOwn(annotations, appArmorKey)
    )
      out.push(
        `${keyPath(annotationsPath, appArmorKey)}: deprecated since v1.30; use the "appArmorProfile" field instead`,
      );
    // 6. Fractional bytes in limits and requests.
    const resources = asObj(c.resources) ?? {};
    const limits = asObj(resources.limits) ?? {};
    const requests = asObj(resources.requests) ?? {};
    const lpath = childPath(cpath, 'resources', 'limits');
    const rpath = childPath(cpath, 'resources', 'requests');
    out.push(...fractionalBytes(keyPath(lpath, 'memory'), limits.memory));
    out.push(...fractionalBytes(keyPath(rpath, 'memory'), requests.memory));
    out.push(...fractionalBytes(keyPath(lpath, 'ephemeral-storage'), limits['ephemeral-storage']));
    out.push(...fractionalBytes(keyPath(rpath, 'ephemeral-storage'), requests['ephemeral-storage']));
    // 8. Duplicate env names.
    out.push(...envWarnings(c, cpath));
  });

  // 9. Ports across all containers.
  out.push(...portWarnings(spec, specPath));
  out.push(...portNameWarnings(spec, specPath));

  // 10. A negative grace period; (anti-)affinity terms that match nothing.
  const grace = num(spec.terminationGracePeriodSeconds);
  if (grace !== undefined && grace < 0)
    out.push(
      `${childPath(specPath, 'terminationGracePeriodSeconds')}: must be >= 0; negative values are invalid and will be treated as 1`,
    );
  for (const kind of ['podAffinity', 'podAntiAffinity'] as const) {
    const a = asObj(affinity?.[kind]);
    if (!a) continue;
    out.push(
      ...affinityTermWarnings(
        a.requiredDuringSchedulingIgnoredDuringExecution,
        childPath(specPath, 'affinity', kind, 'requiredDuringSchedulingIgnoredDuringExecution'),
        false,
      ),
    );
    out.push(
      ...affinityTermWarnings(
        a.preferredDuringSchedulingIgnoredDuringExecution,
        childPath(specPath, 'affinity', kind, 'preferredDuringSchedulingIgnoredDuringExecution'),
        true,
      ),
    );
  }
  return out;
}

/**
 * GetWarningsForPod: the warnings of a Pod's spec and metadata (paths from `spec` and
 * `metadata.annotations`).
 */
export function podWarnings(pod: KubeObject): string[] {
  return podSpecWarnings('', pod.spec, pod.metadata, false);
}

/**
 * GetWarningsForPodTemplate: the warnings of the pod template at `path` of an object
 * (`spec.template`, `spec.jobTemplate.spec.template`); `template` is the template's value.
 */
export function podTemplateWarnings(path: string, template: unknown): string[] {
  if (!isObj(template)) return [];
  return podSpecWarnings(path, template.spec, template.metadata, true);
}

/**
 * The name warning of the kinds whose name becomes part of their pods' names and hostnames
 * (ReplicaSets, Deployments, Jobs, CronJobs: their strategies' WarningsOnCreate): a name
 * that is not a DNS-1123 label, with the label rule's messages as Go's `%v` prints them.
 */
export function workloadNameWarnings(name: string | undefined): string[] {
  const msgs = isDNS1123Label(name ?? '');
  if (msgs.length === 0) return [];
  return [
    `metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: ${goStringSlice(msgs)}`,
  ];
}

/** The Pod strategy's own name warning: a Pod's name is its hostname. */
export function podNameWarnings(name: string | undefined): string[] {
  const msgs = isDNS1123Label(name ?? '');
  if (msgs.length === 0) return [];
  return [
    `metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: ${goStringSlice(msgs)}`,
  ];
}

/**
 * Whether an update of a workload changed its `metadata.generation` (the registry set it
 * before the warnings): upstream's workloads warn about their pod template on update only
 * then, so an update that leaves the spec alone (a label, a scale through status) is quiet.
 */
export function generationChanged(obj: KubeObject, old: KubeObject): boolean {
  return (obj.metadata?.generation ?? 0) !== (old.metadata?.generation ?? 0);
}
