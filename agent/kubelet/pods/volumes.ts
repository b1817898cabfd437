/**
 * A pod's volumes on the node, as the kubelet's volume manager and its plugins lay them
 * out (pkg/volume/emptydir, configmap, secret, hostpath): under
 * `<dataDir>/pods/<uid>/volumes/kubernetes.io~<plugin>/<volume name>`.
 *
 * - emptyDir: an empty directory (mode 0777, so any container user can write), kept for
 *   the pod's lifetime across container restarts.
 * - configMap / secret: a directory of files written from the API object — every key, or
 *   the `items` (key → path, mode) — with `defaultMode` (0644); rewritten on each set-up,
 *   so a new container sees the current data. Mounted read-only. A Secret's directory is
 *   a tmpfs where the host allows it (never on disk), in a 0700 directory either way.
 * - projected (pkg/volume/projected): the files of its sources in one directory —
 *   configMap and secret keys (all, or `items`), downwardAPI fields, and a
 *   serviceAccountToken: a token bound to the pod from the token manager (a TokenRequest
 *   under the node's credential), refreshed before it expires. A tmpfs like a Secret's.
 *   Rewritten on each set-up and, while the pod runs, on each sync (refreshVolumes), each
 *   file written beside itself and renamed over the old one, so a reader in the
 *   container sees the old or the new content, never half a file (the atomicity of
 *   upstream's AtomicWriter per file; its `..data` symlink swap of the whole set is not
 *   done); files no source writes any more are removed.
 * - downwardAPI: the pod's fields (metadata.name/namespace/uid, labels and annotations as
 *   `key="value"` lines, one label or annotation) and containers' resources, written and
 *   refreshed as a projected volume.
 * - hostPath: the host's path itself, checked or created per `type` (DirectoryOrCreate,
 *   Directory, FileOrCreate, File; '' checks nothing).
 * - persistentVolumeClaim: the directory of the claim's bound PersistentVolume (a hostPath
 *   PV, checked or created per its `type`, or a local PV, which must exist), read-only when
 *   the pod's claim says so; a claim that is not bound yet fails with the kubelet's
 *   FailedMount words and the pod worker retries (claims.ts).
 * - subPath / subPathExpr: resolved inside the volume without following links out of it
 *   and bind-mounted under `<dataDir>/pods/<uid>/volume-subpaths/` (subpath.ts).
 * The pod's directory is removed when the pod is cleaned up (tearDown), its mounts first.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, normalize, relative } from 'node:path';
import { errorMessage } from '../../../api/errors.js';
import type { RestClient } from '../../../api/client/rest.js';
import type { KeyValue, Mount } from '../../../cri/index.js';
import type { TokenManager } from '../token/manager.js';
import { expandVars, podFieldValue, readKeyData, resourceFieldValue } from './env.js';
import { ContainerStartError, MountError } from './errors.js';
import { isNotFound } from '../../../api/client/errors.js';
import { resources } from '../../../api/client/resource.js';
import type { PersistentVolume, PersistentVolumeClaim } from '../../storage/types.js';
import { checkLocalPath, resolveClaim, type ClaimReader } from './claims.js';
import { MountFailure, mountPointsUnder, type Mounter } from './mount.js';
import { cleanSubPaths, prepareSafeSubpath, safeMakeDir, validatePathNoBacksteps } from './subpath.js';
import type { DownwardAPIVolumeFile, KeyToPath, KubeletContainer, KubeletPod, Volume } from './types.js';

export { MountError };

/** Host paths of a pod's volumes, by volume name. */
export type PodVolumes = Map<string, { hostPath: string; readOnly: boolean }>;

/** `<dataDir>/pods/<uid>`, the pod's directory on the node. */
export function podDir(dataDir: string, uid: string): string {
  return join(dataDir, 'pods', uid);
}

function pluginDir(dataDir: string, uid: string, plugin: string, name: string): string {
  return join(podDir(dataDir, uid), 'volumes', `kubernetes.io~${plugin}`, name);
}

/** Writes `data` (key → bytes) into `dir` as files, replacing what was there. */
function writeKeyFiles(
  dir: string,
  data: Map<string, Buffer>,
  items: KeyToPath[] | undefined,
  defaultMode: number,
  volume: string,
  what: string,
  optional: boolean,
): void {
  // Emptied in place: `dir` may be a tmpfs mount point (a Secret's), which stays.
  if (existsSync(dir))
    for (const e of readdirSync(dir)) rmSync(join(dir, e), { recursive: true, force: true });
  else mkdirSync(dir, { recursive: true, mode: 0o755 });
  const files: [string, Buffer, number][] = [];
  if (items && items.length > 0) {
    for (const item of items) {
      const v = data.get(item.key);
      if (v === undefined) {
        if (optional) continue;
        throw new MountError(volume, `configmap references non-existent config key: ${item.key} (${what})`);
      }
      files.push([item.path, v, item.mode ?? defaultMode]);
    }
  } else {
    for (const [k, v] of data) files.push([k, v, defaultMode]);
  }
  for (const [path, content, mode] of files) {
    const rel = normalize(path);
    if (rel.startsWith('..') || rel.startsWith('/'))
      throw new MountError(volume, `invalid path ${JSON.stringify(path)}`);
    const file = join(dir, rel);
    mkdirSync(dirname(file), { recursive: true, mode: 0o755 });
    writeFileSync(file, content);
    chmodSync(file, mode);
  }
}

function setUpHostPath(v: { name: string; hostPath: { path: string; type?: string } }): string {
  const { path, type = '' } = v.hostPath;
  const exists = existsSync(path);
  switch (type) {
    case 'DirectoryOrCreate':
      if (!exists) mkdirSync(path, { recursive: true, mode: 0o755 });
      else if (!statSync(path).isDirectory())
        throw new MountError(v.name, `hostPath type check failed: ${path} is not a directory`);
      break;
    case 'Directory':
      if (!exists || !statSync(path).isDirectory())
        throw new MountError(v.name, `hostPath type check failed: ${path} is not a directory`);
      break;
    case 'FileOrCreate':
      if (!exists) {
        mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
        writeFileSync(path, '', { mode: 0o644 });
      } else if (!statSync(path).isFile())
        throw new MountError(v.name, `hostPath type check failed: ${path} is not a file`);
      break;
    case 'File':
      if (!exists || !statSync(path).isFile())
        throw new MountError(v.name, `hostPath type check failed: ${path} is not a file`);
      break;
    case '':
      break;
    default:
      if (!exists) throw new MountError(v.name, `hostPath type check failed: ${path} does not exist`);
  }
  return path;
}

/** What setUpVolumes needs besides the pod. */
export interface VolumeSetUpOptions {
  /** The agent's directory (volumes go under `<dataDir>/pods/<uid>`). */
  dataDir: string;
  /** Reads the ConfigMaps and Secrets. */
  client: RestClient;
  mounter: Mounter;
  /** Told when a Secret volume cannot be put on tmpfs and goes to disk instead. */
  onTmpfsUnavailable?: (volume: string, err: Error) => void;
  /** Issues the tokens of projected serviceAccountToken sources; unset: such a volume fails to mount. */
  tokens?: Pick<TokenManager, 'get'>;
  /** Told when a token written now is due for a refresh (ms since the epoch): sync again then. */
  onTokenRefreshAt?: (at: number) => void;
  /** Node allocatable, for downward API resourceFieldRefs of unset limits. */
  nodeAllocatable?: () => Promise<Record<string, string>>;
  /** This node's name: a claim's PV must have node affinity to it. Unset: not checked. */
  nodeName?: string;
  /** Reads claims and volumes; default GETs through `client`. */
  claims?: ClaimReader;
}

/** GETs of claims, volumes and the Node through `client`, a 404 as undefined. */
export function clientClaimReader(client: RestClient, nodeName?: string): ClaimReader {
  const orUndefined = async <T>(p: Promise<T>): Promise<T | undefined> => {
    try {
      return await p;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
  return {
    getClaim: (ns, name) =>
      orUndefined(client.get<PersistentVolumeClaim>(resources.persistentvolumeclaims, ns, name)),
    getVolume: (name) =>
      orUndefined(client.get<PersistentVolume>(resources.persistentvolumes, undefined, name)),
    ...(nodeName ? { getNode: () => orUndefined(client.get(resources.nodes, undefined, nodeName)) } : {}),
  };
}

/** The host path of a persistentVolumeClaim volume (see the file comment). */
async function setUpClaim(
  v: Volume & { persistentVolumeClaim: { claimName: string; readOnly?: boolean } },
  namespace: string,
  opts: VolumeSetUpOptions,
): Promise<{ hostPath: string; readOnly: boolean }> {
  const reader = opts.claims ?? clientClaimReader(opts.client, opts.nodeName);
  const resolved = await resolveClaim(reader, namespace, v.name, v.persistentVolumeClaim);
  if (resolved.local) checkLocalPath(v.name, resolved);
  else setUpHostPath({ name: v.name, hostPath: { path: resolved.path, type: resolved.hostPathType ?? '' } });
  return { hostPath: resolved.path, readOnly: resolved.readOnly };
}

/** A file a projected or downwardAPI volume holds: path in the volume → bytes and mode. */
type VolumeFiles = Map<string, { data: Buffer; mode: number }>;

/**
 * Writes `files` into `dir` (see the file comment: each beside itself, then renamed over
 * the old one), then removes the files under `dir` that are not among them.
 * @throws MountError for a path that leaves the directory.
 */
function writeFilesAtomically(dir: string, files: VolumeFiles, volume: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const keep = new Set<string>();
  for (const [path, { data, mode }] of files) {
    const rel = normalize(path);
    if (rel.startsWith('..') || rel.startsWith('/'))
      throw new MountError(volume, `invalid path ${JSON.stringify(path)}`);
    const file = join(dir, rel);
    keep.add(file);
    mkdirSync(dirname(file), { recursive: true, mode: 0o755 });
    const tmp = join(dirname(file), `..${basename(file)}.tmp`);
    writeFileSync(tmp, data);
    chmodSync(tmp, mode);
    renameSync(tmp, file);
  }
  const prune = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        prune(p);
        if (readdirSync(p).length === 0 && relative(dir, p) !== '') rmSync(p, { recursive: true });
      } else if (!keep.has(p)) rmSync(p, { force: true });
    }
  };
  prune(dir);
}

/** fieldpath.FormatMap: `key="value"` lines, sorted by key, values quoted as Go's %q. */
function formatMap(m: Record<string, string> | undefined): string {
  return Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify(m![k])}`)
    .join('\n');
}

/** The downward API files of `items` (validated by the API server already). */
async function downwardAPIFiles(
  pod: KubeletPod,
  items: readonly DownwardAPIVolumeFile[],
  defaultMode: number,
  volume: string,
  opts: VolumeSetUpOptions,
  out: VolumeFiles,
): Promise<void> {
  for (const item of items) {
    let value: string;
    try {
      if (item.fieldRef) {
        const path = item.fieldRef.fieldPath;
        if (path === 'metadata.labels') value = formatMap(pod.metadata.labels);
        else if (path === 'metadata.annotations') value = formatMap(pod.metadata.annotations);
        else value = podFieldValue(pod, path, { nodeName: '', hostIP: '', podIP: '' });
      } else if (item.resourceFieldRef) {
        const ref = item.resourceFieldRef;
        const container = pod.spec.containers.find((c) => c.name === ref.containerName);
        if (!container) throw new Error(`no container ${JSON.stringify(ref.containerName)}`);
        value = await resourceFieldValue(pod, container, ref, opts.nodeAllocatable);
      } else continue;
    } catch (err) {
      throw new MountError(volume, `downward API ${item.path}: ${errorMessage(err)}`);
    }
    out.set(item.path, { data: Buffer.from(value, 'utf8'), mode: item.mode ?? defaultMode });
  }
}

/** The files of a projected volume's sources (see the file comment). */
async function projectedFiles(pod: KubeletPod, v: Volume, opts: VolumeSetUpOptions): Promise<VolumeFiles> {
  const ns = pod.metadata.namespace ?? 'default';
  const defaultMode = v.projected?.defaultMode ?? 0o644;
  const out: VolumeFiles = new Map();
  for (const src of v.projected?.sources ?? []) {
    const ref = src.configMap ?? src.secret;
    if (ref) {
      const kind = src.configMap ? 'ConfigMap' : 'Secret';
      const name = ref.name ?? '';
      const data = await readKeyData(opts.client, kind, ns, name);
      if (!data) {
        if (ref.optional) continue;
        throw new MountError(v.name, `${kind.toLowerCase()} "${name}" not found`);
      }
      if (ref.items && ref.items.length > 0) {
        for (const item of ref.items) {
          const bytes = data.data.get(item.key);
          if (bytes === undefined) {
            if (ref.optional) continue;
            throw new MountError(
              v.name,
              `${kind.toLowerCase()} references non-existent config key: ${item.key} (${kind} ${ns}/${name})`,
            );
          }
          out.set(item.path, { data: bytes, mode: item.mode ?? defaultMode });
        }
      } else for (const [k, bytes] of data.data) out.set(k, { data: bytes, mode: defaultMode });
    } else if (src.downwardAPI) {
      await downwardAPIFiles(pod, src.downwardAPI.items ?? [], defaultMode, v.name, opts, out);
    } else if (src.serviceAccountToken) {
      const t = src.serviceAccountToken;
      if (!opts.tokens)
        throw new MountError(v.name, 'failed to fetch token: this kubelet has no token manager');
      const sa = pod.spec.serviceAccountName || 'default';
      let issued;
      try {
        issued = await opts.tokens.get(ns, sa, {
          audiences: t.audience ? [t.audience] : [],
          expirationSeconds: t.expirationSeconds ?? 3600,
          boundObjectRef: {
            kind: 'Pod',
            apiVersion: 'v1',
            name: pod.metadata.name ?? '',
            uid: pod.metadata.uid ?? '',
          },
        });
      } catch (err) {
        throw new MountError(v.name, `failed to fetch token: ${errorMessage(err)}`);
      }
      opts.onTokenRefreshAt?.(issued.refreshAt);
      out.set(t.path, { data: Buffer.from(issued.token, 'utf8'), mode: defaultMode });
    }
  }
  return out;
}

/** Whether `v` is rewritten while its pod runs (projected, downwardAPI). */
function isRefreshed(v: Volume): boolean {
  return v.projected !== undefined || v.downwardAPI !== undefined;
}

/** Sets up (or rewrites) one projected or downwardAPI volume; its host path. */
async function setUpProjected(pod: KubeletPod, v: Volume, opts: VolumeSetUpOptions): Promise<string> {
  const uid = pod.metadata.uid ?? '';
  if (v.projected) {
    const files = await projectedFiles(pod, v, opts);
    const dir = pluginDir(opts.dataDir, uid, 'projected', v.name);
    await setUpSecretDir(dir, v.name, opts);
    writeFilesAtomically(dir, files, v.name);
    return dir;
  }
  const files: VolumeFiles = new Map();
  const src = v.downwardAPI!;
  await downwardAPIFiles(pod, src.items ?? [], src.defaultMode ?? 0o644, v.name, opts, files);
  const dir = pluginDir(opts.dataDir, uid, 'downward-api', v.name);
  writeFilesAtomically(dir, files, v.name);
  return dir;
}

/**
 * Rewrites the projected and downwardAPI volumes of a running pod (the volume manager's
 * remount of the plugins that need it): a token due for a refresh is replaced, changed
 * data appears. Volumes never set up (no directory yet) are left for setUpVolumes.
 * @throws MountError as setUpVolumes.
 */
export async function refreshVolumes(pod: KubeletPod, opts: VolumeSetUpOptions): Promise<void> {
  const uid = pod.metadata.uid ?? '';
  for (const v of pod.spec.volumes ?? []) {
    if (!isRefreshed(v)) continue;
    const dir = pluginDir(opts.dataDir, uid, v.projected ? 'projected' : 'downward-api', v.name);
    if (!existsSync(dir)) continue;
    await setUpProjected(pod, v, opts);
  }
}

/**
 * A Secret volume's directory, as the kubelet's secret plugin (an emptyDir of medium
 * Memory): a tmpfs mounted on `dir` (mode 0755 at its root, as the directory was), so
 * the Secret's bytes never reach the node's disk; where tmpfs cannot be mounted (an agent
 * that is not root) a plain directory. Either way below `kubernetes.io~secret` (0700) in
 * the pods directory (0700), so no other user of the node can reach it.
 */
async function setUpSecretDir(dir: string, volume: string, opts: VolumeSetUpOptions): Promise<void> {
  const plugin = dirname(dir);
  mkdirSync(plugin, { recursive: true, mode: 0o750 });
  chmodSync(plugin, 0o700);
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  if ((await opts.mounter.mountPoints()).includes(realpathSync(dir))) return;
  try {
    await opts.mounter.mountTmpfs(dir, ['mode=0755']);
  } catch (err) {
    if (!(err instanceof MountFailure)) throw err;
    opts.onTmpfsUnavailable?.(volume, err);
  }
}

/**
 * Prepares every volume of `pod` (see the file comment) and returns their host paths.
 * @throws MountError for a missing ConfigMap/Secret (not optional), a missing key, a
 *   failed hostPath check, a claim not bound yet (ClaimNotReadyError) or a PV that cannot be mounted, a token that cannot be had or an unsupported volume type;
 *   ApiStatusError for API failures.
 */
export async function setUpVolumes(pod: KubeletPod, opts: VolumeSetUpOptions): Promise<PodVolumes> {
  const { dataDir, client } = opts;
  const uid = pod.metadata.uid ?? '';
  const ns = pod.metadata.namespace ?? 'default';
  const out: PodVolumes = new Map();
  for (const v of pod.spec.volumes ?? []) {
    if (v.hostPath) {
      out.set(v.name, {
        hostPath: setUpHostPath(v as Volume & { hostPath: { path: string } }),
        readOnly: false,
      });
    } else if (v.persistentVolumeClaim) {
      out.set(
        v.name,
        await setUpClaim(v as Volume & { persistentVolumeClaim: { claimName: string } }, ns, opts),
      );
    } else if (v.configMap || v.secret) {
      const kind = v.configMap ? 'ConfigMap' : 'Secret';
      const src = v.configMap ?? v.secret!;
      const name = (v.configMap ? v.configMap.name : v.secret?.secretName) ?? '';
      const dir = pluginDir(dataDir, uid, v.configMap ? 'configmap' : 'secret', v.name);
      const data = await readKeyData(client, kind, ns, name);
      if (!data && !src.optional) throw new MountError(v.name, `${kind.toLowerCase()} "${name}" not found`);
      if (v.secret) await setUpSecretDir(dir, v.name, opts);
      writeKeyFiles(
        dir,
        data?.data ?? new Map(),
        src.items,
        src.defaultMode ?? 0o644,
        v.name,
        `${kind} ${ns}/${name}`,
        src.optional ?? false,
      );
      out.set(v.name, { hostPath: dir, readOnly: true });
    } else if (isRefreshed(v)) {
      out.set(v.name, { hostPath: await setUpProjected(pod, v, opts), readOnly: true });
    } else if (v.emptyDir || Object.keys(v).length === 1) {
      const dir = pluginDir(dataDir, uid, 'empty-dir', v.name);
      if (!existsSync(dir)) {
        mkdirSync(dir, { recursive: true });
        chmodSync(dir, 0o777);
      }
      out.set(v.name, { hostPath: dir, readOnly: false });
    } else {
      throw new MountError(v.name, 'volume type not supported by k8ts');
    }
  }
  return out;
}

/**
 * A subPathExpr with `$(VAR)` expanded from the container's environment (the kubelet's
 * ExpandContainerVolumeMounts: every variable named must have a non-empty value).
 * @throws ContainerStartError CreateContainerConfigError `missing value for A, B`.
 */
export function expandSubPathExpr(expr: string, envs: readonly KeyValue[]): string {
  const env = new Map(envs.map((e) => [e.key, e.value]));
  const missing = new Set<string>();
  const out = expandVars(expr, (name) => {
    const v = env.get(name);
    if (!v) missing.add(name);
    return v ?? '';
  });
  if (missing.size > 0)
    throw new ContainerStartError(
      'CreateContainerConfigError',
      `missing value for ${[...missing].sort().join(', ')}`,
    );
  return out;
}

/** What containerMounts needs besides the container and its pod's volumes. */
export interface ContainerMountsInput {
  /** `<dataDir>/pods/<uid>` (subPaths are bound under its `volume-subpaths`). */
  podDir: string;
  /** The container's environment, for subPathExpr. */
  envs: readonly KeyValue[];
  mounter: Mounter;
}

/**
 * The runtime mounts of `container` (its volumeMounts over `volumes`), as the kubelet's
 * makeMounts: a subPath (or subPathExpr, expanded) must be relative without `..`; when
 * missing it is created inside the volume (safeMakeDir, with the volume's mode); it is
 * then opened without following links out of the volume and bind-mounted under the pod's
 * `volume-subpaths` (prepareSafeSubpath, subpath.ts), and that bind is what the runtime
 * mounts. As the kubelet, the messages say which mount failed but nothing of the host's
 * paths; the cause carries the details for the log.
 * @throws MountError for a mount of an unknown volume; ContainerStartError
 *   CreateContainerConfigError for a subPath that is invalid, leaves the volume or cannot
 *   be prepared.
 */
export async function containerMounts(
  container: KubeletContainer,
  volumes: PodVolumes,
  input: ContainerMountsInput,
): Promise<Mount[]> {
  const out: Mount[] = [];
  for (const [index, m] of (container.volumeMounts ?? []).entries()) {
    const v = volumes.get(m.name);
    if (!v) throw new MountError(m.name, `container ${container.name} mounts unknown volume ${m.name}`);
    let hostPath = v.hostPath;
    const subPath = m.subPathExpr ? expandSubPathExpr(m.subPathExpr, input.envs) : (m.subPath ?? '');
    if (subPath !== '') {
      const configError = (message: string, cause: unknown) =>
        new ContainerStartError('CreateContainerConfigError', message, { cause });
      try {
        validatePathNoBacksteps(subPath);
      } catch (err) {
        throw configError((err as Error).message, err);
      }
      const volumePath = hostPath;
      const path = join(volumePath, subPath);
      if (!existsSync(path)) {
        try {
          safeMakeDir(path, volumePath, statSync(volumePath).mode & 0o777);
        } catch (err) {
          throw configError(
            `failed to create subPath directory for volumeMount ${JSON.stringify(m.name)} of container ${JSON.stringify(container.name)}`,
            err,
          );
        }
      }
      try {
        hostPath = await prepareSafeSubpath(
          {
            volumeMountIndex: index,
            path,
            volumeName: m.name,
            volumePath,
            podDir: input.podDir,
            containerName: container.name,
          },
          input.mounter,
        );
      } catch (err) {
        throw configError(
          `failed to prepare subPath for volumeMount ${JSON.stringify(m.name)} of container ${JSON.stringify(container.name)}`,
          err,
        );
      }
    }
    out.push({ containerPath: m.mountPath, hostPath, readonly: Boolean(m.readOnly) || v.readOnly });
  }
  return out;
}

/**
 * Removes the pod's directory (its emptyDirs, written files, subPath binds), unmounting
 * everything under it first: it never deletes through a mount. Idempotent.
 * @throws MountFailure or Error when something under it stays mounted (nothing is removed then).
 */
export async function tearDownVolumes(dataDir: string, uid: string, mounter: Mounter): Promise<void> {
  const dir = podDir(dataDir, uid);
  if (!existsSync(dir)) return;
  await cleanSubPaths(dir, mounter);
  const real = realpathSync(dir);
  for (const m of await mountPointsUnder(mounter, real)) await mounter.unmount(m);
  const left = await mountPointsUnder(mounter, real);
  if (left.length > 0) throw new Error(`cannot remove ${dir}: still mounted: ${left.join(', ')}`);
  rmSync(dir, { recursive: true, force: true });
}
