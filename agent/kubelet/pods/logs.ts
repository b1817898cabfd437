/**
 * Where the pod's container logs go, and what their names say: the kubelet's
 * `<podLogsDir>/<namespace>_<name>_<uid>/<container>/<restartCount>.log`
 * (kuberuntime/helpers.go BuildPodLogsDirectory, BuildContainerLogsDirectory,
 * buildContainerLogsPath). The runtime writes the files (containerd) or links them to its
 * own (the Docker adapter, as cri-dockerd); the kubelet makes the directories and reads the
 * restart count back from the names when the runtime has lost the containers
 * (calcRestartCountByLogDir).
 */
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pod } from '../../../api/types.js';

/** `<podLogsDir>/<namespace>_<name>_<uid>`: the sandbox's logDirectory. */
export function podLogsDirectory(podLogsDir: string, pod: Pod): string {
  const m = pod.metadata;
  return join(podLogsDir, `${m.namespace ?? ''}_${m.name ?? ''}_${m.uid ?? ''}`);
}

/** `<container>/<restartCount>.log`: a container's logPath, relative to its sandbox's logDirectory. */
export function containerLogPath(containerName: string, restartCount: number): string {
  return join(containerName, `${restartCount}.log`);
}

/** `N.log` and its rotations (`N.log.20260101-000000`, `N.log.1.gz`). */
const RESTART_COUNT_LOG_FILE = /^(\d+)\.log(\..*)?$/;

/**
 * The restart count the next container of a name gets when the runtime knows no container
 * of it (calcRestartCountByLogDir): one more than the highest `N` of the `N.log*` files in
 * `dir` (`<pod logs>/<container>`), 0 when there are none or the directory does not exist.
 * Never throws (an unreadable directory counts as none).
 */
export async function restartCountFromLogDir(dir: string): Promise<number> {
  let names: string[];
  try {
    names = (await readdir(dir, { withFileTypes: true })).filter((e) => !e.isDirectory()).map((e) => e.name);
  } catch {
    return 0;
  }
  let count = 0;
  for (const name of names) {
    const m = RESTART_COUNT_LOG_FILE.exec(name);
    if (m) count = Math.max(count, Number(m[1]) + 1);
  }
  return count;
}

/** Makes `<pod logs>/<container>` (generateContainerConfig's MkdirAll, mode 0755). */
export async function ensureContainerLogDir(podLogs: string, containerName: string): Promise<void> {
  await mkdir(join(podLogs, containerName), { recursive: true, mode: 0o755 });
}

/** Removes a pod's log directory once the pod is gone (the container GC's evictPodLogsDirectories). */
export async function removePodLogs(podLogs: string): Promise<void> {
  await rm(podLogs, { recursive: true, force: true });
}
