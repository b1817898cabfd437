// Topology keys and matchLabelKeys are label keys, which may be names on Object.prototype
// (`constructor`, `toString`): a node or pod without that label does not have it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from '../../../../api/types.js';
import { hasAllTopologyKeys, podConstraints, type SpreadConstraint } from './constraints.js';

const constraint = (topologyKey: string): SpreadConstraint => ({
  maxSkew: 1,
  topologyKey,
  whenUnsatisfiable: 'DoNotSchedule',
  selects: () => true,
  minDomains: 1,
});

describe('PodTopologySpread with label keys named like Object.prototype members', () => {
  for (const key of ['constructor', 'toString', 'hasOwnProperty']) {
    it(`a node without the label ${key} lacks that topology key`, () => {
      assert.equal(hasAllTopologyKeys({ 'kubernetes.io/hostname': 'n1' }, [constraint(key)]), false);
      assert.equal(hasAllTopologyKeys({ [key]: 'zone-a' }, [constraint(key)]), true);
    });

    it(`matchLabelKeys [${key}] adds nothing for a pod without that label`, () => {
      const pod = (labels: Record<string, string>): Pod =>
        ({
          metadata: { name: 'p', namespace: 'default', labels },
          spec: {
            containers: [],
            topologySpreadConstraints: [
              {
                maxSkew: 1,
                topologyKey: 'zone',
                whenUnsatisfiable: 'DoNotSchedule',
                labelSelector: { matchLabels: { app: 'web' } },
                matchLabelKeys: [key],
              },
            ],
          },
        }) as unknown as Pod;
      const [c] = podConstraints(pod({ app: 'web' }), 'DoNotSchedule');
      assert.equal(c!.selects(pod({ app: 'web' })), true);
      const [withKey] = podConstraints(pod({ app: 'web', [key]: 'v1' }), 'DoNotSchedule');
      assert.equal(withKey!.selects(pod({ app: 'web', [key]: 'v1' })), true);
      assert.equal(withKey!.selects(pod({ app: 'web', [key]: 'v2' })), false);
    });
  }
});
