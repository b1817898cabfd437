/**
 * One allocation range (Service addresses or NodePorts) kept as one store key per
 * allocated item, and the parsing of the ranges' flags. Kubernetes keeps a bitmap per range
 * (pkg/registry/core/service/allocator); one key per item makes a reservation one atomic
 * create, so that two API servers over one store never hand out the same item.
 */
import type { KubeObject } from '../../../api/object.js';
import { isStorageError } from '../../storage/errors.js';
import type { Store } from '../../storage/store.js';

/** Store prefixes of the allocations (one key per item). */
export const SERVICE_IPS_PREFIX = '/registry/ranges/serviceips/';
export const SERVICE_NODE_PORTS_PREFIX = '/registry/ranges/servicenodeports/';

/** How often a dynamic allocation retries after losing a race for a free item. */
const RACE_ATTEMPTS = 16;

/** Why an allocation failed, with Kubernetes' ipallocator/portallocator wording. */
export class AllocationError extends Error {
  constructor(
    readonly reason: 'Allocated' | 'NotInRange' | 'Full',
    message: string,
  ) {
    super(message);
  }
}

/** Who holds an allocated item (the value of its key). */
export interface Owner {
  namespace: string;
  name: string;
  uid: string;
}

/**
 * One range of items (addresses or ports), allocated one store key per item. Items are
 * addressed by offset 0..size-1 inside the range.
 */
export class KeyRange {
  constructor(
    private readonly store: Store,
    private readonly prefix: string,
    /** Number of allocatable items. */
    readonly size: number,
    /** Items [0, staticBand) are given out dynamically only when the rest is full. */
    private readonly staticBand: number,
    private readonly itemAt: (offset: number) => string,
    private readonly offsetOf: (item: string) => number | undefined,
    private readonly notInRange: (item: string) => string,
    private readonly allocatedMessage: string,
    private readonly random: () => number,
    /**
     * Items kept for one Service each (`<namespace>/<name>`): never handed out dynamically,
     * and refused to any other Service that asks for them (the `kubernetes` Service's and
     * the cluster DNS's addresses).
     */
    private readonly reserved: ReadonlyMap<string, string> = new Map(),
  ) {}

  /** Whether `item` (an address or port as text) lies in this range. */
  contains(item: string): boolean {
    return this.offsetOf(item) !== undefined;
  }

  /** The store key of `item`. */
  keyOf(item: string): string {
    return this.prefix + item;
  }

  /**
   * Reserves `item` for `owner` (a dry run only checks it is free).
   * @throws AllocationError NotInRange, Allocated (also for an item reserved for another Service).
   */
  async allocate(item: string, owner: Owner, dryRun: boolean): Promise<void> {
    if (this.offsetOf(item) === undefined) throw new AllocationError('NotInRange', this.notInRange(item));
    const holder = this.reserved.get(item);
    if (holder !== undefined && holder !== `${owner.namespace}/${owner.name}`)
      throw new AllocationError('Allocated', `provided IP is reserved for the Service ${holder}`);
    if (dryRun) {
      if (await this.store.get(this.prefix + item))
        throw new AllocationError('Allocated', this.allocatedMessage);
      return;
    }
    try {
      await this.store.create(this.prefix + item, JSON.stringify(owner));
    } catch (err) {
      if (isStorageError(err, 'KeyExists')) throw new AllocationError('Allocated', this.allocatedMessage);
      throw err;
    }
  }

  /**
   * Reserves a free item for `owner`: a random free one of the upper band, else of the
   * static band (a dry run picks one without reserving it).
   * @throws AllocationError Full.
   */
  async allocateNext(owner: Owner, dryRun: boolean): Promise<string> {
    const page = await this.store.list(this.prefix);
    const used = new Set<number>();
    for (const kv of page.items) {
      const offset = this.offsetOf(kv.key.slice(this.prefix.length));
      if (offset !== undefined) used.add(offset);
    }
    for (const item of this.reserved.keys()) {
      const offset = this.offsetOf(item);
      if (offset !== undefined) used.add(offset);
    }
    for (let attempt = 0; attempt < RACE_ATTEMPTS; attempt++) {
      const offset =
        this.pickFree(used, this.staticBand, this.size) ?? this.pickFree(used, 0, this.staticBand);
      if (offset === undefined) break;
      const item = this.itemAt(offset);
      if (dryRun) return item;
      try {
        await this.store.create(this.prefix + item, JSON.stringify(owner));
        return item;
      } catch (err) {
        // Another API server took it between our list and our create: try another.
        if (!isStorageError(err, 'KeyExists')) throw err;
        used.add(offset);
      }
    }
    throw new AllocationError('Full', 'range is full');
  }

  /**
   * Releases `item` if `owner` holds it (an item recorded for another Service, or not
   * allocated at all, is left alone).
   */
  async release(item: string, owner: Owner): Promise<void> {
    const kv = await this.store.get(this.prefix + item);
    if (!kv) return;
    let holder: Partial<Owner> = {};
    try {
      holder = JSON.parse(kv.value) as Partial<Owner>;
    } catch {
      // An unreadable record is released like an owned one.
    }
    if (holder.uid !== undefined && holder.uid !== owner.uid) return;
    try {
      await this.store.delete(kv.key, kv.modRevision);
    } catch (err) {
      if (!isStorageError(err, 'KeyNotFound') && !isStorageError(err, 'Conflict')) throw err;
    }
  }

  /** A random free offset in [from, to), scanning forward from a random start; undefined if none. */
  private pickFree(used: Set<number>, from: number, to: number): number | undefined {
    const n = to - from;
    if (n <= 0) return undefined;
    const start = Math.floor(this.random() * n);
    for (let i = 0; i < n; i++) {
      const offset = from + ((start + i) % n);
      if (!used.has(offset)) return offset;
    }
    return undefined;
  }
}

/** A parsed IPv4 CIDR: network address as an unsigned 32-bit number and prefix length. */
export interface IPv4CIDR {
  base: number;
  prefixLength: number;
  text: string;
}

/**
 * Parses an IPv4 CIDR (`10.43.0.0/16`); host bits are cleared, as Go's net.ParseCIDR.
 * @throws Error for anything else, and for prefixes longer than /30 (no usable addresses).
 */
export function parseIPv4CIDR(cidr: string): IPv4CIDR {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(cidr.trim());
  const octets = m ? m.slice(1, 5).map(Number) : [];
  const prefixLength = m ? Number(m[5]) : NaN;
  if (!m || octets.some((o) => o > 255) || !(prefixLength >= 1 && prefixLength <= 30)) {
    throw new Error(`service CIDR ${JSON.stringify(cidr)}: expected an IPv4 CIDR from /1 to /30`);
  }
  const addr = ipv4ToNumber(octets.join('.'))!;
  const mask = prefixLength === 0 ? 0 : (0xffffffff << (32 - prefixLength)) >>> 0;
  const base = (addr & mask) >>> 0;
  return { base, prefixLength, text: `${numberToIPv4(base)}/${prefixLength}` };
}

/** Parses a port range `30000-32767` (or one port `30000`). @throws Error when malformed. */
export function parsePortRange(range: string): { first: number; last: number } {
  const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(range.trim());
  const first = m ? Number(m[1]) : NaN;
  const last = m ? Number(m[2] ?? m[1]) : NaN;
  if (!m || first < 1 || last > 65535 || last < first) {
    throw new Error(`node port range ${JSON.stringify(range)}: expected <first>-<last> within 1-65535`);
  }
  return { first, last };
}

/** The unsigned 32-bit value of a dotted-quad IPv4 address, or undefined. */
export function ipv4ToNumber(ip: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!m) return undefined;
  const o = m.slice(1).map(Number);
  if (o.some((x) => x > 255) || m.slice(1).some((x) => x.length > 1 && x.startsWith('0'))) return undefined;
  return ((o[0]! << 24) | (o[1]! << 16) | (o[2]! << 8) | o[3]!) >>> 0;
}

/** Dotted-quad form of an unsigned 32-bit value. */
export function numberToIPv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

export function holderOf(value: string): Partial<Owner> {
  try {
    return JSON.parse(value) as Partial<Owner>;
  } catch {
    return {};
  }
}

/** The Service that holds (or asks for) an item. */
export function ownerOf(obj: KubeObject): Owner {
  return {
    namespace: obj.metadata?.namespace ?? '',
    name: obj.metadata?.name ?? '',
    uid: obj.metadata?.uid ?? '',
  };
}
