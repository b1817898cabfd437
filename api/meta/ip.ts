/**
 * IP addresses and CIDRs as Kubernetes 1.32 validates them (k8s.io/apimachinery
 * pkg/util/validation/ip.go over k8s.io/utils/net's "sloppy" parsers, which every IP
 * and CIDR field uses until 1.33's StrictIPCIDRValidation): IPv4 with leading zeros,
 * IPv6 with embedded IPv4, canonical forms, and the FieldError lists of `isValidIP`,
 * `isValidIPv4Address`, `isValidIPv6Address` and `isValidCIDR`. Re-exported by
 * validation.ts.
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

/**
 * The canonical text form of an IP address (IPv4 dotted quad without leading zeros, IPv6
 * as RFC 5952: lowercase, longest zero run compressed), or undefined if `value` is not an
 * IP address. Accepts the forms Kubernetes' "sloppy" parser accepts.
 */
export function canonicalIP(value: string): string | undefined {
  const ip = parseIPSloppy(value);
  return ip ? formatIP(ip.bytes) : undefined;
}

const INVALID_IP = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';

/**
 * An IP address as Kubernetes 1.32 validates IP fields (IsValidIP over k8s.io/utils/net's
 * ParseIPSloppy): IPv4, IPv6, IPv6 with an embedded IPv4; IPv4 octets with leading zeros
 * (read as decimal: `010.0.0.5` is 10.0.0.5), IPv4-mapped IPv6 and non-canonical IPv6
 * spellings are all accepted (1.33's StrictIPCIDRValidation, off by default, refuses the
 * first two; the Service strategy warns of them). No zones, ports or brackets.
 */
export function isValidIP(field: string, value: string): FieldError[] {
  return parseIPSloppy(value) ? [] : [invalid(field, value, INVALID_IP)];
}

/** Whether `value` is an IP address as ParseIPSloppy reads it. */
export function isIP(value: string): boolean {
  return parseIPSloppy(value) !== undefined;
}

/**
 * k8s.io/utils/net IsIPv6String: an address ParseIPSloppy reads whose To4() is nil, so an
 * IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) counts as IPv4.
 */
export function isIPv6String(value: string): boolean {
  const ip = parseIPSloppy(value);
  return ip !== undefined && ip.bytes.length === 16 && !is4In6(ip.bytes);
}

/** IsValidIPv4Address: ParseIPSloppy reads it and To4() is not nil (IPv4-mapped IPv6 included). */
export function isValidIPv4Address(field: string, value: string): FieldError[] {
  const ip = parseIPSloppy(value);
  return ip && !isIPv6String(value) ? [] : [invalid(field, value, 'must be a valid IPv4 address')];
}

/** IsValidIPv6Address: ParseIPSloppy reads it and To4() is nil. */
export function isValidIPv6Address(field: string, value: string): FieldError[] {
  return isIPv6String(value) ? [] : [invalid(field, value, 'must be a valid IPv6 address')];
}

/**
 * A subnet as Kubernetes 1.32 validates CIDR fields (IsValidCIDR over ParseCIDRSloppy):
 * a sloppy IP address, `/`, and a decimal prefix length (leading zeros allowed) no longer
 * than the address; bits set past the prefix length, leading zeros and IPv4-mapped
 * addresses are accepted (1.33's strict checks are off by default).
 */
export function isValidCIDR(field: string, value: string): FieldError[] {
  const bad = [invalid(field, value, 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)')];
  const slash = value.indexOf('/');
  if (slash < 0) return bad;
  const addr = value.slice(0, slash);
  const len = value.slice(slash + 1);
  const ip = addr.includes(':') ? parseIPv6Sloppy(addr) : parseIPv4Sloppy(addr);
  if (!ip || !/^[0-9]+$/.test(len)) return bad;
  if (Number.parseInt(len, 10) > ip.bytes.length * 8) return bad;
  return [];
}
