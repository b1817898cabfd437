/**
 * Pod IPs of the Docker fast path (cri/docker/pod-interfaces.ts), handed out as CNI's
 * host-local IPAM plugin does: one directory per network under the agent's data dir, one
 * file per address in use (named after the address, holding its owner: the sandbox
 * container's name), created with O_EXCL so that two allocations never get one address —
 * also across processes — and `last_reserved_ip.0` with the address given last, after
 * which the next search starts (a freed address is not reused at once, so a stale ARP
 * entry or conntrack flow elsewhere does not reach the next pod).
 *
 * The files outlive the agent: a restarted agent keeps the addresses of the sandboxes it
 * adopts (their IPs are also on the sandboxes' labels).
 */
import { mkdir, open, readdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const LAST_RESERVED = 'last_reserved_ip.0';

const toInt = (ip: string): number => ip.split('.').reduce((a, o) => a * 256 + Number(o), 0);
const toIp = (n: number): string => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');

/** The file-backed allocator (see the file comment). */
export class HostLocalIPAM {
  /** The address given last, per network (read from its file on first use). */
  private readonly last = new Map<string, number>();

  /** @param dir where each network's directory is made (e.g. `<dataDir>/docker-ipam`). */
  constructor(readonly dir: string) {}

  /**
   * Reserves the first free address after the last one given, in `first`…`last`
   * (inclusive, IPv4), for `owner`.
   * @returns the address.
   * @throws Error `no free address in <first>-<last> of <network>` when all are taken, or
   *   the filesystem's error.
   */
  async allocate(network: string, range: { first: string; last: string }, owner: string): Promise<string> {
    const netDir = join(this.dir, safeName(network));
    await mkdir(netDir, { recursive: true, mode: 0o700 });
    const first = toInt(range.first);
    const count = toInt(range.last) - first + 1;
    let last = this.last.get(network);
    if (last === undefined) {
      const text = await readFile(join(netDir, LAST_RESERVED), 'utf8').catch(() => '');
      last = /^\d+\.\d+\.\d+\.\d+$/.test(text.trim()) ? toInt(text.trim()) : first - 1;
    }
    for (let i = 1; i <= count; i++) {
      const candidate = first + ((((last - first + i) % count) + count) % count);
      const ip = toIp(candidate);
      let file;
      try {
        file = await open(join(netDir, ip), 'wx', 0o600);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw err;
      }
      try {
        await file.writeFile(owner);
      } finally {
        await file.close();
      }
      this.last.set(network, candidate);
      await writeFile(join(netDir, LAST_RESERVED), ip).catch(() => undefined);
      return ip;
    }
    throw new Error(`no free address in ${range.first}-${range.last} of ${network}`);
  }

  /** Frees `ip` when `owner` holds it; an address that is free or someone else's is left. */
  async release(network: string, ip: string, owner: string): Promise<void> {
    if (!/^\d+\.\d+\.\d+\.\d+$/.test(ip)) return;
    const file = join(this.dir, safeName(network), ip);
    const holder = await readFile(file, 'utf8').catch(() => undefined);
    if (holder !== owner) return;
    await unlink(file).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }

  /** The owner of each address in use on `network`, by address. */
  async reserved(network: string): Promise<Map<string, string>> {
    const netDir = join(this.dir, safeName(network));
    const out = new Map<string, string>();
    const names = await readdir(netDir).catch(() => [] as string[]);
    for (const n of names) {
      if (!/^\d+\.\d+\.\d+\.\d+$/.test(n)) continue;
      const holder = await readFile(join(netDir, n), 'utf8').catch(() => undefined);
      if (holder !== undefined) out.set(n, holder);
    }
    return out;
  }
}

/** A network name as one path segment. */
function safeName(network: string): string {
  return network.replace(/[^a-zA-Z0-9_.-]/g, '_');
}
