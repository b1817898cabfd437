/**
 * The PVC protection controller (kube-controller-manager's `pvc-protection`,
 * pkg/controller/volume/pvcprotection): a claim is deleted only once no pod uses it. The
 * StorageObjectInUseProtection admission puts `kubernetes.io/pvc-protection` on every new
 * claim; this controller adds it to claims that lack it and removes it from a claim being
 * deleted that no pod uses any more, which lets the deletion finish.
 *
 * A pod uses a claim (podUsesPVC) when it is scheduled (`spec.nodeName`: the kubelet sees
 * only scheduled pods, and refuses to start one whose claim is being deleted) and names
 * the claim in a persistentVolumeClaim volume — whatever its phase, as upstream: a
 * finished pod's volumes may still be mounted — or, unless the kubelet is done with it
 * (podIsShutDown), through a generic ephemeral volume whose claim it owns.
 *
 * Handlers: a claim is queued when it needs the finalizer or is a deletion candidate; a
 * pod's claims when the pod is deleted, terminated or not scheduled (only then can it
 * stop holding them). reconcile(key): the claim from the cache; a deletion candidate is
 * checked against the pod cache and then a live list of its namespace's pods (a pod may
 * not be in the cache yet), and the finalizer removed when unused; a claim that is not
 * being deleted gets the finalizer if it lacks it.
 */
import { deletedObject } from '../../../../api/client/informer.js';
import type { Lister } from '../../../../api/client/lister.js';
import { resources } from '../../../../api/client/resource.js';
import { metaNamespaceKey, splitMetaNamespaceKey } from '../../../../api/client/store.js';
import { PVC_PROTECTION_FINALIZER } from '../../../../api/storage/volume.js';
import type { PersistentVolumeClaim, Pod } from '../../../../api/types.js';
import { RateLimitingQueue } from '../../../../api/workqueue/rateLimited.js';
import type { Controller, ControllerContext } from '../../context.js';
import { runQueue } from '../../run.js';
import {
  isDeletionCandidate,
  isPodTerminated,
  needToAddFinalizer,
  POD_PVC_INDEX,
  podClaimNames,
  podIsShutDown,
  podPVCIndexFunc,
  withFinalizer,
} from '../common.js';

interface ClaimVolume {
  name?: string;
  persistentVolumeClaim?: { claimName?: string };
  ephemeral?: unknown;
}

/** Whether `pod` uses `claim` (podUsesPVC); see the file comment. */
export function podUsesPVC(pod: Pod, claim: PersistentVolumeClaim): boolean {
  if (!pod.spec.nodeName) return false;
  if ((pod.metadata.namespace ?? '') !== (claim.metadata.namespace ?? '')) return false;
  const volumes = Array.isArray(pod.spec.volumes) ? (pod.spec.volumes as ClaimVolume[]) : [];
  const name = claim.metadata.name ?? '';
  for (const v of volumes) {
    if (v?.persistentVolumeClaim?.claimName === name) return true;
    if (
      v?.ephemeral &&
      !podIsShutDown(pod) &&
      `${pod.metadata.name ?? ''}-${v.name ?? ''}` === name &&
      (claim.metadata.ownerReferences ?? []).some((r) => r.controller && r.uid === pod.metadata.uid)
    )
      return true;
  }
  return false;
}

/** Whether a pod event may let a claim go: the pod is gone, finished, or not scheduled (enqueuePVCs' filter). */
export function podMayReleaseClaims(pod: Pod, deleted: boolean): boolean {
  return deleted || isPodTerminated(pod) || !pod.spec.nodeName;
}

/** The `pvc-protection` controller; see the file comment. */
export class PVCProtectionController implements Controller {
  readonly name = 'pvc-protection';
  private readonly ctx: ControllerContext;
  private readonly queue: RateLimitingQueue<string>;
  private readonly claims: Lister<PersistentVolumeClaim>;
  private readonly pods: Lister<Pod>;

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
    this.queue = new RateLimitingQueue<string>({ clock: ctx.clock });
    const claims = ctx.informers.informerFor<PersistentVolumeClaim>(resources.persistentvolumeclaims);
    const pods = ctx.informers.informerFor<Pod>(resources.pods, {
      indexers: { [POD_PVC_INDEX]: podPVCIndexFunc },
    });
    this.claims = claims.lister();
    this.pods = pods.lister();
    const onClaim = (c: PersistentVolumeClaim) => {
      if (needToAddFinalizer(c, PVC_PROTECTION_FINALIZER) || isDeletionCandidate(c, PVC_PROTECTION_FINALIZER))
        this.queue.add(metaNamespaceKey(c));
    };
    claims.addEventHandler({ onAdd: onClaim, onUpdate: (_, c) => onClaim(c) });
    pods.addEventHandler({
      onAdd: (p) => this.enqueueClaims(p, false),
      onUpdate: (old, cur) => {
        this.enqueueClaims(cur, false);
        // Deleted and recreated under the same name between two events: the old pod's
        // claims may be free now.
        if (old.metadata.uid !== cur.metadata.uid) this.enqueueClaims(old, true);
      },
      onDelete: (p) => this.enqueueClaims(deletedObject(p), true),
    });
  }

  private enqueueClaims(pod: Pod, deleted: boolean): void {
    if (!podMayReleaseClaims(pod, deleted)) return;
    for (const name of podClaimNames(pod)) this.queue.add(`${pod.metadata.namespace ?? ''}/${name}`);
  }

  /** Runs the workers until `signal` aborts. */
  run(signal: AbortSignal): Promise<void> {
    return runQueue({
      name: this.name,
      queue: this.queue,
      workers: 1,
      reconcile: (key) => this.reconcile(key),
      signal,
      logger: this.ctx.logger,
    });
  }

  /** processPVC; see the file comment. */
  async reconcile(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const claim = this.claims.get(namespace, name);
    if (!claim) return;
    if (isDeletionCandidate(claim, PVC_PROTECTION_FINALIZER)) {
      if (!(await this.isBeingUsed(claim))) {
        await this.ctx.client.update(
          resources.persistentvolumeclaims,
          withFinalizer(claim, PVC_PROTECTION_FINALIZER, false),
        );
        this.ctx.logger.info('pvc-protection: removed the protection finalizer', { claim: key });
        return;
      }
      this.ctx.logger.debug('pvc-protection: keeping the claim, a pod uses it', { claim: key });
    }
    if (needToAddFinalizer(claim, PVC_PROTECTION_FINALIZER)) {
      // The admission plugin adds it; this covers claims made before it was on.
      await this.ctx.client.update(
        resources.persistentvolumeclaims,
        withFinalizer(claim, PVC_PROTECTION_FINALIZER, true),
      );
    }
  }

  /** The informer's pods first (cheap); then a live list, since a new pod may not be cached yet. */
  private async isBeingUsed(claim: PersistentVolumeClaim): Promise<boolean> {
    const key = metaNamespaceKey(claim);
    if (this.pods.byIndex(POD_PVC_INDEX, key).some((p) => podUsesPVC(p, claim))) return true;
    const live = await this.ctx.client.list<Pod>(resources.pods, { namespace: claim.metadata.namespace });
    return live.items.some((p) => podUsesPVC(p, claim));
  }
}
