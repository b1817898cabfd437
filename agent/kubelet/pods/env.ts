/**
 * A container's environment, as the kubelet's makeEnvironmentVariables
 * (pkg/kubelet/kubelet_pods.go) builds it: `envFrom` sources first (ConfigMaps and
 * Secrets read through the API, with their prefix; keys that are not valid variable names
 * are skipped), then `env` in order, later names replacing earlier ones. An env value may
 * refer to variables defined before it with `$(NAME)` (`$$(NAME)` is a literal); command
 * and args are expanded the same way with the finished environment. The pod's Service
 * variables (envvars.ts) come last, under the container's own, and `$(NAME)` sees them.
 *
 * `valueFrom`: configMapKeyRef and secretKeyRef (`optional` ones may be missing), fieldRef
 * (metadata.name/namespace/uid, metadata.labels['k'], metadata.annotations['k'],
 * spec.nodeName, spec.serviceAccountName, status.podIP(s), status.hostIP(s)) and
 * resourceFieldRef (limits/requests of cpu, memory and ephemeral-storage with a divisor;
 * CPU rounds up to whole units; an unset limit is the node's allocatable).
 */
import type { RestClient } from '../../../api/client/rest.js';
import { isNotFound } from '../../../api/client/errors.js';
import { resources } from '../../../api/client/resource.js';
import type { KubeObject } from '../../../api/object.js';
import { parseQuantity } from '../../../api/meta/quantity.js';
import type { KeyValue } from '../../../cri/index.js';
import { ContainerStartError } from './errors.js';
import type { KubeletContainer, KubeletPod, ResourceFieldSelector } from './types.js';

/** What env and volume building needs to know about the pod's place. */
export interface EnvContext {
  client: RestClient;
  nodeName: string;
  /** The node's InternalIP (status.hostIP). */
  hostIP: string;
  /** The pod's IP (status.podIP; '' before the sandbox has one). */
  podIP: string;
  /** The node's allocatable resources, for resourceFieldRef of unset limits. */
  nodeAllocatable?: () => Promise<Record<string, string>>;
  /**
   * The pod's Service variables (envvars.ts serviceEnvVarMap): `$(VAR)` sees them, and
   * those the container does not define itself come after its own.
   */
  serviceEnv?: ReadonlyMap<string, string>;
}

/** ConfigMap or Secret data as strings (Secret values base64-decoded). */
export interface KeyData {
  kind: 'ConfigMap' | 'Secret';
  data: Map<string, Buffer>;
}

/**
 * Reads ConfigMap or Secret `name` in `namespace`; undefined when it does not exist.
 * @throws ApiStatusError for other API failures.
 */
export async function readKeyData(
  client: RestClient,
  kind: 'ConfigMap' | 'Secret',
  namespace: string,
  name: string,
): Promise<KeyData | undefined> {
  let obj: KubeObject;
  try {
    obj = await client.get(kind === 'ConfigMap' ? resources.configmaps : resources.secrets, namespace, name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
  const data = new Map<string, Buffer>();
  const raw = (obj.data ?? {}) as Record<string, string>;
  for (const [k, v] of Object.entries(raw)) {
    data.set(k, kind === 'Secret' ? Buffer.from(v, 'base64') : Buffer.from(v, 'utf8'));
  }
  const binary = (kind === 'ConfigMap' ? obj.binaryData : obj.stringData) as
    Record<string, string> | undefined;
  for (const [k, v] of Object.entries(binary ?? {})) {
    data.set(k, kind === 'ConfigMap' ? Buffer.from(v, 'base64') : Buffer.from(v, 'utf8'));
  }
  return { kind, data };
}

const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

/**
 * Kubernetes' expansion.Expand: replaces `$(NAME)` with `lookup(NAME)` when defined, keeps
 * it verbatim otherwise; `$$` is a literal `$`.
 */
export function expandVars(input: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  for (let i = 0; i < input.length; i++) {
    const c = input[i];
    if (c !== '$' || i + 1 >= input.length) {
      out += c;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      out += '$';
      i++;
    } else if (next === '(') {
      const end = input.indexOf(')', i + 2);
      if (end < 0) {
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, end);
      const v = lookup(name);
      out += v ?? `$(${name})`;
      i = end;
    } else {
      out += c;
    }
  }
  return out;
}

function configError(message: string): ContainerStartError {
  return new ContainerStartError('CreateContainerConfigError', message);
}

/**
 * The value of a downward-API field path of `pod` (podutil.ConvertDownwardAPIFieldLabel).
 * @throws ContainerStartError CreateContainerConfigError for an unsupported path.
 */
export function podFieldValue(pod: KubeletPod, fieldPath: string, ctx: Omit<EnvContext, 'client'>): string {
  const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (m) {
    const map = m[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations;
    return map?.[m[2] as string] ?? '';
  }
  switch (fieldPath) {
    case 'metadata.name':
      return pod.metadata.name ?? '';
    case 'metadata.namespace':
      return pod.metadata.namespace ?? '';
    case 'metadata.uid':
      return pod.metadata.uid ?? '';
    case 'spec.nodeName':
      return ctx.nodeName;
    case 'spec.serviceAccountName':
      return pod.spec.serviceAccountName ?? '';
    case 'status.hostIP':
    case 'status.hostIPs':
      return ctx.hostIP;
    case 'status.podIP':
    case 'status.podIPs':
      return ctx.podIP;
    default:
      throw configError(`unsupported fieldRef ${JSON.stringify(fieldPath)}`);
  }
}

/**
 * The value of a resourceFieldRef (resource.ExtractResourceValueByContainerName):
 * `limits.cpu` etc. divided by `divisor` (default 1), rounded up.
 * @throws ContainerStartError CreateContainerConfigError for an unknown container or resource.
 */
export async function resourceFieldValue(
  pod: KubeletPod,
  container: KubeletContainer,
  ref: ResourceFieldSelector,
  allocatable?: () => Promise<Record<string, string>>,
): Promise<string> {
  const target = ref.containerName
    ? pod.spec.containers.find((c) => c.name === ref.containerName)
    : container;
  if (!target) throw configError(`resourceFieldRef: no container ${JSON.stringify(ref.containerName)}`);
  const m = /^(limits|requests)\.(cpu|memory|ephemeral-storage)$/.exec(ref.resource);
  if (!m) throw configError(`unsupported resourceFieldRef resource ${JSON.stringify(ref.resource)}`);
  const [, kind, name] = m as unknown as [string, 'limits' | 'requests', string];
  let text = target.resources?.[kind]?.[name];
  if (text === undefined && kind === 'limits') text = (await allocatable?.())?.[name];
  const divisor = parseQuantity(ref.divisor ?? '1');
  const value = parseQuantity(text ?? '0');
  if (name === 'cpu') {
    const d = divisor.milliValue();
    if (d <= 0n) throw configError(`resourceFieldRef: bad divisor ${JSON.stringify(ref.divisor)}`);
    return String((value.milliValue() + d - 1n) / d);
  }
  const d = divisor.value();
  if (d <= 0n) throw configError(`resourceFieldRef: bad divisor ${JSON.stringify(ref.divisor)}`);
  return String((value.value() + d - 1n) / d);
}

/**
 * The container's environment (see the file comment), in order of first definition.
 * @throws ContainerStartError CreateContainerConfigError for a missing ConfigMap, Secret
 *   or key that is not optional, or an unsupported field; ApiStatusError for other API
 *   failures.
 */
export async function makeEnvironmentVariables(
  pod: KubeletPod,
  container: KubeletContainer,
  ctx: EnvContext,
): Promise<KeyValue[]> {
  const ns = pod.metadata.namespace ?? 'default';
  const env = new Map<string, string>();
  const cache = new Map<string, KeyData | undefined>();
  const read = async (kind: 'ConfigMap' | 'Secret', name: string): Promise<KeyData | undefined> => {
    const k = `${kind}/${name}`;
    if (!cache.has(k)) cache.set(k, await readKeyData(ctx.client, kind, ns, name));
    return cache.get(k);
  };
  for (const from of container.envFrom ?? []) {
    const kind = from.configMapRef ? 'ConfigMap' : from.secretRef ? 'Secret' : undefined;
    const src = from.configMapRef ?? from.secretRef;
    if (!kind || !src) continue;
    const name = src.name ?? '';
    const data = await read(kind, name);
    if (!data) {
      if (src.optional) continue;
      throw configError(`${kind.toLowerCase()} "${name}" not found`);
    }
    for (const [k, v] of data.data) {
      const key = (from.prefix ?? '') + k;
      if (ENV_NAME.test(key)) env.set(key, v.toString('utf8'));
    }
  }
  const serviceEnv = ctx.serviceEnv ?? new Map<string, string>();
  const lookup = (name: string) => env.get(name) ?? serviceEnv.get(name);
  for (const e of container.env ?? []) {
    const from = e.valueFrom;
    if (!from) {
      env.set(e.name, expandVars(e.value ?? '', lookup));
      continue;
    }
    if (from.fieldRef) {
      env.set(e.name, podFieldValue(pod, from.fieldRef.fieldPath, ctx));
    } else if (from.resourceFieldRef) {
      env.set(e.name, await resourceFieldValue(pod, container, from.resourceFieldRef, ctx.nodeAllocatable));
    } else {
      const kind = from.configMapKeyRef ? 'ConfigMap' : 'Secret';
      const sel = from.configMapKeyRef ?? from.secretKeyRef;
      if (!sel) continue;
      const name = sel.name ?? '';
      const data = await read(kind, name);
      if (!data) {
        if (sel.optional) continue;
        throw configError(`${kind.toLowerCase()} "${name}" not found`);
      }
      const v = data.data.get(sel.key);
      if (v === undefined) {
        if (sel.optional) continue;
        throw configError(`couldn't find key ${sel.key} in ${kind} ${ns}/${name}`);
      }
      env.set(e.name, v.toString('utf8'));
    }
  }
  // The kubelet appends the Service variables the container did not set itself.
  for (const [k, v] of serviceEnv) if (!env.has(k)) env.set(k, v);
  return [...env].map(([key, value]) => ({ key, value }));
}
