/**
 * The admission chain: the one list of admission plugins the API server runs, in
 * kube-apiserver's order (RecommendedPluginOrder), and how a request goes through it.
 * Each plugin is a file of this folder; interfaces.ts says what plugins see (the admit
 * phase before the registry, the validate phase just before the store write).
 *
 *   NamespaceLifecycle            admit     objects only in existing, non-terminating namespaces
 *   ServiceAccount                admit     a new Pod's ServiceAccount exists; its token volume and mounts
 *   NodeRestriction               admit     a node's TokenRequests bound to its own pods
 *                                 validate  what a node may write into its Node, Lease, pods and volumes
 *   DefaultStorageClass           admit     a new claim without a class gets the default one
 *   StorageObjectInUseProtection  admit     new volumes and claims get their protection finalizer
 *   PersistentVolumeClaimResize   validate  a claim grows only if bound and its class allows expansion
 *   PodSecurity                   validate  the Pod Security Standards of the namespace's labels
 *
 * Admission that only fills defaults lives in the strategies, where k8ts has always kept
 * it (DefaultTolerationSeconds, the ServiceAccount and Priority defaults of new Pods:
 * strategies/pods.ts).
 */
import type { KubeObject } from '../../../api/object.js';
import type {
  AdmissionAttributes,
  AdmissionPlugin,
  AdmissionRecorder,
  AdmissionRequest,
} from './interfaces.js';
import { defaultStorageClassAdmission } from './defaultstorageclass.js';
import { namespaceLifecycle } from './namespacelifecycle.js';
import { nodeRestriction } from './noderestriction.js';
import { persistentVolumeClaimResize } from './persistentvolumeclaimresize.js';
import type { PodSecuritySettings } from './podsecurity/config.js';
import { podSecurity } from './podsecurity/plugin.js';
import { serviceAccountAdmission } from './serviceaccount.js';
import { storageObjectInUseProtection } from './storageobjectinuseprotection.js';

export type {
  AdmissionAttributes,
  AdmissionPlugin,
  AdmissionRecorder,
  AdmissionRequest,
} from './interfaces.js';

/** What the plugins read, and their settings (kube-apiserver's admission configuration). */
export interface AdmissionConfig {
  /** The namespace `name`, or undefined when it does not exist (from the namespaces' watch cache). */
  getNamespace(name: string): Promise<KubeObject | undefined>;
  /** The pods of `namespace` (PodSecurity checks them when a namespace's enforce level tightens). */
  listPods(namespace: string): Promise<KubeObject[]>;
  /** A pod, or undefined when it does not exist (NodeRestriction's check of a node's TokenRequest). */
  getPod?(namespace: string, name: string): Promise<KubeObject | undefined>;
  /** The ServiceAccount `namespace/name`, or undefined when it does not exist (ServiceAccount admission). */
  getServiceAccount(namespace: string, name: string): Promise<KubeObject | undefined>;
  /** Whether new pods get the ServiceAccount token volume: the server issues tokens. Default false. */
  mountServiceAccountToken?: boolean;
  /** PodSecurity's defaults and exemptions; default: everything privileged, nothing exempt. */
  podSecurity?: PodSecuritySettings;
  /** Every StorageClass (DefaultStorageClass picks the default one). Default: none. */
  listStorageClasses?(): Promise<readonly KubeObject[]>;
  /** The StorageClass `name`, or undefined when missing (PersistentVolumeClaimResize). Default: none. */
  getStorageClass?(name: string): Promise<KubeObject | undefined>;
}

/** The admission plugins, in order (see the file comment). */
export function admissionPlugins(cfg: AdmissionConfig): readonly AdmissionPlugin[] {
  return [
    namespaceLifecycle({ getNamespace: cfg.getNamespace }),
    serviceAccountAdmission({
      getServiceAccount: cfg.getServiceAccount,
      mountServiceAccountToken: cfg.mountServiceAccountToken ?? false,
    }),
    nodeRestriction(cfg.getPod ? { getPod: cfg.getPod } : {}),
    defaultStorageClassAdmission({
      listStorageClasses: cfg.listStorageClasses ?? (() => Promise.resolve([])),
    }),
    storageObjectInUseProtection(),
    persistentVolumeClaimResize({
      getStorageClass: cfg.getStorageClass ?? (() => Promise.resolve(undefined)),
    }),
    podSecurity({
      getNamespace: cfg.getNamespace,
      listPods: cfg.listPods,
      ...(cfg.podSecurity ? { settings: cfg.podSecurity } : {}),
    }),
  ];
}

/** Runs the plugins' two phases in order; the first refusal ends the request. */
export class AdmissionChain {
  constructor(private readonly plugins: readonly AdmissionPlugin[]) {}

  /** The admit phase. @throws the first plugin's refusal (an ApiError). */
  async admit(request: AdmissionRequest, out: AdmissionRecorder): Promise<void> {
    for (const p of this.plugins) await p.admit?.(request, out);
  }

  /** The validate phase. @throws the first plugin's refusal (an ApiError). */
  async validate(attrs: AdmissionAttributes, out: AdmissionRecorder): Promise<void> {
    for (const p of this.plugins) await p.validate?.(attrs, out);
  }
}

/**
 * The recorder of one request: each distinct warning is passed to `onWarning` once (a
 * read-modify-write that retries runs admission again, and kube-apiserver's warning
 * recorder drops repeats too); audit annotations are kept for the request's log line.
 */
export class RequestAdmissionRecorder implements AdmissionRecorder {
  private readonly warnings = new Set<string>();
  /** Audit annotations by key (`pod-security.kubernetes.io/enforce-policy`, ...). */
  readonly annotations = new Map<string, string>();

  constructor(private readonly onWarning: (message: string) => void) {}

  warn(message: string): void {
    if (this.warnings.has(message)) return;
    this.warnings.add(message);
    this.onWarning(message);
  }

  annotate(key: string, value: string): void {
    this.annotations.set(key, value);
  }
}
