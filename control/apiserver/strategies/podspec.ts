/**
 * PodSpec defaults and validation, shared by Pods and by the pod templates of
 * Deployments and ReplicaSets (Kubernetes' pkg/apis/core/v1/defaults.go
 * SetDefaults_PodSpec/Container/Probe/Volume/..., and pkg/apis/core/validation
 * ValidatePodSpec / ValidatePodTemplateSpec).
 *
 * `isPod` separates what Kubernetes applies to Pods only: SetDefaults_Pod (requests from
 * limits, enableServiceLinks, hostNetwork hostPorts) and the image-whitespace rule of
 * ValidatePodCreate. Templates keep exactly what `kubectl get deploy -o yaml` shows.
 */
import type { FieldError } from '../../../api/meta/validation.js';
import {
  childPath,
  duplicate,
  forbidden,
  indexPath,
  invalid,
  isConfigMapKey,
  isDNS1123Label,
  isDNS1123Subdomain,
  isInRange,
  isQualifiedName,
  isValidLabelValue,
  isValidPortName,
  keyPath,
  notSupported,
  required,
  validateAnnotations,
  validateLabels,
} from '../../../api/meta/validation.js';
import type { Obj } from './meta.js';
import {
  asObj,
  canonicalizeResourceList,
  child,
  defaultPointer,
  defaultString,
  defaultZero,
  eachObj,
  isObj,
  list,
  nonNegative,
  notFound,
  num,
  PORT_PROTOCOLS,
  portNumOrName,
  problems,
  qualifiedName,
  quantityProblem,
  str,
  strMap,
  tryQuantity,
} from './meta.js';
import { setOwnValue } from '../../../api/meta/maps.js';

// ---------------------------------------------------------------------------------------
// Defaults
// ---------------------------------------------------------------------------------------

/**
 * The pull policy Kubernetes defaults for an image (SetDefaults_Container with
 * parsers.ParseImageName): `Always` when the tag is `latest`, or when there is neither tag
 * nor digest (which means `latest`); otherwise `IfNotPresent` (`nginx:1.25`,
 * `nginx@sha256:...`).
 */
export function pullPolicyFor(image: string): 'Always' | 'IfNotPresent' {
  const at = image.indexOf('@');
  const name = at >= 0 ? image.slice(0, at) : image;
  const last = name.slice(name.lastIndexOf('/') + 1);
  const colon = last.indexOf(':');
  const tag = colon >= 0 ? last.slice(colon + 1) : at >= 0 ? '' : 'latest';
  return tag === 'latest' ? 'Always' : 'IfNotPresent';
}

/** The handler types of probes and lifecycle hooks (ProbeHandler / LifecycleHandler). */
const HANDLER_TYPES = ['exec', 'httpGet', 'tcpSocket', 'grpc', 'sleep'] as const;

/** SetDefaults_HTTPGetAction (path `/`, scheme HTTP) and GRPCAction's `service: ""`. */
function defaultHandler(h: Obj): void {
  const http = asObj(h.httpGet);
  if (http) {
    defaultString(http, 'path', '/');
    defaultString(http, 'scheme', 'HTTP');
  }
  const grpc = asObj(h.grpc);
  if (grpc) defaultPointer(grpc, 'service', '');
}

/** SetDefaults_Probe: timeout 1 s, period 10 s, success 1, failure 3 (zero counts as unset). */
function defaultProbe(p: Obj): void {
  defaultZero(p, 'timeoutSeconds', 1);
  defaultZero(p, 'periodSeconds', 10);
  defaultZero(p, 'successThreshold', 1);
  defaultZero(p, 'failureThreshold', 3);
  defaultHandler(p);
}

/** ObjectFieldSelector's `apiVersion: v1` default. */
function defaultFieldRef(holder: Obj | undefined): void {
  const ref = asObj(holder?.fieldRef);
  if (ref) defaultString(ref, 'apiVersion', 'v1');
}

/**
 * SetDefaults_Container: pull policy from the tag, termination message path and policy,
 * port protocol TCP, probe and handler defaults, env fieldRef apiVersion, canonical
 * resource quantities, and `resources: {}` (a Go struct field, always serialized).
 */
function defaultContainer(c: Obj): void {
  if (str(c.imagePullPolicy) === '') c.imagePullPolicy = pullPolicyFor(str(c.image));
  defaultString(c, 'terminationMessagePath', '/dev/termination-log');
  defaultString(c, 'terminationMessagePolicy', 'File');
  eachObj(c.ports, (p) => defaultString(p, 'protocol', 'TCP'));
  eachObj(c.env, (e) => defaultFieldRef(asObj(e.valueFrom)));
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
    const p = asObj(c[probe]);
    if (p) defaultProbe(p);
  }
  const lifecycle = asObj(c.lifecycle);
  for (const hook of ['postStart', 'preStop']) {
    const h = asObj(lifecycle?.[hook]);
    if (h) defaultHandler(h);
  }
  const resources = child(c, 'resources');
  canonicalizeResourceList(resources, 'limits');
  canonicalizeResourceList(resources, 'requests');
}

/** Every volume source field of a v1.Volume (a volume sets exactly one). */
const VOLUME_SOURCES = [
  'hostPath',
  'emptyDir',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'persistentVolumeClaim',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'downwardAPI',
  'fc',
  'azureFile',
  'configMap',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'projected',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
  'image',
] as const;

/** 0644, the default mode of secret, configMap, downwardAPI and projected volumes. */
const DEFAULT_FILE_MODE = 420;

/**
 * SetDefaults_Volume and the volume source defaults: a volume without a source is an
 * `emptyDir: {}`; secret/configMap/downwardAPI/projected `defaultMode: 420`; hostPath
 * `type: ""`; projected serviceAccountToken `expirationSeconds: 3600`; downward API
 * fieldRefs `apiVersion: v1`; image volumes' pull policy from the reference.
 */
function defaultVolume(v: Obj): void {
  if (!VOLUME_SOURCES.some((k) => v[k] !== undefined && v[k] !== null)) v.emptyDir = {};
  for (const k of ['secret', 'configMap', 'downwardAPI', 'projected']) {
    const src = asObj(v[k]);
    if (src) defaultPointer(src, 'defaultMode', DEFAULT_FILE_MODE);
  }
  const hostPath = asObj(v.hostPath);
  if (hostPath) defaultPointer(hostPath, 'type', '');
  eachObj(asObj(v.downwardAPI)?.items, defaultFieldRef);
  eachObj(asObj(v.projected)?.sources, (s) => {
    const token = asObj(s.serviceAccountToken);
    if (token) defaultPointer(token, 'expirationSeconds', 3600);
    eachObj(asObj(s.downwardAPI)?.items, defaultFieldRef);
  });
  const image = asObj(v.image);
  if (image && str(image.pullPolicy) === '') {
    image.pullPolicy = pullPolicyFor(str(image.reference)) === 'Always' ? 'Always' : 'IfNotPresent';
  }
  const claimSpec = asObj(asObj(asObj(v.ephemeral)?.volumeClaimTemplate)?.spec);
  if (claimSpec) defaultPointer(claimSpec, 'volumeMode', 'Filesystem');
}

/**
 * The defaults of a PodSpec (SetDefaults_PodSpec: dnsPolicy ClusterFirst, restartPolicy
 * Always, securityContext {}, terminationGracePeriodSeconds 30, schedulerName
 * default-scheduler; plus every container, volume and probe default). With `isPod`, also
 * SetDefaults_Pod: requests default to limits for each resource with only a limit,
 * enableServiceLinks true, and with hostNetwork each container port's hostPort defaults
 * to its containerPort. The deprecated `serviceAccount` mirrors `serviceAccountName`
 * (v1 conversion). Idempotent.
 */
export function defaultPodSpec(spec: Obj, isPod: boolean): void {
  defaultString(spec, 'dnsPolicy', 'ClusterFirst');
  defaultString(spec, 'restartPolicy', 'Always');
  if (!isObj(spec.securityContext)) spec.securityContext = {};
  defaultPointer(spec, 'terminationGracePeriodSeconds', 30);
  defaultString(spec, 'schedulerName', 'default-scheduler');
  if (str(spec.serviceAccountName) === '' && str(spec.serviceAccount) !== '') {
    spec.serviceAccountName = spec.serviceAccount;
  }
  if (str(spec.serviceAccountName) !== '') spec.serviceAccount = spec.serviceAccountName;
  for (const key of ['containers', 'initContainers', 'ephemeralContainers'])
    eachObj(spec[key], defaultContainer);
  eachObj(spec.volumes, defaultVolume);
  if (!isPod) return;
  for (const key of ['containers', 'initContainers']) {
    eachObj(spec[key], (c) => {
      const resources = child(c, 'resources');
      const limits = asObj(resources.limits);
      if (!limits || Object.keys(limits).length === 0) return;
      const requests = child(resources, 'requests');
      for (const [k, v] of Object.entries(limits))
        if (!Object.hasOwn(requests, k)) setOwnValue(requests, k, v);
    });
  }
  defaultPointer(spec, 'enableServiceLinks', true);
  if (spec.hostNetwork === true) {
    for (const key of ['containers', 'initContainers']) {
      eachObj(spec[key], (c) =>
        eachObj(c.ports, (p) => {
          if (!num(p.hostPort)) p.hostPort = p.containerPort;
        }),
      );
    }
  }
}

/** The defaults of a PodTemplateSpec (`spec.template` of Deployments and ReplicaSets). */
export function defaultPodTemplate(template: Obj): void {
  defaultPodSpec(child(template, 'spec'), false);
}

// ---------------------------------------------------------------------------------------
// QoS
// ---------------------------------------------------------------------------------------

export type PodQOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

/**
 * The Pod's QoS class as Kubernetes computes it on create (qos.GetPodQOS over containers
 * and init containers, cpu and memory only, positive values only): BestEffort without any
 * request or limit; Guaranteed when every container limits both cpu and memory and the
 * summed requests equal the summed limits; Burstable otherwise. Requests missing but
 * limited count as equal to the limit, as SetDefaults_Pod makes them.
 */
export function podQOSClass(spec: Obj): PodQOSClass {
  const requests = new Map<string, bigint>();
  const limits = new Map<string, bigint>();
  let guaranteed = true;
  const add = (m: Map<string, bigint>, k: string, v: bigint): void => {
    m.set(k, (m.get(k) ?? 0n) + v);
  };
  for (const key of ['containers', 'initContainers']) {
    eachObj(spec[key], (c) => {
      const resources = asObj(c.resources) ?? {};
      const lim = asObj(resources.limits) ?? {};
      const req = { ...lim, ...(asObj(resources.requests) ?? {}) };
      const found = new Set<string>();
      for (const [name, raw] of Object.entries(req)) {
        const milli = tryQuantity(raw)?.milliValue();
        if ((name === 'cpu' || name === 'memory') && milli !== undefined && milli > 0n)
          add(requests, name, milli);
      }
      for (const [name, raw] of Object.entries(lim)) {
        const milli = tryQuantity(raw)?.milliValue();
        if ((name === 'cpu' || name === 'memory') && milli !== undefined && milli > 0n) {
          found.add(name);
          add(limits, name, milli);
        }
      }
      if (!found.has('cpu') || !found.has('memory')) guaranteed = false;
    });
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  for (const [name, req] of requests) if (limits.get(name) !== req) guaranteed = false;
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}

// ---------------------------------------------------------------------------------------
// Validation helpers
// ---------------------------------------------------------------------------------------

/** An enum field: Required when empty, NotSupported when unknown (Kubernetes' pattern). */
export function enumField(value: unknown, field: string, supported: readonly string[]): FieldError[] {
  const s = str(value);
  if (s === '') return [required(field)];
  return supported.includes(s) ? [] : [notSupported(field, value, supported)];
}

const dnsLabel = (v: string, f: string): FieldError[] => problems(f, v, isDNS1123Label(v));
const dnsSubdomain = (v: string, f: string): FieldError[] => problems(f, v, isDNS1123Subdomain(v));

const FILE_MODE_MSG = 'must be a number between 0 and 0777 (octal), both inclusive';

/** Printable ASCII other than '=' (IsRelaxedEnvVarName; on by default since 1.32). */
function isRelaxedEnvVarName(value: string): string[] {
  for (const ch of value) {
    const c = ch.codePointAt(0)!;
    if (c < 0x20 || c > 0x7e || ch === '=') {
      return [
        "a valid environment variable name must consist only of printable ASCII characters other than '='",
      ];
    }
  }
  return [];
}

/** validateLocalDescendingPath: relative, no `..` element. */
function localDescendingPath(value: string, field: string): FieldError[] {
  const errs: FieldError[] = [];
  if (value.startsWith('/')) errs.push(invalid(field, value, 'must be a relative path'));
  if (value.split(/[\\/]/).includes('..')) errs.push(invalid(field, value, "must not contain '..'"));
  return errs;
}

/** validateLocalNonReservedPath: a descending path that does not start with `..`. */
function localNonReservedPath(value: string, field: string): FieldError[] {
  const errs = localDescendingPath(value, field);
  if (value.startsWith('..')) errs.push(invalid(field, value, "must not start with '..'"));
  return errs;
}

function fileMode(v: unknown, field: string): FieldError[] {
  const n = num(v);
  return n !== undefined && (n < 0 || n > 0o777) ? [invalid(field, n, FILE_MODE_MSG)] : [];
}

/** KeyToPath items of secret/configMap volumes: key and path required, path local. */
function keyToPathItems(items: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  eachObj(items, (it, i) => {
    const p = indexPath(field, i);
    if (str(it.key) === '') errs.push(required(childPath(p, 'key')));
    const path = str(it.path);
    if (path === '') errs.push(required(childPath(p, 'path')));
    else errs.push(...localNonReservedPath(path, childPath(p, 'path')));
    errs.push(...fileMode(it.mode, childPath(p, 'mode')));
  });
  return errs;
}

const HOST_PATH_TYPES = [
  '',
  'BlockDevice',
  'CharDevice',
  'Directory',
  'DirectoryOrCreate',
  'File',
  'FileOrCreate',
  'Socket',
];

/** ValidateVolumes: names (DNS label, unique), exactly one source, common sources' fields. */
function validateVolumes(volumes: unknown, field: string, names: Set<string>): FieldError[] {
  const errs: FieldError[] = [];
  eachObj(volumes, (vol, i) => {
    const p = indexPath(field, i);
    const name = str(vol.name);
    if (name === '') errs.push(required(childPath(p, 'name')));
    else errs.push(...dnsLabel(name, childPath(p, 'name')));
    if (names.has(name)) errs.push(duplicate(childPath(p, 'name'), name));
    names.add(name);
    const sources = VOLUME_SOURCES.filter((k) => vol[k] !== undefined && vol[k] !== null);
    if (sources.length === 0) errs.push(required(p, 'must specify a volume type'));
    for (const extra of sources.slice(1)) {
      errs.push(forbidden(childPath(p, extra), 'may not specify more than 1 volume type'));
    }
    const hostPath = asObj(vol.hostPath);
    if (hostPath) {
      if (str(hostPath.path) === '') errs.push(required(childPath(p, 'hostPath', 'path')));
      const type = hostPath.type;
      if (type !== undefined && type !== null && !HOST_PATH_TYPES.includes(str(type))) {
        errs.push(notSupported(childPath(p, 'hostPath', 'type'), type, HOST_PATH_TYPES));
      }
    }
    const secret = asObj(vol.secret);
    if (secret) {
      if (str(secret.secretName) === '') errs.push(required(childPath(p, 'secret', 'secretName')));
      errs.push(...fileMode(secret.defaultMode, childPath(p, 'secret', 'defaultMode')));
      errs.push(...keyToPathItems(secret.items, childPath(p, 'secret', 'items')));
    }
    const configMap = asObj(vol.configMap);
    if (configMap) {
      if (str(configMap.name) === '') errs.push(required(childPath(p, 'configMap', 'name')));
      errs.push(...fileMode(configMap.defaultMode, childPath(p, 'configMap', 'defaultMode')));
      errs.push(...keyToPathItems(configMap.items, childPath(p, 'configMap', 'items')));
    }
    const pvc = asObj(vol.persistentVolumeClaim);
    if (pvc && str(pvc.claimName) === '')
      errs.push(required(childPath(p, 'persistentVolumeClaim', 'claimName')));
    const emptyDir = asObj(vol.emptyDir);
    if (emptyDir?.sizeLimit !== undefined)
      errs.push(...quantityValue('', emptyDir.sizeLimit, childPath(p, 'emptyDir', 'sizeLimit')));
  });
  return errs;
}

/** ValidateVolumeMounts: name of a pod volume, mountPath required and unique, subPath local. */
function validateVolumeMounts(mounts: unknown, field: string, volumes: ReadonlySet<string>): FieldError[] {
  const errs: FieldError[] = [];
  const paths = new Set<string>();
  eachObj(mounts, (m, i) => {
    const p = indexPath(field, i);
    const name = str(m.name);
    if (name === '') errs.push(required(childPath(p, 'name')));
    if (!volumes.has(name)) errs.push(notFound(childPath(p, 'name'), name));
    const mountPath = str(m.mountPath);
    if (mountPath === '') errs.push(required(childPath(p, 'mountPath')));
    if (paths.has(mountPath)) errs.push(invalid(childPath(p, 'mountPath'), mountPath, 'must be unique'));
    paths.add(mountPath);
    if (str(m.subPath) !== '') errs.push(...localDescendingPath(str(m.subPath), childPath(p, 'subPath')));
  });
  return errs;
}

/** validateContainerPorts: names (IANA_SVC_NAME, unique), containerPort, hostPort, protocol. */
function validateContainerPorts(ports: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  eachObj(ports, (port, i) => {
    const p = indexPath(field, i);
    const name = str(port.name);
    if (name !== '') {
      const msgs = isValidPortName(name);
      if (msgs.length > 0) errs.push(...problems(childPath(p, 'name'), name, msgs));
      else if (names.has(name)) errs.push(duplicate(childPath(p, 'name'), name));
      else names.add(name);
    }
    const containerPort = num(port.containerPort) ?? 0;
    if (containerPort === 0) errs.push(required(childPath(p, 'containerPort')));
    else
      errs.push(
        ...problems(childPath(p, 'containerPort'), containerPort, isInRange(containerPort, 1, 65535)),
      );
    const hostPort = num(port.hostPort) ?? 0;
    if (hostPort !== 0)
      errs.push(...problems(childPath(p, 'hostPort'), hostPort, isInRange(hostPort, 1, 65535)));
    errs.push(...enumField(port.protocol, childPath(p, 'protocol'), PORT_PROTOCOLS));
  });
  return errs;
}

const ENV_FIELD_PATHS = [
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
];

const RESOURCE_FIELD_REFS = [
  'limits.cpu',
  'limits.ephemeral-storage',
  'limits.memory',
  'requests.cpu',
  'requests.ephemeral-storage',
  'requests.memory',
];

/** validateObjectFieldSelector for env vars (and the subscripted labels/annotations forms). */
function validateFieldRef(ref: Obj, field: string): FieldError[] {
  if (str(ref.apiVersion) === '') return [required(childPath(field, 'apiVersion'))];
  const path = str(ref.fieldPath);
  if (path === '') return [required(childPath(field, 'fieldPath'))];
  const sub = /^(metadata\.(?:labels|annotations))\['(.*)'\]$/.exec(path);
  if (sub) {
    const key = sub[1] === 'metadata.annotations' ? sub[2]!.toLowerCase() : sub[2]!;
    return qualifiedName(key, field);
  }
  return ENV_FIELD_PATHS.includes(path)
    ? []
    : [notSupported(childPath(field, 'fieldPath'), path, ENV_FIELD_PATHS)];
}

/** A `{name, key}` selector of a ConfigMap or Secret (validateConfigMapKeySelector). */
function keySelector(sel: Obj, field: string): FieldError[] {
  const errs = problems(childPath(field, 'name'), str(sel.name), isDNS1123Subdomain(str(sel.name)));
  const key = str(sel.key);
  if (key === '') errs.push(required(childPath(field, 'key')));
  else errs.push(...problems(childPath(field, 'key'), key, isConfigMapKey(key)));
  return errs;
}

/** ValidateEnv: names (relaxed rule), exactly one valueFrom source, and not both value and valueFrom. */
function validateEnv(env: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  eachObj(env, (ev, i) => {
    const p = indexPath(field, i);
    const name = str(ev.name);
    if (name === '') errs.push(required(childPath(p, 'name')));
    else errs.push(...problems(childPath(p, 'name'), name, isRelaxedEnvVarName(name)));
    const from = asObj(ev.valueFrom);
    if (!from) return;
    const fp = childPath(p, 'valueFrom');
    let sources = 0;
    const fieldRef = asObj(from.fieldRef);
    if (fieldRef) {
      sources++;
      errs.push(...validateFieldRef(fieldRef, childPath(fp, 'fieldRef')));
    }
    const resourceRef = asObj(from.resourceFieldRef);
    if (resourceRef) {
      sources++;
      const resource = str(resourceRef.resource);
      const rp = childPath(fp, 'resourceFieldRef', 'resource');
      if (resource === '') errs.push(required(rp));
      else if (!RESOURCE_FIELD_REFS.includes(resource) && !/^(limits|requests)\.hugepages-/.test(resource)) {
        errs.push(notSupported(rp, resource, RESOURCE_FIELD_REFS));
      }
    }
    for (const key of ['configMapKeyRef', 'secretKeyRef']) {
      const sel = asObj(from[key]);
      if (sel) {
        sources++;
        errs.push(...keySelector(sel, childPath(fp, key)));
      }
    }
    if (sources === 0) {
      errs.push(
        invalid(
          fp,
          '',
          'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`',
        ),
      );
    } else if (str(ev.value) !== '') {
      errs.push(invalid(fp, '', 'may not be specified when `value` is not empty'));
    } else if (sources > 1) {
      errs.push(invalid(fp, '', 'may not have more than one field specified at a time'));
    }
  });
  return errs;
}

/** ValidateEnvFrom: prefix, exactly one of configMapRef / secretRef with a name. */
function validateEnvFrom(envFrom: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  eachObj(envFrom, (ef, i) => {
    const p = indexPath(field, i);
    const prefix = str(ef.prefix);
    if (prefix !== '') errs.push(...problems(childPath(p, 'prefix'), prefix, isRelaxedEnvVarName(prefix)));
    let sources = 0;
    for (const key of ['configMapRef', 'secretRef']) {
      const ref = asObj(ef[key]);
      if (!ref) continue;
      sources++;
      const name = str(ref.name);
      if (name === '') errs.push(required(childPath(p, key, 'name')));
      else errs.push(...dnsSubdomain(name, childPath(p, key, 'name')));
    }
    if (sources === 0) errs.push(invalid(field, '', 'must specify one of: `configMapRef` or `secretRef`'));
    else if (sources > 1)
      errs.push(invalid(field, '', 'may not have more than one field specified at a time'));
  });
  return errs;
}

const HTTP_HEADER_NAME = /^[-A-Za-z0-9]+$/;

/**
 * validateHandler of a probe or lifecycle hook: exactly one handler type
 * (`must specify a handler type` / `may not specify more than 1 handler type`), exec
 * command required, httpGet path/port/scheme/header names, tcpSocket and grpc ports.
 */
function validateHandler(h: Obj, field: string, allowSleep: boolean): FieldError[] {
  const errs: FieldError[] = [];
  let count = 0;
  for (const type of HANDLER_TYPES) {
    const action = h[type];
    if (action === undefined || action === null || (type === 'sleep' && !allowSleep)) continue;
    const p = childPath(field, type);
    if (count++ > 0) {
      errs.push(forbidden(p, 'may not specify more than 1 handler type'));
      continue;
    }
    const a = asObj(action) ?? {};
    switch (type) {
      case 'exec':
        if (list(a.command).length === 0) errs.push(required(childPath(p, 'command')));
        break;
      case 'httpGet':
        if (str(a.path) === '') errs.push(required(childPath(p, 'path')));
        errs.push(...portNumOrName(a.port, childPath(p, 'port'), isValidPortName));
        if (!['HTTP', 'HTTPS'].includes(str(a.scheme))) {
          errs.push(notSupported(childPath(p, 'scheme'), a.scheme ?? '', ['HTTP', 'HTTPS']));
        }
        eachObj(a.httpHeaders, (hd) => {
          if (!HTTP_HEADER_NAME.test(str(hd.name))) {
            errs.push(
              invalid(
                childPath(p, 'httpHeaders'),
                str(hd.name),
                "a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')",
              ),
            );
          }
        });
        break;
      case 'tcpSocket':
        errs.push(...portNumOrName(a.port, childPath(p, 'port'), isValidPortName));
        break;
      case 'grpc':
        errs.push(...problems(childPath(p, 'port'), a.port ?? 0, isInRange(num(a.port) ?? 0, 1, 65535)));
        break;
      case 'sleep':
        errs.push(...nonNegative(a.seconds, childPath(p, 'seconds')));
        break;
    }
  }
  if (count === 0) errs.push(required(field, 'must specify a handler type'));
  return errs;
}

/** validateProbe: a handler, non-negative timings, probe terminationGracePeriodSeconds > 0. */
function validateProbe(probe: Obj, field: string): FieldError[] {
  const errs = validateHandler(probe, field, false);
  for (const k of [
    'initialDelaySeconds',
    'timeoutSeconds',
    'periodSeconds',
    'successThreshold',
    'failureThreshold',
  ]) {
    errs.push(...nonNegative(probe[k], childPath(field, k)));
  }
  const grace = num(probe.terminationGracePeriodSeconds);
  if (grace !== undefined && grace <= 0) {
    errs.push(invalid(childPath(field, 'terminationGracePeriodSeconds'), grace, 'must be greater than 0'));
  }
  return errs;
}

const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);
const STANDARD_RESOURCES = new Set([
  ...STANDARD_CONTAINER_RESOURCES,
  'storage',
  'pods',
  'services',
  'replicationcontrollers',
  'resourcequotas',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'services.nodeports',
  'services.loadbalancers',
  'requests.cpu',
  'requests.memory',
  'requests.storage',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
]);

const isHugePages = (name: string): boolean => name.startsWith('hugepages-');
/** IsNativeResource: unprefixed or `kubernetes.io/`-prefixed. */
const isNative = (name: string): boolean => !name.includes('/') || name.includes('kubernetes.io/');
/** IsOvercommitAllowed: native and not hugepages (extended resources must request = limit). */
const overcommitAllowed = (name: string): boolean => isNative(name) && !isHugePages(name);

/** validateContainerResourceName: a qualified, standard (or extended) container resource. */
function resourceName(name: string, field: string): FieldError[] {
  const errs = problems(field, name, isQualifiedName(name));
  if (errs.length > 0) return errs;
  if (!name.includes('/')) {
    if (!STANDARD_RESOURCES.has(name) && !isHugePages(name)) {
      errs.push(invalid(field, name, 'must be a standard resource type or fully qualified'));
    }
    if (!STANDARD_CONTAINER_RESOURCES.has(name) && !isHugePages(name)) {
      errs.push(invalid(field, name, 'must be a standard resource for containers'));
    }
  } else if (
    !isNative(name) &&
    (name.startsWith('requests.') || isQualifiedName(`requests.${name}`).length > 0)
  ) {
    errs.push(invalid(field, name, "doesn't follow extended resource name standard"));
  }
  return errs;
}

/** ValidateResourceQuantityValue: parses, >= 0, and whole for extended resources. */
function quantityValue(name: string, raw: unknown, field: string): FieldError[] {
  const problem = quantityProblem(raw);
  if (problem !== undefined) return [invalid(field, raw ?? null, problem)];
  const q = tryQuantity(raw)!;
  const errs: FieldError[] = [];
  if (q.sign < 0) errs.push(invalid(field, q.toString(), 'must be greater than or equal to 0'));
  if (name !== '' && !isNative(name) && q.milliValue() % 1000n !== 0n) {
    errs.push(invalid(field, q.toString(), 'must be an integer'));
  }
  return errs;
}

/**
 * ValidateContainerResourceRequirements: resource names and quantities of limits and
 * requests (`resources.limits[cpu]`), each request at most its limit (`must be less than
 * or equal to cpu limit of 500m`, on `resources.requests`), extended resources with
 * requests equal to limits and a limit set.
 */
function validateResources(resources: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const r = asObj(resources) ?? {};
  const limPath = childPath(field, 'limits');
  const reqPath = childPath(field, 'requests');
  const limits = asObj(r.limits) ?? {};
  for (const [name, raw] of Object.entries(limits)) {
    const p = keyPath(limPath, name);
    errs.push(...resourceName(name, p), ...quantityValue(name, raw, p));
  }
  for (const [name, raw] of Object.entries(asObj(r.requests) ?? {})) {
    const p = keyPath(reqPath, name);
    errs.push(...resourceName(name, p), ...quantityValue(name, raw, p));
    const req = tryQuantity(raw);
    const lim = Object.hasOwn(limits, name) ? tryQuantity(limits[name]) : undefined;
    if (req === undefined) continue;
    if (lim !== undefined) {
      if (req.cmp(lim) !== 0 && !overcommitAllowed(name)) {
        errs.push(invalid(reqPath, req.toString(), `must be equal to ${name} limit of ${lim.toString()}`));
      } else if (req.cmp(lim) > 0) {
        errs.push(
          invalid(
            reqPath,
            req.toString(),
            `must be less than or equal to ${name} limit of ${lim.toString()}`,
          ),
        );
      }
    } else if (!Object.hasOwn(limits, name) && !overcommitAllowed(name)) {
      errs.push(required(limPath, 'Limit must be set for non overcommitable resources'));
    }
  }
  return errs;
}

type ContainerKind = 'container' | 'init';

const INIT_ONLY_SIDECAR = 'may not be set for init containers without restartPolicy=Always';

/**
 * One container (validateContainerCommon plus the regular/init specifics): name (DNS
 * label, unique across containers and init containers), image required (and, for Pods,
 * without surrounding whitespace), pull and termination-message policies, ports, env,
 * envFrom, volumeMounts, resources, probes (liveness/startup successThreshold must be 1;
 * init containers only as sidecars), lifecycle hooks and the container restartPolicy.
 */
function validateContainer(
  c: Obj,
  p: string,
  kind: ContainerKind,
  names: Set<string>,
  volumes: ReadonlySet<string>,
  isPod: boolean,
): FieldError[] {
  const errs: FieldError[] = [];
  const name = str(c.name);
  if (name === '') errs.push(required(childPath(p, 'name')));
  else errs.push(...dnsLabel(name, childPath(p, 'name')));
  if (names.has(name)) errs.push(duplicate(childPath(p, 'name'), name));
  else if (name !== '') names.add(name);

  const image = str(c.image);
  if (image === '') errs.push(required(childPath(p, 'image')));
  else if (isPod && image.trim() !== image) {
    errs.push(invalid(childPath(p, 'image'), image, 'must not have leading or trailing whitespace'));
  }
  errs.push(
    ...enumField(c.imagePullPolicy, childPath(p, 'imagePullPolicy'), ['Always', 'IfNotPresent', 'Never']),
  );
  errs.push(
    ...enumField(c.terminationMessagePolicy, childPath(p, 'terminationMessagePolicy'), [
      'File',
      'FallbackToLogsOnError',
    ]),
  );
  errs.push(...validateContainerPorts(c.ports, childPath(p, 'ports')));
  errs.push(...validateEnv(c.env, childPath(p, 'env')));
  errs.push(...validateEnvFrom(c.envFrom, childPath(p, 'envFrom')));
  errs.push(...validateVolumeMounts(c.volumeMounts, childPath(p, 'volumeMounts'), volumes));
  errs.push(...validateResources(c.resources, childPath(p, 'resources')));

  const restartPolicy = c.restartPolicy;
  const sidecar = kind === 'init' && restartPolicy === 'Always';
  if (restartPolicy !== undefined && restartPolicy !== null) {
    if (kind === 'container')
      errs.push(forbidden(childPath(p, 'restartPolicy'), 'may not be set for non-init containers'));
    else if (!sidecar) errs.push(notSupported(childPath(p, 'restartPolicy'), restartPolicy, ['Always']));
  }
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
    const pr = asObj(c[probe]);
    if (!pr) continue;
    const pp = childPath(p, probe);
    if (kind === 'init' && !sidecar) {
      errs.push(forbidden(pp, INIT_ONLY_SIDECAR));
      continue;
    }
    errs.push(...validateProbe(pr, pp));
    if (probe !== 'readinessProbe' && num(pr.successThreshold) !== 1) {
      errs.push(invalid(childPath(pp, 'successThreshold'), pr.successThreshold ?? 0, 'must be 1'));
    }
    if (probe === 'readinessProbe' && pr.terminationGracePeriodSeconds != null) {
      errs.push(
        invalid(
          childPath(pp, 'terminationGracePeriodSeconds'),
          pr.terminationGracePeriodSeconds,
          'must not be set for readinessProbes',
        ),
      );
    }
  }
  const lifecycle = asObj(c.lifecycle);
  if (lifecycle) {
    if (kind === 'init' && !sidecar) errs.push(forbidden(childPath(p, 'lifecycle'), INIT_ONLY_SIDECAR));
    else {
      for (const hook of ['postStart', 'preStop']) {
        const h = asObj(lifecycle[hook]);
        if (h) errs.push(...validateHandler(h, childPath(p, 'lifecycle', hook), true));
      }
    }
  }
  return errs;
}

/**
 * ValidateTolerations: key a qualified name (or empty with operator Exists), operator
 * Equal/Exists (value a label value; none with Exists), tolerationSeconds only with
 * effect NoExecute, effect NoSchedule/PreferNoSchedule/NoExecute when set.
 */
export function validateTolerations(tolerations: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  eachObj(tolerations, (t, i) => {
    const p = indexPath(field, i);
    const key = str(t.key);
    const operator = str(t.operator);
    if (key !== '') errs.push(...qualifiedName(key, childPath(p, 'key')));
    if (key === '' && operator !== 'Exists') {
      errs.push(
        invalid(
          childPath(p, 'operator'),
          operator,
          'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        ),
      );
    }
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null && t.effect !== 'NoExecute') {
      errs.push(
        invalid(
          childPath(p, 'effect'),
          str(t.effect),
          "effect must be 'NoExecute' when `tolerationSeconds` is set",
        ),
      );
    }
    switch (operator) {
      case '':
      case 'Equal': {
        const msgs = isValidLabelValue(str(t.value));
        if (msgs.length > 0) errs.push(invalid(childPath(p, 'operator'), str(t.value), msgs.join(';')));
        break;
      }
      case 'Exists':
        if (str(t.value) !== '')
          errs.push(invalid(childPath(p, 'operator'), t, "value must be empty when `operator` is 'Exists'"));
        break;
      default:
        errs.push(notSupported(childPath(p, 'operator'), operator, ['Equal', 'Exists']));
    }
    if (str(t.effect) !== '') errs.push(...taintEffect(t.effect, childPath(p, 'effect')));
  });
  return errs;
}

/** validateTaintEffect: NoSchedule, PreferNoSchedule or NoExecute. */
export function taintEffect(effect: unknown, field: string): FieldError[] {
  return enumField(effect, field, ['NoSchedule', 'PreferNoSchedule', 'NoExecute']);
}

/**
 * ValidatePodSpec (`path` is `spec` for Pods, `spec.template.spec` for templates):
 * volumes, containers (at least one) and init containers, unique hostPorts, restartPolicy,
 * dnsPolicy (+ dnsConfig for None), nodeSelector labels, serviceAccountName, nodeName,
 * priorityClassName and schedulerName (DNS subdomains), hostname/subdomain (DNS labels),
 * activeDeadlineSeconds (1..2^31-1), tolerations, hostNetwork ports. `pod` is given for
 * Pods (not templates); on create, ephemeral containers are forbidden and so is a
 * nodeName while schedulingGates remain.
 */
export function validatePodSpec(spec: Obj, path: string, pod?: { create: boolean }): FieldError[] {
  const isPod = pod !== undefined;
  const errs: FieldError[] = [];
  const volumes = new Set<string>();
  errs.push(...validateVolumes(spec.volumes, childPath(path, 'volumes'), volumes));

  const containersPath = childPath(path, 'containers');
  const containers = list(spec.containers);
  if (containers.length === 0) errs.push(required(containersPath));
  const names = new Set<string>();
  eachObj(containers, (c, i) =>
    errs.push(...validateContainer(c, indexPath(containersPath, i), 'container', names, volumes, isPod)),
  );
  eachObj(spec.initContainers, (c, i) =>
    errs.push(
      ...validateContainer(c, indexPath(childPath(path, 'initContainers'), i), 'init', names, volumes, isPod),
    ),
  );

  // checkHostPortConflicts: protocol/hostIP/hostPort unique across the (regular) containers.
  const hostPorts = new Set<string>();
  eachObj(containers, (c, i) =>
    eachObj(c.ports, (port, j) => {
      const hostPort = num(port.hostPort) ?? 0;
      if (hostPort === 0) return;
      const key = `${str(port.protocol)}/${str(port.hostIP)}/${hostPort}`;
      const p = childPath(indexPath(childPath(indexPath(containersPath, i), 'ports'), j), 'hostPort');
      if (hostPorts.has(key)) errs.push(duplicate(p, key));
      hostPorts.add(key);
      if (spec.hostNetwork === true && hostPort !== num(port.containerPort)) {
        errs.push(
          invalid(
            childPath(indexPath(childPath(indexPath(containersPath, i), 'ports'), j), 'containerPort'),
            port.containerPort ?? 0,
            'must match `hostPort` when `hostNetwork` is true',
          ),
        );
      }
    }),
  );

  errs.push(
    ...enumField(spec.restartPolicy, childPath(path, 'restartPolicy'), ['Always', 'OnFailure', 'Never']),
  );
  errs.push(
    ...enumField(spec.dnsPolicy, childPath(path, 'dnsPolicy'), [
      'ClusterFirstWithHostNet',
      'ClusterFirst',
      'Default',
      'None',
    ]),
  );
  if (spec.dnsPolicy === 'None' && !isObj(spec.dnsConfig)) {
    errs.push(required(childPath(path, 'dnsConfig'), 'must provide `dnsConfig` when `dnsPolicy` is None'));
  }
  errs.push(...validateLabels(strMap(spec.nodeSelector), childPath(path, 'nodeSelector')));
  for (const key of ['serviceAccountName', 'nodeName', 'priorityClassName', 'schedulerName']) {
    const v = str(spec[key]);
    if (v !== '') errs.push(...dnsSubdomain(v, childPath(path, key)));
  }
  for (const key of ['hostname', 'subdomain']) {
    const v = str(spec[key]);
    if (v !== '') errs.push(...dnsLabel(v, childPath(path, key)));
  }
  const deadline = num(spec.activeDeadlineSeconds);
  if (deadline !== undefined) {
    errs.push(
      ...problems(childPath(path, 'activeDeadlineSeconds'), deadline, isInRange(deadline, 1, 2147483647)),
    );
  }
  errs.push(...validateTolerations(spec.tolerations, childPath(path, 'tolerations')));
  eachObj(spec.imagePullSecrets, (s, i) => {
    const extra = Object.keys(s).filter((k) => k !== 'name');
    if (extra.length > 0)
      errs.push(invalid(indexPath(childPath(path, 'imagePullSecrets'), i), s, 'only name may be set'));
  });
  if (pod?.create) {
    if (list(spec.ephemeralContainers).length > 0) {
      errs.push(forbidden(childPath(path, 'ephemeralContainers'), 'cannot be set on create'));
    }
    if (str(spec.nodeName) !== '' && list(spec.schedulingGates).length > 0) {
      errs.push(
        forbidden(childPath(path, 'nodeName'), 'cannot be set until all schedulingGates have been cleared'),
      );
    }
  }
  eachObj(spec.schedulingGates, (g, i) => {
    errs.push(
      ...qualifiedName(str(g.name), childPath(indexPath(childPath(path, 'schedulingGates'), i), 'name')),
    );
  });
  return errs;
}

/**
 * ValidatePodTemplateSpec at `path` (`spec.template`): template labels and annotations
 * (reported on `spec.template.metadata.*`, the fields' real paths, where Kubernetes
 * writes `spec.template.labels`), the PodSpec, and no ephemeral containers.
 */
export function validatePodTemplate(template: Obj, path: string): FieldError[] {
  const meta = asObj(template.metadata) ?? {};
  const specPath = childPath(path, 'spec');
  const spec = asObj(template.spec) ?? {};
  const errs = [
    ...validateLabels(strMap(meta.labels), childPath(path, 'metadata', 'labels')),
    ...validateAnnotations(strMap(meta.annotations), childPath(path, 'metadata', 'annotations')),
    ...validatePodSpec(spec, specPath),
  ];
  if (list(spec.ephemeralContainers).length > 0) {
    errs.push(
      forbidden(
        childPath(specPath, 'ephemeralContainers'),
        'ephemeral containers not allowed in pod template',
      ),
    );
  }
  return errs;
}
