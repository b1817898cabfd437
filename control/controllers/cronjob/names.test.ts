import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jobNameFor, rfc3339In } from './index.js';

const T = (s: string) => new Date(s);

describe('CronJob Job names and scheduled timestamps', () => {
  it('names a Job <cronjob>-<minutes since the epoch> (getJobName)', () =>
    assert.equal(jobNameFor('hello', T('2026-01-01T00:01:00Z')), 'hello-29453761'));

  it('writes the scheduled timestamp in the zone, as Go formats RFC 3339', () => {
    assert.equal(rfc3339In(T('2026-01-01T01:00:00Z'), 'UTC'), '2026-01-01T01:00:00Z');
    assert.equal(rfc3339In(T('2026-01-01T01:00:00Z'), 'Europe/Berlin'), '2026-01-01T02:00:00+01:00');
    assert.equal(rfc3339In(T('2026-07-01T01:00:00Z'), 'America/New_York'), '2026-06-30T21:00:00-04:00');
    assert.equal(rfc3339In(T('2026-01-01T01:00:00Z'), 'Asia/Kolkata'), '2026-01-01T06:30:00+05:30');
  });
});
