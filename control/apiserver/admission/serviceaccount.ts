/**
 * ServiceAccount (plugin/pkg/admission/serviceaccount): a new Pod runs as a
 * ServiceAccount that exists, and gets the credentials to call the API as it.
 *
 * On the CREATE of a Pod (not a subresource), in the admit phase:
 *  - a mirror pod (annotation `kubernetes.io/config.mirror`) is left as it is;
 *  - the ServiceAccount is `spec.serviceAccountName` (else the deprecated
 *    `serviceAccount`, else `default`, as strategies/pods.ts defaults it); one that does
 *    not exist → 403 `pods "<name>" is forbidden: error looking up service account
 *    <ns>/<sa>: serviceaccount "<sa>" not found` and nothing is written. The `default`
 *    one is looked up 10 times, 100–200 ms apart, as upstream, since its namespace may be
 *    seconds old (k8ts makes it with the Namespace, so that wait is almost never taken);
 *  - a pod without `imagePullSecrets` gets its ServiceAccount's (names only);
 *  - when the server issues ServiceAccount tokens (mountServiceAccountToken: kube-apiserver
 *    always has a signing key; k8ts on plain HTTP and the in-process test server have
 *    none, and a token volume no kubelet could fill would keep every pod from starting),
 *    and unless `automountServiceAccountToken: false` (the pod's, else its ServiceAccount's),
 *    the projected volume `kube-api-access-<5 random characters>` — a bound token (`token`,
 *    3607 s), the cluster CA (`ca.crt` of ConfigMap kube-root-ca.crt) and the namespace
 *    (downward API `namespace`), mode 0644 — is added, with a read-only mount at
 *    /var/run/secrets/kubernetes.io/serviceaccount in every init container and container
 *    that does not mount something there already. A volume already named
 *    `kube-api-access-*` is used instead of a new one; none is added when no container
 *    needs it.
 * The mutation happens before the pod's defaults and validation (the registry's), so the
 * volume is validated and defaulted as one the user wrote.
 */
import type { KubeObject } from '../../../api/object.js';
import { newForbidden } from '../status.js';
import type { AdmissionPlugin, AdmissionRequest } from './interfaces.js';

/** Where the token, ca.crt and namespace appear in each container (DefaultAPITokenMountPath). */
export const DEFAULT_API_TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
/** The prefix of the volume's name (ServiceAccountVolumeName + "-"). */
export const SERVICE_ACCOUNT_VOLUME_PREFIX = 'kube-api-access-';
/**
 * The token's lifetime (serviceaccount.WarnOnlyBoundTokenExpirationSeconds: 1 h and 7 s,
 * the odd 7 s telling the API server the token comes from this volume).
 */
export const TOKEN_EXPIRATION_SECONDS = 3607;
const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';
const DEFAULT_SERVICE_ACCOUNT = 'default';
/** Attempts at the `default` ServiceAccount before giving up (upstream's numAttempts). */
const DEFAULT_SA_ATTEMPTS = 10;
/** utilrand.String's alphabet: lowercase letters and digits without vowels or lookalikes. */
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** What the plugin reads, and its randomness and time (tests). */
export interface ServiceAccountAdmissionConfig {
  /** The ServiceAccount `namespace/name`, or undefined when it does not exist. */
  getServiceAccount(namespace: string, name: string): Promise<KubeObject | undefined>;
  /** Whether to add the token volume (the plugin's MountServiceAccountToken): the server issues tokens. */
  mountServiceAccountToken: boolean;
  /** Waits `ms` between lookups of the `default` ServiceAccount; default setTimeout. */
  sleep?: (ms: number) => Promise<void>;
  /** Math.random() by default; picks the volume's suffix and the retry interval. */
  random?: () => number;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const objs = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);

/** The projected volume source the plugin adds (TokenVolumeSource), with defaultMode 0644 set. */
export function tokenVolumeSource(): Obj {
  return {
    defaultMode: 0o644,
    sources: [
      { serviceAccountToken: { expirationSeconds: TOKEN_EXPIRATION_SECONDS, path: 'token' } },
      { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      {
        downwardAPI: {
          items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
        },
      },
    ],
  };
}

/** shouldAutomount: the pod's automountServiceAccountToken, else the ServiceAccount's, else true. */
export function shouldAutomount(sa: KubeObject, podSpec: Obj): boolean {
  if (typeof podSpec.automountServiceAccountToken === 'boolean') return podSpec.automountServiceAccountToken;
  if (typeof sa.automountServiceAccountToken === 'boolean') return sa.automountServiceAccountToken;
  return true;
}

/**
 * mountServiceAccountToken: the volume (an existing `kube-api-access-*` or a new one
 * named `volumeName`) and its mount in every container that lacks one at the path.
 * Mutates `spec`.
 */
export function mountServiceAccountToken(spec: Obj, volumeName: string): void {
  const volumes = objs(spec.volumes);
  const existing = volumes.find((v) => String(v.name ?? '').startsWith(SERVICE_ACCOUNT_VOLUME_PREFIX));
  const name = existing ? String(existing.name) : volumeName;
  let needed = false;
  for (const key of ['initContainers', 'containers'] as const) {
    for (const c of objs(spec[key])) {
      const mounts = objs(c.volumeMounts);
      if (mounts.some((m) => m.mountPath === DEFAULT_API_TOKEN_MOUNT_PATH)) continue;
      c.volumeMounts = [
        ...(Array.isArray(c.volumeMounts) ? c.volumeMounts : []),
        { name, readOnly: true, mountPath: DEFAULT_API_TOKEN_MOUNT_PATH },
      ];
      needed = true;
    }
  }
  if (!existing && needed)
    spec.volumes = [
      ...(Array.isArray(spec.volumes) ? spec.volumes : []),
      { name, projected: tokenVolumeSource() },
    ];
}

/** The ServiceAccount admission plugin over `cfg` (see the file comment). */
export function serviceAccountAdmission(cfg: ServiceAccountAdmissionConfig): AdmissionPlugin {
  const random = cfg.random ?? Math.random;
  const sleep = cfg.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const lookUp = async (namespace: string, name: string): Promise<KubeObject | undefined> => {
    const attempts = name === DEFAULT_SERVICE_ACCOUNT ? DEFAULT_SA_ATTEMPTS : 1;
    const interval = 100 + Math.floor(random() * 100);
    for (let i = 0; i < attempts; i++) {
      if (i > 0) await sleep(interval);
      const sa = await cfg.getServiceAccount(namespace, name);
      if (sa) return sa;
    }
    return undefined;
  };
  return {
    name: 'ServiceAccount',
    async admit(req: AdmissionRequest): Promise<void> {
      const r = req.resource;
      if (req.operation !== 'CREATE' || req.subresource !== undefined) return;
      if (r.group !== '' || r.resource !== 'pods' || !req.body || req.namespace === undefined) return;
      const pod = req.body;
      if (pod.metadata?.annotations?.[MIRROR_ANNOTATION] !== undefined) return;
      if (!isObj(pod.spec)) pod.spec = {};
      const spec = pod.spec as Obj;
      const saName =
        (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName) ||
        (typeof spec.serviceAccount === 'string' && spec.serviceAccount) ||
        DEFAULT_SERVICE_ACCOUNT;
      const sa = await lookUp(req.namespace, saName);
      if (!sa) {
        // admission.NewForbidden names the object by its name, else its generateName.
        const name = pod.metadata?.name || pod.metadata?.generateName || 'Unknown';
        throw newForbidden(
          { group: '', resource: 'pods', name },
          `error looking up service account ${req.namespace}/${saName}: serviceaccount "${saName}" not found`,
        );
      }
      // A pod without imagePullSecrets pulls with its ServiceAccount's.
      const saPullSecrets = objs(sa.imagePullSecrets).filter(
        (r) => typeof r.name === 'string' && r.name !== '',
      );
      if (objs(spec.imagePullSecrets).length === 0 && saPullSecrets.length > 0)
        spec.imagePullSecrets = saPullSecrets.map((r) => ({ name: r.name }));
      if (!cfg.mountServiceAccountToken || !shouldAutomount(sa, spec)) return;
      let suffix = '';
      for (let i = 0; i < 5; i++) suffix += NAME_ALPHABET[Math.floor(random() * NAME_ALPHABET.length)];
      mountServiceAccountToken(spec, SERVICE_ACCOUNT_VOLUME_PREFIX + suffix);
    },
  };
}
