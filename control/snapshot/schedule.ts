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
import { existsSync, readlinkSync } from 'node:fs';
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

/** Names of UTC in the tz database (and ICU's canonical `UTC`), which luxon takes as a fixed zone only when spelled `UTC`. */
const UTC_NAMES = new Set([
  'UTC',
  'UCT',
  'GMT',
  'GMT0',
  'Zulu',
  'Universal',
  'Greenwich',
  'Etc/UTC',
  'Etc/UCT',
  'Etc/GMT',
  'Etc/GMT0',
  'Etc/GMT+0',
  'Etc/GMT-0',
  'Etc/Zulu',
  'Etc/Universal',
  'Etc/Greenwich',
]);

/** Where hostTimeZone() looks: the environment and the files (tests give their own). */
export interface TimeZoneSources {
  env: NodeJS.ProcessEnv;
  /** readlink(2); throws when the path is no link. */
  readLink(path: string): string;
  exists(path: string): boolean;
}

const HOST_SOURCES: TimeZoneSources = {
  env: process.env,
  readLink: (path) => readlinkSync(path),
  exists: (path) => existsSync(path),
};

const ZONEINFO = '/usr/share/zoneinfo';

/**
 * The host's IANA time zone (k3s's schedule runs in system time), found where Go's time
 * package finds Local: `$TZ` (a zone name, `:` prefix allowed; set and empty is UTC), else
 * the zone /etc/localtime links to under a zoneinfo directory; a name counts when
 * /usr/share/zoneinfo has it. Else what ICU says (Intl.DateTimeFormat, which maps some
 * 5 MB of ICU data into the process, so only when the files do not name the zone). Any
 * name of UTC is `UTC`, which cron-parser's luxon computes without ICU.
 */
export function hostTimeZone(io: TimeZoneSources = HOST_SOURCES): string {
  const named = (zone: string): string | undefined => {
    const name = (zone.startsWith(':') ? zone.slice(1) : zone).replace(/^(posix|right)\//, '');
    if (name === '' || UTC_NAMES.has(name)) return 'UTC';
    return /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name) && io.exists(`${ZONEINFO}/${name}`)
      ? name
      : undefined;
  };
  let zone: string | undefined;
  const tz = io.env.TZ;
  if (tz !== undefined) {
    zone = named(tz);
  } else {
    try {
      const target = io.readLink('/etc/localtime');
      const at = target.lastIndexOf('zoneinfo/');
      if (at >= 0) zone = named(target.slice(at + 'zoneinfo/'.length));
    } catch {
      // Not a link (or no file): ICU reads the file itself.
    }
  }
  if (zone) return zone;
  const icu = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  return UTC_NAMES.has(icu) ? 'UTC' : icu;
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
