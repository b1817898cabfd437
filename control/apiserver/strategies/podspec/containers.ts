/**
 * Validation of one container (validateContainers, validateInitContainers and the pieces
 * they call): ports, env and envFrom, lifecycle handlers and probes, resources, and what
 * init and sidecar containers may set.
 */
import type { FieldError } from '../../../../api/meta/validation.js';
import {
  childPath,
  duplicate,
  forbidden,
  indexPath,
  invalid,
  isConfigMapKey,
  isDNS1123Subdomain,
  isInRange,
  isQualifiedName,
  isValidPortName,
  keyPath,
  notSupported,
  required,
} from '../../../../api/meta/validation.js';
import type { Obj } from '../meta.js';
import {
  asObj,
  eachObj,
  list,
  nonNegative,
  num,
  PORT_PROTOCOLS,
  portNumOrName,
  problems,
  qualifiedName,
  quantityProblem,
  str,
  tryQuantity,
} from '../meta.js';
import { enumField, dnsLabel, dnsSubdomain } from './fields.js';
import { HANDLER_TYPES } from './defaults.js';
import { validateVolumeMounts } from './volumes.js';

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

/** validateContainerPorts: names (IANA_SVC_NAME, unique), containerPort, hostPort, protocol. */
export function validateContainerPorts(ports: unknown, field: string): FieldError[] {
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
export function quantityValue(name: string, raw: unknown, field: string): FieldError[] {
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
export function validateContainer(
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
