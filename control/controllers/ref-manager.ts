/**
 * ControllerRefManager: how a controller decides which objects are its own (Kubernetes'
 * pkg/controller BaseControllerRefManager.ClaimObject with PodControllerRefManager and
 * ReplicaSetControllerRefManager, here one class generic over the dependents' resource).
 *
 * Claiming a list of candidate dependents (from the informer cache):
 * - owned by another controller (a `controller: true` ownerReference with another uid):
 *   ignored;
 * - owned by this owner and matching the selector: claimed;
 * - owned by this owner but no longer matching: released (a patch removing the
 *   ownerReference), unless the owner is being deleted;
 * - an orphan matching the selector, in the owner's namespace, not being deleted, while
 *   the owner is not being deleted: adopted (a patch adding the controllerRef), after one
 *   fresh GET of the owner confirms it still exists with the same uid and no
 *   deletionTimestamp (RecheckDeletionTimestamp: the cache may not know yet that the
 *   owner is going, and adopting then would make the garbage collector delete the pod).
 *
 * The patches are strategic merge patches keyed by ownerReference uid, carrying the
 * dependent's own `metadata.uid`: the server refuses to change a uid, so a patch meant for
 * a dependent that was deleted and recreated under the same name fails instead of
 * touching the newcomer.
 */
import { ApiStatusError, isNotFound } from '../../api/client/errors.js';
import type { Lister } from '../../api/client/lister.js';
import type { ResourceRef } from '../../api/client/resource.js';
import type { RestClient } from '../../api/client/rest.js';
import type { LabelSelector } from '../../api/meta/labels.js';
import type { KubeObject, OwnerReference } from '../../api/object.js';
import { controllerOf } from '../../api/podutil.js';
import { errorMessage } from '../../api/errors.js';

/** The owner's type as written into ownerReferences (the controller's GroupVersionKind). */
export interface OwnerKind {
  /** e.g. `apps/v1`. */
  apiVersion: string;
  /** e.g. `ReplicaSet`. */
  kind: string;
}

/** Name of the index of dependents by controller (controllerIndexFunc). */
export const CONTROLLER_INDEX = 'controller-uid';

/**
 * Indexes a dependent under `namespace/<its controller's uid>`, an orphan under
 * `namespace/`: claimCandidates() then finds what a claim can touch without scanning the
 * namespace. (Upstream lists the whole namespace on every sync; the claim ignores what
 * another controller owns, so the result is the same.)
 */
export function controllerIndexFunc(obj: KubeObject): readonly string[] {
  return [`${obj.metadata?.namespace ?? ''}/${controllerOf(obj)?.uid ?? ''}`];
}

/**
 * What ControllerRefManager.claim() can claim for `owner`, from a lister whose informer
 * has CONTROLLER_INDEX: the owner's own dependents and the orphans of its namespace.
 */
export function claimCandidates<T extends KubeObject>(lister: Lister<T>, owner: KubeObject): T[] {
  const ns = owner.metadata?.namespace ?? '';
  return [
    ...lister.byIndex(CONTROLLER_INDEX, `${ns}/${owner.metadata?.uid ?? ''}`),
    ...lister.byIndex(CONTROLLER_INDEX, `${ns}/`),
  ];
}

/**
 * The owner a controllerRef names, when `lister` caches an object of `kind.kind` under that
 * name in `namespace` with the ref's uid; else undefined (no ref, another kind, or a new
 * object that took the name). Upstream's resolveControllerRef, written once per workload
 * controller there (replicaset, deployment, daemon, statefulset).
 */
export function resolveControllerRef<T extends KubeObject>(
  lister: Lister<T>,
  kind: OwnerKind,
  namespace: string | undefined,
  ref: OwnerReference | undefined,
): T | undefined {
  if (!ref || ref.kind !== kind.kind) return undefined;
  const owner = lister.get(namespace, ref.name);
  return owner?.metadata?.uid === ref.uid ? owner : undefined;
}

/**
 * The owners cached in `dependent`'s namespace whose selector (`selectorOf`: undefined
 * when missing or invalid) is non-empty and matches its labels: who might adopt an orphan
 * (upstream's getPodDaemonSets, getPodStatefulSets, getDeploymentsForReplicaSet).
 */
export function ownersSelecting<T extends KubeObject>(
  lister: Lister<T>,
  dependent: KubeObject,
  selectorOf: (owner: T) => LabelSelector | undefined,
): T[] {
  return lister
    .namespace(dependent.metadata?.namespace ?? '')
    .list()
    .filter((owner) => {
      const sel = selectorOf(owner);
      return sel !== undefined && !sel.empty && sel.matches(dependent.metadata?.labels);
    });
}

/** Settings of a ControllerRefManager. */
export interface ControllerRefManagerOptions {
  client: RestClient;
  /** The dependents' resource (`resources.pods` for a ReplicaSet, `resources.replicasets` for a Deployment). */
  resource: ResourceRef;
  /** The owner as cached: its name, namespace, uid and deletionTimestamp are read. */
  owner: KubeObject;
  ownerKind: OwnerKind;
  /** Which dependents the owner wants (from its spec.selector). */
  selector: LabelSelector;
  /**
   * Rejects when the owner may not adopt; called at most once per manager, just before the
   * first adoption. Typically `recheckDeletionTimestamp(freshOwnerGetter(...))`.
   */
  canAdopt: () => Promise<void>;
}

/**
 * Returns a function that GETs the owner from the API server (not the cache) and resolves
 * with it when it still has `owner`'s uid.
 * @throws (from the returned function) the API error of the GET, or Error
 *   `original KIND NS/NAME is gone: got uid X, wanted Y` when a new object took its name.
 */
export function freshOwnerGetter(
  client: RestClient,
  ownerResource: ResourceRef,
  owner: KubeObject,
): () => Promise<KubeObject> {
  const namespace = owner.metadata?.namespace;
  const name = owner.metadata?.name ?? '';
  const uid = owner.metadata?.uid;
  return async () => {
    const fresh = await client.get(ownerResource, namespace, name);
    if (fresh.metadata?.uid !== uid) {
      throw new Error(
        `original ${ownerResource.kind} ${namespace}/${name} is gone: got uid ${fresh.metadata?.uid}, wanted ${uid}`,
      );
    }
    return fresh;
  };
}

/**
 * Wraps a fresh read of the owner into a canAdopt check (RecheckDeletionTimestamp): rejects
 * when the read fails (`can't recheck DeletionTimestamp: ...`) or the owner has a
 * deletionTimestamp (`NS/NAME has just been deleted at TIME`).
 */
export function recheckDeletionTimestamp(getObject: () => Promise<KubeObject>): () => Promise<void> {
  return async () => {
    let obj: KubeObject;
    try {
      obj = await getObject();
    } catch (err) {
      throw new Error(`can't recheck DeletionTimestamp: ${errorMessage(err)}`, {
        cause: err,
      });
    }
    const meta = obj.metadata;
    if (meta?.deletionTimestamp) {
      throw new Error(`${meta.namespace}/${meta.name} has just been deleted at ${meta.deletionTimestamp}`);
    }
  };
}

/** A strategic merge patch making `owner` the controller of the dependent `dependentUid` (ownerRefControllerPatch). */
export function adoptPatch(owner: KubeObject, ownerKind: OwnerKind, dependentUid: string): unknown {
  const ref: OwnerReference = {
    apiVersion: ownerKind.apiVersion,
    kind: ownerKind.kind,
    name: owner.metadata?.name ?? '',
    uid: owner.metadata?.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
  return { metadata: { ownerReferences: [ref], uid: dependentUid } };
}

/** A strategic merge patch removing the ownerReference with `ownerUid` from the dependent `dependentUid` (GenerateDeleteOwnerRefStrategicMergeBytes). */
export function releasePatch(ownerUid: string, dependentUid: string): unknown {
  return { metadata: { ownerReferences: [{ $patch: 'delete', uid: ownerUid }], uid: dependentUid } };
}

/** Claims, adopts and releases the dependents of one owner (see the file comment). */
export class ControllerRefManager<T extends KubeObject> {
  private readonly opts: ControllerRefManagerOptions;
  private canAdoptResult: Promise<void> | undefined;

  constructor(opts: ControllerRefManagerOptions) {
    this.opts = opts;
  }

  /**
   * The candidates that belong to the owner after adopting and releasing as the file
   * comment says. `filters` narrow what "matches" beyond the selector (all must pass).
   * Adopted objects are returned as patched by the server.
   * @throws AggregateError of every adopt/release failure (NotFound dependents are skipped
   *   silently); the claim should then be retried as a whole.
   */
  async claim(candidates: readonly T[], filters: ReadonlyArray<(obj: T) => boolean> = []): Promise<T[]> {
    const match = (obj: T): boolean =>
      this.opts.selector.matches(obj.metadata?.labels) && filters.every((f) => f(obj));
    const claimed: T[] = [];
    const errors: unknown[] = [];
    for (const obj of candidates) {
      // Only a release or an adoption waits for the API; the rest (most of a namespace:
      // another controller's, or already ours) is decided without a turn of the event loop.
      const step = this.stepFor(obj, match);
      if (step === 'claimed') claimed.push(obj);
      if (step !== 'release' && step !== 'adopt') continue;
      try {
        if (step === 'release') await this.release(obj);
        else claimed.push(await this.adopt(obj));
      } catch (err) {
        // A dependent deleted meanwhile is skipped.
        if (!isNotFound(err)) errors.push(err);
      }
    }
    if (errors.length > 0) {
      const first = errors[0] instanceof Error ? errors[0].message : String(errors[0]);
      throw new AggregateError(
        errors,
        errors.length === 1 ? first : `${errors.length} errors; first: ${first}`,
      );
    }
    return claimed;
  }

  /** What one candidate needs (ClaimObject's decision): it is ours, not ours, or to be released or adopted. */
  private stepFor(obj: T, match: (obj: T) => boolean): 'claimed' | 'ignored' | 'release' | 'adopt' {
    const owner = this.opts.owner;
    const ownerDeleting = Boolean(owner.metadata?.deletionTimestamp);
    const ref = controllerOf(obj);
    if (ref) {
      if (ref.uid !== owner.metadata?.uid) return 'ignored';
      if (match(obj)) return 'claimed';
      // Ours but no longer selected: let it go, unless we are going anyway (the garbage
      // collector will deal with it).
      return ownerDeleting ? 'ignored' : 'release';
    }
    // An orphan.
    if (ownerDeleting || !match(obj)) return 'ignored';
    if (obj.metadata?.deletionTimestamp) return 'ignored';
    const ns = owner.metadata?.namespace;
    if (ns && ns !== obj.metadata?.namespace) return 'ignored';
    return 'adopt';
  }

  /**
   * Makes the owner the controller of `obj` (AdoptPod / AdoptReplicaSet), after the
   * once-per-manager canAdopt check. Resolves with the patched object.
   * @throws Error `can't adopt KIND NS/NAME (UID): REASON` when canAdopt rejects; the API error of the patch.
   */
  async adopt(obj: T): Promise<T> {
    const { client, resource, owner, ownerKind } = this.opts;
    const meta = obj.metadata ?? {};
    try {
      await (this.canAdoptResult ??= this.opts.canAdopt());
    } catch (err) {
      throw new Error(
        `can't adopt ${resource.kind} ${meta.namespace}/${meta.name} (${meta.uid}): ${errorMessage(err)}`,
        { cause: err },
      );
    }
    return client.patch<T>(
      resource,
      meta.namespace,
      meta.name ?? '',
      'strategic',
      adoptPatch(owner, ownerKind, meta.uid ?? ''),
    );
  }

  /**
   * Removes the owner's ownerReference from `obj` (ReleasePod / ReleaseReplicaSet). A
   * dependent that is gone (NotFound) or was replaced or already released (Invalid) counts
   * as released.
   * @throws the API error of the patch otherwise.
   */
  async release(obj: T): Promise<void> {
    const { client, resource, owner } = this.opts;
    const meta = obj.metadata ?? {};
    try {
      await client.patch(
        resource,
        meta.namespace,
        meta.name ?? '',
        'strategic',
        releasePatch(owner.metadata?.uid ?? '', meta.uid ?? ''),
      );
    } catch (err) {
      if (isNotFound(err)) return;
      if (err instanceof ApiStatusError && err.reason === 'Invalid') return;
      throw err;
    }
  }
}
