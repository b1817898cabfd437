/**
 * The scheduler's volume binder (pkg/scheduler/framework/plugins/volumebinding/binder.go):
 * what the VolumeBinding plugin asks at each extension point, over the informers' claims,
 * volumes and classes (the first two through assume caches).
 *
 *   getPodVolumeClaims  the pod's claims: bound (volumeName and bind-completed), unbound
 *                       Immediate (the PV controller's to bind: the pod waits), unbound
 *                       WaitForFirstConsumer (the scheduler's), and for those the volumes
 *                       of their classes
 *   findPodVolumes      for one node: every bound claim's volume must exist and its node
 *                       affinity hold; every WaitForFirstConsumer claim gets a static
 *                       volume that fits on this node (smallest claims first, one volume
 *                       per claim), or else a class that can provision there (a provisioner
 *                       that is not kubernetes.io/no-provisioner, allowedTopologies
 *                       matching the node); a claim already selected for another node
 *                       fits nowhere else. The reasons are upstream's ConflictReasons.
 *   assumePodVolumes    Reserve: the chosen volumes assumed bound to their claims, the
 *                       claims to provision assumed annotated with the selected node
 *   bindPodVolumes      PreBind: those writes sent to the API server (the volume's
 *                       claimRef; the claim's volume.kubernetes.io/selected-node), then a
 *                       poll (every second, up to bindTimeout) until the PV controller has
 *                       bound every claim, with the volume's node affinity still holding; a
 *                       provisioner that gave up (the annotation removed or changed), a
 *                       reset claimRef or a deleted pod fail it
 *   revertAssumedPodVolumes  Unreserve, and a failed PreBind
 */
import type { Lister } from '../../../../api/client/lister.js';
import type { Clock } from '../../../../api/clock.js';
import { errorMessage } from '../../../../api/errors.js';
import type { PersistentVolume, PersistentVolumeClaim, StorageClass } from '../../../../api/storage/types.js';
import {
  ANN_BIND_COMPLETED,
  ANN_SELECTED_NODE,
  NOT_SUPPORTED_PROVISIONER,
  bindVolumeToClaim,
  claimClass,
  claimKey,
  findMatchingVolume,
  hasAnnotation,
  isDelayBindingMode,
  requestedStorage,
  resourceVersionNumber,
  topologyMatches,
  volumeClass,
  volumeNodeAffinityMatches,
} from '../../../../api/storage/volume.js';
import type { Node, Pod } from '../../../../api/types.js';
import { AssumeCache } from './assume-cache.js';

/** ConflictReason: no static volume and no provisioning for an unbound claim. */
export const ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind";
/** ConflictReason: a bound volume's node affinity does not hold for the node. */
export const ERR_REASON_NODE_CONFLICT = 'node(s) had volume node affinity conflict';
/** ConflictReason: a provisioner reported too little capacity (not measured by k8ts). */
export const ERR_REASON_NOT_ENOUGH_SPACE = 'node(s) did not have enough free storage';
/** ConflictReason: a bound claim names a volume that does not exist. */
export const ERR_REASON_PV_NOT_EXIST =
  'node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)';

/** A claim the pod needs and the static volume chosen for it (BindingInfo). */
export interface BindingInfo {
  pv: PersistentVolume;
  pvc: PersistentVolumeClaim;
}

/** What the pod needs done on one node (PodVolumes). */
export interface PodVolumes {
  staticBindings: BindingInfo[];
  dynamicProvisions: PersistentVolumeClaim[];
}

/** The pod's claims sorted out (PodVolumeClaims). */
export interface PodVolumeClaims {
  boundClaims: PersistentVolumeClaim[];
  unboundClaimsImmediate: PersistentVolumeClaim[];
  unboundClaimsDelayBinding: PersistentVolumeClaim[];
  /** Class name → the volumes of that class, for the delay-binding claims. */
  unboundVolumesDelayBinding: Map<string, PersistentVolume[]>;
}

/** The writes PreBind makes. */
export interface VolumeBindingApi {
  updateVolume(pv: PersistentVolume): Promise<PersistentVolume>;
  updateClaim(pvc: PersistentVolumeClaim): Promise<PersistentVolumeClaim>;
}

/** What a SchedulerVolumeBinder reads and writes. */
export interface SchedulerVolumeBinderConfig {
  claims: Lister<PersistentVolumeClaim>;
  volumes: Lister<PersistentVolume>;
  classes: Lister<StorageClass>;
  nodes: Lister<Node>;
  pods: Lister<Pod>;
  api: VolumeBindingApi;
  clock: Clock;
  /** How long PreBind waits for the bindings (bindTimeoutSeconds), ms; default 600 000. */
  bindTimeoutMs?: number;
  /** How often PreBind looks, ms; default 1000 (as upstream's poll). */
  pollIntervalMs?: number;
}

/** One entry of `pod.spec.volumes`, as far as claims go. */
interface ClaimVolume {
  name?: string;
  persistentVolumeClaim?: { claimName?: string };
  ephemeral?: unknown;
}

/** The claims a pod names: `[claim name, is ephemeral]` in volume order. */
export function podClaims(pod: Pod): [string, boolean][] {
  const volumes = Array.isArray(pod.spec.volumes) ? (pod.spec.volumes as ClaimVolume[]) : [];
  const out: [string, boolean][] = [];
  for (const v of volumes) {
    if (v?.persistentVolumeClaim) out.push([v.persistentVolumeClaim.claimName ?? '', false]);
    else if (v?.ephemeral) out.push([`${pod.metadata.name ?? ''}-${v.name ?? ''}`, true]);
  }
  return out;
}

/** Whether a claim is bound for good: volumeName and bind-completed (isPVCFullyBound). */
export function isClaimFullyBound(pvc: PersistentVolumeClaim): boolean {
  return !!pvc.spec?.volumeName && hasAnnotation(pvc, ANN_BIND_COMPLETED);
}

/** A binding could not be completed (PreBind's error). */
export class VolumeBindingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VolumeBindingError';
  }
}

/** The volume binder (see the file comment). */
export class SchedulerVolumeBinder {
  readonly pvCache: AssumeCache<PersistentVolume>;
  readonly pvcCache: AssumeCache<PersistentVolumeClaim>;
  private readonly cfg: SchedulerVolumeBinderConfig;
  private readonly bindTimeoutMs: number;
  private readonly pollIntervalMs: number;

  constructor(cfg: SchedulerVolumeBinderConfig) {
    this.cfg = cfg;
    this.bindTimeoutMs = cfg.bindTimeoutMs ?? 600_000;
    this.pollIntervalMs = cfg.pollIntervalMs ?? 1000;
    this.pvCache = new AssumeCache<PersistentVolume>({
      get: (name) => cfg.volumes.get(name),
      list: () => cfg.volumes.list(),
      keyOf: (pv) => pv.metadata.name ?? '',
      description: 'v1.PersistentVolume',
    });
    this.pvcCache = new AssumeCache<PersistentVolumeClaim>({
      get: (key) => {
        const [ns, name] = key.split('/');
        return cfg.claims.get(ns ?? '', name ?? '');
      },
      list: () => cfg.claims.list(),
      keyOf: claimKey,
      description: 'v1.PersistentVolumeClaim',
    });
  }

  private getClass = (name: string): StorageClass | undefined => this.cfg.classes.get(name);

  /**
   * Whether the pod names claims at all, and why it cannot be scheduled yet if so
   * (podHasPVCs): a missing claim, a Lost one, one being deleted, or an ephemeral
   * volume's claim that is not the pod's.
   */
  podHasPVCs(pod: Pod): { hasPVC: boolean; problem?: string } {
    const namespace = pod.metadata.namespace ?? '';
    let hasPVC = false;
    for (const [name, ephemeral] of podClaims(pod)) {
      hasPVC = true;
      const pvc = this.cfg.claims.get(namespace, name);
      if (!pvc) {
        return {
          hasPVC,
          problem: ephemeral
            ? `waiting for ephemeral volume controller to create the persistentvolumeclaim "${name}"`
            : `persistentvolumeclaim "${name}" not found`,
        };
      }
      if (pvc.status?.phase === 'Lost')
        return {
          hasPVC,
          problem: `persistentvolumeclaim "${name}" bound to non-existent persistentvolume "${pvc.spec.volumeName ?? ''}"`,
        };
      if (pvc.metadata.deletionTimestamp)
        return { hasPVC, problem: `persistentvolumeclaim "${name}" is being deleted` };
      if (
        ephemeral &&
        !(pvc.metadata.ownerReferences ?? []).some((r) => r.controller && r.uid === pod.metadata.uid)
      )
        return {
          hasPVC,
          problem: `PVC ${namespace}/${name} was not created for pod ${namespace}/${pod.metadata.name ?? ''} (pod is not owner)`,
        };
    }
    return { hasPVC };
  }

  /**
   * The pod's claims sorted out (GetPodVolumeClaims); see the file comment.
   * @throws BindingModeError for a class without volumeBindingMode; Error for a claim gone
   *   since podHasPVCs.
   */
  getPodVolumeClaims(pod: Pod): PodVolumeClaims {
    const out: PodVolumeClaims = {
      boundClaims: [],
      unboundClaimsImmediate: [],
      unboundClaimsDelayBinding: [],
      unboundVolumesDelayBinding: new Map(),
    };
    const namespace = pod.metadata.namespace ?? '';
    for (const [name] of podClaims(pod)) {
      const pvc = this.pvcCache.get(`${namespace}/${name}`);
      if (!pvc) throw new Error(`persistentvolumeclaim "${name}" not found`);
      if (isClaimFullyBound(pvc)) out.boundClaims.push(pvc);
      else if (isDelayBindingMode(pvc, this.getClass) && !pvc.spec.volumeName)
        out.unboundClaimsDelayBinding.push(pvc);
      // A pre-bound claim (volumeName) is the PV controller's, as an Immediate one.
      else out.unboundClaimsImmediate.push(pvc);
    }
    if (out.unboundClaimsDelayBinding.length > 0) {
      const volumes = this.pvCache.list();
      for (const pvc of out.unboundClaimsDelayBinding) {
        const cls = claimClass(pvc);
        if (!out.unboundVolumesDelayBinding.has(cls))
          out.unboundVolumesDelayBinding.set(
            cls,
            volumes.filter((v) => volumeClass(v) === cls),
          );
      }
    }
    return out;
  }

  /**
   * What the pod needs on `node`, or why it cannot have it there (FindPodVolumes); see the
   * file comment.
   * @throws Error for a claim without a class or with a class that does not exist.
   */
  findPodVolumes(claims: PodVolumeClaims, node: Node): { podVolumes: PodVolumes; reasons: string[] } {
    const podVolumes: PodVolumes = { staticBindings: [], dynamicProvisions: [] };
    let boundSatisfied = true;
    let boundFound = true;
    let unboundSatisfied = true;
    let sufficientStorage = true;
    const reasons = () => {
      const out: string[] = [];
      if (!boundSatisfied) out.push(ERR_REASON_NODE_CONFLICT);
      if (!unboundSatisfied) out.push(ERR_REASON_BIND_CONFLICT);
      if (!sufficientStorage) out.push(ERR_REASON_NOT_ENOUGH_SPACE);
      if (!boundFound) out.push(ERR_REASON_PV_NOT_EXIST);
      return { podVolumes, reasons: out };
    };
    for (const pvc of claims.boundClaims) {
      const pv = this.pvCache.get(pvc.spec.volumeName ?? '');
      if (!pv) {
        boundFound = false;
        break;
      }
      if (!volumeNodeAffinityMatches(pv, node)) {
        boundSatisfied = false;
        break;
      }
    }
    if (claims.unboundClaimsDelayBinding.length === 0) return reasons();
    const toFind: PersistentVolumeClaim[] = [];
    const toProvision: PersistentVolumeClaim[] = [];
    for (const pvc of claims.unboundClaimsDelayBinding) {
      const selected = pvc.metadata.annotations?.[ANN_SELECTED_NODE];
      if (selected !== undefined) {
        if (selected !== node.metadata.name) {
          // Already being provisioned for another node.
          unboundSatisfied = false;
          return reasons();
        }
        toProvision.push(pvc);
      } else toFind.push(pvc);
    }
    if (toFind.length > 0) {
      // Smallest claims first, so that each gets the smallest volume that fits it.
      const sorted = [...toFind].sort((a, b) => requestedStorage(a).cmp(requestedStorage(b)));
      const chosen = new Set<string>();
      for (const pvc of sorted) {
        const candidates = claims.unboundVolumesDelayBinding.get(claimClass(pvc)) ?? [];
        const pv = findMatchingVolume(pvc, candidates, node, chosen, true);
        if (!pv) {
          unboundSatisfied = false;
          toProvision.push(pvc);
          continue;
        }
        chosen.add(pv.metadata.name ?? '');
        podVolumes.staticBindings.push({ pv, pvc });
      }
    }
    if (toProvision.length > 0) {
      const r = this.checkVolumeProvisions(toProvision, node);
      unboundSatisfied = r.satisfied;
      sufficientStorage = r.sufficient;
      podVolumes.dynamicProvisions = r.satisfied ? toProvision : [];
    }
    return reasons();
  }

  /** Whether every claim can be provisioned on `node` (checkVolumeProvisions). */
  private checkVolumeProvisions(
    claims: readonly PersistentVolumeClaim[],
    node: Node,
  ): { satisfied: boolean; sufficient: boolean } {
    for (const pvc of claims) {
      const name = claimClass(pvc);
      if (name === '') throw new Error(`no class for claim "${claimKey(pvc)}"`);
      const cls = this.getClass(name);
      if (!cls) throw new Error(`failed to find storage class "${name}"`);
      if (!cls.provisioner || cls.provisioner === NOT_SUPPORTED_PROVISIONER)
        return { satisfied: false, sufficient: true };
      if (!topologyMatches(cls.allowedTopologies, node.metadata.labels))
        return { satisfied: false, sufficient: true };
      // Storage capacity (CSIStorageCapacity) is not tracked: every node has room.
    }
    return { satisfied: true, sufficient: true };
  }

  /** Whether every claim of the pod is fully bound, as the caches see it (arePodVolumesBound). */
  private arePodVolumesBound(pod: Pod): boolean {
    const namespace = pod.metadata.namespace ?? '';
    return podClaims(pod).every(([name]) => {
      const pvc = this.pvcCache.get(`${namespace}/${name}`);
      return pvc !== undefined && isClaimFullyBound(pvc);
    });
  }

  /**
   * Reserve (AssumePodVolumes): assumes the chosen volumes bound to their claims and the
   * claims to provision annotated with `nodeName`, replacing `podVolumes`' lists with the
   * assumed objects. Returns true when every claim is already bound (nothing to do).
   * @throws Error when an object is out of sync with the cache (everything assumed is reverted).
   */
  assumePodVolumes(pod: Pod, nodeName: string, podVolumes: PodVolumes): boolean {
    if (this.arePodVolumesBound(pod)) return true;
    const bindings: BindingInfo[] = [];
    const provisions: PersistentVolumeClaim[] = [];
    try {
      for (const b of podVolumes.staticBindings) {
        const { volume, dirty } = bindVolumeToClaim(b.pv, b.pvc);
        if (dirty) this.pvCache.assume(volume);
        bindings.push({ pv: volume, pvc: b.pvc });
      }
      for (const pvc of podVolumes.dynamicProvisions) {
        const clone = structuredClone(pvc);
        clone.metadata.annotations = { ...clone.metadata.annotations, [ANN_SELECTED_NODE]: nodeName };
        this.pvcCache.assume(clone);
        provisions.push(clone);
      }
    } catch (err) {
      this.revert({ staticBindings: bindings, dynamicProvisions: provisions });
      throw err;
    }
    podVolumes.staticBindings = bindings;
    podVolumes.dynamicProvisions = provisions;
    return false;
  }

  /** Unreserve (RevertAssumedPodVolumes): the informers' objects are the latest again. */
  revert(podVolumes: PodVolumes): void {
    for (const b of podVolumes.staticBindings) this.pvCache.restore(b.pv.metadata.name ?? '');
    for (const pvc of podVolumes.dynamicProvisions) this.pvcCache.restore(claimKey(pvc));
  }

  /**
   * PreBind (BindPodVolumes): writes the assumed objects, then waits until the claims are
   * bound; see the file comment. On failure the assumptions are reverted.
   * @throws VolumeBindingError `binding volumes: …` when a write fails, a check fails or
   *   the time is up (`context deadline exceeded`), or when `signal` aborts.
   */
  async bindPodVolumes(
    pod: Pod,
    nodeName: string,
    podVolumes: PodVolumes,
    signal?: AbortSignal,
  ): Promise<void> {
    const bindings = podVolumes.staticBindings.map((b) => ({ ...b }));
    const provisions = [...podVolumes.dynamicProvisions];
    try {
      for (const b of bindings) b.pv = await this.cfg.api.updateVolume(b.pv);
      for (let i = 0; i < provisions.length; i++)
        provisions[i] = await this.cfg.api.updateClaim(provisions[i]!);
    } catch (err) {
      this.revert(podVolumes);
      throw new VolumeBindingError(errorMessage(err));
    }
    const deadline = this.cfg.clock.now() + this.bindTimeoutMs;
    try {
      for (;;) {
        await this.cfg.clock.sleep(this.pollIntervalMs, signal);
        if (signal?.aborted) throw new Error('the scheduler is stopping');
        if (this.checkBindings(pod, nodeName, bindings, provisions)) return;
        if (this.cfg.clock.now() >= deadline) throw new Error('context deadline exceeded');
      }
    } catch (err) {
      this.revert(podVolumes);
      throw new VolumeBindingError(`binding volumes: ${errorMessage(err)}`);
    }
  }

  /**
   * Whether every binding and provisioning is done (checkBindings): false to look again;
   * throws when it will not get done (see the file comment).
   */
  private checkBindings(
    pod: Pod,
    nodeName: string,
    bindings: readonly BindingInfo[],
    provisions: readonly PersistentVolumeClaim[],
  ): boolean {
    const node = this.cfg.nodes.get(nodeName);
    if (!node) throw new Error(`failed to get node "${nodeName}": node "${nodeName}" not found`);
    const current = this.cfg.pods.get(pod.metadata.namespace ?? '', pod.metadata.name ?? '');
    if (!current || current.metadata.uid !== pod.metadata.uid)
      throw new Error(`pod does not exist any more: pods "${pod.metadata.name ?? ''}" not found`);
    const noMatch = (pv: PersistentVolume) =>
      new Error(
        `pv "${pv.metadata.name ?? ''}" node affinity doesn't match node "${nodeName}": no matching NodeSelectorTerms`,
      );
    for (const b of bindings) {
      const name = b.pv.metadata.name ?? '';
      const pv = this.pvCache.getAPI(name);
      if (!pv) throw new Error(`failed to check binding: could not find v1.PersistentVolume "${name}"`);
      const pvc = this.pvcCache.getAPI(claimKey(b.pvc));
      if (!pvc)
        throw new Error(
          `failed to check binding: could not find v1.PersistentVolumeClaim "${claimKey(b.pvc)}"`,
        );
      // Our write is not in the informer yet.
      if (resourceVersionNumber(b.pv) > resourceVersionNumber(pv)) return false;
      if (!volumeNodeAffinityMatches(pv, node)) throw noMatch(pv);
      if (!pv.spec?.claimRef?.uid) throw new Error(`ClaimRef got reset for pv "${name}"`);
      if (!isClaimFullyBound(pvc)) return false;
    }
    for (const claim of provisions) {
      const pvc = this.pvcCache.getAPI(claimKey(claim));
      if (!pvc)
        throw new Error(
          `failed to check provisioning pvc: could not find v1.PersistentVolumeClaim "${claimKey(claim)}"`,
        );
      if (resourceVersionNumber(claim) > resourceVersionNumber(pvc)) return false;
      const annotations = pvc.metadata.annotations;
      if (!annotations) throw new Error(`selectedNode annotation reset for PVC "${pvc.metadata.name ?? ''}"`);
      // A provisioner that fails removes the annotation, asking for another node.
      if (annotations[ANN_SELECTED_NODE] !== nodeName)
        throw new Error(`provisioning failed for PVC "${pvc.metadata.name ?? ''}"`);
      if (pvc.spec.volumeName) {
        const pv = this.pvCache.getAPI(pvc.spec.volumeName);
        // Possibly not in the informer yet: look again.
        if (!pv) return false;
        if (!volumeNodeAffinityMatches(pv, node)) throw noMatch(pv);
      }
      if (!isClaimFullyBound(pvc)) return false;
    }
    return true;
  }
}
