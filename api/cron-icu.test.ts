// A UTC schedule is computed without ICU (cron.ts sets the locale of cron-parser's luxon):
// its own process (node's test runner runs each file in one), with Intl.DateTimeFormat
// counted before luxon is first loaded.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

const made: string[] = [];
const RealDateTimeFormat = Intl.DateTimeFormat;
function CountingDateTimeFormat(...args: ConstructorParameters<typeof Intl.DateTimeFormat>) {
  made.push(new Error().stack ?? '');
  return new RealDateTimeFormat(...args);
}
Object.defineProperty(Intl, 'DateTimeFormat', {
  value: CountingDateTimeFormat,
  configurable: true,
  writable: true,
});

describe('parseSchedule in UTC', () => {
  it('makes no Intl.DateTimeFormat (whose first use maps ICU data into the process)', async () => {
    const { parseSchedule } = await import('./cron.js');
    const s = parseSchedule('0 */12 * * *', 'UTC');
    assert.equal(s.next(new Date('2026-01-01T05:00:00Z')).toISOString(), '2026-01-01T12:00:00.000Z');
    assert.equal(
      s.latest(new Date('2026-01-01T00:00:00Z'), new Date('2026-01-02T13:00:00Z')).toISOString(),
      '2026-01-02T12:00:00.000Z',
    );
    assert.deepEqual(made, []);
    // Another zone is computed through luxon's Intl-based zones, as it must be.
    const paris = parseSchedule('0 0 * * *', 'Europe/Paris');
    assert.equal(paris.next(new Date('2026-01-01T05:00:00Z')).toISOString(), '2026-01-01T23:00:00.000Z');
    assert.ok(made.length > 0);
  });
});
