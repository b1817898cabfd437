/**
 * The local-path provisioner's directories on the node: one per volume,
 * `<dataDir>/storage/<pv name>`, made mode 0777 (as k3s's helper pod runs
 * `mkdir -m 0777 -p`, so any container user can write), and removed when the volume is
 * deleted.
 *
 * Removal trusts nothing the volume's pods could have changed: the path must be a direct
 * child of the storage directory (a single name, after resolving the storage directory's
 * own links); a symlink in its place is unlinked, never followed; a directory with a
 * mount at or below it is left alone (rm through a bind would delete another tree);
 * `rm -r` itself unlinks the links it meets inside without following them.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, realpathSync, rmSync, unlinkSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, normalize, resolve } from 'node:path';
import type { Mounter } from '../kubelet/pods/mount.js';
import { mountPointsUnder } from '../kubelet/pods/mount.js';

/** A volume directory that may not be made or removed; `message` says why. */
export class VolumeDirectoryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VolumeDirectoryError';
  }
}

/** `<dataDir>/storage` made absolute (a PV's hostPath must be), where the node's local-path volumes live. */
export function storageDir(dataDir: string): string {
  return resolve(dataDir, 'storage');
}

/**
 * `<storage>/<name>` for a PV name (a DNS subdomain: no `/`, never `.` or `..`).
 * @throws VolumeDirectoryError for a name that is not one path component.
 */
export function volumeDir(storage: string, name: string): string {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0'))
    throw new VolumeDirectoryError(`invalid volume name ${JSON.stringify(name)}`);
  return join(storage, name);
}

/**
 * Makes the volume's directory (and the storage directory, 0755) and sets it to 0777;
 * idempotent.
 * @throws VolumeDirectoryError when something other than a directory is in its place.
 */
export function createVolumeDir(storage: string, name: string): string {
  const dir = volumeDir(storage, name);
  mkdirSync(storage, { recursive: true, mode: 0o755 });
  if (existsSync(dir) || isLink(dir)) {
    if (!lstatSync(dir).isDirectory()) throw new VolumeDirectoryError(`${dir} exists and is not a directory`);
  } else mkdirSync(dir, { mode: 0o777 });
  // mkdir's mode passes through the umask.
  chmodSync(dir, 0o777);
  return dir;
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * Removes a volume's directory `path` (a PV's hostPath) under `storage` (see the file
 * comment). A path already gone is success.
 * @throws VolumeDirectoryError for a path that is not a direct child of `storage`, or one
 *   with a mount at or below it.
 */
export async function removeVolumeDir(storage: string, path: string, mounter: Mounter): Promise<void> {
  if (!isAbsolute(path)) throw new VolumeDirectoryError(`${path} is not an absolute path`);
  const clean = normalize(path).replace(/\/+$/, '');
  const name = basename(clean);
  volumeDir(storage, name);
  if (!existsSync(storage)) return;
  const realStorage = realpathSync(storage);
  const parent = dirname(clean);
  let realParent: string;
  try {
    realParent = realpathSync(parent);
  } catch {
    throw new VolumeDirectoryError(`${path} is not under ${storage}`);
  }
  if (realParent !== realStorage) throw new VolumeDirectoryError(`${path} is not under ${storage}`);
  const target = join(realStorage, name);
  let st;
  try {
    st = lstatSync(target);
  } catch {
    return;
  }
  if (st.isSymbolicLink() || !st.isDirectory()) {
    unlinkSync(target);
    return;
  }
  const mounted = await mountPointsUnder(mounter, target);
  if (mounted.length > 0) throw new VolumeDirectoryError(`${path} is still mounted: ${mounted.join(', ')}`);
  rmSync(target, { recursive: true, force: true });
}
