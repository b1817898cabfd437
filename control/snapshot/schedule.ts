/**
 * Scheduled snapshots in `k8ts server`, as k3s's `--etcd-snapshot-schedule-cron`
 * (default `0 *\/12 * * *`: 00:00 and 12:00 of the host's time zone) and
 * `--etcd-snapshot-retention` (default 5): at every time of the cron schedule one snapshot
 * named `scheduled-<node>-<unix seconds>`, then all but the `retention` newest scheduled
 * ones are deleted (on-demand snapshots are not counted, nor deleted).
 *
 * The schedule is api/cron.ts's (robfig ParseStandard, what CronJobs take). Time is the
 * injected Clock; sleeps are at most an hour at a time, so a monthly schedule never asks
 * for a timer longer than Node's 24.8 days, and a clock that jumps is noticed within the
 * hour. A failed snapshot is logged and the next time comes as planned; when a snapshot
 * takes longer than the interval, the times it overran are skipped, not queued.
 */
import { realClock, type Clock } from '../../api/clock.js';
import { ScheduleError, parseSchedule, type Schedule } from '../../api/cron.js';
import type { Logger } from '../../api/log.js';
import { SnapshotError } from './errors.js';
import { SCHEDULED_NAME, type SnapshotMetadata } from './metadata.js';
import type { Snapshotter } from './snapshotter.js';

/** k3s's default schedule: every 12 hours, on the hour. */
export const DEFAULT_SNAPSHOT_SCHEDULE = '0 */12 * * *';
/** k3s's default retention. */
export const DEFAULT_SNAPSHOT_RETENTION = 5;

const MAX_SLEEP_MS = 3_600_000;

/** A SnapshotScheduler's configuration. */
export interface SnapshotSchedulerConfig {
  snapshotter: Pick<Snapshotter, 'save' | 'prune'>;
  /** A cron spec (five fields or a descriptor); default DEFAULT_SNAPSHOT_SCHEDULE. */
  schedule?: string;
  /** Scheduled snapshots kept (>= 1); default DEFAULT_SNAPSHOT_RETENTION. */
  retention?: number;
  /** The IANA zone the schedule is read in; default the host's. */
  timeZone?: string;
  clock?: Clock;
  logger: Logger;
  /** Called after each scheduled snapshot with what was saved and what was pruned (tests, metrics). */
  onSnapshot?: (saved: SnapshotMetadata, pruned: string[]) => void;
  /** Called after each failed scheduled snapshot. */
  onError?: (err: unknown) => void;
}

/**
 * Checks a `--snapshot-schedule` value.
 * @returns the parsed schedule.
 * @throws SnapshotError Invalid with robfig/cron's words.
 */
export function parseSnapshotSchedule(spec: string, timeZone = hostTimeZone()): Schedule {
  try {
    return parseSchedule(spec, timeZone);
  } catch (err) {
    if (err instanceof ScheduleError)
      throw new SnapshotError('Invalid', `snapshot schedule ${JSON.stringify(spec)}: ${err.message}`);
    throw err;
  }
}

/** The host's IANA time zone (k3s's schedule runs in system time). */
export function hostTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** Runs scheduled snapshots until stop(); see the top of this file. */
export class SnapshotScheduler {
  private readonly schedule: Schedule;
  private readonly retention: number;
  private readonly clock: Clock;
  private readonly ac = new AbortController();
  private loop: Promise<void> | undefined;

  /** @throws SnapshotError Invalid for a schedule that does not parse or a retention below 1. */
  constructor(private readonly cfg: SnapshotSchedulerConfig) {
    this.schedule = parseSnapshotSchedule(cfg.schedule ?? DEFAULT_SNAPSHOT_SCHEDULE, cfg.timeZone);
    this.retention = cfg.retention ?? DEFAULT_SNAPSHOT_RETENTION;
    if (!Number.isSafeInteger(this.retention) || this.retention < 1)
      throw new SnapshotError(
        'Invalid',
        `snapshot retention must be a whole number >= 1, got ${this.retention}`,
      );
    this.clock = cfg.clock ?? realClock;
  }

  /** The first scheduled time after now (for the start-up log line). */
  nextTime(): Date {
    return this.schedule.next(new Date(this.clock.now()));
  }

  /** Starts the loop (once). */
  start(): void {
    this.loop ??= this.run(this.ac.signal);
  }

  /** Stops the loop; resolves once a snapshot under way has ended. */
  async stop(): Promise<void> {
    this.ac.abort();
    await this.loop;
  }

  private async run(signal: AbortSignal): Promise<void> {
    let after = new Date(this.clock.now());
    while (!signal.aborted) {
      const next = this.schedule.next(after);
      const wait = next.getTime() - this.clock.now();
      if (wait > 0) {
        await this.clock.sleep(Math.min(wait, MAX_SLEEP_MS), signal);
        continue;
      }
      try {
        const saved = await this.cfg.snapshotter.save(SCHEDULED_NAME);
        const pruned = await this.cfg.snapshotter.prune(SCHEDULED_NAME, this.retention);
        this.cfg.logger.info('scheduled snapshot saved', {
          name: saved.name,
          revision: saved.revision,
          size: saved.size,
          pruned,
        });
        this.cfg.onSnapshot?.(saved, pruned);
      } catch (err) {
        this.cfg.logger.warn('scheduled snapshot failed', { error: (err as Error).message });
        this.cfg.onError?.(err);
      }
      after = new Date(Math.max(next.getTime(), this.clock.now()));
    }
  }
}
