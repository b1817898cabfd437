/**
 * CronJob schedules: the standard five-field cron format and the descriptors, as
 * Kubernetes parses them with robfig/cron's ParseStandard (minute hour day-of-month month
 * day-of-week; `@yearly`/`@annually`, `@monthly`, `@weekly`, `@daily`/`@midnight`,
 * `@hourly`, and `@every <duration>`), evaluated in an IANA time zone (default UTC, the
 * controller manager's zone in k3s images). The field grammar is cron-parser's; what
 * ParseStandard adds (exactly five fields, `@midnight`, `@every`) is checked here.
 *
 *     const s = parseSchedule('*\/5 * * * *');          // throws ScheduleError
 *     s.next(new Date('2026-01-01T00:03:00Z'));          // 2026-01-01T00:05:00Z
 */
import { CronExpressionParser } from 'cron-parser';
import { createRequire } from 'node:module';
import { errorMessage } from './errors.js';

/**
 * cron-parser's dates are luxon DateTimes, and a DateTime made without a locale asks ICU
 * for the system's (`new Intl.DateTimeFormat().resolvedOptions().locale`): that first call
 * maps some 5 MB of ICU data into the process (RSS) for a value no schedule reads (only
 * formatting does; next/prev are computed on numbers and the zone). So the luxon that
 * cron-parser uses (resolved from cron-parser's own location) gets `en-US`, what ICU
 * answers on these hosts, as its default. A schedule in UTC then never touches ICU;
 * another zone still does, through luxon's Intl-based zones, as it must.
 */
function defaultLuxonLocale(): void {
  try {
    const fromCronParser = createRequire(createRequire(import.meta.url).resolve('cron-parser'));
    const luxon = fromCronParser('luxon') as { Settings?: { defaultLocale?: string } };
    if (luxon.Settings && !luxon.Settings.defaultLocale) luxon.Settings.defaultLocale = 'en-US';
  } catch {
    // Another date library under cron-parser: nothing to set.
  }
}
defaultLuxonLocale();

/** A schedule that does not parse; `message` is what Kubernetes' validation would say. */
export class ScheduleError extends Error {}

/** A parsed schedule. */
export interface Schedule {
  /** The first scheduled time strictly after `after`. */
  next(after: Date): Date;
  /** The last scheduled time at or before `atOrBefore` of the run of times through `from` (a scheduled time). */
  latest(from: Date, atOrBefore: Date): Date;
}

const DESCRIPTORS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const GO_UNITS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Go's time.ParseDuration (positive durations only), in milliseconds; undefined when it does not parse. */
function parseGoDuration(s: string): number | undefined {
  if (s === '0') return 0;
  const re = /([0-9]*\.?[0-9]+)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let pos = 0;
  while (pos < s.length) {
    re.lastIndex = pos;
    const m = re.exec(s);
    if (!m) return undefined;
    total += Number(m[1]) * GO_UNITS[m[2]!]!;
    pos = re.lastIndex;
  }
  return pos === 0 ? undefined : total;
}

/** A field's bounds and names as robfig/cron's parser has them (minutes, hours, dom, month, dow). */
interface FieldBounds {
  min: number;
  max: number;
  names?: Readonly<Record<string, number>>;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const FIELD_BOUNDS: readonly FieldBounds[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: Object.fromEntries(MONTHS.map((m, i) => [m, i + 1])) },
  { min: 0, max: 6, names: Object.fromEntries(DAYS.map((d, i) => [d, i])) },
];

/** robfig's mustParseInt (strconv.Atoi, then no negatives). */
function robfigInt(expr: string): number {
  if (!/^[+-]?[0-9]+$/.test(expr))
    throw new ScheduleError(
      `failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: invalid syntax`,
    );
  const n = Number(expr);
  if (n < 0) throw new ScheduleError(`negative number (${n}) not allowed: ${expr}`);
  return n;
}

/**
 * robfig/cron's getField/getRange grammar for one field: comma-separated `*`, `?`, `N`,
 * `N-M` (numbers, or month/day names), each with an optional `/step`. cron-parser takes
 * more (`L`, `W`, `#`, `H`, day-of-week 7), which Kubernetes refuses: refused here too,
 * with robfig's words.
 * @throws ScheduleError (`end of range (7) above maximum (6): 7`, `failed to parse int from L: ...`).
 */
function checkRobfigField(field: string, r: FieldBounds): void {
  for (const expr of field.split(',').filter((x) => x !== '')) {
    const rangeAndStep = expr.split('/');
    const lowAndHigh = rangeAndStep[0]!.split('-');
    const named = (x: string) => r.names?.[x.toLowerCase()] ?? robfigInt(x);
    let start: number;
    let end: number;
    if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
      start = r.min;
      end = r.max;
    } else {
      start = named(lowAndHigh[0]!);
      if (lowAndHigh.length === 1) end = start;
      else if (lowAndHigh.length === 2) end = named(lowAndHigh[1]!);
      else throw new ScheduleError(`too many hyphens: ${expr}`);
    }
    let step = 1;
    if (rangeAndStep.length === 2) {
      step = robfigInt(rangeAndStep[1]!);
      if (lowAndHigh.length === 1) end = r.max;
    } else if (rangeAndStep.length > 2) throw new ScheduleError(`too many slashes: ${expr}`);
    if (start < r.min)
      throw new ScheduleError(`beginning of range (${start}) below minimum (${r.min}): ${expr}`);
    if (end > r.max) throw new ScheduleError(`end of range (${end}) above maximum (${r.max}): ${expr}`);
    if (start > end)
      throw new ScheduleError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
    if (step === 0) throw new ScheduleError(`step of range should be a positive number: ${expr}`);
  }
}

/**
 * Parses `spec` in `timeZone` (IANA name; default `UTC`).
 * @throws ScheduleError with robfig/cron's words (`expected exactly 5 fields, found 4:
 *   [* * * *]`, `unrecognized descriptor: @foo`, `empty spec string`, `end of range (61)
 *   above maximum (59): 61`), else cron-parser's description of what it cannot take.
 */
export function parseSchedule(spec: string, timeZone = 'UTC'): Schedule {
  const trimmed = spec.trim();
  if (trimmed === '') throw new ScheduleError('empty spec string');
  if (trimmed.startsWith('@every ')) {
    const arg = trimmed.slice('@every '.length).trim();
    const ms = parseGoDuration(arg);
    if (ms === undefined)
      throw new ScheduleError(`failed to parse duration ${trimmed}: time: invalid duration "${arg}"`);
    // robfig's ConstantDelaySchedule: at least one second, whole seconds, counted from `after`.
    const every = Math.max(1000, Math.floor(ms / 1000) * 1000);
    return {
      next: (after) => new Date(Math.floor(after.getTime() / 1000) * 1000 + every),
      latest: (from, atOrBefore) =>
        new Date(from.getTime() + Math.floor((atOrBefore.getTime() - from.getTime()) / every) * every),
    };
  }
  let expr = trimmed;
  if (trimmed.startsWith('@')) {
    const d = DESCRIPTORS[trimmed];
    if (!d) throw new ScheduleError(`unrecognized descriptor: ${trimmed}`);
    expr = d;
  } else {
    const fields = trimmed.split(/\s+/);
    if (fields.length !== 5)
      throw new ScheduleError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
    fields.forEach((f, i) => checkRobfigField(f, FIELD_BOUNDS[i]!));
  }
  try {
    // Parsed once here so a bad field is reported at validation, not at the first run.
    CronExpressionParser.parse(expr, { tz: timeZone, currentDate: new Date(0) }).next();
  } catch (err) {
    throw new ScheduleError(errorMessage(err));
  }
  return {
    next(after) {
      return CronExpressionParser.parse(expr, { tz: timeZone, currentDate: after }).next().toDate();
    },
    latest(_from, atOrBefore) {
      const currentDate = new Date(atOrBefore.getTime() + 1);
      return CronExpressionParser.parse(expr, { tz: timeZone, currentDate }).prev().toDate();
    },
  };
}

/**
 * The problem with an IANA time zone name as time.LoadLocation reports it (`unknown time
 * zone Mars/Olympus`), or undefined when the zone is known.
 */
export function timeZoneProblem(name: string): string | undefined {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return undefined;
  } catch {
    return `unknown time zone ${name}`;
  }
}

/** What mostRecentScheduleTime finds between `earliest` and `now`. */
export interface MissedTimes {
  /** The latest scheduled time in (earliest, now]; undefined when none. */
  mostRecent: Date | undefined;
  /** How many scheduled times fell in (earliest, now], counted up to `cap` (cap means "at least"). */
  count: number;
  /** The first scheduled time after `now`. */
  next: Date;
}

/**
 * The scheduled times of `schedule` after `earliest` up to and including `now`
 * (cronjob v2's mostRecentScheduleTime): their count, capped at `cap` (default 101: more
 * than 100 is what Kubernetes warns about), the most recent one, and the next after `now`.
 * Never walks more than `cap` times, however long the controller was away.
 */
export function missedTimes(schedule: Schedule, earliest: Date, now: Date, cap = 101): MissedTimes {
  let count = 0;
  let mostRecent: Date | undefined;
  let t = schedule.next(earliest);
  while (t.getTime() <= now.getTime() && count < cap) {
    mostRecent = t;
    count++;
    t = schedule.next(t);
  }
  if (t.getTime() <= now.getTime()) {
    mostRecent = schedule.latest(t, now);
    t = schedule.next(mostRecent);
  }
  return { mostRecent, count, next: t };
}
