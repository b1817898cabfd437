/**
 * The warnings of a Service, as Kubernetes 1.32 sends them on every create and update
 * (pkg/api/service/warnings.go GetWarningsForService, called by the Service strategy's
 * WarningsOnCreate and WarningsOnUpdate):
 *
 *   - the deprecated `service.kubernetes.io/topology-aware-hints` annotation
 *   - clusterIPs (when set), externalIPs and loadBalancerIP that Go's net/netip does not
 *     parse (`IP address was accepted, but will be invalid in a future Kubernetes release:
 *     <netip's error>`), or IPv6 addresses not in RFC 5952 form
 *   - loadBalancerSourceRanges likewise, with netip.ParsePrefix
 *   - externalIPs on an ExternalName Service, externalName on any other type
 *
 * Validation (services.ts) already refuses most of what netip refuses (k8ts validates IPs
 * strictly), so in practice the IP warnings are those of non-canonical IPv6 text and of
 * prefixes that only the legacy parser accepts.
 */
import { canonicalIP } from '../../../api/meta/ip.js';
import { childPath, indexPath } from '../../../api/meta/validation.js';
import type { KubeObject } from '../../../api/object.js';
import { goQuote } from '../encoding/go-format.js';
import { asObj, list, str, strMap } from './meta.js';

const TOPOLOGY_AWARE_HINTS = 'service.kubernetes.io/topology-aware-hints';
const TOPOLOGY_MODE = 'service.kubernetes.io/topology-mode';

/** Go netip's parseIPv4Fields error for `s`, or undefined when it is a dotted quad. */
function ipv4Error(s: string): string | undefined {
  const err = (msg: string, at?: string) =>
    `ParseAddr(${goQuote(s)}): ${msg}${at !== undefined ? ` (at ${goQuote(at)})` : ''}`;
  let val = 0;
  let pos = 0;
  let digits = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch >= '0' && ch <= '9') {
      if (digits === 1 && val === 0) return err('IPv4 field has octet with leading zero');
      val = val * 10 + Number(ch);
      digits++;
      if (val > 255) return err('IPv4 field has value >255');
    } else if (ch === '.') {
      if (i === 0 || i === s.length - 1 || s[i - 1] === '.')
        return err('IPv4 field must have at least one digit', s.slice(i));
      if (pos === 3) return err('IPv4 address too long');
      pos++;
      val = 0;
      digits = 0;
    } else {
      return err('unexpected character', s.slice(i));
    }
  }
  if (pos < 3) return err('IPv4 address too short');
  return undefined;
}

/**
 * What Go's netip.ParseAddr says of `s`: its error text, or the address's String() form.
 * IPv6 is parsed by api/meta's parser (what reaches here has passed validation); an
 * IPv6 text it does not parse is reported as netip's generic failure.
 */
function parseAddr(s: string): { error: string } | { is6: boolean; text: string } {
  for (const ch of s) {
    if (ch === '.') {
      const e = ipv4Error(s);
      return e !== undefined ? { error: e } : { is6: false, text: s };
    }
    if (ch === ':') {
      const text = canonicalIP(s);
      if (text === undefined) return { error: `ParseAddr(${goQuote(s)}): unable to parse IP` };
      // netip writes an IPv4-mapped address as ::ffff:a.b.c.d, which api/meta writes as a.b.c.d.
      return { is6: true, text: text.includes(':') ? text : s };
    }
    if (ch === '%') return { error: `ParseAddr(${goQuote(s)}): missing IPv6 address` };
  }
  return { error: `ParseAddr(${goQuote(s)}): unable to parse IP` };
}

/** getWarningsForIP of pkg/api/service: `path: ...` for an address netip refuses or an IPv6 not in RFC 5952 form. */
export function ipWarnings(path: string, address: string): string[] {
  const r = parseAddr(address);
  if ('error' in r)
    return [
      `${path}: IP address was accepted, but will be invalid in a future Kubernetes release: ${r.error}`,
    ];
  if (r.is6 && r.text !== address)
    return [
      `${path}: IPv6 address ${goQuote(address)} is not in RFC 5952 canonical format (${goQuote(r.text)}), which may cause controller apply-loops`,
    ];
  return [];
}

/** getWarningsForCIDR of pkg/api/service, with netip.ParsePrefix's errors. */
export function cidrWarnings(path: string, cidr: string): string[] {
  const fail = (msg: string) => [
    `${path}: IP prefix was accepted, but will be invalid in a future Kubernetes release: netip.ParsePrefix(${goQuote(cidr)}): ${msg}`,
  ];
  const slash = cidr.lastIndexOf('/');
  if (slash < 0) return fail("no '/'");
  const addr = parseAddr(cidr.slice(0, slash));
  if ('error' in addr) return fail(addr.error);
  const bits = cidr.slice(slash + 1);
  if ((bits.length > 1 && (bits[0]! < '1' || bits[0]! > '9')) || !/^[+-]?[0-9]+$/.test(bits))
    return fail(`bad bits after slash: ${goQuote(bits)}`);
  const n = Number(bits);
  if (n < 0 || n > (addr.is6 ? 128 : 32)) return fail('prefix length out of range');
  const text = `${addr.text}/${n}`;
  if (addr.is6 && text !== cidr)
    return [
      `${path}: IPv6 prefix ${goQuote(cidr)} is not in RFC 5952 canonical format (${goQuote(text)}), which may cause controller apply-loops`,
    ];
  return [];
}

/** GetWarningsForService (1.32): the warnings of a Service about to be written. Never throws. */
export function serviceWarnings(svc: KubeObject): string[] {
  const out: string[] = [];
  const spec = asObj(svc.spec) ?? {};
  if (Object.hasOwn(strMap(svc.metadata?.annotations), TOPOLOGY_AWARE_HINTS))
    out.push(`annotation ${TOPOLOGY_AWARE_HINTS} is deprecated, please use ${TOPOLOGY_MODE} instead`);
  const clusterIP = str(spec.clusterIP);
  if (clusterIP !== '' && clusterIP !== 'None')
    list(spec.clusterIPs).forEach((ip, i) =>
      out.push(...ipWarnings(indexPath('spec.clusterIPs', i), str(ip))),
    );
  list(spec.externalIPs).forEach((ip, i) =>
    out.push(...ipWarnings(indexPath('spec.externalIPs', i), str(ip))),
  );
  const lbIP = str(spec.loadBalancerIP);
  if (lbIP !== '') out.push(...ipWarnings(childPath('spec', 'loadBalancerIP'), lbIP));
  list(spec.loadBalancerSourceRanges).forEach((c, i) =>
    out.push(...cidrWarnings(indexPath('spec.loadBalancerSourceRanges', i), str(c))),
  );
  const type = str(spec.type);
  if (type === 'ExternalName' && list(spec.externalIPs).length > 0)
    out.push('spec.externalIPs is ignored when spec.type is "ExternalName"');
  if (type !== 'ExternalName' && str(spec.externalName) !== '')
    out.push('spec.externalName is ignored when spec.type is not "ExternalName"');
  return out;
}
