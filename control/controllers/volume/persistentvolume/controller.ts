/**
 * The PersistentVolume controller (kube-controller-manager's `persistentvolume-binder`,
 * pkg/controller/volume/persistentvolume/pv_controller_base.go): binds claims to volumes,
 * sets their phases and applies reclaim policies. The decisions are binder.ts's; this is
 * the frame around them:
 *
 *   PV informer  ──name──────▶ volume queue ─▶ in the informer: cache it (if not older
 *                                              than the cached one) and syncVolume;
 *                                              gone: forget it, sync its claim (Lost)
 *   PVC informer ──ns/name───▶ claim queue  ─▶ in the informer: cache it and syncClaim;
 *                                              gone: forget it, sync its volume (Released)
 *   every syncPeriod (--pvclaimbinder-sync-period, 15 s): every claim and volume again
 *
 * One worker per queue, as upstream: syncClaim is not reentrant (two at once could bind
 * two claims to one volume). StorageClasses and pods (indexed by the claims they name)
 * are read from their informers. A failed sync throws and its key comes back with backoff.
 */
import { deletedObject } from '../../../../api/client/informer.js';
import type { Lister } from '../../../../api/client/lister.js';
import { resources } from '../../../../api/client/resource.js';
import { metaNamespaceKey, splitMetaNamespaceKey } from '../../../../api/client/store.js';
import type { PersistentVolume, PersistentVolumeClaim, StorageClass } from '../../../../api/storage/types.js';
import type { Pod } from '../../../../api/types.js';
import { RateLimitingQueue } from '../../../../api/workqueue/rateLimited.js';
import type { Controller, ControllerContext } from '../../context.js';
import { runQueue } from '../../run.js';
import { POD_PVC_INDEX, podPVCIndexFunc } from '../common.js';
import { restBinderApi, VolumeBinder, type VolumeBinderApi } from './binder.js';

/** The component name of its events. */
export const PV_CONTROLLER_COMPONENT = 'persistentvolume-controller';

/** --pvclaimbinder-sync-period's default, ms. */
export const DEFAULT_SYNC_PERIOD_MS = 15_000;

/** Options beyond the shared context (tests). */
export interface PersistentVolumeControllerOptions {
  /** How often every claim and volume is synced again, ms; default 15 000. */
  syncPeriodMs?: number;
  /** --enable-dynamic-provisioning; default true. */
  enableDynamicProvisioning?: boolean;
  /** The writes; default over ctx.client. */
  api?: VolumeBinderApi;
}

/** The `persistentvolume-binder` controller; see the file comment. */
export class PersistentVolumeController implements Controller {
  readonly name = 'persistentvolume-binder';
  /** The decisions and the caches (exposed for tests). */
  readonly binder: VolumeBinder;
  private readonly ctx: ControllerContext;
  private readonly claimQueue: RateLimitingQueue<string>;
  private readonly volumeQueue: RateLimitingQueue<string>;
  private readonly volumeLister: Lister<PersistentVolume>;
  private readonly claimLister: Lister<PersistentVolumeClaim>;
  private readonly syncPeriodMs: number;

  /** @throws Error for a syncPeriodMs that is not positive. */
  constructor(ctx: ControllerContext, opts: PersistentVolumeControllerOptions = {}) {
    this.ctx = ctx;
    this.syncPeriodMs = opts.syncPeriodMs ?? DEFAULT_SYNC_PERIOD_MS;
    if (!(this.syncPeriodMs > 0))
      throw new Error(`persistentvolume-binder: syncPeriodMs must be > 0, got ${this.syncPeriodMs}`);
    this.claimQueue = new RateLimitingQueue<string>({ clock: ctx.clock });
    this.volumeQueue = new RateLimitingQueue<string>({ clock: ctx.clock });
    const volumes = ctx.informers.informerFor<PersistentVolume>(resources.persistentvolumes);
    const claims = ctx.informers.informerFor<PersistentVolumeClaim>(resources.persistentvolumeclaims);
    const classes = ctx.informers.informerFor<StorageClass>(resources.storageclasses);
    const pods = ctx.informers.informerFor<Pod>(resources.pods, {
      indexers: { [POD_PVC_INDEX]: podPVCIndexFunc },
    });
    this.volumeLister = volumes.lister();
    this.claimLister = claims.lister();
    const podLister = pods.lister();
    this.binder = new VolumeBinder({
      api: opts.api ?? restBinderApi(ctx.client),
      claimLister: this.claimLister,
      classLister: classes.lister(),
      podsOfClaim: (key) => podLister.byIndex(POD_PVC_INDEX, key),
      recorder: ctx.recorder(PV_CONTROLLER_COMPONENT),
      logger: ctx.logger,
      enqueueClaim: (key) => this.claimQueue.add(key),
      ...(opts.enableDynamicProvisioning !== undefined
        ? { enableDynamicProvisioning: opts.enableDynamicProvisioning }
        : {}),
    });
    const volumeKey = (v: PersistentVolume) => v.metadata.name ?? '';
    volumes.addEventHandler({
      onAdd: (v) => this.volumeQueue.add(volumeKey(v)),
      onUpdate: (_, v) => this.volumeQueue.add(volumeKey(v)),
      onDelete: (v) => this.volumeQueue.add(volumeKey(deletedObject(v))),
    });
    claims.addEventHandler({
      onAdd: (c) => this.claimQueue.add(metaNamespaceKey(c)),
      onUpdate: (_, c) => this.claimQueue.add(metaNamespaceKey(c)),
      onDelete: (c) => this.claimQueue.add(metaNamespaceKey(deletedObject(c))),
    });
  }

  /** Fills the caches from the informers, then runs both workers and the resync until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    // initializeCaches: the first syncs see every object, not only those synced before them.
    for (const v of this.volumeLister.list()) this.binder.storeVolume(structuredClone(v));
    for (const c of this.claimLister.list()) this.binder.storeClaim(structuredClone(c));
    const resync = (async () => {
      while (!signal.aborted) {
        await this.ctx.clock.sleep(this.syncPeriodMs, signal);
        if (signal.aborted) break;
        for (const c of this.claimLister.list()) this.claimQueue.add(metaNamespaceKey(c));
        for (const v of this.volumeLister.list()) this.volumeQueue.add(v.metadata.name ?? '');
      }
    })();
    const common = { signal, logger: this.ctx.logger, workers: 1 };
    await Promise.all([
      runQueue({
        ...common,
        name: `${this.name} (volumes)`,
        queue: this.volumeQueue,
        reconcile: (k) => this.syncVolumeKey(k),
      }),
      runQueue({
        ...common,
        name: `${this.name} (claims)`,
        queue: this.claimQueue,
        reconcile: (k) => this.syncClaimKey(k),
      }),
      resync,
    ]);
  }

  /** The volume worker's step (volumeWorker). */
  async syncVolumeKey(name: string): Promise<void> {
    const volume = this.volumeLister.get(name);
    if (volume) {
      // An older version than the cached one (the controller wrote a newer one) is skipped.
      if (!this.binder.storeVolume(volume)) return;
      await this.binder.syncVolume(volume);
      return;
    }
    const cached = this.binder.volumes.get(name);
    if (!cached) return;
    const claim = this.binder.volumeDeleted(cached);
    if (claim) this.claimQueue.add(claim);
  }

  /** The claim worker's step (claimWorker). */
  async syncClaimKey(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const claim = this.claimLister.get(namespace, name);
    if (claim) {
      if (!this.binder.storeClaim(claim)) return;
      await this.binder.syncClaim(claim);
      return;
    }
    const cached = this.binder.claims.get(key);
    if (!cached) return;
    const volume = this.binder.claimDeleted(cached);
    if (volume) this.volumeQueue.add(volume);
  }
}
