import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Node } from '../../../api/types.js';
import { computeZoneState, disruptionView, zoneKey, ZoneCounts } from './zones.js';

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

/** disruptionView as it was computed before ZoneCounts: from the list of every node, each time. */
function listedView(nodes: readonly Node[], latest: Node): { mode: string; allFullyDisrupted: boolean } {
  const byZone = new Map<string, (string | undefined)[]>();
  for (const n of [...nodes.filter((n) => n.metadata.name !== latest.metadata.name), latest]) {
    const list = byZone.get(zoneKey(n)) ?? [];
    list.push(n.status?.conditions?.find((c) => c.type === 'Ready')?.status);
    byZone.set(zoneKey(n), list);
  }
  const states = new Map([...byZone].map(([k, v]) => [k, computeZoneState(v)] as const));
  const allFullyDisrupted = states.size > 0 && [...states.values()].every((s) => s === 'FullDisruption');
  if (allFullyDisrupted) return { mode: 'clear', allFullyDisrupted };
  const zone = zoneKey(latest);
  if (states.get(zone) === 'PartialDisruption' && (byZone.get(zone)?.length ?? 0) <= 50)
    return { mode: 'hold', allFullyDisrupted };
  return { mode: 'normal', allFullyDisrupted };
}

test('ZoneCounts, kept through adds, changes (of readiness and of zone) and deletes, answers as the list of every node', () => {
  // A fixed pseudo-random sequence (a linear congruential generator), so a failure repeats.
  let seed = 42;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const zones = [undefined, 'z1', 'z2'];
  const statuses = ['True', 'False', 'Unknown'] as const;
  const counts = new ZoneCounts();
  const nodes = new Map<string, Node>();
  const modes = new Set<string>();
  for (let step = 0; step < 3000; step++) {
    const name = `n${random(12)}`;
    if (random(5) === 0) {
      nodes.delete(name);
      counts.delete(name);
    } else {
      // Mostly Ready, so that zones pass through every state.
      const status = random(3) === 0 ? statuses[random(3)]! : 'True';
      const n = node(name, status, zones[random(3)]);
      nodes.set(name, n);
      counts.set(n);
    }
    // The node asked about in its latest state: one counted, changed or not, or a new one.
    const asked = node(`n${random(14)}`, statuses[random(3)]!, zones[random(3)]);
    const view = counts.view(asked);
    assert.deepEqual(view, listedView([...nodes.values()], asked), `step ${step}`);
    modes.add(view.mode);
  }
  assert.deepEqual([...modes].sort(), ['clear', 'hold', 'normal']);
});
