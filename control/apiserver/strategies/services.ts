/**
 * Service (core/v1): Kubernetes' pkg/registry/core/service/strategy.go, SetDefaults_Service,
 * ValidateService / ValidateServiceUpdate / ValidateServiceStatusUpdate, and the parts of
 * the service REST layer that keep clients' updates working without an allocator in the
 * strategy (normalizeClusterIPs, patchAllocatedValues). Allocating clusterIPs and
 * nodePorts, and the nodePort range, belong to the allocator, not here.
 */
import type { FieldError } from '../../../api/meta/validation.js';
import {
  canonicalIP,
  childPath,
  duplicate,
  forbidden,
  indexPath,
  invalid,
  isDNS1123Label,
  isDNS1123Subdomain,
  isInRange,
  isIP,
  isIPv6String,
  isValidIP,
  isValidPortName,
  nameIsDNS1035Label,
  notSupported,
  required,
  validateLabels,
} from '../../../api/meta/validation.js';
import type { KubeObject } from '../../../api/object.js';
import type { Obj } from './meta.js';
import {
  asObj,
  child,
  clone,
  defaultPointer,
  defaultString,
  defineStrategy,
  eachObj,
  isObj,
  list,
  num,
  PORT_PROTOCOLS,
  portNumOrName,
  problems,
  qualifiedName,
  section,
  str,
  semanticEqual,
  strMap,
} from './meta.js';
import { enumField } from './podspec/index.js';
import { validateEndpointIP } from './endpoints.js';
import { serviceWarnings } from './service-warnings.js';

/** Kubernetes' DefaultClientIPServiceAffinitySeconds (3 hours) and its maximum (1 day). */
const DEFAULT_CLIENT_IP_TIMEOUT = 10800;
const MAX_CLIENT_IP_TIMEOUT = 86400;
/** The kubelet's port, which LoadBalancer services may not expose. */
const KUBELET_PORT = 10250;

const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];

const type = (spec: Obj): string => str(spec.type);
const isHeadless = (spec: Obj): boolean => {
  const ips = list(spec.clusterIPs);
  return ips.length === 1 && ips[0] === 'None';
};
/** service.ExternallyAccessible: NodePort, LoadBalancer, or ClusterIP with externalIPs. */
const externallyAccessible = (spec: Obj): boolean =>
  ['NodePort', 'LoadBalancer'].includes(type(spec)) ||
  (type(spec) === 'ClusterIP' && list(spec.externalIPs).length > 0);
const needsNodePort = (spec: Obj): boolean =>
  type(spec) === 'NodePort' ||
  (type(spec) === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false);

/**
 * SetDefaults_Service (sessionAffinity None, its ClientIP config 10800 s, type ClusterIP,
 * port protocol TCP, targetPort = port when unset, externalTrafficPolicy Cluster for
 * externally-accessible services, internalTrafficPolicy Cluster, LoadBalancers'
 * allocateLoadBalancerNodePorts true and ingress ipMode VIP), then the REST layer's
 * clusterIP/clusterIPs sync and the single-stack IPv4 family fields the allocator would
 * set (ipFamilyPolicy SingleStack, or PreferDualStack for headless services without a
 * selector; ipFamilies from the clusterIP, else IPv4). clusterIP itself stays unset.
 */
function defaultService(obj: KubeObject): void {
  const spec = section(obj, 'spec');
  defaultString(spec, 'sessionAffinity', 'None');
  if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig;
  if (spec.sessionAffinity === 'ClientIP') {
    const clientIP = asObj(asObj(spec.sessionAffinityConfig)?.clientIP);
    if (num(clientIP?.timeoutSeconds) === undefined) {
      spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: DEFAULT_CLIENT_IP_TIMEOUT } };
    }
  }
  defaultString(spec, 'type', 'ClusterIP');
  eachObj(spec.ports, (p) => {
    defaultString(p, 'protocol', 'TCP');
    if (p.targetPort === undefined || p.targetPort === null || p.targetPort === 0 || p.targetPort === '') {
      p.targetPort = p.port;
    }
  });
  if (externallyAccessible(spec)) defaultString(spec, 'externalTrafficPolicy', 'Cluster');
  if (['NodePort', 'LoadBalancer', 'ClusterIP'].includes(type(spec)))
    defaultPointer(spec, 'internalTrafficPolicy', 'Cluster');
  if (type(spec) === 'LoadBalancer') {
    defaultPointer(spec, 'allocateLoadBalancerNodePorts', true);
    eachObj(asObj(asObj(obj.status)?.loadBalancer)?.ingress, (ing) => {
      if (str(ing.ip) !== '') defaultPointer(ing, 'ipMode', 'VIP');
    });
  }
  // normalizeClusterIPs: either of clusterIP / clusterIPs given fills the other.
  const clusterIP = str(spec.clusterIP);
  const clusterIPs = list(spec.clusterIPs);
  if (clusterIP !== '' && clusterIPs.length === 0) spec.clusterIPs = [clusterIP];
  else if (clusterIP === '' && clusterIPs.length > 0 && typeof clusterIPs[0] === 'string')
    spec.clusterIP = clusterIPs[0];
  if (type(spec) === 'ExternalName') return;
  const headlessSelectorless = spec.clusterIP === 'None' && Object.keys(strMap(spec.selector)).length === 0;
  defaultPointer(spec, 'ipFamilyPolicy', headlessSelectorless ? 'PreferDualStack' : 'SingleStack');
  if (list(spec.ipFamilies).length === 0) {
    const ips = list(spec.clusterIPs).filter((ip): ip is string => typeof ip === 'string' && ip !== 'None');
    spec.ipFamilies = ips.length > 0 ? ips.map((ip) => (isIPv6String(ip) ? 'IPv6' : 'IPv4')) : ['IPv4'];
  }
}

/**
 * The service update's preparation: dropTypeDependentFields (below), then the REST layer's
 * patchAllocatedValues: what the allocator assigned (clusterIP and clusterIPs, nodePorts by
 * port name, healthCheckNodePort) and the family fields are kept when the update omits
 * them, as with `kubectl apply` of a manifest without them.
 */
function patchAllocatedValues(obj: KubeObject, old: KubeObject): void {
  const spec = section(obj, 'spec');
  const oldSpec = asObj(old.spec) ?? {};
  const newType = str(spec.type) || 'ClusterIP';
  dropTypeDependentFields(spec, oldSpec, newType);
  // The load balancer status goes with the type (Kubernetes clears it at once).
  if (newType !== 'LoadBalancer') section(obj, 'status').loadBalancer = {};
  if (type(oldSpec) === 'ExternalName' || newType === 'ExternalName') return;
  if (str(spec.clusterIP) === '' && str(oldSpec.clusterIP) !== '') spec.clusterIP = oldSpec.clusterIP;
  if (list(spec.clusterIPs).length === 0 && list(oldSpec.clusterIPs).length > 0)
    spec.clusterIPs = clone(oldSpec.clusterIPs);
  if (list(spec.ipFamilies).length === 0 && list(oldSpec.ipFamilies).length > 0)
    spec.ipFamilies = clone(oldSpec.ipFamilies);
  defaultPointer(spec, 'ipFamilyPolicy', oldSpec.ipFamilyPolicy ?? null);
  if (spec.ipFamilyPolicy === null) delete spec.ipFamilyPolicy;
  if (needsNodePort(oldSpec) && needsNodePort({ ...spec, type: newType })) {
    const byName = new Map<string, unknown>();
    eachObj(oldSpec.ports, (p) => byName.set(str(p.name), p.nodePort));
    const used = new Set(
      list(spec.ports)
        .filter(isObj)
        .map((p) => num(p.nodePort) ?? 0),
    );
    eachObj(spec.ports, (p) => {
      const previous = byName.get(str(p.name));
      if (!num(p.nodePort) && typeof previous === 'number' && !used.has(previous)) p.nodePort = previous;
    });
  }
  if (!num(spec.healthCheckNodePort) && num(oldSpec.healthCheckNodePort))
    spec.healthCheckNodePort = oldSpec.healthCheckNodePort;
}

/**
 * dropTypeDependentFields of the service strategy: when an update changes the type, what
 * only the old type needed (clusterIPs and families for ExternalName, nodePorts,
 * healthCheckNodePort, allocateLoadBalancerNodePorts, loadBalancerClass,
 * externalTrafficPolicy) is cleared if the client left it as it was, so that applying a
 * manifest that switches NodePort → ClusterIP just works.
 */
function dropTypeDependentFields(spec: Obj, oldSpec: Obj, newType: string): void {
  const now = { ...spec, type: newType };
  const same = (k: string): boolean => semanticEqual(spec[k], oldSpec[k]);
  if (type(oldSpec) !== 'ExternalName' && newType === 'ExternalName') {
    if (same('clusterIP') && same('clusterIPs')) {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    }
    if (same('ipFamilies')) delete spec.ipFamilies;
    if (same('ipFamilyPolicy')) delete spec.ipFamilyPolicy;
  }
  const nodePorts = (s: Obj): unknown[] => list(s.ports).map((p) => asObj(p)?.nodePort);
  if (needsNodePort(oldSpec) && !needsNodePort(now) && semanticEqual(nodePorts(spec), nodePorts(oldSpec))) {
    eachObj(spec.ports, (p) => delete p.nodePort);
  }
  const needsHC = (s: Obj): boolean => type(s) === 'LoadBalancer' && s.externalTrafficPolicy === 'Local';
  if (needsHC(oldSpec) && !needsHC(now) && same('healthCheckNodePort')) delete spec.healthCheckNodePort;
  if (type(oldSpec) === 'LoadBalancer' && newType !== 'LoadBalancer') {
    if (same('allocateLoadBalancerNodePorts')) delete spec.allocateLoadBalancerNodePorts;
    if (same('loadBalancerClass')) delete spec.loadBalancerClass;
  }
  if (externallyAccessible(oldSpec) && !externallyAccessible(now) && same('externalTrafficPolicy')) {
    delete spec.externalTrafficPolicy;
  }
}

/** validateServicePort: name (required when several ports, DNS label, unique), port, protocol, targetPort, appProtocol. */
function validatePort(p: Obj, path: string, requireName: boolean, names: Set<string>): FieldError[] {
  const errs: FieldError[] = [];
  const name = str(p.name);
  if (requireName && name === '') errs.push(required(childPath(path, 'name')));
  else if (name !== '') {
    errs.push(...problems(childPath(path, 'name'), name, isDNS1123Label(name)));
    if (names.has(name)) errs.push(duplicate(childPath(path, 'name'), name));
    names.add(name);
  }
  const port = num(p.port) ?? 0;
  errs.push(...problems(childPath(path, 'port'), port, isInRange(port, 1, 65535)));
  errs.push(...enumField(p.protocol, childPath(path, 'protocol'), PORT_PROTOCOLS));
  errs.push(...portNumOrName(p.targetPort, childPath(path, 'targetPort'), isValidPortName));
  if (p.appProtocol !== undefined && p.appProtocol !== null)
    errs.push(...qualifiedName(str(p.appProtocol), childPath(path, 'appProtocol')));
  return errs;
}

/** ValidateServiceClusterIPsRelatedFields (not for ExternalName). */
function validateClusterIPs(spec: Obj): FieldError[] {
  if (type(spec) === 'ExternalName') return [];
  const errs: FieldError[] = [];
  const clusterIP = str(spec.clusterIP);
  const ips = list(spec.clusterIPs).map(str);
  if (clusterIP !== '') {
    if (ips.length === 0) errs.push(required('spec.clusterIPs'));
    else if (ips[0] !== clusterIP)
      errs.push(invalid('spec.clusterIPs', ips, 'first value must match `clusterIP`'));
  } else if (ips.length > 0) {
    errs.push(invalid('spec.clusterIPs', ips, 'must be empty when `clusterIP` is not specified'));
  }
  const seen = new Set<string>();
  list(spec.ipFamilies).forEach((f, i) => {
    const p = indexPath('spec.ipFamilies', i);
    if (f !== 'IPv4' && f !== 'IPv6') errs.push(notSupported(p, f, ['IPv4', 'IPv6']));
    if (seen.has(str(f))) errs.push(duplicate(p, f));
    seen.add(str(f));
  });
  const policy = spec.ipFamilyPolicy;
  if (
    policy !== undefined &&
    policy !== null &&
    !['PreferDualStack', 'RequireDualStack', 'SingleStack'].includes(str(policy))
  ) {
    errs.push(
      notSupported('spec.ipFamilyPolicy', policy, ['PreferDualStack', 'RequireDualStack', 'SingleStack']),
    );
  }
  let bad = false;
  ips.forEach((ip, i) => {
    if (i === 0 && ip === 'None') {
      if (ips.length > 1) {
        bad = true;
        errs.push(invalid('spec.clusterIPs', ips, "'None' must be the first and only value"));
      }
      return;
    }
    const ipErrs = isValidIP(indexPath('spec.clusterIPs', i), ip);
    if (ipErrs.length > 0) bad = true;
    errs.push(...ipErrs);
  });
  if (ips.length > 2) errs.push(invalid('spec.clusterIPs', ips, 'may only hold up to 2 values'));
  if (bad) return errs;
  if (ips.length > 1 && isIPv6String(ips[0]!) === isIPv6String(ips[1]!)) {
    errs.push(invalid('spec.clusterIPs', ips, 'may specify no more than one IP for each IP family'));
  }
  if (!isHeadless(spec)) {
    const families = list(spec.ipFamilies);
    ips.forEach((ip, i) => {
      if (i >= families.length) return;
      const v6 = isIPv6String(ip);
      if (families[i] === 'IPv4' && v6) {
        errs.push(
          invalid(
            indexPath('spec.clusterIPs', i),
            ip,
            `expected an IPv4 value as indicated by \`ipFamilies[${i}]\``,
          ),
        );
      }
      if (families[i] === 'IPv6' && !v6) {
        errs.push(
          invalid(
            indexPath('spec.clusterIPs', i),
            ip,
            `expected an IPv6 value as indicated by \`ipFamilies[${i}]\``,
          ),
        );
      }
    });
  }
  return errs;
}

/** ValidateService's spec rules (see the file comment); nodePort ranges are the allocator's. */
function validateService(obj: KubeObject): FieldError[] {
  const spec = asObj(obj.spec) ?? {};
  const errs: FieldError[] = [];
  const ports = list(spec.ports);
  const t = type(spec);
  if (ports.length === 0 && !isHeadless(spec) && t !== 'ExternalName') errs.push(required('spec.ports'));
  if ((t === 'LoadBalancer' || t === 'NodePort') && isHeadless(spec)) {
    errs.push(invalid('spec.clusterIPs[0]', 'None', `may not be set to 'None' for ${t} services`));
  }
  if (t === 'LoadBalancer') {
    eachObj(ports, (p, i) => {
      if (p.port === KUBELET_PORT) {
        errs.push(
          invalid(
            indexPath('spec.ports', i),
            p.port,
            `may not expose port ${KUBELET_PORT} externally since it is used by kubelet`,
          ),
        );
      }
    });
  }
  if (t === 'ExternalName') {
    if (list(spec.clusterIPs).length > 0 || str(spec.clusterIP) !== '') {
      errs.push(forbidden('spec.clusterIPs', 'may not be set for ExternalName services'));
    }
    if (list(spec.ipFamilies).length > 0)
      errs.push(forbidden('spec.ipFamilies', 'may not be set for ExternalName services'));
    if (spec.ipFamilyPolicy !== undefined && spec.ipFamilyPolicy !== null) {
      errs.push(forbidden('spec.ipFamilyPolicy', 'may not be set for ExternalName services'));
    }
    const cname = str(spec.externalName).replace(/\.$/, '');
    if (cname === '') errs.push(required('spec.externalName'));
    else errs.push(...problems('spec.externalName', cname, isDNS1123Subdomain(cname)));
  }
  const names = new Set<string>();
  eachObj(ports, (p, i) =>
    errs.push(...validatePort(p, indexPath('spec.ports', i), ports.length > 1, names)),
  );
  if (spec.selector !== undefined && spec.selector !== null)
    errs.push(...validateLabels(strMap(spec.selector), 'spec.selector'));

  errs.push(...enumField(spec.sessionAffinity, 'spec.sessionAffinity', ['ClientIP', 'None']));
  if (spec.sessionAffinity === 'ClientIP') {
    const timeout = num(asObj(asObj(spec.sessionAffinityConfig)?.clientIP)?.timeoutSeconds);
    const p = 'spec.sessionAffinityConfig.clientIP.timeoutSeconds';
    if (timeout === undefined) errs.push(required(p, 'when session affinity type is ClientIP'));
    else if (!(timeout > 0 && timeout <= MAX_CLIENT_IP_TIMEOUT)) {
      errs.push(invalid(p, timeout, `must be greater than 0 and less than ${MAX_CLIENT_IP_TIMEOUT}`));
    }
  } else if (
    spec.sessionAffinity === 'None' &&
    spec.sessionAffinityConfig !== undefined &&
    spec.sessionAffinityConfig !== null
  ) {
    errs.push(forbidden('spec.sessionAffinityConfig', 'must not be set when session affinity is None'));
  }
  errs.push(...validateClusterIPs(spec));
  list(spec.externalIPs).forEach((ip, i) => {
    const field = indexPath('spec.externalIPs', i);
    const ipErrs = isValidIP(field, str(ip));
    errs.push(...(ipErrs.length > 0 ? ipErrs : validateEndpointIP(str(ip), field)));
  });
  errs.push(...enumField(spec.type, 'spec.type', SERVICE_TYPES));
  if (t === 'ClusterIP') {
    eachObj(ports, (p, i) => {
      if (num(p.nodePort))
        errs.push(
          forbidden(
            childPath(indexPath('spec.ports', i), 'nodePort'),
            "may not be used when `type` is 'ClusterIP'",
          ),
        );
    });
  }
  const nodePorts = new Set<string>();
  const portKeys = new Set<string>();
  eachObj(ports, (p, i) => {
    const path = indexPath('spec.ports', i);
    if (num(p.nodePort)) {
      const key = `${str(p.protocol)}/${p.nodePort}`;
      if (nodePorts.has(key)) errs.push(duplicate(childPath(path, 'nodePort'), p.nodePort));
      nodePorts.add(key);
    }
    const key = `${str(p.protocol)}/${String(p.port)}`;
    if (portKeys.has(key)) errs.push(duplicate(path, { port: p.port, protocol: p.protocol }));
    portKeys.add(key);
  });
  for (const [field, what] of [
    ['loadBalancerSourceRanges', list(spec.loadBalancerSourceRanges).length > 0],
    [
      'allocateLoadBalancerNodePorts',
      spec.allocateLoadBalancerNodePorts !== undefined && spec.allocateLoadBalancerNodePorts !== null,
    ],
    ['loadBalancerClass', spec.loadBalancerClass !== undefined && spec.loadBalancerClass !== null],
  ] as const) {
    if (what && t !== 'LoadBalancer')
      errs.push(forbidden(`spec.${field}`, "may only be used when `type` is 'LoadBalancer'"));
  }
  if (
    t === 'LoadBalancer' &&
    (spec.allocateLoadBalancerNodePorts === undefined || spec.allocateLoadBalancerNodePorts === null)
  ) {
    errs.push(required('spec.allocateLoadBalancerNodePorts'));
  }
  if (t === 'LoadBalancer' && typeof spec.loadBalancerClass === 'string') {
    errs.push(...qualifiedName(spec.loadBalancerClass, 'spec.loadBalancerClass'));
  }
  if (!externallyAccessible(spec)) {
    if (str(spec.externalTrafficPolicy) !== '') {
      errs.push(
        invalid(
          'spec.externalTrafficPolicy',
          spec.externalTrafficPolicy,
          'may only be set for externally-accessible services',
        ),
      );
    }
  } else {
    errs.push(...enumField(spec.externalTrafficPolicy, 'spec.externalTrafficPolicy', ['Cluster', 'Local']));
  }
  const hc = num(spec.healthCheckNodePort) ?? 0;
  if (!(t === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local')) {
    if (hc !== 0) {
      errs.push(
        invalid(
          'spec.healthCheckNodePort',
          hc,
          "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
        ),
      );
    }
  } else if (hc !== 0) {
    errs.push(...problems('spec.healthCheckNodePort', hc, isInRange(hc, 1, 65535)));
  }
  const itp = spec.internalTrafficPolicy;
  if ((itp === undefined || itp === null) && ['NodePort', 'LoadBalancer', 'ClusterIP'].includes(t)) {
    errs.push(required('spec.internalTrafficPolicy'));
  } else if (itp !== undefined && itp !== null && itp !== 'Cluster' && itp !== 'Local') {
    errs.push(notSupported('spec.internalTrafficPolicy', itp, ['Cluster', 'Local']));
  }
  return errs;
}

/**
 * validateUpgradeDowngradeClusterIPs / IPFamilies and the loadBalancerClass rule of
 * ValidateServiceUpdate: an assigned clusterIP (and its family) `may not change once
 * set`, unless the service changes to or from ExternalName.
 */
function validateServiceUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const spec = asObj(obj.spec) ?? {};
  const oldSpec = asObj(old.spec) ?? {};
  if (type(spec) === 'ExternalName' || type(oldSpec) === 'ExternalName') return [];
  const errs: FieldError[] = [];
  const ips = list(spec.clusterIPs);
  const oldIPs = list(oldSpec.clusterIPs);
  if (!(isHeadless(spec) && isHeadless(oldSpec))) {
    if (ips.length === oldIPs.length) {
      oldIPs.forEach((ip, i) => {
        if (ip !== ips[i])
          errs.push(invalid(indexPath('spec.clusterIPs', i), ips, 'may not change once set'));
      });
    } else if (oldIPs.length > ips.length) {
      if (ips.length === 0)
        errs.push(invalid('spec.clusterIPs[0]', ips, 'primary clusterIP can not be unset'));
      else if (ips[0] !== oldIPs[0]) errs.push(invalid('spec.clusterIPs[0]', ips, 'may not change once set'));
      if (ips.length === 1 && spec.ipFamilyPolicy !== 'SingleStack') {
        errs.push(
          invalid(
            'spec.ipFamilyPolicy',
            spec.ipFamilyPolicy ?? null,
            "must be set to 'SingleStack' when releasing the secondary clusterIP",
          ),
        );
      }
    } else if (oldIPs.length > 0 && ips[0] !== oldIPs[0]) {
      errs.push(invalid('spec.clusterIPs[0]', ips, 'may not change once set'));
    }
  }
  const families = list(spec.ipFamilies);
  const oldFamilies = list(oldSpec.ipFamilies);
  if (
    !isHeadless(spec) &&
    !isHeadless(oldSpec) &&
    families.length > 0 &&
    oldFamilies.length > 0 &&
    families[0] !== oldFamilies[0]
  ) {
    errs.push(invalid('spec.ipFamilies[0]', families, 'may not change once set'));
  }
  if (
    type(spec) === 'LoadBalancer' &&
    type(oldSpec) === 'LoadBalancer' &&
    str(spec.loadBalancerClass) !== str(oldSpec.loadBalancerClass)
  ) {
    errs.push(invalid('spec.loadBalancerClass', spec.loadBalancerClass ?? null, 'may not change once set'));
  }
  return errs;
}

/** ValidateLoadBalancerStatus: ingress IPs valid (with ipMode VIP/Proxy), hostnames DNS names and not IPs. */
function validateServiceStatus(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  eachObj(asObj(asObj(obj.status)?.loadBalancer)?.ingress, (ing, i) => {
    const p = indexPath('status.loadBalancer.ingress', i);
    const ip = str(ing.ip);
    if (ip !== '' && !isIP(ip)) errs.push(invalid(childPath(p, 'ip'), ip, 'must be a valid IP address'));
    if (ip !== '' && (ing.ipMode === undefined || ing.ipMode === null)) {
      errs.push(required(childPath(p, 'ipMode'), 'must be specified when `ip` is set'));
    } else if (ing.ipMode !== undefined && ing.ipMode !== null && ip === '') {
      errs.push(forbidden(childPath(p, 'ipMode'), 'may not be specified when `ip` is not set'));
    } else if (
      ing.ipMode !== undefined &&
      ing.ipMode !== null &&
      ing.ipMode !== 'VIP' &&
      ing.ipMode !== 'Proxy'
    ) {
      errs.push(notSupported(childPath(p, 'ipMode'), ing.ipMode, ['Proxy', 'VIP']));
    }
    const hostname = str(ing.hostname);
    if (hostname !== '') {
      errs.push(...problems(childPath(p, 'hostname'), hostname, isDNS1123Subdomain(hostname)));
      if (canonicalIP(hostname) !== undefined) {
        errs.push(invalid(childPath(p, 'hostname'), hostname, 'must be a DNS name, not an IP address'));
      }
    }
  });
  return errs;
}

/**
 * The Service strategy: names are DNS-1035 labels; status starts `{loadBalancer: {}}`
 * and only changes through `services/status`. Field selectors: spec.clusterIP, spec.type.
 * No generation (Services have none in Kubernetes). A PUT to a missing name creates the
 * Service (pkg/registry/core/service/strategy.go: AllowCreateOnUpdate true).
 */
export const serviceStrategy = defineStrategy({
  namespaced: true,
  // Its storage.go sets ReturnDeletedObject: a DELETE answers with the object.
  returnDeletedObject: true,
  nameFn: nameIsDNS1035Label,
  allowCreateOnUpdate: true,
  initialStatus: () => ({ loadBalancer: {} }),
  prepareForUpdate: patchAllocatedValues,
  defaults: defaultService,
  validate: validateService,
  validateUpdate: validateServiceUpdate,
  // As upstream: GetWarningsForService on every create and every update.
  warningsOnCreate: serviceWarnings,
  warningsOnUpdate: (obj) => serviceWarnings(obj),
  prepareForStatusUpdate(obj) {
    child(child(obj as Obj, 'status'), 'loadBalancer');
  },
  validateStatusUpdate: validateServiceStatus,
  fields(obj) {
    const spec = asObj(obj.spec) ?? {};
    return { 'spec.clusterIP': str(spec.clusterIP), 'spec.type': str(spec.type) };
  },
});
