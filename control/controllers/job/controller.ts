/**
 * The Job controller (Kubernetes' pkg/controller/job): runs pods until a Job has its
 * completions, or fails it.
 *
 * Informer handlers only map events to Job keys (a pod's to its controller's, through its
 * controllerRef) and feed the expectations (a pod of ours appearing is an observed creation;
 * getting a deletionTimestamp or disappearing, an observed deletion).
 *
 * Counting is exact across restarts: every pod is created with the finalizer
 * `batch.kubernetes.io/job-tracking`. A finished pod is counted in three steps
 * (trackJobStatusAndRemoveFinalizers), each surviving a crash between them:
 *   1. its uid is written to `status.uncountedTerminatedPods` (Indexed Jobs: a succeeded
 *      pod's index to `status.completedIndexes` instead; the index is what is counted);
 *   2. its finalizer is removed (the pod can now go);
 *   3. uids whose pod has no finalizer any more (or is gone) move from uncounted to
 *      `status.succeeded` / `status.failed`.
 * A pod with the finalizer is never counted yet; one without it was counted or is in the
 * uncounted lists; so no pod counts twice and none is lost.
 *
 * reconcile(key), one worker per key at a time:
 *  1. the Job from the cache; gone: its pods' finalizers are removed, done. Finished
 *     (Complete or Failed): finalizers removed, nothing else.
 *  2. pods claimed through ControllerRefManager;
 *  3. newly finished pods: podFailurePolicy (FailJob → FailureTarget, Ignore → not counted,
 *     Count) and the three counting steps above;
 *  4. failure: failed > backoffLimit (with restartPolicy OnFailure, container restarts
 *     count too) → BackoffLimitExceeded; activeDeadlineSeconds passed → DeadlineExceeded;
 *     a FailJob rule → PodFailurePolicy. The FailureTarget condition comes first, active
 *     pods are deleted, and Failed is added once none is left. Success (completions
 *     reached, or for a work queue any success with none active): SuccessCriteriaMet,
 *     the rest deleted, then Complete with completionTime.
 *  5. otherwise, with expectations satisfied: suspend deletes active pods (Suspended
 *     condition); else manageJob creates pods up to min(parallelism, remaining), the
 *     missing indexes first for Indexed Jobs, after the failure backoff (10 s doubling to
 *     6 min from the last failure, per consecutive failure since the last success);
 *  6. status through the status subresource; a requeue at the backoff's end and at the
 *     active deadline.
 *
 * Why one file of about 800 lines: it is one class, upstream's Job controller, whose reconcile
 * is syncJob with its three-step pod tracking, and the steps share the Job's state within one
 * sync; the pure parts (podFailurePolicy in failure-policy.ts, completion indexes in
 * indexes.ts) are already apart.
 */
import { isConflict, isNotFound } from '../../../api/client/errors.js';
import { deletedObject } from '../../../api/client/informer.js';
import type { DeletedFinalStateUnknown } from '../../../api/client/informer.js';
import type { EventRecorder } from '../../../api/client/events.js';
import type { Lister } from '../../../api/client/lister.js';
import { resources } from '../../../api/client/resource.js';
import { metaNamespaceKey, splitMetaNamespaceKey } from '../../../api/client/store.js';
import type { Clock } from '../../../api/clock.js';
import { errorMessage } from '../../../api/errors.js';
import type { Job, JobStatus } from '../../../api/batch.js';
import { labelSelectorFromObject, type LabelSelector } from '../../../api/meta/labels.js';
import type { OwnerReference } from '../../../api/object.js';
import { rfc3339 } from '../../../api/object.js';
import { controllerOf, isPodReady } from '../../../api/podutil.js';
import type { Condition, Pod, PodTemplateSpec } from '../../../api/types.js';
import { RateLimitingQueue } from '../../../api/workqueue/rateLimited.js';
import type { Controller, ControllerContext, Logger } from '../context.js';
import { UIDTrackingControllerExpectations } from '../expectations.js';
import {
  FAILED_CREATE_POD_REASON,
  getPodFromTemplate,
  hasStatusCause,
  NAMESPACE_TERMINATING_CAUSE,
  RealPodControl,
  SUCCESSFUL_CREATE_POD_REASON,
} from '../podcontrol.js';
import type { PodControl } from '../podcontrol.js';
import {
  ControllerRefManager,
  freshOwnerGetter,
  recheckDeletionTimestamp,
  type OwnerKind,
} from '../ref-manager.js';
import { runQueue } from '../run.js';
import { matchPodFailurePolicy } from './failure-policy.js';
import {
  completionIndex,
  formatIndexes,
  JOB_COMPLETION_INDEX_ANNOTATION,
  JOB_COMPLETION_INDEX_ENV,
  parseIndexes,
} from './indexes.js';

/** The finalizer on every pod of a Job until it is counted. */
export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';
/** The component name of its events. */
export const JOB_CONTROLLER_COMPONENT = 'job-controller';
/** The kind written into its pods' controllerRef. */
export const JOB_KIND: OwnerKind = { apiVersion: 'batch/v1', kind: 'Job' };
/** First pod-failure backoff (DefaultJobPodFailureBackOff), ms. */
export const JOB_BACKOFF_BASE_MS = 10_000;
/** Longest pod-failure backoff (MaxJobPodFailureBackOff), ms. */
export const JOB_BACKOFF_MAX_MS = 360_000;
/** Most pods created or deleted in one sync (MaxPodCreateDeletePerSync). */
export const MAX_POD_CREATE_DELETE_PER_SYNC = 500;

/** Options beyond the shared context (tests). */
export interface JobControllerOptions {
  podControl?: PodControl;
}

/** The backoff record of one Job (backoffRecord): consecutive failures since the last success. */
interface BackoffRecord {
  failuresAfterLastSuccess: number;
  lastFailureTime: number;
}

function podKey(pod: Pod): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
}

function hasFinalizer(pod: Pod): boolean {
  return (pod.metadata.finalizers ?? []).includes(JOB_TRACKING_FINALIZER);
}

/** The Job's condition of `type` when its status is True. */
function trueCondition(job: Job, type: string): Condition | undefined {
  return (job.status?.conditions ?? []).find((c) => c.type === type && c.status === 'True');
}

/** Finished: Complete or Failed is True (IsJobFinished). */
export function isJobFinished(job: Job): boolean {
  return trueCondition(job, 'Complete') !== undefined || trueCondition(job, 'Failed') !== undefined;
}

/** A pod that failed for counting purposes: phase Failed, or being deleted before it succeeded (orphan). */
function isPodFailed(pod: Pod, jobDeleting: boolean): boolean {
  if (pod.status?.phase === 'Failed') return true;
  if (pod.status?.phase === 'Succeeded') return false;
  return pod.metadata.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null
    ? true
    : jobDeleting;
}

function isActive(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !pod.metadata.deletionTimestamp;
}

function isTerminating(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !!pod.metadata.deletionTimestamp;
}

/** The time a pod finished (its Ready/containers' finishedAt, else now): when the backoff starts. */
function finishTime(pod: Pod, now: number): number {
  let t = 0;
  for (const cs of (pod.status?.containerStatuses ?? []) as {
    state?: { terminated?: { finishedAt?: string } };
  }[]) {
    const f = Date.parse(cs.state?.terminated?.finishedAt ?? '');
    if (!Number.isNaN(f) && f > t) t = f;
  }
  return t > 0 ? t : now;
}

/** The Job controller; see the file comment. */
export class JobController implements Controller {
  readonly name = 'job';
  readonly expectations: UIDTrackingControllerExpectations;
  private readonly ctx: ControllerContext;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly queue: RateLimitingQueue<string>;
  private readonly jobLister: Lister<Job>;
  private readonly podLister: Lister<Pod>;
  private readonly podControl: PodControl;
  private readonly recorder: EventRecorder;
  private readonly backoff = new Map<string, BackoffRecord>();
  /** Pods whose finalizer removal we sent and have not seen done (finalizerExpectations). */
  private readonly finalizersRemoving = new Set<string>();
  private stopping: AbortSignal | undefined;

  constructor(ctx: ControllerContext, opts: JobControllerOptions = {}) {
    this.ctx = ctx;
    this.logger = ctx.logger;
    this.clock = ctx.clock;
    this.recorder = ctx.recorder(JOB_CONTROLLER_COMPONENT);
    this.expectations = new UIDTrackingControllerExpectations({ clock: ctx.clock });
    this.queue = new RateLimitingQueue<string>({ clock: ctx.clock });
    this.podControl = opts.podControl ?? new RealPodControl({ client: ctx.client, recorder: this.recorder });
    const jobInformer = ctx.informers.informerFor<Job>(resources.jobs);
    const podInformer = ctx.informers.informerFor<Pod>(resources.pods);
    this.jobLister = jobInformer.lister();
    this.podLister = podInformer.lister();
    jobInformer.addEventHandler({
      onAdd: (job) => this.queue.add(metaNamespaceKey(job)),
      onUpdate: (old, cur) => {
        if (old.metadata.uid !== cur.metadata.uid) this.deleteJob(old);
        this.queue.add(metaNamespaceKey(cur));
      },
      onDelete: (obj) => this.deleteJob(obj),
    });
    podInformer.addEventHandler({
      onAdd: (pod) => (pod.metadata.deletionTimestamp ? this.podGone(pod) : this.podAdded(pod)),
      onUpdate: (old, cur) => {
        if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
        if (cur.metadata.deletionTimestamp) this.podGone(cur);
        else this.enqueueOwner(cur);
        if (!hasFinalizer(cur)) this.finalizersRemoving.delete(cur.metadata.uid ?? '');
      },
      onDelete: (obj) => {
        const pod = deletedObject(obj);
        this.finalizersRemoving.delete(pod.metadata.uid ?? '');
        this.podGone(pod);
      },
    });
  }

  run(signal: AbortSignal): Promise<void> {
    this.stopping = signal;
    return runQueue({
      name: this.name,
      queue: this.queue,
      // --concurrent-job-syncs' default.
      workers: 5,
      reconcile: (key) => this.reconcile(key),
      signal,
      logger: this.logger,
    });
  }

  // ---- event handlers ----

  private deleteJob(obj: Job | DeletedFinalStateUnknown<Job>): void {
    const key = metaNamespaceKey(deletedObject(obj));
    this.expectations.deleteExpectations(key);
    this.backoff.delete(key);
    this.queue.add(key);
  }

  private ownerKey(pod: Pod): string | undefined {
    const ref = controllerOf(pod);
    if (!ref || ref.kind !== JOB_KIND.kind || ref.apiVersion !== JOB_KIND.apiVersion) return undefined;
    return `${pod.metadata.namespace ?? ''}/${ref.name}`;
  }

  private enqueueOwner(pod: Pod): void {
    const key = this.ownerKey(pod);
    if (key) this.queue.add(key);
  }

  private podAdded(pod: Pod): void {
    const key = this.ownerKey(pod);
    if (!key) return;
    this.expectations.creationObserved(key);
    this.queue.add(key);
  }

  private podGone(pod: Pod): void {
    const key = this.ownerKey(pod);
    if (!key) return;
    this.expectations.deletionObserved(key, podKey(pod));
    this.queue.add(key);
  }

  // ---- reconcile ----

  /**
   * Syncs one Job (syncJob); see the file comment. Public for tests.
   * @throws when an API write failed (the key is retried with backoff).
   */
  async reconcile(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const job = this.jobLister.get(namespace, name);
    if (!job) {
      this.expectations.deleteExpectations(key);
      this.backoff.delete(key);
      // Orphans keep their finalizer until someone removes it: that is us.
      const orphans = this.podLister
        .namespace(namespace)
        .list()
        .filter((p) => hasFinalizer(p) && this.ownerKey(p) === key);
      await this.removeFinalizers(orphans);
      return;
    }
    let selector: LabelSelector;
    try {
      selector = labelSelectorFromObject(job.spec.selector ?? null);
    } catch (err) {
      this.logger.warn('job: invalid selector', { key, error: String(err) });
      return;
    }
    const all = this.podLister.namespace(namespace).list();
    const pods = await this.claimPods(job, selector, all);
    if (isJobFinished(job)) {
      await this.removeFinalizers(pods.filter(hasFinalizer));
      return;
    }
    const satisfied = this.expectations.satisfiedExpectations(key);
    await new JobSync(this, key, job, pods, satisfied).run();
  }

  private claimPods(job: Job, selector: LabelSelector, pods: Pod[]): Promise<Pod[]> {
    const manager = new ControllerRefManager<Pod>({
      client: this.ctx.client,
      resource: resources.pods,
      owner: job,
      ownerKind: JOB_KIND,
      selector,
      canAdopt: recheckDeletionTimestamp(freshOwnerGetter(this.ctx.client, resources.jobs, job)),
    });
    return manager.claim(pods);
  }

  /** Removes the tracking finalizer from `pods` (a JSON patch of the list without it). @throws the first failure. */
  async removeFinalizers(pods: Pod[]): Promise<void> {
    const results = await Promise.allSettled(
      pods.map(async (pod) => {
        const uid = pod.metadata.uid ?? '';
        if (this.finalizersRemoving.has(uid)) return;
        this.finalizersRemoving.add(uid);
        try {
          // removeTrackingFinalizerPatch: a strategic merge patch that takes out only ours.
          await this.ctx.client.patch(
            resources.pods,
            pod.metadata.namespace,
            pod.metadata.name!,
            'strategic',
            {
              metadata: { [`$deleteFromPrimitiveList/finalizers`]: [JOB_TRACKING_FINALIZER] },
            },
          );
        } catch (err) {
          this.finalizersRemoving.delete(uid);
          if (!isNotFound(err)) throw err;
        }
      }),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  // ---- what JobSync uses ----

  /** @internal */
  get internals() {
    return {
      ctx: this.ctx,
      clock: this.clock,
      queue: this.queue,
      recorder: this.recorder,
      podControl: this.podControl,
      expectations: this.expectations,
      backoff: this.backoff,
      finalizersRemoving: this.finalizersRemoving,
      stopping: () => this.stopping?.aborted === true,
    };
  }
}

/** One pass of syncJob over one Job; holds the pass's view of its pods. */
class JobSync {
  private readonly c: JobController['internals'];
  private readonly now: number;
  private readonly status: JobStatus;
  private readonly completions: number | undefined;
  private readonly indexed: boolean;

  constructor(
    private readonly controller: JobController,
    private readonly key: string,
    private readonly job: Job,
    private readonly pods: Pod[],
    private readonly satisfied: boolean,
  ) {
    this.c = controller.internals;
    this.now = this.c.clock.now();
    this.status = structuredClone(job.status ?? {});
    this.completions = job.spec.completions ?? undefined;
    this.indexed = job.spec.completionMode === 'Indexed';
  }

  private get ns(): string {
    return this.job.metadata.namespace ?? '';
  }

  async run(): Promise<void> {
    const { job, status } = this;
    const spec = job.spec;
    const suspended = spec.suspend === true;
    const conditions = status.conditions ?? (status.conditions = []);
    if (!status.startTime && !suspended) status.startTime = rfc3339(new Date(this.now));

    // -- counting: newly finished pods
    const uncounted = {
      succeeded: new Set(status.uncountedTerminatedPods?.succeeded ?? []),
      failed: new Set(status.uncountedTerminatedPods?.failed ?? []),
    };
    const completed = this.indexed
      ? parseIndexes(status.completedIndexes, this.completions ?? 0)
      : new Set<number>();
    const jobDeleting = !!job.metadata.deletionTimestamp;
    const toRemoveFinalizer: Pod[] = [];
    let failJobMessage: string | undefined;
    let newFailures = 0;
    let newSuccesses = 0;
    let lastFailure = 0;
    for (const pod of this.pods) {
      if (!hasFinalizer(pod) || this.c.finalizersRemoving.has(pod.metadata.uid ?? '')) continue;
      const uid = pod.metadata.uid ?? '';
      const phase = pod.status?.phase;
      const failed = isPodFailed(pod, jobDeleting);
      if (phase !== 'Succeeded' && !failed) continue;
      toRemoveFinalizer.push(pod);
      if (phase === 'Succeeded' && !uncounted.failed.has(uid)) {
        if (this.indexed) {
          const ix = completionIndex(pod);
          if (ix !== undefined && ix < (this.completions ?? 0) && !completed.has(ix)) {
            completed.add(ix);
            newSuccesses++;
          }
        } else if (!uncounted.succeeded.has(uid)) {
          uncounted.succeeded.add(uid);
          newSuccesses++;
        }
        continue;
      }
      if (uncounted.failed.has(uid)) continue;
      // Terminated by a suspension: not the pod's failure, so neither counted nor backed off.
      if (suspended && phase !== 'Failed') continue;
      const match = phase === 'Failed' ? matchPodFailurePolicy(spec, pod) : undefined;
      if (match?.action === 'Ignore') continue;
      if (match?.action === 'FailJob' && failJobMessage === undefined) failJobMessage = match.message;
      const ix = completionIndex(pod);
      if (this.indexed && (ix === undefined || ix >= (this.completions ?? 0))) continue;
      uncounted.failed.add(uid);
      newFailures++;
      lastFailure = Math.max(lastFailure, finishTime(pod, this.now));
    }
    this.recordBackoff(newSuccesses, newFailures, lastFailure);

    // Step 1: the uncounted (and completed indexes) are written before any finalizer goes.
    status.uncountedTerminatedPods = {
      ...(uncounted.succeeded.size ? { succeeded: [...uncounted.succeeded] } : {}),
      ...(uncounted.failed.size ? { failed: [...uncounted.failed] } : {}),
    };
    if (this.indexed) {
      status.completedIndexes = formatIndexes(completed);
      status.succeeded = completed.size;
    }
    const active = this.pods.filter(isActive);
    const terminating = this.pods.filter(isTerminating).length;
    if (toRemoveFinalizer.length > 0) {
      this.fillCounters(active, terminating);
      await this.writeStatus();
      // Step 2.
      await this.controller.removeFinalizers(toRemoveFinalizer);
    }
    // Step 3: uids whose pods have no finalizer now (or are gone) are counted.
    const stillTracked = new Set(
      this.pods
        .filter((p) => hasFinalizer(p) && !toRemoveFinalizer.includes(p))
        .map((p) => p.metadata.uid ?? ''),
    );
    for (const kind of ['succeeded', 'failed'] as const) {
      for (const uid of [...uncounted[kind]]) {
        if (stillTracked.has(uid)) continue;
        uncounted[kind].delete(uid);
        status[kind] = (status[kind] ?? 0) + 1;
      }
    }
    status.uncountedTerminatedPods = {
      ...(uncounted.succeeded.size ? { succeeded: [...uncounted.succeeded] } : {}),
      ...(uncounted.failed.size ? { failed: [...uncounted.failed] } : {}),
    };
    const succeeded = this.indexed ? completed.size : (status.succeeded ?? 0) + uncounted.succeeded.size;
    const failedCount = (status.failed ?? 0) + uncounted.failed.size;

    // -- failure and success
    let failure = conditions.find((c) => c.type === 'FailureTarget' && c.status === 'True');
    let success = conditions.find((c) => c.type === 'SuccessCriteriaMet' && c.status === 'True');
    if (!failure && !success) {
      let reason: string | undefined;
      let message = '';
      if (failJobMessage !== undefined) {
        reason = 'PodFailurePolicy';
        message = failJobMessage;
      } else if (failedCount > (spec.backoffLimit ?? 6) || this.pastBackoffLimitOnFailure(active)) {
        reason = 'BackoffLimitExceeded';
        message = 'Job has reached the specified backoff limit';
      } else if (this.pastActiveDeadline()) {
        reason = 'DeadlineExceeded';
        message = 'Job was active longer than specified deadline';
      }
      if (reason) {
        failure = this.setCondition('FailureTarget', reason, message);
      } else if (
        this.completions !== undefined ? succeeded >= this.completions : succeeded > 0 && active.length === 0
      ) {
        success = this.setCondition(
          'SuccessCriteriaMet',
          'CompletionsReached',
          'Reached expected number of succeeded pods',
        );
      }
    }
    let manageErr: unknown;
    if (failure || success) {
      // Terminate what still runs; the final condition waits until no pod is left to count.
      if (active.length > 0) await this.deletePods(active).catch((err: unknown) => (manageErr = err));
      const pending =
        this.pods.some((p) => hasFinalizer(p) && !toRemoveFinalizer.includes(p)) ||
        uncounted.succeeded.size + uncounted.failed.size > 0;
      if (active.length === 0 && !pending && terminating === 0) {
        if (failure) {
          this.setCondition('Failed', failure.reason ?? '', failure.message ?? '');
          this.c.recorder.event(job, 'Warning', failure.reason ?? 'Failed', failure.message ?? '');
        } else {
          this.setCondition('Complete', 'CompletionsReached', 'Reached expected number of succeeded pods');
          status.completionTime = rfc3339(new Date(this.now));
          this.c.recorder.event(job, 'Normal', 'Completed', 'Job completed');
        }
      }
    } else if (this.satisfied && !jobDeleting) {
      try {
        await this.manage(active, terminating, succeeded, completed, suspended);
      } catch (err) {
        manageErr = err;
      }
    }
    this.fillCounters(active, terminating);
    await this.writeStatus();
    const ads = spec.activeDeadlineSeconds;
    if (!failure && !success && ads !== undefined && status.startTime && !suspended) {
      const left = Date.parse(status.startTime) + ads * 1000 - this.now;
      if (left > 0) this.c.queue.addAfter(this.key, left);
    }
    if (manageErr !== undefined) throw manageErr;
  }

  /** Counters from this pass's pods (active, ready, terminating). */
  private fillCounters(active: Pod[], terminating: number): void {
    this.status.active = active.length;
    this.status.ready = active.filter(isPodReady).length;
    this.status.terminating = terminating;
    this.status.succeeded ??= 0;
    this.status.failed ??= 0;
  }

  private async writeStatus(): Promise<void> {
    // active, succeeded and failed are omitempty in Kubernetes' JobStatus (ready and
    // terminating are pointers, so their 0 is kept): a zero is left out of what is written.
    const status = structuredClone(this.status);
    for (const k of ['active', 'succeeded', 'failed'] as const) if (status[k] === 0) delete status[k];
    // conditions is omitempty too: a Job still running has none in the object.
    if (status.conditions?.length === 0) delete status.conditions;
    if (JSON.stringify(status) === JSON.stringify(this.job.status ?? {})) return;
    try {
      const updated = await this.c.ctx.client.updateStatus<Job>(resources.jobs, {
        ...this.job,
        status,
      });
      this.job.metadata.resourceVersion = updated.metadata.resourceVersion;
      this.job.status = status;
    } catch (err) {
      if (isConflict(err)) throw new Error(`job ${this.key}: status conflict, retrying`, { cause: err });
      throw err;
    }
  }

  /** Sets condition `type` True (adding it, or flipping an existing one), as upstream's ensureJobConditionStatus. */
  private setCondition(type: string, reason: string, message: string): Condition {
    const conditions = this.status.conditions ?? (this.status.conditions = []);
    const now = rfc3339(new Date(this.now));
    let c = conditions.find((x) => x.type === type);
    if (!c) {
      c = { type, status: 'True', reason, message, lastProbeTime: now, lastTransitionTime: now };
      conditions.push(c);
    } else if (c.status !== 'True' || c.reason !== reason) {
      Object.assign(c, { status: 'True', reason, message, lastProbeTime: now, lastTransitionTime: now });
    }
    return c;
  }

  /** restartPolicy OnFailure: container restarts of active pods reach backoffLimit (pastBackoffLimitOnFailure). */
  private pastBackoffLimitOnFailure(active: Pod[]): boolean {
    if (this.job.spec.template.spec.restartPolicy !== 'OnFailure') return false;
    let restarts = 0;
    for (const pod of active)
      for (const cs of (pod.status?.containerStatuses ?? []) as { restartCount?: number }[])
        restarts += cs.restartCount ?? 0;
    const limit = this.job.spec.backoffLimit ?? 6;
    return limit === 0 ? restarts > 0 : restarts >= limit;
  }

  private pastActiveDeadline(): boolean {
    const ads = this.job.spec.activeDeadlineSeconds;
    if (ads === undefined || !this.status.startTime || this.job.spec.suspend) return false;
    return this.now - Date.parse(this.status.startTime) >= ads * 1000;
  }

  /**
   * Moves the backoff record by this pass's new successes and failures. A controller that
   * has no record yet (just started) rebuilds it from the finished pods still there, as
   * upstream's newBackoffRecord: the failed ones after the last success, by finish time.
   */
  private recordBackoff(successes: number, failures: number, lastFailure: number): void {
    let rec = this.c.backoff.get(this.key);
    if (!rec) {
      rec = { failuresAfterLastSuccess: 0, lastFailureTime: 0 };
      const finished = this.pods
        .filter((p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed')
        .map((p) => ({ phase: p.status!.phase, at: finishTime(p, this.now) }))
        .sort((a, b) => a.at - b.at);
      for (const f of finished) {
        if (f.phase === 'Succeeded') rec.failuresAfterLastSuccess = 0;
        else {
          rec.failuresAfterLastSuccess++;
          rec.lastFailureTime = Math.max(rec.lastFailureTime, f.at);
        }
      }
      this.c.backoff.set(this.key, rec);
      return;
    }
    if (successes > 0) rec.failuresAfterLastSuccess = 0;
    if (failures > 0) {
      rec.failuresAfterLastSuccess += failures;
      rec.lastFailureTime = Math.max(rec.lastFailureTime, lastFailure);
    }
  }

  /** Milliseconds before new pods may be created (getRemainingTime): 10 s · 2^(n-1), at most 6 min, from the last failure. */
  private remainingBackoff(): number {
    const rec = this.c.backoff.get(this.key);
    if (!rec || rec.failuresAfterLastSuccess === 0) return 0;
    const delay = Math.min(JOB_BACKOFF_BASE_MS * 2 ** (rec.failuresAfterLastSuccess - 1), JOB_BACKOFF_MAX_MS);
    return Math.max(0, rec.lastFailureTime + delay - this.now);
  }

  /** manageJob: suspend, or create/delete pods towards the wanted number of active ones. */
  private async manage(
    active: Pod[],
    terminating: number,
    succeeded: number,
    completed: Set<number>,
    suspended: boolean,
  ): Promise<void> {
    const { job, status } = this;
    const conditions = status.conditions ?? [];
    const suspendedCond = conditions.find((c) => c.type === 'Suspended');
    if (suspended) {
      if (suspendedCond?.status !== 'True') {
        this.setCondition('Suspended', 'JobSuspended', 'Job suspended');
        this.c.recorder.event(job, 'Normal', 'Suspended', 'Job suspended');
      }
      await this.deletePods(active);
      return;
    }
    if (suspendedCond?.status === 'True') {
      const now = rfc3339(new Date(this.now));
      Object.assign(suspendedCond, {
        status: 'False',
        reason: 'JobResumed',
        message: 'Job resumed',
        lastProbeTime: now,
        lastTransitionTime: now,
      });
      // The active deadline counts from the resume.
      status.startTime = now;
      this.c.recorder.event(job, 'Normal', 'Resumed', 'Job resumed');
    }
    const parallelism = job.spec.parallelism ?? 1;
    let wantActive: number;
    if (this.completions === undefined) wantActive = succeeded > 0 ? 0 : parallelism;
    else wantActive = Math.max(0, Math.min(parallelism, this.completions - succeeded));
    // podReplacementPolicy Failed: a terminating pod still holds its slot.
    const holding = active.length + (job.spec.podReplacementPolicy === 'Failed' ? terminating : 0);
    if (holding > wantActive || (this.indexed && this.extraIndexed(active).length > 0)) {
      const extra = this.indexed ? this.extraIndexed(active) : [];
      const more = active.filter((p) => !extra.includes(p));
      const surplus = Math.max(0, holding - extra.length - wantActive);
      // Not-ready and newest first, as upstream's ActivePods ordering.
      more.sort(
        (a, b) =>
          Number(isPodReady(a)) - Number(isPodReady(b)) ||
          (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''),
      );
      await this.deletePods([...extra, ...more.slice(0, surplus)].slice(0, MAX_POD_CREATE_DELETE_PER_SYNC));
      return;
    }
    let toCreate = Math.min(wantActive - holding, MAX_POD_CREATE_DELETE_PER_SYNC);
    if (toCreate <= 0) return;
    const wait = this.remainingBackoff();
    if (wait > 0) {
      this.c.queue.addAfter(this.key, wait);
      return;
    }
    let indexes: (number | undefined)[] = [];
    if (this.indexed) {
      const running = new Set(active.map(completionIndex));
      for (let i = 0; i < (this.completions ?? 0) && indexes.length < toCreate; i++)
        if (!completed.has(i) && !running.has(i)) indexes.push(i);
      toCreate = indexes.length;
    } else indexes = Array.from({ length: toCreate }, () => undefined);
    if (toCreate === 0) return;
    this.c.expectations.expectCreations(this.key, toCreate);
    const controllerRef: OwnerReference = {
      ...JOB_KIND,
      name: job.metadata.name ?? '',
      uid: job.metadata.uid ?? '',
      controller: true,
      blockOwnerDeletion: true,
    };
    let created = 0;
    let firstErr: unknown;
    // Slow start: 1, 2, 4, ... so a failing template costs one call, not hundreds.
    for (let batch = 1, done = 0; done < toCreate && firstErr === undefined; batch *= 2) {
      const slice = indexes.slice(done, done + batch);
      done += slice.length;
      const results = await Promise.allSettled(
        slice.map(async (ix) => {
          if (this.c.stopping()) throw new Error('the controller is stopping');
          try {
            await this.createPod(ix, controllerRef);
          } catch (err) {
            if (hasStatusCause(err, NAMESPACE_TERMINATING_CAUSE)) return;
            throw err;
          }
        }),
      );
      for (const r of results) {
        if (r.status === 'fulfilled') created++;
        else firstErr ??= r.reason;
      }
    }
    for (let i = created; i < toCreate; i++) this.c.expectations.creationObserved(this.key);
    status.active = active.length + created;
    if (firstErr !== undefined) throw firstErr;
  }

  /** Indexed: active pods of an index already completed, out of range, or a second pod of an index. */
  private extraIndexed(active: Pod[]): Pod[] {
    const completed = parseIndexes(this.status.completedIndexes, this.completions ?? 0);
    const seen = new Set<number>();
    const extra: Pod[] = [];
    for (const pod of active) {
      const ix = completionIndex(pod);
      if (ix === undefined || ix >= (this.completions ?? 0) || completed.has(ix) || seen.has(ix))
        extra.push(pod);
      else seen.add(ix);
    }
    return extra;
  }

  /**
   * Creates one pod (RealPodControl.CreatePodsWithGenerateName): `<job>-` or, Indexed,
   * `<job>-<index>-` as generateName; SuccessfulCreate / FailedCreate events on the Job.
   */
  private async createPod(ix: number | undefined, controllerRef: OwnerReference): Promise<void> {
    const pod = getPodFromTemplate(this.podTemplate(ix), this.job, controllerRef);
    if (ix !== undefined) pod.metadata.generateName = `${this.job.metadata.name ?? ''}-${ix}-`;
    let created: Pod;
    try {
      created = await this.c.ctx.client.create<Pod>(resources.pods, pod, { namespace: this.ns });
    } catch (err) {
      if (!hasStatusCause(err, NAMESPACE_TERMINATING_CAUSE))
        this.c.recorder.event(
          this.job,
          'Warning',
          FAILED_CREATE_POD_REASON,
          `Error creating: ${errorMessage(err)}`,
        );
      throw err;
    }
    this.c.recorder.event(
      this.job,
      'Normal',
      SUCCESSFUL_CREATE_POD_REASON,
      `Created pod: ${created.metadata.name ?? ''}`,
    );
  }

  /** The pod template with the tracking finalizer, and for Indexed Jobs the index (annotation, label, hostname, env). */
  private podTemplate(ix: number | undefined): PodTemplateSpec {
    const t = structuredClone(this.job.spec.template);
    const meta = t.metadata ?? (t.metadata = {});
    meta.finalizers = [...(meta.finalizers ?? []), JOB_TRACKING_FINALIZER];
    if (ix !== undefined) {
      meta.annotations = { ...meta.annotations, [JOB_COMPLETION_INDEX_ANNOTATION]: String(ix) };
      meta.labels = { ...meta.labels, [JOB_COMPLETION_INDEX_ANNOTATION]: String(ix) };
      const spec = t.spec as PodTemplateSpec['spec'] & { hostname?: string; subdomain?: string };
      spec.hostname = `${this.job.metadata.name ?? ''}-${ix}`;
      const env = {
        name: JOB_COMPLETION_INDEX_ENV,
        valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${JOB_COMPLETION_INDEX_ANNOTATION}']` } },
      };
      for (const c of [...(spec.initContainers ?? []), ...spec.containers] as { env?: unknown[] }[])
        c.env = [...(c.env ?? []), env];
    }
    return t;
  }

  private async deletePods(pods: Pod[]): Promise<void> {
    if (pods.length === 0) return;
    this.c.expectations.expectDeletions(this.key, pods.map(podKey));
    const results = await Promise.allSettled(
      pods.map(async (pod) => {
        try {
          await this.c.podControl.deletePod(this.ns, pod.metadata.name ?? '', this.job);
        } catch (err) {
          this.c.expectations.deletionObserved(this.key, podKey(pod));
          if (!isNotFound(err)) throw err;
        }
      }),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
}
