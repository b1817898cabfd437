/**
 * IPv4 CIDR arithmetic for pod CIDR allocation (Kubernetes' pkg/controller/nodeipam/ipam/cidrset):
 * a cluster CIDR such as `10.42.0.0/16` cut into node subnets of one mask size (/24: 254
 * pod addresses per node, as k3s and kube-controller-manager's --node-cidr-mask-size).
 */

/** A parsed IPv4 CIDR: `base` is the network address as an unsigned 32-bit number. */
export interface Cidr {
  base: number;
  prefix: number;
}

/** Parses `a.b.c.d/n`; the host bits are cleared. @throws Error for anything else (names the input). */
export function parseCidr(text: string): Cidr {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(text);
  const octets = m ? m.slice(1, 5).map(Number) : [];
  const prefix = m ? Number(m[5]) : NaN;
  if (!m || octets.some((o) => o > 255) || prefix > 32) {
    throw new Error(`invalid IPv4 CIDR ${JSON.stringify(text)}: expected a.b.c.d/n`);
  }
  const ip = ((octets[0]! << 24) | (octets[1]! << 16) | (octets[2]! << 8) | octets[3]!) >>> 0;
  return { base: (ip & maskOf(prefix)) >>> 0, prefix };
}

function maskOf(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

/** `a.b.c.d/n`. */
export function formatCidr(c: Cidr): string {
  return `${[24, 16, 8, 0].map((s) => (c.base >>> s) & 255).join('.')}/${c.prefix}`;
}

/**
 * The node subnets of a cluster CIDR: subnet `i` of mask `size` (i from 0). Tracks which
 * are taken. @throws Error when `size` is not longer than the cluster prefix or makes
 * more than 65,536 subnets.
 */
export class CidrSet {
  private readonly used = new Set<number>();
  readonly count: number;
  private next = 0;

  constructor(
    readonly cluster: Cidr,
    readonly size: number,
  ) {
    if (size <= cluster.prefix || size > 30) {
      throw new Error(`node CIDR mask size /${size} must be between /${cluster.prefix + 1} and /30`);
    }
    if (size - cluster.prefix > 16)
      throw new Error(`/${size} subnets of ${formatCidr(cluster)} are too many`);
    this.count = 2 ** (size - cluster.prefix);
  }

  /** The index of `subnet` in this set, or undefined when it is not one of its subnets. */
  indexOf(subnet: string): number | undefined {
    let c: Cidr;
    try {
      c = parseCidr(subnet);
    } catch {
      return undefined;
    }
    if (c.prefix !== this.size) return undefined;
    if ((c.base & maskOf(this.cluster.prefix)) >>> 0 !== this.cluster.base) return undefined;
    return (c.base - this.cluster.base) / 2 ** (32 - this.size);
  }

  /** Marks `subnet` taken (one read from an existing Node); ignores subnets outside the set. */
  occupy(subnet: string): void {
    const i = this.indexOf(subnet);
    if (i !== undefined) this.used.add(i);
  }

  /** Frees `subnet` (its Node was deleted). */
  release(subnet: string): void {
    const i = this.indexOf(subnet);
    if (i !== undefined) this.used.delete(i);
  }

  /** Takes the next free subnet (round-robin from the last allocation), or undefined when all are taken. */
  allocate(): string | undefined {
    for (let n = 0; n < this.count; n++) {
      const i = (this.next + n) % this.count;
      if (this.used.has(i)) continue;
      this.used.add(i);
      this.next = (i + 1) % this.count;
      return formatCidr({ base: (this.cluster.base + i * 2 ** (32 - this.size)) >>> 0, prefix: this.size });
    }
    return undefined;
  }
}
