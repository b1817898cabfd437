/**
 * The PV protection controller (kube-controller-manager's `pv-protection`,
 * pkg/controller/volume/pvprotection): a PersistentVolume is deleted only once it is no
 * longer Bound. The StorageObjectInUseProtection admission puts `kubernetes.io/pv-protection`
 * on every new volume; this controller adds it to volumes that lack it and removes it
 * from a volume being deleted whose phase is not Bound (the PV controller sets the phase),
 * which lets the deletion finish.
 *
 * Handlers queue a volume that needs the finalizer or is a deletion candidate;
 * reconcile(name) reads it from the cache and adds or removes the finalizer.
 */
import type { Lister } from '../../../../api/client/lister.js';
import { resources } from '../../../../api/client/resource.js';
import type { PersistentVolume } from '../../../../api/storage/types.js';
import { PV_PROTECTION_FINALIZER } from '../../../../api/storage/volume.js';
import { RateLimitingQueue } from '../../../../api/workqueue/rateLimited.js';
import type { Controller, ControllerContext } from '../../context.js';
import { runQueue } from '../../run.js';
import { isDeletionCandidate, needToAddFinalizer, withFinalizer } from '../common.js';

/** What to do with a volume's protection finalizer: add it, remove it, or nothing (processPV). */
export function pvProtectionAction(volume: PersistentVolume): 'add' | 'remove' | undefined {
  if (isDeletionCandidate(volume, PV_PROTECTION_FINALIZER))
    return volume.status?.phase === 'Bound' ? undefined : 'remove';
  if (needToAddFinalizer(volume, PV_PROTECTION_FINALIZER)) return 'add';
  return undefined;
}

/** The `pv-protection` controller; see the file comment. */
export class PVProtectionController implements Controller {
  readonly name = 'pv-protection';
  private readonly ctx: ControllerContext;
  private readonly queue: RateLimitingQueue<string>;
  private readonly volumes: Lister<PersistentVolume>;

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
    this.queue = new RateLimitingQueue<string>({ clock: ctx.clock });
    const informer = ctx.informers.informerFor<PersistentVolume>(resources.persistentvolumes);
    this.volumes = informer.lister();
    const onVolume = (v: PersistentVolume) => {
      if (needToAddFinalizer(v, PV_PROTECTION_FINALIZER) || isDeletionCandidate(v, PV_PROTECTION_FINALIZER))
        this.queue.add(v.metadata.name ?? '');
    };
    informer.addEventHandler({ onAdd: onVolume, onUpdate: (_, v) => onVolume(v) });
  }

  /** Runs the workers until `signal` aborts. */
  run(signal: AbortSignal): Promise<void> {
    return runQueue({
      name: this.name,
      queue: this.queue,
      workers: 1,
      reconcile: (name) => this.reconcile(name),
      signal,
      logger: this.ctx.logger,
    });
  }

  /** processPV; see the file comment. */
  async reconcile(name: string): Promise<void> {
    const volume = this.volumes.get(name);
    if (!volume) return;
    const action = pvProtectionAction(volume);
    if (!action) return;
    await this.ctx.client.update(
      resources.persistentvolumes,
      withFinalizer(volume, PV_PROTECTION_FINALIZER, action === 'add'),
    );
    if (action === 'remove')
      this.ctx.logger.info('pv-protection: removed the protection finalizer', { volume: name });
  }
}
