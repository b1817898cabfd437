// hostTimeZone (schedule.ts): where the snapshot schedule's zone comes from.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hostTimeZone, type TimeZoneSources } from './schedule.js';

/** A host with these zoneinfo files, this /etc/localtime link (undefined: a plain file) and $TZ. */
function host(opts: { tz?: string; link?: string; zones?: string[] }): TimeZoneSources {
  const zones = new Set((opts.zones ?? []).map((z) => `/usr/share/zoneinfo/${z}`));
  return {
    env: opts.tz === undefined ? {} : { TZ: opts.tz },
    readLink: (path) => {
      assert.equal(path, '/etc/localtime');
      if (opts.link === undefined) throw Object.assign(new Error('EINVAL'), { code: 'EINVAL' });
      return opts.link;
    },
    exists: (path) => zones.has(path),
  };
}

/** What ICU says, as hostTimeZone names it. */
const icu = () => {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  return zone === 'Etc/UTC' ? 'UTC' : zone;
};

describe('hostTimeZone', () => {
  const zones = ['Europe/Paris', 'America/New_York', 'Asia/Tokyo', 'America/Argentina/Buenos_Aires'];

  it('takes the zone /etc/localtime links to, as Go finds Local', () => {
    assert.equal(hostTimeZone(host({ link: '/usr/share/zoneinfo/Europe/Paris', zones })), 'Europe/Paris');
    assert.equal(hostTimeZone(host({ link: '../usr/share/zoneinfo/Asia/Tokyo', zones })), 'Asia/Tokyo');
    assert.equal(
      hostTimeZone(host({ link: '/usr/share/zoneinfo/posix/America/New_York', zones })),
      'America/New_York',
    );
    assert.equal(
      hostTimeZone(host({ link: '/usr/share/zoneinfo/America/Argentina/Buenos_Aires', zones })),
      'America/Argentina/Buenos_Aires',
    );
  });

  it('names every spelling of UTC "UTC" (luxon computes only that one without ICU)', () => {
    for (const link of [
      '/usr/share/zoneinfo/Etc/UTC',
      '/usr/share/zoneinfo/UTC',
      '/usr/share/zoneinfo/Etc/GMT',
    ])
      assert.equal(hostTimeZone(host({ link })), 'UTC', link);
    for (const tz of ['', ':', 'UTC', ':Etc/UTC', 'Etc/Zulu', 'GMT'])
      assert.equal(hostTimeZone(host({ tz })), 'UTC', tz);
  });

  it('prefers $TZ to /etc/localtime', () => {
    assert.equal(
      hostTimeZone(host({ tz: 'Asia/Tokyo', link: '/usr/share/zoneinfo/Europe/Paris', zones })),
      'Asia/Tokyo',
    );
    assert.equal(hostTimeZone(host({ tz: ':America/New_York', zones })), 'America/New_York');
  });

  it('asks ICU when the files do not name a known zone', () => {
    // A plain /etc/localtime, a link out of zoneinfo, an unknown or POSIX-rule $TZ.
    assert.equal(hostTimeZone(host({ zones })), icu());
    assert.equal(hostTimeZone(host({ link: '/etc/zones/mine', zones })), icu());
    assert.equal(hostTimeZone(host({ link: '/usr/share/zoneinfo/Mars/Olympus', zones })), icu());
    assert.equal(hostTimeZone(host({ tz: 'CET-1CEST,M3.5.0,M10.5.0/3', zones })), icu());
    assert.equal(hostTimeZone(host({ tz: '/etc/../../x', zones })), icu());
  });
});
