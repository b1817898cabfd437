/**
 * IP addresses and CIDRs as Kubernetes validates them (k8s.io/apimachinery
 * pkg/util/validation/ip.go and k8s.io/utils/net's "sloppy" parsers): IPv4 with leading
 * zeros accepted where legacy fields allow them, IPv6 with embedded IPv4, canonical forms,
 * and the FieldError lists of `isValidIP`, `isValidIPForLegacyField` and `isValidCIDR`.
 * Re-exported by validation.ts.
 */
import { invalid } from './field-errors.js';
import type { FieldError } from './field-errors.js';

interface ParsedIP {
  /** 4 bytes for dotted IPv4, 16 for IPv6. */
  bytes: number[];
  /** An IPv4 octet was written with a leading 0 (Kubernetes' "sloppy" parse accepts it). */
  leadingZeros: boolean;
}

function parseIPv4Sloppy(s: string): ParsedIP | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const bytes: number[] = [];
  let leadingZeros = false;
  for (const p of parts) {
    if (!/^[0-9]+$/.test(p)) return undefined;
    const n = Number.parseInt(p, 10);
    if (n > 255) return undefined;
    if (p.length > 1 && p.startsWith('0')) leadingZeros = true;
    bytes.push(n);
  }
  return { bytes, leadingZeros };
}

function parseIPv6Sloppy(s: string): ParsedIP | undefined {
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  let leadingZeros = false;
  const groupsOf = (part: string, isLast: boolean): number[] | undefined => {
    if (part === '') return [];
    const fields = part.split(':');
    const out: number[] = [];
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!;
      if (isLast && i === fields.length - 1 && f.includes('.')) {
        const v4 = parseIPv4Sloppy(f);
        if (!v4) return undefined;
        leadingZeros ||= v4.leadingZeros;
        out.push((v4.bytes[0]! << 8) | v4.bytes[1]!, (v4.bytes[2]! << 8) | v4.bytes[3]!);
        continue;
      }
      if (!/^[0-9A-Fa-f]{1,4}$/.test(f)) return undefined;
      out.push(Number.parseInt(f, 16));
    }
    return out;
  };
  let groups: number[];
  if (halves.length === 2) {
    const head = groupsOf(halves[0]!, false);
    const tail = groupsOf(halves[1]!, true);
    if (!head || !tail || head.length + tail.length > 7) return undefined;
    groups = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  } else {
    const all = groupsOf(s, true);
    if (!all || all.length !== 8) return undefined;
    groups = all;
  }
  const bytes: number[] = [];
  for (const g of groups) bytes.push(g >> 8, g & 0xff);
  return { bytes, leadingZeros };
}

/** Go's ParseIPSloppy: IPv4 octets may have leading zeros; no zones. */
function parseIPSloppy(s: string): ParsedIP | undefined {
  return s.includes(':') ? parseIPv6Sloppy(s) : parseIPv4Sloppy(s);
}

function is4In6(bytes: number[]): boolean {
  return (
    bytes.length === 16 &&
    bytes.slice(0, 10).every((b) => b === 0) &&
    bytes[10] === 0xff &&
    bytes[11] === 0xff
  );
}

/** Go's net.IP.String(): dotted quad for IPv4 (and IPv4-mapped), RFC 5952 for IPv6. */
function formatIP(bytes: number[]): string {
  if (bytes.length === 4) return bytes.join('.');
  if (is4In6(bytes)) return bytes.slice(12).join('.');
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i]! << 8) | bytes[i + 1]!);
  // The first longest run of two or more zero groups becomes "::".
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i >= 2 && j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (gs: number[]): string => gs.map((g) => g.toString(16)).join(':');
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLen))}`;
}

function maskBytes(bytes: number[], ones: number): number[] {
  return bytes.map((b, i) => {
    const bits = Math.max(0, Math.min(8, ones - i * 8));
    return b & ((0xff << (8 - bits)) & 0xff);
  });
}

/**
 * The canonical text form of an IP address (IPv4 dotted quad without leading zeros, IPv6
 * as RFC 5952: lowercase, longest zero run compressed), or undefined if `value` is not an
 * IP address. Accepts the forms Kubernetes' "sloppy" parser accepts.
 */
export function canonicalIP(value: string): string | undefined {
  const ip = parseIPSloppy(value);
  return ip ? formatIP(ip.bytes) : undefined;
}

function ipErrors(field: string, value: string): { ip?: ParsedIP; errs: FieldError[] } {
  const ip = parseIPSloppy(value);
  if (!ip)
    return { errs: [invalid(field, value, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)')] };
  const errs: FieldError[] = [];
  if (ip.leadingZeros) errs.push(invalid(field, value, 'must not have leading 0s'));
  else if (is4In6(ip.bytes)) errs.push(invalid(field, value, 'must not be an IPv4-mapped IPv6 address'));
  return { ip, errs };
}

/**
 * An IP address as Kubernetes validates new IP fields (IsValidIP): IPv4 or IPv6, no
 * leading zeros in IPv4 octets, not IPv4-mapped IPv6, and in canonical form
 * (`must be in canonical form ("2001:db8::1")`).
 */
export function isValidIP(field: string, value: string): FieldError[] {
  const { ip, errs } = ipErrors(field, value);
  if (!ip || errs.length > 0) return errs;
  const canonical = formatIP(ip.bytes);
  if (canonical !== value)
    return [invalid(field, value, `must be in canonical form (${JSON.stringify(canonical)})`)];
  return [];
}

/**
 * An IP address in a field that predates strict validation (IsValidIPForLegacyField with
 * strict checks on, e.g. `spec.clusterIP`, `status.podIP`): like `isValidIP` but a
 * non-canonical spelling such as `2001:DB8::1` is accepted.
 */
export function isValidIPForLegacyField(field: string, value: string): FieldError[] {
  return ipErrors(field, value).errs;
}

/**
 * A subnet in CIDR notation as Kubernetes validates it (IsValidCIDR): `10.0.0.0/8` or
 * `fd00::/64`, no leading zeros in the address or prefix length, not IPv4-mapped, no
 * bits set past the prefix length, and in canonical form.
 */
export function isValidCIDR(field: string, value: string): FieldError[] {
  const bad = [invalid(field, value, 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)')];
  const slash = value.indexOf('/');
  if (slash < 0) return bad;
  const ip = parseIPSloppy(value.slice(0, slash));
  const len = value.slice(slash + 1);
  if (!ip || !/^[0-9]+$/.test(len)) return bad;
  const ones = Number.parseInt(len, 10);
  if (ones > ip.bytes.length * 8) return bad;
  if (ip.leadingZeros || (len.length > 1 && len.startsWith('0'))) {
    return [invalid(field, value, 'must not have leading 0s in IP or prefix length')];
  }
  if (is4In6(ip.bytes)) return [invalid(field, value, 'must not have an IPv4-mapped IPv6 address')];
  const masked = maskBytes(ip.bytes, ones);
  if (masked.some((b, i) => b !== ip.bytes[i])) {
    return [invalid(field, value, 'must not have bits set beyond the prefix length')];
  }
  const canonical = `${formatIP(masked)}/${ones}`;
  if (canonical !== value)
    return [invalid(field, value, `must be in canonical form (${JSON.stringify(canonical)})`)];
  return [];
}
