/**
 * The kubelet's log path of a Docker container, as cri-dockerd keeps it
 * (core/container_create.go, container_start.go, container_remove.go, logs.go):
 *
 * - CreateContainer records `<sandbox logDirectory>/<container logPath>` (the kubelet's
 *   `<podLogsDir>/<ns>_<pod>_<uid>/<container>/<restartCount>.log`) in the container's label
 *   `io.kubernetes.container.logpath`; ContainerStatus reports it as logPath.
 * - StartContainer, whether the start worked or not, makes that path a symlink to Docker's
 *   own json-file log (`docker inspect`'s LogPath, which Docker sets at the first start),
 *   replacing whatever was there. Without a LogPath (a log driver other than json-file)
 *   there is nothing to link to and no link is made.
 * - RemoveContainer removes the symlink first (Docker removes its log with the container).
 *
 * So the pod's log directory names every container the kubelet started there, also after
 * `docker rm -f` behind the kubelet's back (a dangling link stays): the kubelet reads the
 * restart count back from the names (agent/kubelet/pods/logs.ts, calcRestartCountByLogDir).
 */
import { mkdir, rm, symlink } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { CriError } from '../errors.js';

/** cri-dockerd's containerLogPathLabelKey. */
export const LABEL_CONTAINER_LOG_PATH = 'io.kubernetes.container.logpath';

/**
 * The absolute path of a container's kubelet log: `logDirectory` joined with `logPath`;
 * undefined unless the sandbox names an absolute logDirectory and the container a logPath.
 */
export function kubeletLogPath(
  logDirectory: string | undefined,
  logPath: string | undefined,
): string | undefined {
  if (!logDirectory || !logPath || !isAbsolute(logDirectory)) return undefined;
  return join(logDirectory, logPath);
}

/**
 * Makes `path` a symlink to `dockerLogPath` (createContainerLogSymlink), its directory made
 * if missing, any file already there replaced. Nothing happens when either path is empty.
 * @throws CriError Internal when the link cannot be made.
 */
export async function createContainerLogSymlink(
  containerId: string,
  path: string | undefined,
  dockerLogPath: string | undefined,
): Promise<void> {
  if (!path || !dockerLogPath) return;
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o755 });
    await rm(path, { force: true });
    await symlink(dockerLogPath, path);
  } catch (err) {
    throw new CriError(
      'Internal',
      `failed to create symbolic link ${JSON.stringify(path)} to the container log file ${JSON.stringify(dockerLogPath)} for container ${JSON.stringify(containerId)}: ${(err as Error).message}`,
      { cause: err },
    );
  }
}

/**
 * Removes the symlink `path` (removeContainerLogSymlink); one already gone is done.
 * @throws CriError Internal when it cannot be removed.
 */
export async function removeContainerLogSymlink(
  containerId: string,
  path: string | undefined,
): Promise<void> {
  if (!path) return;
  try {
    await rm(path, { force: true });
  } catch (err) {
    throw new CriError(
      'Internal',
      `failed to remove container ${JSON.stringify(containerId)} log symlink ${JSON.stringify(path)}: ${(err as Error).message}`,
      { cause: err },
    );
  }
}
