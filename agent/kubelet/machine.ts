/**
 * What the agent knows about its host: the fixed facts the Node is registered with
 * (cAdvisor's MachineInfo and the kubelet's NodeSystemInfo) and the usage figures the
 * pressure conditions are computed from (the eviction manager's signals). Both come
 * through a MachineProbe so that tests can inject a host with any amount of memory.
 *
 * The host probe reads systeminformation for CPU and memory, statfs(2) for the
 * filesystem holding the agent's data dir (the kubelet's "nodefs"), /proc for boot id
 * and process counts, and /etc/os-release for the OS image — the same sources the
 * kubelet reads through cAdvisor.
 */
import { readFile, statfs } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { networkInterfaces, release } from 'node:os';
import type { Systeminformation } from 'systeminformation';

/** The two parts of systeminformation the host probe calls (its cpu() and mem()). */
interface SystemInformation {
  cpu(): Promise<Systeminformation.CpuData>;
  mem(): Promise<Systeminformation.MemData>;
}

let systemInformation: SystemInformation | undefined;

/**
 * systeminformation's cpu() and mem(), loaded on the first host probe from the package's
 * own cpu and memory modules: its entry loads all of its 21 modules (1.6 MB of heap
 * against 0.8), and processes that only ask primaryIPv4 (the control process) need none.
 */
function si(): SystemInformation {
  if (!systemInformation) {
    const require = createRequire(import.meta.url);
    const { cpu } = require('systeminformation/lib/cpu.js') as Pick<SystemInformation, 'cpu'>;
    const { mem } = require('systeminformation/lib/memory.js') as Pick<SystemInformation, 'mem'>;
    systemInformation = { cpu, mem };
  }
  return systemInformation;
}

/** Facts about the host that do not change while the agent runs. */
export interface MachineInfo {
  /** Logical CPUs (hyper-threads count), as cAdvisor's NumCores. */
  cpuCores: number;
  /** Physical memory, bytes (MemTotal). */
  memoryCapacityBytes: number;
  /** Size of the filesystem holding the agent's data dir, bytes. */
  fsCapacityBytes: number;
  /** /etc/machine-id ('' when absent). */
  machineID: string;
  /** The DMI product UUID ('' when unreadable, as in most containers). */
  systemUUID: string;
  /** /proc/sys/kernel/random/boot_id. */
  bootID: string;
  /** `uname -r`. */
  kernelVersion: string;
  /** PRETTY_NAME of /etc/os-release, e.g. `Debian GNU/Linux 12 (bookworm)`. */
  osImage: string;
  /** Go's GOARCH spelling: `amd64`, `arm64`, ... */
  architecture: string;
}

/** What the eviction signals are computed from (kubelet's summary stats), sampled now. */
export interface MachineUsage {
  /** memory.available: bytes the kernel says can be allocated without swapping (MemAvailable). */
  memoryAvailableBytes: number;
  /** nodefs.available: bytes free to unprivileged users on the data dir's filesystem. */
  fsAvailableBytes: number;
  /** Size of that filesystem, bytes. */
  fsCapacityBytes: number;
  /** Processes and threads running on the host. */
  pidsInUse: number;
  /** The most the kernel allows: min(pid_max, threads-max). */
  pidMax: number;
}

/** Where machine facts come from (the host, or a test's made-up machine). */
export interface MachineProbe {
  /** @throws Error when the host cannot be read at all (no /proc). */
  info(): Promise<MachineInfo>;
  usage(): Promise<MachineUsage>;
}

/** Node's process.arch in Go's GOARCH spelling (the value of the `kubernetes.io/arch` label). */
export function goArch(nodeArch: string = process.arch): string {
  const map: Record<string, string> = {
    x64: 'amd64',
    ia32: '386',
    arm64: 'arm64',
    arm: 'arm',
    ppc64: 'ppc64le',
  };
  return map[nodeArch] ?? nodeArch;
}

async function readTrimmed(path: string): Promise<string> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    return '';
  }
}

/** PRETTY_NAME of an os-release file's text ('Linux' when it has none, as the kubelet's fallback). */
export function prettyName(osRelease: string): string {
  const m = /^PRETTY_NAME=(.*)$/m.exec(osRelease);
  if (!m) return 'Linux';
  return m[1]!.trim().replace(/^"(.*)"$/, '$1');
}

async function filesystem(dir: string): Promise<{ capacity: number; available: number }> {
  const s = await statfs(dir);
  return { capacity: s.blocks * s.bsize, available: s.bavail * s.bsize };
}

/**
 * The real host, with `dataDir` naming the filesystem reported as ephemeral-storage.
 * Each usage() reads /proc/meminfo, statfs and /proc/loadavg: cheap enough for every
 * status update.
 */
export function hostMachine(dataDir: string): MachineProbe {
  return {
    async info() {
      const [cpu, mem, fs, machineID, dbusID, systemUUID, bootID, osRelease] = await Promise.all([
        si().cpu(),
        si().mem(),
        filesystem(dataDir),
        readTrimmed('/etc/machine-id'),
        readTrimmed('/var/lib/dbus/machine-id'),
        readTrimmed('/sys/class/dmi/id/product_uuid'),
        readTrimmed('/proc/sys/kernel/random/boot_id'),
        readTrimmed('/etc/os-release'),
      ]);
      return {
        cpuCores: cpu.cores,
        memoryCapacityBytes: mem.total,
        fsCapacityBytes: fs.capacity,
        machineID: machineID || dbusID,
        systemUUID,
        bootID,
        kernelVersion: release(),
        osImage: prettyName(osRelease),
        architecture: goArch(),
      };
    },
    async usage() {
      const [mem, fs, loadavg, pidMax, threadsMax] = await Promise.all([
        si().mem(),
        filesystem(dataDir),
        readTrimmed('/proc/loadavg'),
        readTrimmed('/proc/sys/kernel/pid_max'),
        readTrimmed('/proc/sys/kernel/threads-max'),
      ]);
      // /proc/loadavg's fourth field is running/total scheduling entities, the count the
      // kernel holds against pid_max (the kubelet reads the same number via sysinfo(2)).
      const total = Number(/\d+\/(\d+)/.exec(loadavg)?.[1] ?? 0);
      const limits = [Number(pidMax), Number(threadsMax)].filter((n) => n > 0);
      return {
        memoryAvailableBytes: mem.available,
        fsAvailableBytes: fs.available,
        fsCapacityBytes: fs.capacity,
        pidsInUse: total,
        pidMax: limits.length > 0 ? Math.min(...limits) : 4_194_304,
      };
    },
  };
}

/**
 * The host's primary IPv4 address: the address of the interface the default route goes
 * through (/proc/net/route), else the first non-loopback IPv4 address, else 127.0.0.1 —
 * what the kubelet reports as InternalIP when no `--node-ip` is given.
 */
export async function primaryIPv4(): Promise<string> {
  const ifaces = networkInterfaces();
  const ipv4Of = (name: string) => ifaces[name]?.find((a) => a.family === 'IPv4' && !a.internal)?.address;
  const routes = await readTrimmed('/proc/net/route');
  for (const line of routes.split('\n').slice(1)) {
    const [iface, destination, , , , , , mask] = line.trim().split(/\s+/);
    if (iface && destination === '00000000' && mask === '00000000') {
      const addr = ipv4Of(iface);
      if (addr) return addr;
    }
  }
  for (const name of Object.keys(ifaces)) {
    const addr = ipv4Of(name);
    if (addr) return addr;
  }
  return '127.0.0.1';
}
