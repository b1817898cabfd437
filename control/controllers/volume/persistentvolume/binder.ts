/**
 * The PersistentVolume controller's decisions (pkg/controller/volume/persistentvolume,
 * pv_controller.go): syncClaim and syncVolume over the controller's own caches of
 * volumes and claims, writing through a narrow API (VolumeBinderApi) so that every branch
 * is unit-tested with plain objects.
 *
 * The design is upstream's: a binding is a two-way pointer, `pv.spec.claimRef` and
 * `pvc.spec.volumeName`, written in two steps (the volume first, then the claim), either
 * of which may be lost, raced or undone by a user; every sync looks at both ends and
 * finishes or repairs what it finds. Annotations tell who did what:
 * `pv.kubernetes.io/bind-completed` on a claim (binding done once: a claim that has it and
 * loses its volume is Lost, never rebound), `pv.kubernetes.io/bound-by-controller` on
 * either (made by the controller, so the controller may undo it; without it, the user
 * pre-bound it and only the claim uid is cleared).
 *
 * syncClaim (claim without bind-completed: syncUnboundClaim, else syncBoundClaim):
 *   unbound, no volumeName   → the best Available volume (findBestMatchForClaim; for a
 *                              WaitForFirstConsumer class only one pre-bound to it) → bind;
 *                              none: give a class-less claim the default class; a
 *                              WaitForFirstConsumer claim the scheduler has not placed →
 *                              WaitForFirstConsumer / WaitForPodScheduled event; a claim
 *                              with a class → provision (an external provisioner: the
 *                              storage-provisioner annotations and ExternalProvisioning);
 *                              else FailedBinding; then Pending
 *   unbound, volumeName      → that volume: missing → Pending; unclaimed and fit → bind,
 *                              unfit → VolumeMismatch, Pending; (pre-)bound to this claim →
 *                              bind; bound elsewhere → FailedBinding, Pending
 *   bound                    → volumeName gone or volume gone → Lost (ClaimLost); volume
 *                              unclaimed or ours → bind (repairs); volume of another claim →
 *                              Lost (ClaimMisbound)
 * syncVolume:
 *   no claimRef, or a claimRef without uid (pre-bound) → Available
 *   claim gone (or a new claim of the same name) → Released, then the reclaim policy:
 *     Retain: stays Released; Delete: a volume of an external provisioner
 *     (`pv.kubernetes.io/provisioned-by` not `kubernetes.io/…`) is that provisioner's to
 *     delete (k8ts's local-path provisioner in the agent removes its directory and the
 *     PV); any other has no deleter here → Failed, VolumeFailedDelete; Recycle: no
 *     recycler → Failed, VolumeFailedRecycle
 *   claim not bound yet → wake the claim's sync (it binds it); claim bound to this volume →
 *   Bound; claim bound elsewhere → a provisioned Delete volume is Released and reclaimed,
 *   else the binding is undone (unbindVolume)
 *
 * The caches (storeObjectUpdate) keep the newest version seen, from the informers or from
 * the controller's own writes: binding writes four objects, and a sync running on an
 * informer event that predates the others must not undo them. An object older than the
 * cached one is skipped. Failures throw; the controller requeues with backoff.
 */
import { isNotFound } from '../../../../api/client/errors.js';
import type { EventType } from '../../../../api/client/events.js';
import type { Lister } from '../../../../api/client/lister.js';
import { resources } from '../../../../api/client/resource.js';
import type { RestClient } from '../../../../api/client/rest.js';
import { errorMessage } from '../../../../api/errors.js';
import type { Logger } from '../../../../api/log.js';
import type { KubeObject } from '../../../../api/object.js';
import type { PersistentVolume, PersistentVolumeClaim, StorageClass } from '../../../../api/storage/types.js';
import {
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_BIND_COMPLETED,
  ANN_BOUND_BY_CONTROLLER,
  ANN_DYNAMICALLY_PROVISIONED,
  ANN_STORAGE_PROVISIONER,
  bindVolumeToClaim,
  claimClass,
  claimHasClass,
  claimKey,
  claimRefKey,
  defaultClass,
  findBestMatchForClaim,
  hasAnnotation,
  isDelayBindingMode,
  isDelayBindingProvisioning,
  isVolumeBoundToClaim,
  resourceVersionNumber,
  volumeModeMismatches,
  volumeSatisfyClaimError,
} from '../../../../api/storage/volume.js';
import type { Pod } from '../../../../api/types.js';
import { isPodTerminated } from '../common.js';

/** Event reasons (pkg/controller/volume/events). */
export const Reasons = {
  FailedBinding: 'FailedBinding',
  VolumeMismatch: 'VolumeMismatch',
  VolumeFailedRecycle: 'VolumeFailedRecycle',
  VolumeFailedDelete: 'VolumeFailedDelete',
  VolumeUnknownReclaimPolicy: 'VolumeUnknownReclaimPolicy',
  ExternalProvisioning: 'ExternalProvisioning',
  ProvisioningFailed: 'ProvisioningFailed',
  WaitForFirstConsumer: 'WaitForFirstConsumer',
  WaitForPodScheduled: 'WaitForPodScheduled',
  ClaimLost: 'ClaimLost',
  ClaimMisbound: 'ClaimMisbound',
} as const;

/** The writes and live reads the controller makes (a RestClient in the controller, a fake in tests). */
export interface VolumeBinderApi {
  /** GET a claim from the API server; undefined when it does not exist. */
  getClaim(namespace: string, name: string): Promise<PersistentVolumeClaim | undefined>;
  /** GET a volume from the API server; undefined when it does not exist. */
  getVolume(name: string): Promise<PersistentVolume | undefined>;
  /** PUT a volume (spec and metadata); resolves to the stored object. */
  updateVolume(volume: PersistentVolume): Promise<PersistentVolume>;
  /** PUT a volume's status subresource. */
  updateVolumeStatus(volume: PersistentVolume): Promise<PersistentVolume>;
  /** PUT a claim (spec and metadata). */
  updateClaim(claim: PersistentVolumeClaim): Promise<PersistentVolumeClaim>;
  /** PUT a claim's status subresource. */
  updateClaimStatus(claim: PersistentVolumeClaim): Promise<PersistentVolumeClaim>;
}

/** Where events go (EventRecorder's event()). */
export interface Recorder {
  event(target: KubeObject, type: EventType, reason: string, message: string): void;
}

/** What a VolumeBinder is built from. */
export interface VolumeBinderConfig {
  api: VolumeBinderApi;
  /** The claim informer's lister (the controller's own cache comes first; this is the fallback). */
  claimLister: Lister<PersistentVolumeClaim>;
  classLister: Lister<StorageClass>;
  /** Pods naming the claim `namespace/name` (the pod informer's POD_PVC_INDEX). */
  podsOfClaim(key: string): Pod[];
  recorder: Recorder;
  logger: Logger;
  /** Asks for the claim `namespace/name` to be synced soon (the claim queue). */
  enqueueClaim(key: string): void;
  /** --enable-dynamic-provisioning; default true. */
  enableDynamicProvisioning?: boolean;
}

/** Stores `obj` under `key` unless the cache holds a newer version; true when stored (storeObjectUpdate). */
function storeObjectUpdate<T extends KubeObject>(cache: Map<string, T>, key: string, obj: T): boolean {
  const old = cache.get(key);
  if (old) {
    const oldRV = resourceVersionNumber(old);
    const newRV = resourceVersionNumber(obj);
    // Only an older version is dropped: the same one passes, for the periodic resync.
    if (!Number.isNaN(oldRV) && !Number.isNaN(newRV) && oldRV > newRV) return false;
  }
  cache.set(key, obj);
  return true;
}

function withKind<T extends KubeObject>(obj: T, kind: string): T {
  return obj.kind ? obj : { ...obj, apiVersion: 'v1', kind };
}

/** The PV controller's state and syncs (see the file comment). */
export class VolumeBinder {
  /** Newest known volumes by name (the controller's `volumes` index). */
  readonly volumes = new Map<string, PersistentVolume>();
  /** Newest known claims by `namespace/name`. */
  readonly claims = new Map<string, PersistentVolumeClaim>();
  private readonly cfg: VolumeBinderConfig;
  private readonly dynamic: boolean;

  constructor(cfg: VolumeBinderConfig) {
    this.cfg = cfg;
    this.dynamic = cfg.enableDynamicProvisioning ?? true;
  }

  /** Caches a volume version; false when an older one than cached (then not synced). */
  storeVolume(volume: PersistentVolume): boolean {
    return storeObjectUpdate(this.volumes, volume.metadata.name ?? '', volume);
  }

  /** Caches a claim version; false when an older one than cached. */
  storeClaim(claim: PersistentVolumeClaim): boolean {
    return storeObjectUpdate(this.claims, claimKey(claim), claim);
  }

  private claimEvent(claim: PersistentVolumeClaim, type: EventType, reason: string, message: string): void {
    this.cfg.recorder.event(withKind(claim, 'PersistentVolumeClaim'), type, reason, message);
  }

  private volumeEvent(volume: PersistentVolume, type: EventType, reason: string, message: string): void {
    this.cfg.recorder.event(withKind(volume, 'PersistentVolume'), type, reason, message);
  }

  private getClass = (name: string): StorageClass | undefined => this.cfg.classLister.get(name);

  // ---------------------------------------------------------------------------------
  // Claims

  /** Decides what to do with a claim (syncClaim); see the file comment. */
  async syncClaim(claim: PersistentVolumeClaim): Promise<void> {
    if (!hasAnnotation(claim, ANN_BIND_COMPLETED)) await this.syncUnboundClaim(claim);
    else await this.syncBoundClaim(claim);
  }

  private async syncUnboundClaim(claim: PersistentVolumeClaim): Promise<void> {
    const volumeName = claim.spec?.volumeName ?? '';
    if (volumeName === '') {
      // The user does not care which volume.
      const delayBinding = isDelayBindingMode(claim, this.getClass);
      const volume = findBestMatchForClaim(claim, [...this.volumes.values()], delayBinding);
      if (volume) {
        await this.bind(volume, claim);
        return;
      }
      if (await this.assignDefaultStorageClass(claim)) return; // the update's event syncs it again
      if (delayBinding && !isDelayBindingProvisioning(claim)) {
        // No pod using it has been scheduled: the scheduler picks the volume or node.
        this.emitEventForUnboundDelayBindingClaim(claim);
      } else if (claimClass(claim) !== '') {
        // Provisioning finishes asynchronously; the new volume's event binds it.
        await this.provisionClaim(claim);
        return;
      } else {
        this.claimEvent(
          claim,
          'Normal',
          Reasons.FailedBinding,
          'no persistent volumes available for this claim and no storage class is set',
        );
      }
      await this.updateClaimStatus(claim, 'Pending', undefined);
      return;
    }
    // The user asked for a specific volume.
    const volume = this.volumes.get(volumeName);
    if (!volume) {
      // Not there (yet): wait for it.
      await this.updateClaimStatus(claim, 'Pending', undefined);
      return;
    }
    if (!volume.spec?.claimRef) {
      const problem = volumeSatisfyClaimError(volume, claim);
      if (problem) {
        this.claimEvent(
          claim,
          'Warning',
          Reasons.VolumeMismatch,
          `Cannot bind to requested volume "${volumeName}": ${problem}`,
        );
        await this.updateClaimStatus(claim, 'Pending', undefined);
        return;
      }
      await this.bind(volume, claim);
      return;
    }
    if (isVolumeBoundToClaim(volume, claim)) {
      // Pre-bound to this claim: finish the binding (the claim uid goes into the claimRef).
      await this.bind(volume, claim);
      return;
    }
    const msg = `volume "${volumeName}" already bound to a different claim.`;
    this.claimEvent(claim, 'Warning', Reasons.FailedBinding, msg);
    if (!hasAnnotation(claim, ANN_BOUND_BY_CONTROLLER)) {
      // The user asked for a volume someone else has: wait.
      await this.updateClaimStatus(claim, 'Pending', undefined);
      return;
    }
    // Only a removed bind-completed annotation leads here.
    throw new Error(
      `invalid binding of claim "${claimKey(claim)}" to volume "${volumeName}": volume already claimed by "${claimRefKey(volume.spec.claimRef)}"`,
    );
  }

  private async syncBoundClaim(claim: PersistentVolumeClaim): Promise<void> {
    const volumeName = claim.spec?.volumeName ?? '';
    if (volumeName === '') {
      await this.updateClaimStatusWithEvent(
        claim,
        'Lost',
        undefined,
        'Warning',
        Reasons.ClaimLost,
        'Bound claim has lost reference to PersistentVolume. Data on the volume is lost!',
      );
      return;
    }
    const volume = this.volumes.get(volumeName);
    if (!volume) {
      await this.updateClaimStatusWithEvent(
        claim,
        'Lost',
        undefined,
        'Warning',
        Reasons.ClaimLost,
        'Bound claim has lost its PersistentVolume. Data on the volume is lost!',
      );
      return;
    }
    const ref = volume.spec?.claimRef;
    if (!ref || ref.uid === claim.metadata.uid) {
      // Unbound volume (or its update not seen yet), or all is well: bind() repairs or no-ops.
      await this.bind(volume, claim);
      return;
    }
    await this.updateClaimStatusWithEvent(
      claim,
      'Lost',
      undefined,
      'Warning',
      Reasons.ClaimMisbound,
      'Two claims are bound to the same volume, this one is bound incorrectly',
    );
  }

  /** WaitForFirstConsumer, or WaitForPodScheduled naming the unscheduled pods using it (emitEventForUnboundDelayBindingClaim). */
  private emitEventForUnboundDelayBindingClaim(claim: PersistentVolumeClaim): void {
    const names = this.cfg
      .podsOfClaim(claimKey(claim))
      .filter((p) => !isPodTerminated(p) && !p.spec.nodeName)
      .map((p) => p.metadata.name ?? '');
    if (names.length === 0) {
      this.claimEvent(
        claim,
        'Normal',
        Reasons.WaitForFirstConsumer,
        'waiting for first consumer to be created before binding',
      );
    } else {
      const message =
        names.length > 1
          ? `waiting for pods ${names.join(',')} to be scheduled`
          : `waiting for pod ${names[0]} to be scheduled`;
      this.claimEvent(claim, 'Normal', Reasons.WaitForPodScheduled, message);
    }
  }

  /**
   * Gives a claim that names no class at all the default StorageClass (the retroactive
   * default-class assignment); true when the claim was updated.
   */
  private async assignDefaultStorageClass(claim: PersistentVolumeClaim): Promise<boolean> {
    if (claimHasClass(claim)) return false;
    const cls = defaultClass(this.cfg.classLister.list());
    if (!cls) return false;
    const clone = structuredClone(claim);
    clone.spec.storageClassName = cls.metadata.name ?? '';
    await this.cfg.api.updateClaim(clone);
    this.cfg.logger.info('persistentvolume-binder: assigned the default StorageClass', {
      claim: claimKey(claim),
      storageClass: cls.metadata.name,
    });
    return true;
  }

  /**
   * Starts provisioning (provisionClaim). k8ts has no in-tree volume plugins, so a
   * `kubernetes.io/…` provisioner fails as an unknown plugin does upstream; any other is
   * an external provisioner: the claim gets the storage-provisioner annotations (which
   * the provisioner watches for) and an ExternalProvisioning event.
   */
  private async provisionClaim(claim: PersistentVolumeClaim): Promise<void> {
    if (!this.dynamic) return;
    const className = claimClass(claim);
    const cls = this.getClass(className);
    if (!cls) {
      this.claimEvent(
        claim,
        'Warning',
        Reasons.ProvisioningFailed,
        `storageclass.storage.k8s.io "${className}" not found`,
      );
      return;
    }
    const provisioner = cls.provisioner;
    if (provisioner.startsWith('kubernetes.io/')) {
      this.claimEvent(
        claim,
        'Warning',
        Reasons.ProvisioningFailed,
        `no volume plugin matched name: ${provisioner}`,
      );
      return;
    }
    let current: PersistentVolumeClaim;
    try {
      current = await this.setClaimProvisioner(claim, provisioner);
    } catch (err) {
      this.claimEvent(
        claim,
        'Warning',
        Reasons.ProvisioningFailed,
        `Error saving claim: ${errorMessage(err)}`,
      );
      throw err;
    }
    this.claimEvent(
      current,
      'Normal',
      Reasons.ExternalProvisioning,
      `Waiting for a volume to be created either by the external provisioner '${provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`,
    );
  }

  /** Writes both storage-provisioner annotations unless already set (setClaimProvisioner). */
  private async setClaimProvisioner(
    claim: PersistentVolumeClaim,
    provisioner: string,
  ): Promise<PersistentVolumeClaim> {
    if (claim.metadata.annotations?.[ANN_STORAGE_PROVISIONER] === provisioner) return claim;
    const clone = structuredClone(claim);
    clone.metadata.annotations = {
      ...clone.metadata.annotations,
      [ANN_BETA_STORAGE_PROVISIONER]: provisioner,
      [ANN_STORAGE_PROVISIONER]: provisioner,
    };
    const updated = await this.cfg.api.updateClaim(clone);
    this.storeClaim(updated);
    return updated;
  }

  /**
   * Saves `phase` (and, given a volume, its access modes and — when the claim becomes that
   * phase — its capacity) into the claim's status; no write when nothing changes
   * (updateClaimStatus).
   * @throws Error for a volume without a storage capacity.
   */
  private async updateClaimStatus(
    claim: PersistentVolumeClaim,
    phase: 'Pending' | 'Bound' | 'Lost',
    volume: PersistentVolume | undefined,
  ): Promise<PersistentVolumeClaim> {
    const clone = structuredClone(claim);
    const status = (clone.status ??= {}) as NonNullable<PersistentVolumeClaim['status']> & {
      accessModes?: string[];
      capacity?: Record<string, string>;
    };
    let dirty = false;
    if (claim.status?.phase !== phase) {
      status.phase = phase;
      dirty = true;
    }
    if (!volume) {
      if (status.accessModes !== undefined) {
        delete status.accessModes;
        dirty = true;
      }
      if (status.capacity !== undefined) {
        delete status.capacity;
        dirty = true;
      }
    } else {
      const modes = volume.spec?.accessModes;
      if (JSON.stringify(status.accessModes) !== JSON.stringify(modes)) {
        if (modes === undefined) delete status.accessModes;
        else status.accessModes = [...modes];
        dirty = true;
      }
      // Capacity only when becoming this phase: a later difference may be deliberate
      // (a filesystem smaller than its block device).
      if (claim.status?.phase !== phase) {
        const cap = volume.spec?.capacity?.storage;
        if (cap === undefined)
          throw new Error(`PersistentVolume "${volume.metadata.name ?? ''}" is without a storage capacity`);
        if (status.capacity?.storage !== cap) {
          status.capacity = { ...volume.spec!.capacity };
          dirty = true;
        }
      }
    }
    if (!dirty) return claim;
    const updated = await this.cfg.api.updateClaimStatus(clone);
    this.storeClaim(updated);
    this.cfg.logger.info('persistentvolume-binder: claim entered phase', { claim: claimKey(claim), phase });
    return updated;
  }

  /** updateClaimStatus, with an event, only when the phase changes (updateClaimStatusWithEvent). */
  private async updateClaimStatusWithEvent(
    claim: PersistentVolumeClaim,
    phase: 'Pending' | 'Bound' | 'Lost',
    volume: PersistentVolume | undefined,
    type: EventType,
    reason: string,
    message: string,
  ): Promise<PersistentVolumeClaim> {
    if (claim.status?.phase === phase) return claim;
    const updated = await this.updateClaimStatus(claim, phase, volume);
    this.claimEvent(updated, type, reason, message);
    return updated;
  }

  // ---------------------------------------------------------------------------------
  // Binding

  /** Saves the volume bound to the claim if that changes it (bindVolumeToClaim). */
  private async bindVolumeToClaim(
    volume: PersistentVolume,
    claim: PersistentVolumeClaim,
  ): Promise<PersistentVolume> {
    const { volume: bound, dirty } = bindVolumeToClaim(volume, claim);
    if (!dirty) return volume;
    const updated = await this.cfg.api.updateVolume(bound);
    this.storeVolume(updated);
    this.cfg.logger.info('persistentvolume-binder: claim bound to volume', {
      claim: claimKey(claim),
      volume: volume.metadata.name,
    });
    return updated;
  }

  /**
   * Saves the claim bound to the volume (bindClaimToVolume): `volumeName`, with
   * `bound-by-controller` when the controller chose it, and `bind-completed`.
   */
  private async bindClaimToVolume(
    claim: PersistentVolumeClaim,
    volume: PersistentVolume,
  ): Promise<PersistentVolumeClaim> {
    const name = volume.metadata.name ?? '';
    const clone = structuredClone(claim);
    const annotations = { ...clone.metadata.annotations };
    let dirty = false;
    if (claim.spec?.volumeName !== name) {
      clone.spec.volumeName = name;
      if (!Object.hasOwn(annotations, ANN_BOUND_BY_CONTROLLER)) annotations[ANN_BOUND_BY_CONTROLLER] = 'yes';
      dirty = true;
    }
    if (!Object.hasOwn(annotations, ANN_BIND_COMPLETED)) {
      annotations[ANN_BIND_COMPLETED] = 'yes';
      dirty = true;
    }
    if (!dirty) return claim;
    clone.metadata.annotations = annotations;
    const updated = await this.cfg.api.updateClaim(clone);
    this.storeClaim(updated);
    return updated;
  }

  /**
   * Binds both ends and marks both Bound, volume first (bind); the first failure is thrown
   * and a later sync finishes the rest.
   */
  private async bind(volume: PersistentVolume, claim: PersistentVolumeClaim): Promise<void> {
    let v = await this.bindVolumeToClaim(volume, claim);
    v = await this.updateVolumePhase(v, 'Bound', '');
    const c = await this.bindClaimToVolume(claim, v);
    await this.updateClaimStatus(c, 'Bound', v);
  }

  /**
   * Undoes a binding (unbindVolume): a controller-made one loses its claimRef and the
   * annotation; a user's pre-binding keeps the claimRef without the claim uid. Then Available.
   */
  private async unbindVolume(volume: PersistentVolume): Promise<void> {
    const clone = structuredClone(volume);
    clone.spec ??= {};
    if (hasAnnotation(volume, ANN_BOUND_BY_CONTROLLER)) {
      delete clone.spec.claimRef;
      const annotations = { ...clone.metadata.annotations };
      delete annotations[ANN_BOUND_BY_CONTROLLER];
      if (Object.keys(annotations).length === 0) delete clone.metadata.annotations;
      else clone.metadata.annotations = annotations;
    } else if (clone.spec.claimRef) {
      delete clone.spec.claimRef.uid;
    }
    const updated = await this.cfg.api.updateVolume(clone);
    this.storeVolume(updated);
    await this.updateVolumePhase(updated, 'Available', '');
  }

  // ---------------------------------------------------------------------------------
  // Volumes

  /** Saves a volume's phase (and message) unless it already has it (updateVolumePhase). */
  private async updateVolumePhase(
    volume: PersistentVolume,
    phase: NonNullable<NonNullable<PersistentVolume['status']>['phase']>,
    message: string,
  ): Promise<PersistentVolume> {
    if (volume.status?.phase === phase) return volume;
    const clone = structuredClone(volume);
    clone.status = { ...clone.status, phase };
    if (message) clone.status.message = message;
    else delete clone.status.message;
    const updated = await this.cfg.api.updateVolumeStatus(clone);
    this.storeVolume(updated);
    this.cfg.logger.info('persistentvolume-binder: volume entered phase', {
      volume: volume.metadata.name,
      phase,
    });
    return updated;
  }

  /** updateVolumePhase with an event, only when the phase changes (updateVolumePhaseWithEvent). */
  private async updateVolumePhaseWithEvent(
    volume: PersistentVolume,
    phase: NonNullable<NonNullable<PersistentVolume['status']>['phase']>,
    type: EventType,
    reason: string,
    message: string,
  ): Promise<PersistentVolume> {
    if (volume.status?.phase === phase) return volume;
    const updated = await this.updateVolumePhase(volume, phase, message);
    this.volumeEvent(updated, type, reason, message);
    return updated;
  }

  /** Decides what to do with a volume (syncVolume); see the file comment. */
  async syncVolume(volume: PersistentVolume): Promise<void> {
    const ref = volume.spec?.claimRef;
    if (!ref || !ref.uid) {
      // Unused, or reserved (pre-bound) for a claim whose sync will bind it.
      await this.updateVolumePhase(volume, 'Available', '');
      return;
    }
    const namespace = ref.namespace ?? '';
    const name = ref.name ?? '';
    const phase = volume.status?.phase;
    let claim: PersistentVolumeClaim | undefined = this.claims.get(claimRefKey(ref));
    if (!claim && phase !== 'Released' && phase !== 'Failed') {
      // A provisioner or the scheduler may have bound the volume to a claim this
      // controller has not seen yet: look harder before releasing the volume.
      claim = this.cfg.claimLister.get(namespace, name) ?? (await this.cfg.api.getClaim(namespace, name));
    }
    if (claim && claim.metadata.uid !== ref.uid) {
      // Perhaps a new claim of the same name, perhaps a stale cache: ask the server.
      claim = await this.cfg.api.getClaim(namespace, name);
      if (claim && claim.metadata.uid !== ref.uid) claim = undefined;
    }
    if (!claim) {
      // The claim is gone: release the volume (once; a Failed one stays Failed) and reclaim it.
      let v = volume;
      if (phase !== 'Released' && phase !== 'Failed')
        v = await this.updateVolumePhase(volume, 'Released', '');
      await this.reclaimVolume(v);
      return;
    }
    const claimVolume = claim.spec?.volumeName ?? '';
    if (claimVolume === '') {
      if (volumeModeMismatches(claim, volume)) {
        this.volumeEvent(
          volume,
          'Warning',
          Reasons.VolumeMismatch,
          `Cannot bind PersistentVolume to requested PersistentVolumeClaim "${claim.metadata.name ?? ''}" due to incompatible volumeMode.`,
        );
        this.claimEvent(
          claim,
          'Warning',
          Reasons.VolumeMismatch,
          `Cannot bind PersistentVolume "${volume.metadata.name ?? ''}" to requested PersistentVolumeClaim due to incompatible volumeMode.`,
        );
        return;
      }
      // Volume bound, claim not yet (a provisioned volume, a half-done binding): the
      // claim's sync finishes it, soon rather than at the next resync.
      this.cfg.enqueueClaim(claimKey(claim));
      return;
    }
    if (claimVolume === volume.metadata.name) {
      await this.updateVolumePhase(volume, 'Bound', '');
      return;
    }
    // The claim is bound to another volume.
    if (
      hasAnnotation(volume, ANN_DYNAMICALLY_PROVISIONED) &&
      volume.spec?.persistentVolumeReclaimPolicy === 'Delete'
    ) {
      // Provisioned for this claim, which went elsewhere: not needed any more.
      let v = volume;
      if (phase !== 'Released' && phase !== 'Failed')
        v = await this.updateVolumePhase(volume, 'Released', '');
      await this.reclaimVolume(v);
      return;
    }
    // Controller-made: undo it. A user's pre-binding: clear the uid, keep waiting for the claim.
    await this.unbindVolume(volume);
  }

  /**
   * Applies the reclaim policy to a released volume (reclaimVolume); see the file comment.
   * A missing policy counts as Retain, the API default.
   */
  private async reclaimVolume(volume: PersistentVolume): Promise<void> {
    if (volume.metadata.annotations?.['pv.kubernetes.io/migrated-to']) return;
    const policy = volume.spec?.persistentVolumeReclaimPolicy ?? 'Retain';
    switch (policy) {
      case 'Retain':
        return;
      case 'Recycle':
        if (!(await this.isVolumeReleased(volume))) return;
        await this.updateVolumePhaseWithEvent(
          volume,
          'Failed',
          'Warning',
          Reasons.VolumeFailedRecycle,
          'No recycler plugin found for the volume!',
        );
        return;
      case 'Delete':
        await this.deleteVolumeOperation(volume);
        return;
      default:
        await this.updateVolumePhaseWithEvent(
          volume,
          'Failed',
          'Warning',
          Reasons.VolumeUnknownReclaimPolicy,
          'Volume has unrecognized PersistentVolumeReclaimPolicy',
        );
    }
  }

  /**
   * Reclaim policy Delete (deleteVolumeOperation): on the volume as the server has it now,
   * if it is still released. An external provisioner's volume is left to it; for any
   * other there is no deleter in k8ts: Failed with VolumeFailedDelete (retried on every
   * sync, as upstream keeps retrying a failed deletion).
   */
  private async deleteVolumeOperation(volume: PersistentVolume): Promise<void> {
    const name = volume.metadata.name ?? '';
    const current = await this.cfg.api.getVolume(name);
    if (!current || current.metadata.deletionTimestamp) return;
    if (!(await this.isVolumeReleased(current))) return;
    const provisioner = current.metadata.annotations?.[ANN_DYNAMICALLY_PROVISIONED];
    if (provisioner && !provisioner.startsWith('kubernetes.io/')) {
      // findDeletablePlugin: an external deleter is requested; it does the work.
      return;
    }
    const message = provisioner
      ? `no volume plugin matched name: ${provisioner}`
      : `error getting deleter volume plugin for volume "${name}": no deletable volume plugin matched`;
    await this.updateVolumePhaseWithEvent(volume, 'Failed', 'Warning', Reasons.VolumeFailedDelete, message);
  }

  /**
   * Whether a volume may be reclaimed (isVolumeReleased): it has a claimRef with a uid,
   * and no claim of that uid exists, or that claim is bound to another volume.
   */
  private async isVolumeReleased(volume: PersistentVolume): Promise<boolean> {
    const ref = volume.spec?.claimRef;
    if (!ref?.uid) return false;
    const claim = this.claims.get(claimRefKey(ref));
    if (claim && claim.metadata.uid === ref.uid) {
      const bound = claim.spec?.volumeName ?? '';
      return bound !== '' && bound !== volume.metadata.name;
    }
    return true;
  }

  // ---------------------------------------------------------------------------------
  // Deletions seen by the informers

  /** A claim is gone: forget it and sync its volume, which may now be released (deleteClaim). */
  claimDeleted(claim: PersistentVolumeClaim): string | undefined {
    this.claims.delete(claimKey(claim));
    return claim.spec?.volumeName || undefined;
  }

  /** A volume is gone: forget it; its claim (if any) should be synced to become Lost (deleteVolume). */
  volumeDeleted(volume: PersistentVolume): string | undefined {
    this.volumes.delete(volume.metadata.name ?? '');
    const ref = volume.spec?.claimRef;
    return ref ? claimRefKey(ref) : undefined;
  }
}

/** The VolumeBinderApi over the API server. */
export function restBinderApi(client: RestClient): VolumeBinderApi {
  const pvs = resources.persistentvolumes;
  const pvcs = resources.persistentvolumeclaims;
  const orUndefined = async <T>(p: Promise<T>): Promise<T | undefined> => {
    try {
      return await p;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
  return {
    getClaim: (namespace, name) => orUndefined(client.get<PersistentVolumeClaim>(pvcs, namespace, name)),
    getVolume: (name) => orUndefined(client.get<PersistentVolume>(pvs, undefined, name)),
    updateVolume: (v) => client.update<PersistentVolume>(pvs, v),
    updateVolumeStatus: (v) => client.updateStatus<PersistentVolume>(pvs, v),
    updateClaim: (c) => client.update<PersistentVolumeClaim>(pvcs, c),
    updateClaimStatus: (c) => client.updateStatus<PersistentVolumeClaim>(pvcs, c),
  };
}
