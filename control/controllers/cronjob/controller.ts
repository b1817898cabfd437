/**
 * The CronJob controller (Kubernetes' pkg/controller/cronjob, the v2 controller): creates
 * a Job at each scheduled time of a CronJob and keeps its status and history.
 *
 * Handlers enqueue the CronJob (a Job's event: its controller's). reconcile(key) is
 * syncCronJob:
 *  1. the CronJob from the cache (gone: done); its Jobs are those it controls;
 *  2. status.active is cleaned: finished Jobs leave it (SawCompletedJob; a Complete one
 *     moves lastSuccessfulTime), vanished ones too (MissingJob), running Jobs of ours not
 *     in it are added;
 *  3. finished Jobs beyond successfulJobsHistoryLimit / failedJobsHistoryLimit are
 *     deleted, oldest first (SuccessfulDelete, background propagation);
 *  4. being deleted, suspended, or with a schedule or time zone that does not parse
 *     (UnparseableSchedule, UnknownTimeZone): nothing is started;
 *  5. the most recent scheduled time after lastScheduleTime (else creationTimestamp; not
 *     before now − startingDeadlineSeconds) up to now. None: requeue at the next time.
 *     More than 100 missed: TooManyMissedTimes, once, and only the latest is run.
 *     Past its startingDeadlineSeconds: MissSchedule, not run;
 *  6. concurrencyPolicy: Forbid with an active Job skips this time (JobAlreadyActive);
 *     Replace deletes the active Jobs first; Allow runs beside them;
 *  7. the Job `<cronjob>-<scheduled time in minutes since the epoch>` from jobTemplate,
 *     annotated batch.kubernetes.io/cronjob-scheduled-timestamp (RFC 3339 in the
 *     CronJob's zone); an existing Job of that name means this time has been run;
 *  8. status (active, lastScheduleTime) through the status subresource, and a requeue
 *     100 ms after the next scheduled time (by the injected clock).
 */
import { isAlreadyExists, isNotFound } from '../../../api/client/errors.js';
import type { EventRecorder } from '../../../api/client/events.js';
import { deletedObject } from '../../../api/client/informer.js';
import type { Lister } from '../../../api/client/lister.js';
import { resources } from '../../../api/client/resource.js';
import { metaNamespaceKey, splitMetaNamespaceKey } from '../../../api/client/store.js';
import type { CronJob, Job } from '../../../api/batch.js';
import { missedTimes, parseSchedule, timeZoneProblem, type Schedule } from '../../../api/cron.js';
import { errorMessage } from '../../../api/errors.js';
import { rfc3339 } from '../../../api/object.js';
import { controllerOf } from '../../../api/podutil.js';
import { RateLimitingQueue } from '../../../api/workqueue/rateLimited.js';
import type { Controller, ControllerContext } from '../context.js';
import { runQueue } from '../run.js';

/** The annotation with a Job's scheduled time. */
export const CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION = 'batch.kubernetes.io/cronjob-scheduled-timestamp';
/** The component name of its events. */
export const CRONJOB_CONTROLLER_COMPONENT = 'cronjob-controller';
/** Missed times beyond which the controller warns (TooManyMissedTimes). */
export const MAX_MISSED_TIMES = 100;

type ActiveRef = NonNullable<NonNullable<CronJob['status']>['active']>[number];

function finishedCondition(job: Job): 'Complete' | 'Failed' | undefined {
  for (const c of job.status?.conditions ?? []) {
    if (c.status === 'True' && (c.type === 'Complete' || c.type === 'Failed')) return c.type;
  }
  return undefined;
}

/** `<cronjob>-<minutes since the epoch>` (getJobName / getTimeHashInMinutes). */
export function jobNameFor(cronJobName: string, scheduled: Date): string {
  return `${cronJobName}-${Math.floor(scheduled.getTime() / 60_000)}`;
}

/** RFC 3339 of `t` in `timeZone`, with its offset (`2026-01-01T01:00:00+01:00`; UTC: `Z`), as Go's time.Format. */
export function rfc3339In(t: Date, timeZone: string): string {
  if (timeZone === 'UTC') return rfc3339(t);
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
      .formatToParts(t)
      .map((p) => [p.type, p.value]),
  );
  const local = Date.UTC(
    +parts.year!,
    +parts.month! - 1,
    +parts.day!,
    +parts.hour!,
    +parts.minute!,
    +parts.second!,
  );
  const offMin = Math.round((local - Math.floor(t.getTime() / 1000) * 1000) / 60_000);
  if (offMin === 0) return rfc3339(t);
  const sign = offMin < 0 ? '-' : '+';
  const abs = Math.abs(offMin);
  const off = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${off}`;
}

/** The CronJob controller; see the file comment. */
export class CronJobController implements Controller {
  readonly name = 'cronjob';
  private readonly ctx: ControllerContext;
  private readonly queue: RateLimitingQueue<string>;
  private readonly cronJobLister: Lister<CronJob>;
  private readonly jobLister: Lister<Job>;
  private readonly recorder: EventRecorder;
  /** The last missed count warned about per CronJob, so a storm of syncs is one event. */
  private readonly warnedMissed = new Map<string, string>();

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
    this.recorder = ctx.recorder(CRONJOB_CONTROLLER_COMPONENT);
    this.queue = new RateLimitingQueue<string>({ clock: ctx.clock });
    const cjInformer = ctx.informers.informerFor<CronJob>(resources.cronjobs);
    const jobInformer = ctx.informers.informerFor<Job>(resources.jobs);
    this.cronJobLister = cjInformer.lister();
    this.jobLister = jobInformer.lister();
    cjInformer.addEventHandler({
      onAdd: (cj) => this.queue.add(metaNamespaceKey(cj)),
      onUpdate: (_, cur) => this.queue.add(metaNamespaceKey(cur)),
      onDelete: (obj) => this.queue.add(metaNamespaceKey(deletedObject(obj))),
    });
    const owner = (job: Job): void => {
      const ref = controllerOf(job);
      if (ref?.kind === 'CronJob' && ref.apiVersion === 'batch/v1')
        this.queue.add(`${job.metadata.namespace ?? ''}/${ref.name}`);
    };
    jobInformer.addEventHandler({
      onAdd: owner,
      onUpdate: (old, cur) => {
        owner(cur);
        if (controllerOf(old)?.uid !== controllerOf(cur)?.uid) owner(old);
      },
      onDelete: (obj) => owner(deletedObject(obj)),
    });
  }

  /** Runs 5 workers (--concurrent-cron-job-syncs' default) until `signal` aborts. */
  run(signal: AbortSignal): Promise<void> {
    return runQueue({
      name: this.name,
      queue: this.queue,
      workers: 5,
      reconcile: (key) => this.reconcile(key),
      signal,
      logger: this.ctx.logger,
    });
  }

  /** syncCronJob; see the file comment. Public for tests. @throws when an API write failed (retried). */
  async reconcile(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const cached = this.cronJobLister.get(namespace, name);
    if (!cached) {
      this.warnedMissed.delete(key);
      return;
    }
    const cj = structuredClone(cached);
    const status = (cj.status ??= {});
    const before = JSON.stringify(status);
    const now = new Date(this.ctx.clock.now());
    const jobs = this.jobLister
      .namespace(namespace)
      .list()
      .filter((j) => controllerOf(j)?.uid === cj.metadata.uid);

    await this.cleanActive(cj, jobs);
    await this.cleanHistory(cj, jobs);

    const requeueAfter = await this.schedule(key, cj, jobs, now);
    if (JSON.stringify(status) !== before) {
      await this.ctx.client.updateStatus<CronJob>(resources.cronjobs, cj);
    }
    if (requeueAfter !== undefined) this.queue.addAfter(key, requeueAfter);
  }

  /** Step 2: status.active against the Jobs there are. */
  private async cleanActive(cj: CronJob, jobs: Job[]): Promise<void> {
    const status = cj.status!;
    let active = [...(status.active ?? [])];
    const byUid = new Map(jobs.map((j) => [j.metadata.uid, j]));
    for (const job of jobs) {
      const inActive = active.some((a) => a.uid === job.metadata.uid);
      const finished = finishedCondition(job);
      if (!finished) {
        if (!inActive && !job.metadata.deletionTimestamp) active.push(this.refOf(job));
        continue;
      }
      if (inActive) {
        active = active.filter((a) => a.uid !== job.metadata.uid);
        this.recorder.event(
          cj,
          'Normal',
          'SawCompletedJob',
          `Saw completed job: ${job.metadata.name ?? ''}, condition: ${finished}`,
        );
      }
      const completion = job.status?.completionTime;
      if (
        finished === 'Complete' &&
        completion &&
        (!status.lastSuccessfulTime || Date.parse(completion) > Date.parse(status.lastSuccessfulTime))
      )
        status.lastSuccessfulTime = completion;
    }
    const kept: ActiveRef[] = [];
    for (const ref of active) {
      if (byUid.has(ref.uid)) {
        kept.push(ref);
        continue;
      }
      // Not in the cache: ask the server before dropping it (the cache may lag a create).
      try {
        const job = await this.ctx.client.get<Job>(
          resources.jobs,
          ref.namespace ?? cj.metadata.namespace,
          ref.name ?? '',
        );
        if (job.metadata.uid === ref.uid) {
          kept.push(ref);
          continue;
        }
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      this.recorder.event(cj, 'Normal', 'MissingJob', `Active job went missing: ${ref.name ?? ''}`);
    }
    if (kept.length > 0) status.active = kept;
    else delete status.active;
  }

  /** Step 3: finished Jobs beyond the history limits, oldest first. */
  private async cleanHistory(cj: CronJob, jobs: Job[]): Promise<void> {
    const age = (j: Job) => Date.parse(j.status?.startTime ?? j.metadata.creationTimestamp ?? '') || 0;
    for (const [kind, limit] of [
      ['Complete', cj.spec.successfulJobsHistoryLimit ?? 3],
      ['Failed', cj.spec.failedJobsHistoryLimit ?? 1],
    ] as const) {
      const finished = jobs
        .filter((j) => finishedCondition(j) === kind && !j.metadata.deletionTimestamp)
        .sort((a, b) => age(a) - age(b));
      for (const job of finished.slice(0, Math.max(0, finished.length - limit)))
        await this.deleteJob(cj, job);
    }
  }

  private async deleteJob(cj: CronJob, job: Job): Promise<void> {
    try {
      await this.ctx.client.delete(resources.jobs, job.metadata.namespace, job.metadata.name!, {
        propagationPolicy: 'Background',
      });
    } catch (err) {
      if (isNotFound(err)) return;
      this.recorder.event(cj, 'Warning', 'FailedDelete', `Deleted job: ${errorMessage(err)}`);
      throw err;
    }
    this.recorder.event(cj, 'Normal', 'SuccessfulDelete', `Deleted job ${job.metadata.name ?? ''}`);
    if (cj.status?.active) {
      cj.status.active = cj.status.active.filter((a) => a.uid !== job.metadata.uid);
      if (cj.status.active.length === 0) delete cj.status.active;
    }
  }

  private refOf(job: Job): ActiveRef {
    return {
      kind: 'Job',
      namespace: job.metadata.namespace,
      name: job.metadata.name,
      uid: job.metadata.uid,
      apiVersion: 'batch/v1',
      resourceVersion: job.metadata.resourceVersion,
    };
  }

  /** Steps 4–7; returns the requeue delay in ms (undefined: none). */
  private async schedule(key: string, cj: CronJob, jobs: Job[], now: Date): Promise<number | undefined> {
    if (cj.metadata.deletionTimestamp) return undefined;
    const tz = cj.spec.timeZone ?? 'UTC';
    const tzProblem = timeZoneProblem(tz);
    if (tzProblem) {
      this.recorder.event(cj, 'Warning', 'UnknownTimeZone', `invalid timeZone: "${tz}": ${tzProblem}`);
      return undefined;
    }
    let sched: Schedule;
    try {
      sched = parseSchedule(cj.spec.schedule, tz);
    } catch (err) {
      this.recorder.event(
        cj,
        'Warning',
        'UnparseableSchedule',
        `unparseable schedule: "${cj.spec.schedule}" : ${errorMessage(err)}`,
      );
      return undefined;
    }
    if (cj.spec.suspend) return undefined;
    const status = cj.status!;
    let earliest = new Date(
      Date.parse(status.lastScheduleTime ?? cj.metadata.creationTimestamp ?? '') || now.getTime(),
    );
    const sds = cj.spec.startingDeadlineSeconds;
    if (sds !== undefined && sds !== null) {
      const deadline = now.getTime() - sds * 1000;
      if (deadline > earliest.getTime()) earliest = new Date(deadline);
    }
    const missed = missedTimes(sched, earliest, now, MAX_MISSED_TIMES + 1);
    const requeue = missed.next.getTime() - now.getTime() + 100;
    const scheduled = missed.mostRecent;
    if (!scheduled) return requeue;
    if (missed.count > MAX_MISSED_TIMES) {
      const first = sched.next(earliest);
      const step = sched.next(first).getTime() - first.getTime();
      const count = step > 0 ? Math.floor((scheduled.getTime() - first.getTime()) / step) + 1 : missed.count;
      const mark = `${status.lastScheduleTime ?? ''}/${scheduled.toISOString()}`;
      if (this.warnedMissed.get(key) !== mark) {
        this.warnedMissed.set(key, mark);
        this.recorder.event(
          cj,
          'Warning',
          'TooManyMissedTimes',
          `too many missed start times: ${count}. Set or decrease .spec.startingDeadlineSeconds or check clock skew`,
        );
      }
    }
    if (sds !== undefined && sds !== null && scheduled.getTime() + sds * 1000 < now.getTime()) {
      this.recorder.event(
        cj,
        'Warning',
        'MissSchedule',
        `Missed scheduled time to start a job: ${scheduled.toUTCString()}`,
      );
      return requeue;
    }
    const jobName = jobNameFor(cj.metadata.name ?? '', scheduled);
    if (
      (status.active ?? []).some((a) => a.name === jobName) ||
      jobs.some((j) => j.metadata.name === jobName)
    )
      return requeue;
    const running = status.active ?? [];
    const policy = cj.spec.concurrencyPolicy ?? 'Allow';
    if (policy === 'Forbid' && running.length > 0) {
      this.recorder.event(
        cj,
        'Normal',
        'JobAlreadyActive',
        'Not starting job because prior execution is running and concurrency policy is Forbid',
      );
      return requeue;
    }
    if (policy === 'Replace') {
      for (const ref of [...running]) {
        const job = jobs.find((j) => j.metadata.uid === ref.uid);
        if (job) await this.deleteJob(cj, job);
      }
    }
    const template = cj.spec.jobTemplate;
    const job: Job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: jobName,
        namespace: cj.metadata.namespace,
        ...(template.metadata?.labels ? { labels: { ...template.metadata.labels } } : {}),
        annotations: {
          ...(template.metadata?.annotations ?? {}),
          [CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION]: rfc3339In(scheduled, tz),
        },
        ownerReferences: [
          {
            apiVersion: 'batch/v1',
            kind: 'CronJob',
            name: cj.metadata.name ?? '',
            uid: cj.metadata.uid ?? '',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: structuredClone(template.spec),
    };
    let created: Job;
    try {
      created = await this.ctx.client.create<Job>(resources.jobs, job);
    } catch (err) {
      if (isAlreadyExists(err)) {
        // Created by an earlier pass whose status write was lost: this time has been run.
        status.lastScheduleTime = rfc3339(scheduled);
        return requeue;
      }
      this.recorder.event(cj, 'Warning', 'FailedCreate', `Error creating job: ${errorMessage(err)}`);
      throw err;
    }
    this.recorder.event(cj, 'Normal', 'SuccessfulCreate', `Created job ${created.metadata.name ?? ''}`);
    status.active = [...(status.active ?? []), this.refOf(created)];
    status.lastScheduleTime = rfc3339(scheduled);
    return requeue;
  }
}
