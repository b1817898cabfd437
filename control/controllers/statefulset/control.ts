/**
 * One sync of one StatefulSet (Kubernetes' stateful_set_control.go, defaultStatefulSetControl
 * UpdateStatefulSet): given the set, its claimed pods and its ControllerRevisions, it
 *
 *  1. finds or makes the update revision (the current template) and the current revision
 *     (status.currentRevision, else the update one); an equal older revision is reused with
 *     a new number (a rollback, `kubectl rollout undo`), a hash collision bumps collisionCount;
 *  2. sorts the pods into `replicas` (ordinals in [start, start+replicas)) and `condemned`
 *     (the rest), counting status (replicas, ready, available, current, updated);
 *  3. (not while the set is being deleted) walks `replicas` in ordinal order: a Failed or
 *     Succeeded pod is deleted and recreated; a missing one is created (at the current or
 *     update revision, per partition); a pod with the wrong identity or storage is fixed.
 *     OrderedReady ("monotonic") stops at the first create, at a terminating pod, and at a
 *     pod not Running+Ready (and available); Parallel goes on;
 *  4. deletes condemned pods from the highest ordinal down: OrderedReady one at a time, and
 *     only when every remaining one is healthy (the first unhealthy one may go); Parallel all;
 *  5. with RollingUpdate (OnDelete stops here), deletes the highest-ordinal pod at or above
 *     the partition that is not at the update revision, waiting for unhealthy pods; with
 *     `maxUnavailable`, up to maxUnavailable minus the unhealthy pods at once.
 *     The controller recreates the deleted pods at the update revision on later syncs;
 *  6. keeps revisionHistoryLimit revisions besides those in use (truncateHistory).
 *
 * It returns the status to write; the caller completes a finished rolling update.
 */
import { isAlreadyExists } from '../../../api/client/errors.js';
import { resources } from '../../../api/client/resource.js';
import type { RestClient } from '../../../api/client/rest.js';
import type { EventRecorder } from '../../../api/client/events.js';
import type { Pod, StatefulSet } from '../../../api/types.js';
import {
  applyRevision,
  equalRevision,
  newRevision,
  nextRevision,
  sortRevisions,
  type ControllerRevision,
} from './history.js';
import type { StatefulPodControl } from './pod-control.js';
import {
  getOrdinal,
  identityMatches,
  isCreated,
  isFinished,
  isHealthy,
  isPending,
  isRunningAndAvailable,
  isRunningAndReady,
  isTerminating,
  maxUnavailableOf,
  newVersionedStatefulSetPod,
  podRevision,
  replicasOf,
  startOrdinal,
  storageMatches,
} from './utils.js';

export type StatefulSetStatus = NonNullable<StatefulSet['status']>;

/** Settings of StatefulSetControl. */
export interface StatefulSetControlOptions {
  client: RestClient;
  podControl: StatefulPodControl;
  recorder: EventRecorder;
  /** ms since the epoch (availability under minReadySeconds). */
  now: () => number;
  /** The sync stops creating pods once this aborts (the controller is stopping). */
  stopping?: AbortSignal;
}

/** The sync of one set; see the file comment. */
export class StatefulSetControl {
  constructor(private readonly opts: StatefulSetControlOptions) {}

  /**
   * Runs steps 1-6 for `set`; resolves with the status to write.
   * @throws the API error of a revision, pod or claim write (the caller retries the key).
   */
  async updateStatefulSet(
    set: StatefulSet,
    pods: Pod[],
    revisions: ControllerRevision[],
  ): Promise<StatefulSetStatus> {
    sortRevisions(revisions);
    const { current, update, collisionCount } = await this.getRevisions(set, revisions);
    const status = await this.sync(set, current, update, collisionCount, pods);
    await this.truncateHistory(set, pods, revisions, current, update);
    return status;
  }

  /** getStatefulSetRevisions. */
  private async getRevisions(
    set: StatefulSet,
    revisions: ControllerRevision[],
  ): Promise<{ current: ControllerRevision; update: ControllerRevision; collisionCount: number }> {
    let collisionCount = set.status?.collisionCount ?? 0;
    let update = newRevision(set, nextRevision(revisions), collisionCount);
    const equal = revisions.filter((r) => equalRevision(r, update));
    const last = revisions[revisions.length - 1];
    if (equal.length > 0 && last && equalRevision(last, equal[equal.length - 1]!)) {
      // The template did not change since the newest revision.
      update = last;
    } else if (equal.length > 0) {
      // Back to an older template: that revision becomes the newest (a rollback).
      const older = equal[equal.length - 1]!;
      update = await this.opts.client.update<ControllerRevision>(resources.controllerrevisions, {
        ...older,
        revision: update.revision,
      });
    } else {
      // CreateControllerRevision: a name taken by a different revision is a hash collision.
      for (;;) {
        try {
          update = await this.opts.client.create<ControllerRevision>(resources.controllerrevisions, update);
          break;
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
          const existing = await this.opts.client.get<ControllerRevision>(
            resources.controllerrevisions,
            set.metadata.namespace,
            update.metadata.name ?? '',
          );
          if (
            equalRevision(existing, update) &&
            existing.metadata.ownerReferences?.some((r) => r.uid === set.metadata.uid)
          ) {
            update = existing;
            break;
          }
          collisionCount++;
          update = newRevision(set, update.revision, collisionCount);
        }
      }
    }
    const current = revisions.find((r) => r.metadata.name === set.status?.currentRevision) ?? update;
    return { current, update, collisionCount };
  }

  private async sync(
    set: StatefulSet,
    currentRevision: ControllerRevision,
    updateRevision: ControllerRevision,
    collisionCount: number,
    pods: Pod[],
  ): Promise<StatefulSetStatus> {
    const { podControl } = this.opts;
    const currentSet = applyRevision(set, currentRevision);
    const updateSet = applyRevision(set, updateRevision);
    const currentName = currentRevision.metadata.name ?? '';
    const updateName = updateRevision.metadata.name ?? '';
    const minReadySeconds = set.spec.minReadySeconds ?? 0;
    const now = this.opts.now();
    const status: StatefulSetStatus = {
      observedGeneration: set.metadata.generation ?? 0,
      replicas: 0,
      readyReplicas: 0,
      currentReplicas: 0,
      updatedReplicas: 0,
      availableReplicas: 0,
      currentRevision: currentName,
      updateRevision: updateName,
      collisionCount,
    };
    const counted = (pod: Pod, delta: 1 | -1) => {
      const rev = podRevision(pod);
      if (rev === currentName) status.currentReplicas! += delta;
      if (rev === updateName) status.updatedReplicas! += delta;
    };

    const start = startOrdinal(set);
    const count = replicasOf(set);
    const replicas: (Pod | undefined)[] = new Array<Pod | undefined>(count).fill(undefined);
    const condemned: Pod[] = [];
    for (const pod of pods) {
      status.replicas++;
      if (isRunningAndReady(pod)) {
        status.readyReplicas!++;
        if (isRunningAndAvailable(pod, minReadySeconds, now)) status.availableReplicas!++;
      }
      if (isCreated(pod) && !isTerminating(pod)) counted(pod, 1);
      const ord = getOrdinal(pod);
      if (ord >= start && ord < start + count) replicas[ord - start] = pod;
      else if (ord >= 0) condemned.push(pod);
    }
    for (let i = 0; i < count; i++) {
      replicas[i] ??= newVersionedStatefulSetPod(currentSet, updateSet, currentName, updateName, start + i);
    }
    const live = replicas as Pod[];
    condemned.sort((a, b) => getOrdinal(a) - getOrdinal(b));
    let firstUnhealthy: Pod | undefined;
    for (const pod of [...live, ...[...condemned].reverse()]) {
      if (!isHealthy(pod)) {
        firstUnhealthy = pod;
        break;
      }
    }
    if (set.metadata.deletionTimestamp) return status;

    const monotonic = set.spec.podManagementPolicy !== 'Parallel';

    for (let i = 0; i < live.length; i++) {
      if (this.opts.stopping?.aborted) return status;
      if (isFinished(live[i]!)) {
        this.opts.recorder.event(
          set,
          'Warning',
          'RecreatingFailedPod',
          `StatefulSet ${set.metadata.namespace}/${set.metadata.name} is recreating failed Pod ${live[i]!.metadata.name}`,
        );
        await podControl.deleteStatefulPod(set, live[i]!);
        counted(live[i]!, -1);
        status.replicas--;
        live[i] = newVersionedStatefulSetPod(currentSet, updateSet, currentName, updateName, start + i);
      }
      const pod = live[i]!;
      if (!isCreated(pod)) {
        await podControl.createStatefulPod(set, pod);
        status.replicas++;
        counted(pod, 1);
        if (monotonic) return status;
        continue;
      }
      if (isPending(pod)) await podControl.createMissingClaims(set, pod);
      if (isTerminating(pod) && monotonic) return status;
      if (!isRunningAndReady(pod) && monotonic) return status;
      if (!isRunningAndAvailable(pod, minReadySeconds, now) && monotonic) return status;
      if (!podControl.claimsMatchRetentionPolicy(updateSet, pod)) {
        await podControl.updateClaimsForRetentionPolicy(updateSet, pod);
      }
      if (identityMatches(set, pod) && storageMatches(set, pod)) continue;
      await podControl.updateStatefulPod(updateSet, pod);
    }

    for (let t = condemned.length - 1; t >= 0; t--) {
      const pod = condemned[t]!;
      // The claims go with a condemned pod when whenScaled is Delete: own them by the pod first.
      if (!podControl.claimsMatchRetentionPolicy(updateSet, pod)) {
        await podControl.updateClaimsForRetentionPolicy(updateSet, pod);
      }
      if (isTerminating(pod)) {
        if (monotonic) return status;
        continue;
      }
      if (!isRunningAndReady(pod) && monotonic && pod !== firstUnhealthy) return status;
      if (!isRunningAndAvailable(pod, minReadySeconds, now) && monotonic && pod !== firstUnhealthy)
        return status;
      await podControl.deleteStatefulPod(set, pod);
      counted(pod, -1);
      if (monotonic) return status;
    }

    if (set.spec.updateStrategy?.type === 'OnDelete') return status;

    const partition = set.spec.updateStrategy?.rollingUpdate?.partition ?? 0;
    if (set.spec.updateStrategy?.rollingUpdate?.maxUnavailable !== undefined) {
      // MaxUnavailableStatefulSet: several at once, never more than maxUnavailable unhealthy.
      const maxUnavailable = maxUnavailableOf(set, count);
      const unavailable = live.filter((p) => !isHealthy(p)).length;
      if (unavailable >= maxUnavailable) return status;
      let deleted = 0;
      for (let t = live.length - 1; t >= partition && deleted < maxUnavailable - unavailable; t--) {
        const pod = live[t]!;
        if (podRevision(pod) !== updateName && !isTerminating(pod)) {
          await podControl.deleteStatefulPod(set, pod);
          deleted++;
          if (podRevision(pod) === currentName) status.currentReplicas!--;
        }
      }
      return status;
    }
    for (let t = live.length - 1; t >= partition; t--) {
      const pod = live[t]!;
      if (podRevision(pod) !== updateName && !isTerminating(pod)) {
        await podControl.deleteStatefulPod(set, pod);
        if (podRevision(pod) === currentName) status.currentReplicas!--;
        return status;
      }
      if (!isHealthy(pod)) return status;
    }
    return status;
  }

  /**
   * truncateHistory: revisions no pod is at and that are neither current nor update are
   * history; the oldest beyond `revisionHistoryLimit` (default 10) are deleted.
   */
  private async truncateHistory(
    set: StatefulSet,
    pods: readonly Pod[],
    revisions: readonly ControllerRevision[],
    current: ControllerRevision,
    update: ControllerRevision,
  ): Promise<void> {
    const live = new Set<string>([current.metadata.name ?? '', update.metadata.name ?? '']);
    for (const p of pods) live.add(podRevision(p));
    const history = revisions.filter((r) => !live.has(r.metadata.name ?? ''));
    const limit = set.spec.revisionHistoryLimit ?? 10;
    for (const r of history.slice(0, Math.max(0, history.length - limit))) {
      await this.opts.client
        .delete(resources.controllerrevisions, r.metadata.namespace, r.metadata.name ?? '')
        .catch(() => {});
    }
  }
}
