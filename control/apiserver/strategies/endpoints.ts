/**
 * Endpoints (core/v1): Kubernetes' SetDefaults_Endpoints (port protocol TCP) and
 * ValidateEndpoints (validateEndpointSubsets, validateEndpointAddress, ValidateEndpointIP,
 * validateEndpointPort).
 */
import type { FieldError } from '../../../api/meta/validation.js';
import {
  canonicalIP,
  childPath,
  indexPath,
  invalid,
  isDNS1123Label,
  isDNS1123Subdomain,
  isInRange,
  isValidIP,
  required,
} from '../../../api/meta/validation.js';
import type { Obj } from './meta.js';
import {
  defaultString,
  defineStrategy,
  eachObj,
  list,
  num,
  PORT_PROTOCOLS,
  problems,
  qualifiedName,
  str,
} from './meta.js';
import { enumField } from './podspec/index.js';

function ipv4Bytes(ip: string): number[] | undefined {
  const c = canonicalIP(ip);
  if (c === undefined || c.includes(':')) return undefined;
  return c.split('.').map(Number);
}

/**
 * ValidateEndpointIP: an endpoint address may not be unspecified, loopback, link-local or
 * link-local multicast (those are never a pod's or a node's routable address).
 */
export function validateEndpointIP(ip: string, field: string): FieldError[] {
  const c = canonicalIP(ip);
  if (c === undefined) return [];
  const v4 = ipv4Bytes(ip);
  const lower = c.toLowerCase();
  if (c === '0.0.0.0' || c === '::') return [invalid(field, ip, `may not be unspecified (${ip})`)];
  if ((v4 && v4[0] === 127) || c === '::1') {
    return [invalid(field, ip, 'may not be in the loopback range (127.0.0.0/8, ::1/128)')];
  }
  if ((v4 && v4[0] === 169 && v4[1] === 254) || /^fe[89ab][0-9a-f]?:/.test(lower)) {
    return [invalid(field, ip, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)')];
  }
  if ((v4 && v4[0] === 224 && v4[1] === 0 && v4[2] === 0) || lower.startsWith('ff02:')) {
    return [invalid(field, ip, 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)')];
  }
  return [];
}

/** validateEndpointAddress: ip valid and routable, hostname a DNS label, nodeName a DNS subdomain. */
function validateAddress(a: Obj, p: string): FieldError[] {
  const ip = str(a.ip);
  const ipErrs = isValidIP(childPath(p, 'ip'), ip);
  const errs = [...ipErrs, ...(ipErrs.length === 0 ? validateEndpointIP(ip, childPath(p, 'ip')) : [])];
  const hostname = str(a.hostname);
  if (hostname !== '') errs.push(...problems(childPath(p, 'hostname'), hostname, isDNS1123Label(hostname)));
  if (typeof a.nodeName === 'string')
    errs.push(...problems(childPath(p, 'nodeName'), a.nodeName, isDNS1123Subdomain(a.nodeName)));
  return errs;
}

/**
 * The Endpoints strategy. Each subset needs `addresses` or `notReadyAddresses`; ports need
 * a DNS-label name when there are several, a valid number and protocol. No status, no
 * generation, only metadata field selectors.
 */
export const endpointsStrategy = defineStrategy({
  namespaced: true,
  allowCreateOnUpdate: true,
  defaults(obj) {
    eachObj(obj.subsets, (s) => eachObj(s.ports, (p) => defaultString(p, 'protocol', 'TCP')));
  },
  validate(obj) {
    const errs: FieldError[] = [];
    eachObj(obj.subsets, (s, i) => {
      const p = indexPath('subsets', i);
      if (list(s.addresses).length === 0 && list(s.notReadyAddresses).length === 0) {
        errs.push(required(p, 'must specify `addresses` or `notReadyAddresses`'));
      }
      for (const key of ['addresses', 'notReadyAddresses']) {
        eachObj(s[key], (a, j) => errs.push(...validateAddress(a, indexPath(childPath(p, key), j))));
      }
      const ports = list(s.ports);
      eachObj(ports, (port, j) => {
        const pp = indexPath(childPath(p, 'ports'), j);
        const name = str(port.name);
        if (ports.length > 1 && name === '') errs.push(required(childPath(pp, 'name')));
        else if (name !== '') errs.push(...problems(childPath(pp, 'name'), name, isDNS1123Label(name)));
        const n = num(port.port) ?? 0;
        errs.push(...problems(childPath(pp, 'port'), n, isInRange(n, 1, 65535)));
        errs.push(...enumField(port.protocol, childPath(pp, 'protocol'), PORT_PROTOCOLS));
        if (typeof port.appProtocol === 'string')
          errs.push(...qualifiedName(port.appProtocol, childPath(pp, 'appProtocol')));
      });
    });
    return errs;
  },
});
