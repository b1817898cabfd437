/**
 * StatefulPodControl: how the StatefulSet controller creates, updates and deletes its pods
 * and their claims, with the events Kubernetes records (stateful_pod_control.go):
 * `SuccessfulCreate` "create Pod web-0 in StatefulSet web successful", "create Claim
 * www-web-0 Pod web-0 in StatefulSet web success", `SuccessfulDelete` "delete Pod web-1 in
 * StatefulSet web successful", and the `Failed*` forms "... failed error: ERR".
 */
import type { EventRecorder } from '../../../api/client/events.js';
import { isAlreadyExists, isNotFound } from '../../../api/client/errors.js';
import type { Lister } from '../../../api/client/lister.js';
import { resources } from '../../../api/client/resource.js';
import type { RestClient } from '../../../api/client/rest.js';
import { errorMessage } from '../../../api/errors.js';
import type { PersistentVolumeClaim, Pod, StatefulSet } from '../../../api/types.js';
import {
  claimOwnerRefs,
  claimsOf,
  identityMatches,
  storageMatches,
  updateIdentity,
  updateStorage,
} from './utils.js';

/** What the StatefulSet control logic does to pods and claims (an interface, so tests can fail one). */
export interface StatefulPodControl {
  /**
   * Creates the pod's missing claims, then the pod, then sets the claims' ownerReferences
   * for the retention policy (CreateStatefulPod).
   * @throws the API error of a claim or pod create (AlreadyExists included: the cache is behind).
   */
  createStatefulPod(set: StatefulSet, pod: Pod): Promise<void>;
  /** Creates claims the pod lacks (a Pending pod's, createMissingPersistentVolumeClaims). @throws the API error. */
  createMissingClaims(set: StatefulSet, pod: Pod): Promise<void>;
  /** Fixes a pod's identity and storage (UpdateStatefulPod), creating its missing claims. @throws the API error. */
  updateStatefulPod(set: StatefulSet, pod: Pod): Promise<void>;
  /** Deletes a pod with its default grace period (DeleteStatefulPod). @throws the API error but NotFound. */
  deleteStatefulPod(set: StatefulSet, pod: Pod): Promise<void>;
  /** Whether the pod's claims carry the ownerReferences the retention policy asks for (ClaimsMatchRetentionPolicy). */
  claimsMatchRetentionPolicy(set: StatefulSet, pod: Pod): boolean;
  /** Writes those ownerReferences (UpdatePodClaimForRetentionPolicy). @throws the API error. */
  updateClaimsForRetentionPolicy(set: StatefulSet, pod: Pod): Promise<void>;
}

/** Settings of RealStatefulPodControl. */
export interface RealStatefulPodControlOptions {
  client: RestClient;
  recorder: EventRecorder;
  /** The claims cache (an informer's lister). */
  claims: Lister<PersistentVolumeClaim>;
}

/** StatefulPodControl through the API server. */
export class RealStatefulPodControl implements StatefulPodControl {
  constructor(private readonly opts: RealStatefulPodControlOptions) {}

  private record(set: StatefulSet, verb: string, what: string, err?: unknown, claimPod?: string): void {
    const reason = `${err === undefined ? 'Successful' : 'Failed'}${verb === 'create' ? 'Create' : verb === 'update' ? 'Update' : 'Delete'}`;
    const obj = claimPod === undefined ? `Pod ${what}` : `Claim ${what} Pod ${claimPod}`;
    const message =
      err === undefined
        ? `${verb} ${obj} in StatefulSet ${set.metadata.name ?? ''} ${claimPod === undefined ? 'successful' : 'success'}`
        : `${verb} ${obj} in StatefulSet ${set.metadata.name ?? ''} failed error: ${errorMessage(err)}`;
    this.opts.recorder.event(set, err === undefined ? 'Normal' : 'Warning', reason, message);
  }

  async createMissingClaims(set: StatefulSet, pod: Pod): Promise<void> {
    const errs: unknown[] = [];
    for (const claim of claimsOf(set, pod).values()) {
      const cached = this.opts.claims.get(claim.metadata.namespace ?? '', claim.metadata.name ?? '');
      if (cached) {
        if (cached.metadata.deletionTimestamp)
          errs.push(new Error(`pvc ${claim.metadata.name} is being deleted`));
        continue;
      }
      try {
        await this.opts.client.create(resources.persistentvolumeclaims, claim);
        this.record(set, 'create', claim.metadata.name ?? '', undefined, pod.metadata.name ?? '');
      } catch (err) {
        if (isAlreadyExists(err)) continue; // the cache is behind
        this.record(set, 'create', claim.metadata.name ?? '', err, pod.metadata.name ?? '');
        errs.push(err);
      }
    }
    if (errs.length > 0) throw errs[0];
  }

  async createStatefulPod(set: StatefulSet, pod: Pod): Promise<void> {
    await this.createMissingClaims(set, pod);
    try {
      await this.opts.client.create(resources.pods, pod, { namespace: set.metadata.namespace });
    } catch (err) {
      if (!isAlreadyExists(err)) this.record(set, 'create', pod.metadata.name ?? '', err);
      throw err;
    }
    this.record(set, 'create', pod.metadata.name ?? '');
    // The claims' owners, as far as they can be set now; the next sync finishes the job.
    await this.updateClaimsForRetentionPolicy(set, pod).catch(() => {});
  }

  async updateStatefulPod(set: StatefulSet, pod: Pod): Promise<void> {
    const copy = structuredClone(pod);
    if (!identityMatches(set, copy)) updateIdentity(set, copy);
    if (!storageMatches(set, copy)) {
      updateStorage(set, copy);
      await this.createMissingClaims(set, copy);
    }
    try {
      await this.opts.client.update(resources.pods, copy);
    } catch (err) {
      this.record(set, 'update', pod.metadata.name ?? '', err);
      throw err;
    }
    this.record(set, 'update', pod.metadata.name ?? '');
  }

  async deleteStatefulPod(set: StatefulSet, pod: Pod): Promise<void> {
    try {
      await this.opts.client.delete(resources.pods, pod.metadata.namespace, pod.metadata.name ?? '');
    } catch (err) {
      if (isNotFound(err)) return;
      this.record(set, 'delete', pod.metadata.name ?? '', err);
      throw err;
    }
    this.record(set, 'delete', pod.metadata.name ?? '');
  }

  claimsMatchRetentionPolicy(set: StatefulSet, pod: Pod): boolean {
    for (const claim of claimsOf(set, pod).values()) {
      const cached = this.opts.claims.get(claim.metadata.namespace ?? '', claim.metadata.name ?? '');
      if (cached && claimOwnerRefs(cached, set, pod).changed) return false;
    }
    return true;
  }

  async updateClaimsForRetentionPolicy(set: StatefulSet, pod: Pod): Promise<void> {
    for (const claim of claimsOf(set, pod).values()) {
      const ns = claim.metadata.namespace ?? '';
      const name = claim.metadata.name ?? '';
      let cur: PersistentVolumeClaim;
      try {
        cur = await this.opts.client.get<PersistentVolumeClaim>(resources.persistentvolumeclaims, ns, name);
      } catch (err) {
        if (isNotFound(err)) continue;
        throw err;
      }
      const { refs, changed } = claimOwnerRefs(cur, set, pod);
      if (!changed) continue;
      cur.metadata.ownerReferences = refs;
      await this.opts.client.update(resources.persistentvolumeclaims, cur);
    }
  }
}
