import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { missedTimes, parseSchedule, ScheduleError, timeZoneProblem } from './cron.js';

const T = (s: string) => new Date(s);

describe('parseSchedule (robfig/cron ParseStandard)', () => {
  const next: [string, string, string, string?][] = [
    ['*/5 * * * *', '2026-01-01T00:03:00Z', '2026-01-01T00:05:00Z'],
    ['0 3 * * mon-fri', '2026-01-02T04:00:00Z', '2026-01-05T03:00:00Z'],
    ['0 3 ? JAN-Mar SUN', '2026-01-01T00:00:00Z', '2026-01-04T03:00:00Z'],
    ['5/20 * * * *', '2026-01-01T00:06:00Z', '2026-01-01T00:25:00Z'],
    ['@hourly', '2026-01-01T00:00:00Z', '2026-01-01T01:00:00Z'],
    ['@daily', '2026-01-01T00:00:01Z', '2026-01-02T00:00:00Z'],
    ['@midnight', '2026-01-01T00:00:01Z', '2026-01-02T00:00:00Z'],
    ['@weekly', '2026-01-01T00:00:00Z', '2026-01-04T00:00:00Z'],
    ['@monthly', '2026-01-15T00:00:00Z', '2026-02-01T00:00:00Z'],
    ['@yearly', '2026-01-15T00:00:00Z', '2027-01-01T00:00:00Z'],
    ['@every 1h30m', '2026-01-01T00:00:00.500Z', '2026-01-01T01:30:00Z'],
    // 02:00 in Berlin is 01:00 UTC in winter, 00:00 UTC in summer.
    ['0 2 * * *', '2026-01-01T00:00:00Z', '2026-01-01T01:00:00Z', 'Europe/Berlin'],
    ['0 2 * * *', '2026-07-01T00:00:00Z', '2026-07-02T00:00:00Z', 'Europe/Berlin'],
  ];
  for (const [spec, after, want, tz] of next)
    it(`${spec}${tz ? ` in ${tz}` : ''} after ${after} → ${want}`, () =>
      assert.equal(parseSchedule(spec, tz).next(T(after)).toISOString(), T(want).toISOString()));

  const bad: [string, string | RegExp][] = [
    ['', 'empty spec string'],
    ['* * * *', 'expected exactly 5 fields, found 4: [* * * *]'],
    ['0 * * * * *', 'expected exactly 5 fields, found 6: [0 * * * * *]'],
    ['@sometimes', 'unrecognized descriptor: @sometimes'],
    ['@every never', /failed to parse duration @every never/],
    // robfig's words for its field grammar; cron-parser's extensions (L, #, H, dow 7) are
    // refused as Kubernetes refuses them.
    ['61 * * * *', 'end of range (61) above maximum (59): 61'],
    ['0 0 * * 7', 'end of range (7) above maximum (6): 7'],
    ['0 0 L * *', 'failed to parse int from L: strconv.Atoi: parsing "L": invalid syntax'],
    ['0 0 * * 5#2', 'failed to parse int from 5#2: strconv.Atoi: parsing "5#2": invalid syntax'],
    ['H * * * *', 'failed to parse int from H: strconv.Atoi: parsing "H": invalid syntax'],
    ['0 0 0 * *', 'beginning of range (0) below minimum (1): 0'],
    ['10-5 * * * *', 'beginning of range (10) beyond end of range (5): 10-5'],
    ['*/0 * * * *', 'step of range should be a positive number: */0'],
    ['1-2-3 * * * *', 'too many hyphens: 1-2-3'],
    ['0 0 * foo *', 'failed to parse int from foo: strconv.Atoi: parsing "foo": invalid syntax'],
  ];
  for (const [spec, msg] of bad)
    it(`refuses ${JSON.stringify(spec)}`, () =>
      assert.throws(
        () => parseSchedule(spec),
        (e: unknown) =>
          e instanceof ScheduleError && (typeof msg === 'string' ? e.message === msg : msg.test(e.message)),
      ));
});

describe('missedTimes (mostRecentScheduleTime)', () => {
  it('counts the times in (earliest, now] and gives the latest and the next', () => {
    const m = missedTimes(parseSchedule('* * * * *'), T('2026-01-01T00:00:00Z'), T('2026-01-01T00:03:30Z'));
    assert.equal(m.count, 3);
    assert.equal(m.mostRecent?.toISOString(), '2026-01-01T00:03:00.000Z');
    assert.equal(m.next.toISOString(), '2026-01-01T00:04:00.000Z');
  });

  it('none yet', () => {
    const m = missedTimes(parseSchedule('0 * * * *'), T('2026-01-01T00:00:00Z'), T('2026-01-01T00:59:59Z'));
    assert.equal(m.count, 0);
    assert.equal(m.mostRecent, undefined);
  });

  it('stops counting at the cap but still finds the latest time of a long backlog', () => {
    for (const spec of ['* * * * *', '@every 7m']) {
      const s = parseSchedule(spec);
      const m = missedTimes(s, T('2026-01-01T00:00:00Z'), T('2026-03-01T00:03:30Z'), 101);
      assert.equal(m.count, 101, spec);
      assert.ok(m.mostRecent!.getTime() <= T('2026-03-01T00:03:30Z').getTime(), spec);
      assert.ok(m.next.getTime() > T('2026-03-01T00:03:30Z').getTime(), spec);
      assert.equal(s.next(m.mostRecent!).getTime(), m.next.getTime(), spec);
    }
  });
});

describe('time zones', () => {
  it('knows IANA names and says what time.LoadLocation says of others', () => {
    assert.equal(timeZoneProblem('America/New_York'), undefined);
    assert.equal(timeZoneProblem('Mars/Olympus'), 'unknown time zone Mars/Olympus');
  });
});
