/**
 * What a hollow node is made of instead of a host: a machine of the configured size that
 * never feels pressure (the MachineProbe the Node's capacity, allocatable and pressure
 * conditions come from), and a Mounter that mounts nothing (the fake runtime reads no
 * mounts).
 */
import type { MachineInfo, MachineProbe, MachineUsage } from '../kubelet/machine.js';
import type { Mounter } from '../kubelet/pods/mount.js';

/** The size of every hollow node (`--cpu`, `--memory`, `--max-pods`). */
export interface HollowCapacity {
  /** Whole cores (status.capacity.cpu). */
  cpu: number;
  /** Bytes (status.capacity.memory; allocatable is 100Mi less, the kubelet's eviction threshold). */
  memoryBytes: number;
  /** status.capacity.pods. */
  pods: number;
}

/** Disk every hollow node reports (ephemeral-storage capacity), bytes: 100 GiB. */
const FS_BYTES = 100 * 1024 ** 3;

/**
 * A MachineProbe of `capacity` with made-up identity (one object serves every node: it
 * keeps nothing per node). Usage is a tenth of memory and disk, so no pressure condition
 * ever turns True.
 */
export function hollowMachine(capacity: HollowCapacity): MachineProbe {
  const info: MachineInfo = {
    cpuCores: capacity.cpu,
    memoryCapacityBytes: capacity.memoryBytes,
    fsCapacityBytes: FS_BYTES,
    machineID: '',
    systemUUID: '',
    bootID: '',
    kernelVersion: 'hollow',
    osImage: 'k8ts hollow node',
    architecture: 'amd64',
  };
  const usage: MachineUsage = {
    memoryAvailableBytes: capacity.memoryBytes * 0.9,
    fsAvailableBytes: FS_BYTES * 0.9,
    fsCapacityBytes: FS_BYTES,
    pidsInUse: 100,
    pidMax: 4_194_304,
  };
  return { info: async () => ({ ...info }), usage: async () => ({ ...usage }) };
}

/**
 * Mounts nothing and says it did: a Secret volume's tmpfs is its plain directory on disk,
 * a subPath's bind mount binds nothing (no container reads either), and there are no
 * mount points to unmount at teardown.
 */
export const hollowMounter: Mounter = {
  bindMount: async () => undefined,
  mountTmpfs: async () => undefined,
  unmount: async () => undefined,
  mountPoints: async () => [],
};
