/**
 * Address allocation for the fake runtime's sandboxes: one allocator per pod network (an
 * IPv4 CIDR), handing out its host addresses from .2 on (the network address and the
 * gateway .1 are skipped, as on a docker bridge), lowest free first after the last one
 * given, so that a released address is not reused at once.
 */
import { CriError } from '../errors.js';

/** Parses `a.b.c.d/n` (8 ≤ n ≤ 30) into its first address and size. */
export function parseCidr(cidr: string): { base: number; size: number } | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(cidr);
  if (!m) return undefined;
  const octets = m.slice(1, 5).map(Number);
  const bits = Number(m[5]);
  if (octets.some((o) => o > 255) || bits < 8 || bits > 30) return undefined;
  const addr = octets.reduce((a, o) => a * 256 + o, 0);
  const size = 2 ** (32 - bits);
  return { base: addr - (addr % size), size };
}

const formatIp = (a: number): string => [24, 16, 8, 0].map((s) => Math.floor(a / 2 ** s) % 256).join('.');

/** Hands out the addresses of one CIDR. */
export class FakeIpam {
  private readonly base: number;
  private readonly size: number;
  private readonly inUse = new Set<number>();
  private next = 2;

  /** @throws CriError InvalidArgument for a malformed or too small CIDR. */
  constructor(readonly cidr: string) {
    const parsed = parseCidr(cidr);
    if (!parsed) throw new CriError('InvalidArgument', `bad pod CIDR ${JSON.stringify(cidr)}`);
    this.base = parsed.base;
    this.size = parsed.size;
  }

  /** The next free address. @throws CriError Internal when every address is taken. */
  allocate(): string {
    const hosts = this.size - 3; // network, gateway, broadcast
    for (let i = 0; i < hosts; i++) {
      const offset = ((this.next - 2 + i) % hosts) + 2;
      if (this.inUse.has(offset)) continue;
      this.inUse.add(offset);
      this.next = offset + 1;
      return formatIp(this.base + offset);
    }
    throw new CriError('Internal', `no free address left in ${this.cidr}`);
  }

  /** Gives `ip` back; an address outside the CIDR or not handed out is ignored. */
  release(ip: string): void {
    const parts = ip.split('.').map(Number);
    if (parts.length !== 4) return;
    this.inUse.delete(parts.reduce((a, o) => a * 256 + o, 0) - this.base);
  }

  /** Addresses handed out and not released. */
  get allocated(): number {
    return this.inUse.size;
  }
}
