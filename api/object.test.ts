import assert from 'node:assert/strict';
import { it } from 'node:test';
import { rfc3339 } from './object.js';

it('formats metav1.Time at seconds precision', () => {
  assert.equal(rfc3339(new Date(Date.UTC(2026, 10, 30, 9, 5, 7, 999))), '2026-11-30T09:05:07Z');
});

it('formats each date on its own, whatever it formatted before', () => {
  const at = (ms: number) => rfc3339(new Date(Date.UTC(2026, 10, 30, 9, 5, 7) + ms));
  for (const [ms, want] of [
    [0, '2026-11-30T09:05:07Z'],
    [999, '2026-11-30T09:05:07Z'],
    [1000, '2026-11-30T09:05:08Z'],
    [-1, '2026-11-30T09:05:06Z'],
    [3_600_000, '2026-11-30T10:05:07Z'],
    [-1, '2026-11-30T09:05:06Z'],
  ] as const)
    assert.equal(at(ms), want, `+${ms} ms`);
  assert.equal(rfc3339(new Date(-1500)), '1969-12-31T23:59:58Z');
  assert.throws(() => rfc3339(new Date(Number.NaN)), RangeError);
});
