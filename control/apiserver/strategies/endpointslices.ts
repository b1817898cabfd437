/**
 * EndpointSlice (discovery.k8s.io/v1): Kubernetes' pkg/apis/discovery/v1/defaults.go
 * (port name "" and protocol TCP), pkg/apis/discovery/validation and the endpointslice
 * strategy (generation follows everything but metadata).
 */
import type { FieldError } from '../../../api/meta/validation.js';
import {
  childPath,
  duplicate,
  indexPath,
  invalid,
  isDNS1123Label,
  isDNS1123Subdomain,
  isInRange,
  isValidIPv4Address,
  isValidIPv6Address,
  required,
  validateLabels,
} from '../../../api/meta/validation.js';
import type { Obj } from './meta.js';
import {
  child,
  defaultPointer,
  defineStrategy,
  eachObj,
  immutable,
  list,
  num,
  PORT_PROTOCOLS,
  problems,
  qualifiedName,
  str,
  strMap,
  tooMany,
} from './meta.js';
import { validateEndpointIP } from './endpoints.js';
import { enumField } from './podspec/index.js';

const MAX_ENDPOINTS = 1000;
const MAX_ADDRESSES = 100;
const MAX_PORTS = 20000;
const ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6'];

/** An address of the slice's addressType: an IP of that family (routable), or a fully qualified domain name. */
function validateAddress(address: string, addressType: string, field: string): FieldError[] {
  if (addressType === 'IPv4' || addressType === 'IPv6') {
    const errs =
      addressType === 'IPv4' ? isValidIPv4Address(field, address) : isValidIPv6Address(field, address);
    return errs.length > 0 ? errs : validateEndpointIP(address, field);
  }
  if (addressType === 'FQDN') {
    const name = address.replace(/\.$/, '');
    const errs = problems(field, address, isDNS1123Subdomain(name));
    if (errs.length === 0 && !name.includes('.')) {
      errs.push(invalid(field, address, 'should be a domain with at least two segments separated by dots'));
    }
    return errs;
  }
  return [];
}

function validateEndpoint(e: Obj, p: string, addressType: string): FieldError[] {
  const errs: FieldError[] = [];
  const addresses = list(e.addresses);
  const ap = childPath(p, 'addresses');
  if (addresses.length === 0) errs.push(required(ap, 'must contain at least 1 address'));
  else if (addresses.length > MAX_ADDRESSES) errs.push(tooMany(ap, addresses.length, MAX_ADDRESSES));
  addresses.forEach((a, i) => errs.push(...validateAddress(str(a), addressType, indexPath(ap, i))));
  if (typeof e.nodeName === 'string')
    errs.push(...problems(childPath(p, 'nodeName'), e.nodeName, isDNS1123Subdomain(e.nodeName)));
  if (typeof e.hostname === 'string')
    errs.push(...problems(childPath(p, 'hostname'), e.hostname, isDNS1123Label(e.hostname)));
  errs.push(...validateLabels(strMap(e.deprecatedTopology), childPath(p, 'deprecatedTopology')));
  return errs;
}

/**
 * The EndpointSlice strategy. addressType IPv4/IPv6/FQDN (immutable), at most 1000
 * endpoints of 1 to 100 addresses each, port names DNS labels and unique, protocols
 * TCP/UDP/SCTP. Defaults: each port `name: ""`, `protocol: TCP`; each endpoint
 * `conditions: {}` (a struct field, always serialized). Generation follows addressType,
 * endpoints and ports (Kubernetes also counts label changes).
 */
export const endpointSliceStrategy = defineStrategy({
  namespaced: true,
  generationFields: ['addressType', 'endpoints', 'ports'],
  defaults(obj) {
    eachObj(obj.ports, (p) => {
      defaultPointer(p, 'name', '');
      defaultPointer(p, 'protocol', 'TCP');
    });
    eachObj(obj.endpoints, (e) => child(e, 'conditions'));
  },
  validate(obj) {
    const errs: FieldError[] = [];
    const addressType = str(obj.addressType);
    errs.push(...enumField(obj.addressType, 'addressType', ADDRESS_TYPES));
    const endpoints = list(obj.endpoints);
    if (endpoints.length > MAX_ENDPOINTS) errs.push(tooMany('endpoints', endpoints.length, MAX_ENDPOINTS));
    eachObj(endpoints, (e, i) => errs.push(...validateEndpoint(e, indexPath('endpoints', i), addressType)));
    const ports = list(obj.ports);
    if (ports.length > MAX_PORTS) errs.push(tooMany('ports', ports.length, MAX_PORTS));
    const names = new Set<string>();
    eachObj(ports, (port, i) => {
      const p = indexPath('ports', i);
      const name = str(port.name);
      if (name !== '') errs.push(...problems(childPath(p, 'name'), name, isDNS1123Label(name)));
      if (names.has(name)) errs.push(duplicate(childPath(p, 'name'), name));
      names.add(name);
      if (port.protocol === undefined || port.protocol === null)
        errs.push(required(childPath(p, 'protocol')));
      else errs.push(...enumField(port.protocol, childPath(p, 'protocol'), PORT_PROTOCOLS));
      const n = num(port.port);
      if (n !== undefined) errs.push(...problems(childPath(p, 'port'), n, isInRange(n, 1, 65535)));
      if (typeof port.appProtocol === 'string')
        errs.push(...qualifiedName(port.appProtocol, childPath(p, 'appProtocol')));
    });
    return errs;
  },
  validateUpdate: (obj, old) => immutable(obj.addressType, old.addressType, 'addressType'),
});
