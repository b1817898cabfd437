import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Node } from '../../../api/types.js';
import { computeZoneState, disruptionView, zoneKey } from './zones.js';

const node = (name: string, ready: 'True' | 'False' | 'Unknown', zone?: string): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: zone ? { 'topology.kubernetes.io/zone': zone } : {} },
  status: { conditions: [{ type: 'Ready', status: ready }] },
});

const stateCases: [string, (string | undefined)[], string][] = [
  ['all ready', ['True', 'True'], 'Normal'],
  ['one of two down', ['True', 'Unknown'], 'Normal'],
  ['none ready', ['Unknown', 'False'], 'FullDisruption'],
  ['no Ready condition counts as not ready', [undefined], 'FullDisruption'],
  ['3 of 5 down (60 %)', ['True', 'True', 'False', 'Unknown', 'Unknown'], 'PartialDisruption'],
  ['3 of 6 down (50 %)', ['True', 'True', 'True', 'False', 'Unknown', 'Unknown'], 'Normal'],
  ['2 of 3 down: not more than 2', ['True', 'False', 'Unknown'], 'Normal'],
];
for (const [name, ready, want] of stateCases) {
  test(`computeZoneState: ${name}`, () => assert.equal(computeZoneState(ready), want));
}

test('zoneKey: unlabeled nodes share one zone; region and zone make the key', () => {
  assert.equal(zoneKey(node('a', 'True')), '');
  assert.notEqual(zoneKey(node('a', 'True', 'z1')), zoneKey(node('b', 'True', 'z2')));
  assert.equal(zoneKey(node('a', 'True', 'z1')), zoneKey(node('b', 'False', 'z1')));
});

test('disruptionView: every zone down clears, a partially disrupted zone holds, else normal', () => {
  const a = node('a', 'Unknown', 'z1');
  const b = node('b', 'Unknown', 'z2');
  assert.deepEqual(disruptionView([a, b], a), { mode: 'clear', allFullyDisrupted: true });
  // b is Ready in its latest state (passed as `node`), which wins over the listed copy.
  assert.deepEqual(disruptionView([a, b], node('b', 'True', 'z2')), {
    mode: 'normal',
    allFullyDisrupted: false,
  });
  // A fully disrupted zone next to a healthy one still taints.
  assert.deepEqual(disruptionView([a, node('b', 'True', 'z2')], a), {
    mode: 'normal',
    allFullyDisrupted: false,
  });
  const z = ['True', 'True', 'Unknown', 'Unknown', 'Unknown'].map((r, i) => node(`n${i}`, r as 'True', 'z'));
  assert.deepEqual(disruptionView(z, z[2]!), { mode: 'hold', allFullyDisrupted: false });
  assert.deepEqual(disruptionView([], a), { mode: 'clear', allFullyDisrupted: true });
});
