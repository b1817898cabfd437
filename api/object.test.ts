import assert from 'node:assert/strict';
import { it } from 'node:test';
import { rfc3339 } from './object.js';

it('formats metav1.Time at seconds precision', () => {
  assert.equal(rfc3339(new Date(Date.UTC(2026, 10, 30, 9, 5, 7, 999))), '2026-11-30T09:05:07Z');
});
