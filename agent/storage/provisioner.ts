/**
 * The built-in local-path provisioner (k3s's `rancher.io/local-path`), one in every
 * agent, for its own node only, as a DaemonSet of node-local provisioners would run:
 *
 *   PVC informer ──key ns/name──▶ claims queue ──▶ syncClaim: shouldProvision? (volume.ts)
 *                                                   mkdir DATA_DIR/storage/pvc-<uid> (0777)
 *                                                   POST the PV (claimRef → the claim)
 *   PV informer ───key name─────▶ volumes queue ─▶ syncVolume: shouldDelete? (volume.ts)
 *                                                   rm the directory (directory.ts)
 *                                                   DELETE the PV
 *   StorageClass informer, Node informer (this node): read by the syncs; a class that
 *   appears re-queues the claims (one may have waited for it).
 *
 * The PV controller (control side) then binds claim and volume; the kubelet mounts the
 * hostPath (kubelet/pods/claims.ts). Events are the external provisioner's
 * (sig-storage-lib-external-provisioner): on the claim `Provisioning`,
 * `ProvisioningSucceeded`, `ProvisioningFailed`; on the volume `VolumeFailedDelete`.
 *
 * Reconciles are level-triggered: a PV named `pvc-<claim uid>` that already exists means
 * the claim was provisioned (its directory is made again if missing, which is harmless),
 * so a crash between mkdir and POST, a duplicated event or an agent restart changes
 * nothing but timing. A failure throws and the key comes back with backoff.
 */
import type { Clock } from '../../api/clock.js';
import { realClock } from '../../api/clock.js';
import { isAlreadyExists, isNotFound } from '../../api/client/errors.js';
import type { EventRecorder } from '../../api/client/events.js';
import { deletedObject, SharedInformer } from '../../api/client/informer.js';
import { resources } from '../../api/client/resource.js';
import type { RestClient } from '../../api/client/rest.js';
import { errorMessage } from '../../api/errors.js';
import type { Logger } from '../../api/log.js';
import type { KubeObject } from '../../api/object.js';
import { RateLimitingQueue } from '../../api/workqueue/rateLimited.js';
import { runWorkers } from '../../api/workqueue/workers.js';
import type { Mounter } from '../kubelet/pods/mount.js';
import { createVolumeDir, removeVolumeDir, storageDir, VolumeDirectoryError } from './directory.js';
import type { PersistentVolume, PersistentVolumeClaim, StorageClass } from './types.js';
import {
  ANN_PROVISIONED_BY,
  claimClassName,
  LOCAL_PATH_PROVISIONER,
  nodeHostname,
  provisionedVolume,
  provisionRefusal,
  shouldDelete,
  shouldProvision,
  volumeNameFor,
} from './volume.js';

/** Settings of a LocalPathProvisioner. */
export interface LocalPathProvisionerConfig {
  client: RestClient;
  /** This node's name: claims annotated with it as their selected node are this provisioner's. */
  nodeName: string;
  /** The agent's data dir; volumes go under `<dataDir>/storage/`. */
  dataDir: string;
  /** Records events as the provisioner's component (`rancher.io/local-path_<node>` upstream). */
  recorder: EventRecorder;
  /** Checks that no mount remains in a directory about to be removed. */
  mounter: Mounter;
  logger: Logger;
  clock?: Clock;
}

/** The local-path provisioner of one node (see the file comment). */
export class LocalPathProvisioner {
  private readonly cfg: LocalPathProvisionerConfig;
  private readonly clock: Clock;
  private readonly storage: string;
  private readonly claims: SharedInformer<PersistentVolumeClaim>;
  private readonly volumes: SharedInformer<PersistentVolume>;
  private readonly classes: SharedInformer<StorageClass>;
  private readonly nodes: SharedInformer<KubeObject>;
  private readonly claimQueue: RateLimitingQueue<string>;
  private readonly volumeQueue: RateLimitingQueue<string>;
  private running: Promise<void> | undefined;

  constructor(cfg: LocalPathProvisionerConfig) {
    if (!cfg.nodeName) throw new Error('LocalPathProvisioner: nodeName is required');
    if (!cfg.dataDir) throw new Error('LocalPathProvisioner: dataDir is required');
    this.cfg = cfg;
    this.clock = cfg.clock ?? realClock;
    this.storage = storageDir(cfg.dataDir);
    const onError = (what: string) => (err: unknown, during: string) =>
      cfg.logger.warn(`local-path provisioner: ${what} informer error`, { during, error: errorMessage(err) });
    const opts = { clock: this.clock };
    this.claims = SharedInformer.fromClient(cfg.client, resources.persistentvolumeclaims, {
      ...opts,
      onError: onError('claim'),
    });
    this.volumes = SharedInformer.fromClient(cfg.client, resources.persistentvolumes, {
      ...opts,
      onError: onError('volume'),
    });
    this.classes = SharedInformer.fromClient(cfg.client, resources.storageclasses, {
      ...opts,
      onError: onError('storage class'),
    });
    this.nodes = SharedInformer.fromClient(cfg.client, resources.nodes, {
      ...opts,
      fieldSelector: `metadata.name=${cfg.nodeName}`,
      onError: onError('node'),
    });
    this.claimQueue = new RateLimitingQueue({ clock: this.clock });
    this.volumeQueue = new RateLimitingQueue({ clock: this.clock });

    const claimKey = (c: PersistentVolumeClaim) => `${c.metadata.namespace ?? ''}/${c.metadata.name ?? ''}`;
    this.claims.addEventHandler({
      onAdd: (c) => this.claimQueue.add(claimKey(c)),
      onUpdate: (_, c) => this.claimQueue.add(claimKey(c)),
    });
    const volumeKey = (v: PersistentVolume) => v.metadata.name ?? '';
    this.volumes.addEventHandler({
      onAdd: (v) => this.volumeQueue.add(volumeKey(v)),
      onUpdate: (_, v) => this.volumeQueue.add(volumeKey(v)),
      // A claim waiting on its volume's name being free (a PV deleted) may go on.
      onDelete: (v) => {
        const ref = deletedObject(v).spec?.claimRef;
        if (ref?.namespace && ref.name) this.claimQueue.add(`${ref.namespace}/${ref.name}`);
      },
    });
    const requeueClaims = () => {
      for (const c of this.claims.lister().list()) this.claimQueue.add(claimKey(c));
    };
    this.classes.addEventHandler({ onAdd: requeueClaims, onUpdate: requeueClaims });
    this.nodes.addEventHandler({ onAdd: requeueClaims });
  }

  /**
   * Starts the informers, and the workers once every cache has synced (in the background:
   * an API server that does not serve PersistentVolumes yet delays only this). Returns at once.
   */
  start(): void {
    const informers = [this.nodes, this.classes, this.volumes, this.claims];
    for (const i of informers) i.start();
    const onError = (what: string) => (err: unknown, key: string, requeues: number) =>
      this.cfg.logger[requeues > 3 ? 'warn' : 'info'](`local-path provisioner: ${what} failed, will retry`, {
        key,
        error: errorMessage(err),
      });
    this.running = (async () => {
      const synced = await Promise.all(informers.map((i) => i.waitForSync()));
      if (!synced.every(Boolean)) return;
      await Promise.all([
        runWorkers(this.claimQueue, 2, (key) => this.syncClaim(key), { onError: onError('provisioning') }),
        runWorkers(this.volumeQueue, 2, (key) => this.syncVolume(key), { onError: onError('deletion') }),
      ]);
    })();
  }

  /** Stops the workers and the informers. Idempotent. */
  async stop(): Promise<void> {
    this.claimQueue.shutDown();
    this.volumeQueue.shutDown();
    await Promise.all([this.claims, this.volumes, this.classes, this.nodes].map((i) => i.stop()));
    await this.running;
  }

  /** This node's hostname label, undefined before the Node is in the cache. */
  private hostname(): string | undefined {
    const node = this.nodes.lister().get(this.cfg.nodeName);
    return node ? nodeHostname(node) : undefined;
  }

  /** Provisions the claim `namespace/name` when it is this node's (see the file comment). */
  async syncClaim(key: string): Promise<void> {
    const [namespace, name] = key.split('/') as [string, string];
    const claim = this.claims.lister().get(namespace, name);
    if (!claim) return;
    const className = claimClassName(claim);
    const storageClass = className ? this.classes.lister().get(className) : undefined;
    if (!shouldProvision(claim, storageClass, this.cfg.nodeName)) return;
    const hostname = this.hostname();
    if (hostname === undefined) throw new Error(`node ${this.cfg.nodeName} is not in the cache yet`);
    const pvName = volumeNameFor(claim);
    if (this.volumes.lister().get(pvName)) return;
    const { recorder } = this.cfg;
    const refusal = provisionRefusal(claim);
    if (refusal) {
      // A spec the provisioner cannot serve: said once per change of the claim, not retried.
      recorder.event(claim, 'Warning', 'ProvisioningFailed', refusal);
      return;
    }
    recorder.event(
      claim,
      'Normal',
      'Provisioning',
      `External provisioner is provisioning volume for claim "${namespace}/${name}"`,
    );
    let path: string;
    try {
      path = createVolumeDir(this.storage, pvName);
    } catch (err) {
      recorder.event(
        claim,
        'Warning',
        'ProvisioningFailed',
        `failed to provision volume with StorageClass "${className}": ${errorMessage(err)}`,
      );
      throw err;
    }
    const pv = provisionedVolume({ claim, storageClass: storageClass!, hostname, path });
    try {
      await this.cfg.client.create(resources.persistentvolumes, pv);
    } catch (err) {
      if (!isAlreadyExists(err)) {
        recorder.event(
          claim,
          'Warning',
          'ProvisioningFailed',
          `failed to provision volume with StorageClass "${className}": ${errorMessage(err)}`,
        );
        throw err;
      }
      // Created by an earlier run whose answer was lost: the same name is the same claim.
    }
    this.cfg.logger.info('local-path provisioner: provisioned volume', {
      claim: key,
      volume: pvName,
      path,
    });
    recorder.event(claim, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${pvName}`);
  }

  /** Removes the directory of a Released Delete volume of this node, then the PV (see the file comment). */
  async syncVolume(name: string): Promise<void> {
    const pv = this.volumes.lister().get(name);
    if (!pv) return;
    if (pv.metadata.annotations?.[ANN_PROVISIONED_BY] !== LOCAL_PATH_PROVISIONER) return;
    const hostname = this.hostname();
    if (hostname === undefined) throw new Error(`node ${this.cfg.nodeName} is not in the cache yet`);
    if (!shouldDelete(pv, hostname)) return;
    const path = pv.spec?.hostPath?.path ?? pv.spec?.local?.path;
    try {
      if (path) await removeVolumeDir(this.storage, path, this.cfg.mounter);
    } catch (err) {
      this.cfg.recorder.event(pv, 'Warning', 'VolumeFailedDelete', errorMessage(err));
      // A path outside this node's storage never becomes one: do not retry that.
      if (err instanceof VolumeDirectoryError && /is not under/.test(err.message)) return;
      throw err;
    }
    try {
      await this.cfg.client.delete(resources.persistentvolumes, undefined, name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    this.cfg.logger.info('local-path provisioner: deleted volume', { volume: name, path });
  }
}
