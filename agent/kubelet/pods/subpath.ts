/**
 * Safe subPaths, as the kubelet's pkg/volume/util/subpath (subpath_linux.go) has done since
 * CVE-2017-1002101 and CVE-2021-25741. A subPath names a path inside a volume, but the
 * pod owns the volume's contents: a container can make any component a symlink (to `/`,
 * to the CA key), and the runtime — Docker resolves a bind source on the host — would
 * follow it out of the volume. So the kubelet never hands the runtime the subPath itself:
 *
 *   <volume>/<subPath>
 *     │ realpath (symlinks inside the volume are allowed, as in Kubernetes)
 *     ▼
 *   checked to be within realpath(<volume>), else refused
 *     │ opened one component at a time from the volume's root, O_PATH|O_NOFOLLOW, each
 *     │ fstat'ed: a component that is (or was swapped for) a symlink is refused
 *     ▼
 *   mount --bind /proc/<agent pid>/fd/<n>  <podDir>/volume-subpaths/<volume>/<container>/<index>
 *     (the descriptor, not a path: a later swap cannot redirect it; the target is the
 *     kubelet's own, which no container can touch)
 *     ▼
 *   the runtime bind-mounts the target
 *
 * A missing subPath is created first, also without following links (safeMakeDir: each
 * directory made with mkdir relative to the opened parent, then opened O_NOFOLLOW).
 * `/proc/self/fd/<n>/<name>` stands in for openat(2)/mkdirat(2), which Node.js lacks: the
 * kernel resolves the descriptor's magic link to the very directory it holds, then looks
 * up the one name.
 *
 * Linux only; needs /proc and, for the bind mount, root (see mount.ts).
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  realpathSync,
  rmSync,
  statSync,
  chmodSync,
  writeFileSync,
} from 'node:fs';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { mountPointsUnder, type Mounter } from './mount.js';

/** Linux's O_PATH (an fd that only names a file), which Node's fs.constants leaves out. */
const O_PATH = 0o10000000;
const { O_DIRECTORY, O_NOFOLLOW } = constants;

/** A subPath that cannot be used safely; `message` has the details for the agent's log. */
export class SubPathError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SubPathError';
  }
}

/** One subPath mount of a container (subpath.Subpath). */
export interface Subpath {
  /** Index of the mount in the container's volumeMounts. */
  volumeMountIndex: number;
  /** `<volumePath>/<subPath>`, as the pod wrote it (not yet resolved). */
  path: string;
  volumeName: string;
  /** The volume's directory on the host. */
  volumePath: string;
  /** `<dataDir>/pods/<uid>`. */
  podDir: string;
  containerName: string;
}

/**
 * ValidatePathNoBacksteps, with the kubelet's check of an absolute subPath before it.
 * @throws SubPathError for an absolute path or one with a `..` component.
 */
export function validatePathNoBacksteps(subPath: string): void {
  if (isAbsolute(subPath))
    throw new SubPathError(`error SubPath \`${subPath}\` must not be an absolute path`);
  if (subPath.split('/').includes('..'))
    throw new SubPathError(`unable to provision SubPath \`${subPath}\`: must not contain '..'`);
}

/** PathWithinBase: `path` is `base` or below it (both absolute, without symlinks). */
export function pathWithinBase(path: string, base: string): boolean {
  const rel = relative(base, path);
  return rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

const fdPath = (fd: number, name?: string): string =>
  name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;

/**
 * doSafeOpen: opens `path` (resolved, within `base`) one component at a time from `base`
 * without following any symlink. Returns an O_PATH descriptor the caller closes.
 * @throws SubPathError when a component is missing, is a symlink, or cannot be opened.
 */
function doSafeOpen(path: string, base: string): number {
  const rel = relative(base, path);
  const segments = rel === '' ? [] : rel.split(sep);
  let fd: number;
  try {
    fd = openSync(base, O_PATH | O_DIRECTORY | O_NOFOLLOW);
  } catch (err) {
    throw new SubPathError(`cannot open ${base}: ${(err as Error).message}`, { cause: err });
  }
  let current = base;
  try {
    for (const seg of segments) {
      current = join(current, seg);
      let child: number;
      try {
        child = openSync(fdPath(fd, seg), O_PATH | O_NOFOLLOW);
      } catch (err) {
        throw new SubPathError(`cannot open ${current}: ${(err as Error).message}`, { cause: err });
      }
      closeSync(fd);
      fd = child;
      // O_PATH|O_NOFOLLOW opens a symlink itself rather than failing: check what was opened.
      if (fstatSync(fd).isSymbolicLink()) throw new SubPathError(`unexpected symlink found ${current}`);
    }
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/**
 * safeOpenSubPath: an O_PATH descriptor of `path` (already resolved) if it lies within
 * `volumePath` (already resolved) and no component is a symlink; the caller closes it.
 * @throws SubPathError otherwise.
 */
export function safeOpenSubPath(path: string, volumePath: string): number {
  if (!pathWithinBase(path, volumePath))
    throw new SubPathError(
      `subpath ${JSON.stringify(path)} not within volume path ${JSON.stringify(volumePath)}`,
    );
  return doSafeOpen(path, volumePath);
}

/** findExistingPrefix: the longest existing prefix of `path` under `base` and the names below it. */
function findExistingPrefix(base: string, path: string): { existing: string; toCreate: string[] } {
  const segments = relative(base, path)
    .split(sep)
    .filter((s) => s !== '');
  let current = base;
  for (let i = 0; i < segments.length; i++) {
    const next = join(current, segments[i]!);
    try {
      statSync(next);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT')
        return { existing: current, toCreate: segments.slice(i) };
      throw new SubPathError(`cannot stat ${next}: ${(err as Error).message}`, { cause: err });
    }
    current = next;
  }
  return { existing: path, toCreate: [] };
}

/**
 * SafeMakeDir: creates the directory `path` (`<volumePath>/<subPath>`) and its missing
 * parents with mode `mode` (e.g. 0o777, the volume's own), none of them through a
 * symlink that leaves the volume. Nothing when it exists as a directory.
 * @throws SubPathError when it would leave the volume, a component is a symlink
 *   (or becomes one meanwhile), or it exists as something else.
 */
export function safeMakeDir(path: string, volumePath: string, mode: number): void {
  if (!pathWithinBase(path, volumePath))
    throw new SubPathError(`path ${path} is outside of allowed base ${volumePath}`);
  const base = realpathSync(volumePath);
  try {
    if (statSync(path).isDirectory()) return;
    throw new SubPathError(`${path} exists and is not a directory`);
  } catch (err) {
    if (err instanceof SubPathError) throw err;
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new SubPathError(`cannot stat ${path}`, { cause: err });
  }
  const { existing, toCreate } = findExistingPrefix(volumePath, path);
  const fullExisting = realpathSync(existing);
  if (!pathWithinBase(fullExisting, base))
    throw new SubPathError(`path ${fullExisting} is outside of allowed base ${base}`);
  let fd = doSafeOpen(fullExisting, base);
  let current = fullExisting;
  try {
    for (const name of toCreate) {
      current = join(current, name);
      try {
        mkdirSync(fdPath(fd, name), { mode });
      } catch (err) {
        throw new SubPathError(`cannot create directory ${current}: ${(err as Error).message}`, {
          cause: err,
        });
      }
      // It may have been replaced since mkdir: O_NOFOLLOW|O_DIRECTORY refuses a symlink or a
      // file. (Anything else there is what the pod could already reach.)
      let child: number;
      try {
        child = openSync(fdPath(fd, name), O_PATH | O_NOFOLLOW | O_DIRECTORY);
      } catch (err) {
        throw new SubPathError(`cannot open ${current}: ${(err as Error).message}`, { cause: err });
      }
      closeSync(fd);
      fd = child;
      // mkdir's mode went through the umask; the container needs exactly `mode`.
      chmodSync(fdPath(fd), mode);
    }
  } finally {
    closeSync(fd);
  }
}

/** `<podDir>/volume-subpaths/<volume>/<container>/<index>`, where a subPath is bound for the runtime. */
export function subPathTarget(
  sp: Pick<Subpath, 'podDir' | 'volumeName' | 'containerName' | 'volumeMountIndex'>,
): string {
  return join(sp.podDir, 'volume-subpaths', sp.volumeName, sp.containerName, String(sp.volumeMountIndex));
}

/**
 * PrepareSafeSubpath (doBindSubPath): resolves `sp.path`, opens it safely (see the file
 * comment) and bind-mounts the opened file or directory on subPathTarget(sp), replacing
 * what an earlier start of the container left there. Resolves with the target, which is
 * what the runtime should mount.
 * @throws SubPathError when the subPath leaves the volume or has a symlink in the way;
 *   MountFailure when the bind mount fails (not root).
 */
export async function prepareSafeSubpath(sp: Subpath, mounter: Mounter): Promise<string> {
  let volumePath: string;
  let path: string;
  try {
    volumePath = realpathSync(sp.volumePath);
    path = realpathSync(sp.path);
  } catch (err) {
    throw new SubPathError(
      `error resolving symlinks in ${JSON.stringify(sp.path)}: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  const fd = safeOpenSubPath(path, volumePath);
  try {
    const target = subPathTarget(sp);
    mkdirSync(dirname(target), { recursive: true, mode: 0o750 });
    for (const m of await mountPointsUnder(mounter, realTarget(target))) await mounter.unmount(m);
    const isDir = fstatSync(fd).isDirectory();
    let present: ReturnType<typeof lstatSync> | undefined;
    try {
      present = lstatSync(target);
    } catch {
      present = undefined;
    }
    if (present && present.isDirectory() !== isDir) {
      rmSync(target, { recursive: false, force: true });
      present = undefined;
    }
    if (!present) {
      if (isDir) mkdirSync(target, { mode: 0o750 });
      else writeFileSync(target, '', { mode: 0o640, flag: 'a' });
    }
    await mounter.bindMount(`/proc/${process.pid}/fd/${fd}`, target);
    return target;
  } finally {
    closeSync(fd);
  }
}

/** `path` with its existing parent resolved (mountinfo names mount points without symlinks). */
function realTarget(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    try {
      return join(realpathSync(dirname(path)), path.slice(dirname(path).length + 1));
    } catch {
      return path;
    }
  }
}

/**
 * CleanSubPaths: unmounts every bind under `<podDir>/volume-subpaths`, then removes the
 * directory. Never removes anything while a mount is left under it (so it never deletes
 * through a mount into a volume or a host path).
 * @throws MountFailure when a mount cannot be removed; Error when one is still there.
 */
export async function cleanSubPaths(podDir: string, mounter: Mounter): Promise<void> {
  const root = realTarget(join(podDir, 'volume-subpaths'));
  for (const m of await mountPointsUnder(mounter, root)) await mounter.unmount(m);
  const left = await mountPointsUnder(mounter, root);
  if (left.length > 0) throw new Error(`cannot remove ${root}: still mounted: ${left.join(', ')}`);
  rmSync(root, { recursive: true, force: true });
}
