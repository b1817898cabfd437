/**
 * The kernel's mounts as the kubelet uses them (k8s.io/mount-utils, the calls actually
 * made): bind mounts of resolved subPaths, tmpfs for Secret volumes, unmounts at teardown,
 * and the mount table. `hostMounter` runs util-linux's `mount`/`umount` (as the kubelet's
 * Linux mounter does) and reads `/proc/self/mountinfo`; it needs root (CAP_SYS_ADMIN) in
 * the mount namespace Docker uses, which is the host's for an agent run as a service.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The mount calls of the kubelet's volume code (see the file comment). */
export interface Mounter {
  /**
   * `mount --bind --no-canonicalize source target`: `source` is taken as given, so a
   * `/proc/<pid>/fd/<n>` path binds exactly the file that descriptor holds.
   * @throws MountFailure when the kernel refuses (not root, target missing, ...).
   */
  bindMount(source: string, target: string): Promise<void>;
  /**
   * `mount -t tmpfs -o <options> tmpfs target` (options such as `mode=0755`, `size=1m`).
   * @throws MountFailure when the kernel refuses.
   */
  mountTmpfs(target: string, options: readonly string[]): Promise<void>;
  /**
   * Unmounts the topmost mount at `target` (lazily when it is busy, as a pod's mounts
   * outlive nothing that needs them once its containers are gone).
   * @throws MountFailure when it cannot be unmounted at all.
   */
  unmount(target: string): Promise<void>;
  /** Every mount point of this mount namespace, in mount order (a mount before those on top of it). */
  mountPoints(): Promise<string[]>;
}

/** A mount call failed; `message` has the command and what it said. */
export class MountFailure extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MountFailure';
  }
}

async function runMount(cmd: string, args: string[]): Promise<void> {
  try {
    await run(cmd, args, { timeout: 30_000 });
  } catch (err) {
    const e = err as { stderr?: string; message?: string };
    throw new MountFailure(`${cmd} ${args.join(' ')}: ${(e.stderr || e.message || String(err)).trim()}`, {
      cause: err,
    });
  }
}

/** A path field of /proc/self/mountinfo, with its octal escapes (`\040` for a space) decoded. */
export function decodeMountInfoPath(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_m, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/** The mount points listed in a /proc/self/mountinfo text (its fifth field), in order. */
export function parseMountInfo(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const field = line.split(' ')[4];
    if (field) out.push(decodeMountInfoPath(field));
  }
  return out;
}

/** The host's mounts through util-linux (see the file comment). */
export const hostMounter: Mounter = {
  bindMount: (source, target) => runMount('mount', ['--bind', '--no-canonicalize', source, target]),
  mountTmpfs: (target, options) =>
    runMount('mount', [
      '-t',
      'tmpfs',
      ...(options.length > 0 ? ['-o', options.join(',')] : []),
      'tmpfs',
      target,
    ]),
  unmount: async (target) => {
    try {
      await runMount('umount', [target]);
    } catch (err) {
      if (!/busy/i.test((err as Error).message)) throw err;
      await runMount('umount', ['--lazy', target]);
    }
  },
  mountPoints: async () => parseMountInfo(await readFile('/proc/self/mountinfo', 'utf8')),
};

/** The mount points at or under `dir` (an absolute path without a trailing slash), deepest first. */
export async function mountPointsUnder(mounter: Mounter, dir: string): Promise<string[]> {
  return (await mounter.mountPoints()).filter((m) => m === dir || m.startsWith(`${dir}/`)).reverse();
}
