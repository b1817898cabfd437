import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HorizontalPodAutoscaler } from '../../../api/types.js';
import { Recommender, scaleDownLimit, scaleUpLimit, filledRules, type ScalingRules } from './behavior.js';

const T0 = Date.UTC(2026, 0, 1);

function hpa(spec: Partial<HorizontalPodAutoscaler['spec']> = {}): HorizontalPodAutoscaler {
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'h', namespace: 'default' },
    spec: { scaleTargetRef: { kind: 'Deployment', name: 'd' }, maxReplicas: 10, minReplicas: 1, ...spec },
  };
}

describe('scaling policy limits (calculateScaleUpLimitWithScalingRules / ScaleDownLimitWithBehaviors)', () => {
  const up = filledRules(undefined, 'up');
  const down = filledRules(undefined, 'down');
  const cases: [string, 'up' | 'down', number, ScalingRules, { change: number; agoS: number }[], number][] = [
    ['default scale-up from 1: max(1 + 4, 1 × 2) = 5', 'up', 1, up, [], 5],
    ['default scale-up from 10: max(14, 20) = 20', 'up', 10, up, [], 20],
    ['Min picks the smaller change: min(14, 20) = 14', 'up', 10, { ...up, selectPolicy: 'Min' }, [], 14],
    ['Disabled: no change', 'up', 10, { ...up, selectPolicy: 'Disabled' }, [], 10],
    [
      'a scale-up 5 s ago counts: from 6 after +3, max(3 + 4, 3 × 2) = 7',
      'up',
      6,
      up,
      [{ change: 3, agoS: 5 }],
      7,
    ],
    ['a scale-up 20 s ago is past the 15 s period', 'up', 6, up, [{ change: 3, agoS: 20 }], 12],
    ['default scale-down: Percent 100 → 0', 'down', 8, down, [], 0],
    [
      'Pods 1 per 60 s after a scale-down 30 s ago: from 7 after -1, 8 - 1 = 7',
      'down',
      7,
      {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max',
        policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }],
      },
      [{ change: 1, agoS: 30 }],
      7,
    ],
    [
      'Percent 50 of 5 rounds down to 2',
      'down',
      5,
      {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max',
        policies: [{ type: 'Percent', value: 50, periodSeconds: 15 }],
      },
      [],
      2,
    ],
  ];
  for (const [name, dir, current, rules, events, want] of cases) {
    it(name, () => {
      const ev = events.map((e) => ({ change: e.change, at: T0 - e.agoS * 1000, outdated: false }));
      const got =
        dir === 'up' ? scaleUpLimit(current, ev, [], rules, T0) : scaleDownLimit(current, [], ev, rules, T0);
      assert.equal(got, want);
    });
  }
});

describe('Recommender.normalize', () => {
  it('without behavior: a scale-down waits for the 300 s window, then takes the highest recent recommendation', () => {
    const r = new Recommender();
    const h = hpa();
    r.recordInitial('k', 5, T0);
    const first = r.normalize(h, 'k', 5, 2, 1, T0 + 15_000);
    assert.equal(first.replicas, 5);
    assert.equal(first.conditions[0].reason, 'ScaleDownStabilized');
    assert.equal(r.normalize(h, 'k', 5, 2, 1, T0 + 200_000).replicas, 5);
    // The initial 5 is out of the window; 2 and 2 remain.
    const later = r.normalize(h, 'k', 5, 2, 1, T0 + 320_000);
    assert.equal(later.replicas, 2);
    assert.equal(later.conditions[0].reason, 'ReadyForNewScale');
  });

  it('without behavior: a scale-up is limited to max(2 × current, 4), then to maxReplicas', () => {
    const r = new Recommender();
    const n = r.normalize(hpa(), 'k', 1, 9, 1, T0);
    assert.equal(n.replicas, 4);
    assert.deepEqual([n.conditions[1].status, n.conditions[1].reason], ['True', 'ScaleUpLimit']);
    const m = r.normalize(hpa({ maxReplicas: 6 }), 'k2', 5, 9, 1, T0);
    assert.equal(m.replicas, 6);
    assert.equal(m.conditions[1].reason, 'TooManyReplicas');
  });

  it('with behavior: scaleDown window 0 scales down at once; minReplicas holds', () => {
    const r = new Recommender();
    const h = hpa({ minReplicas: 2, behavior: { scaleDown: { stabilizationWindowSeconds: 0 } } });
    r.recordInitial('k', 6, T0);
    const n = r.normalize(h, 'k', 6, 1, 2, T0 + 15_000);
    assert.equal(n.replicas, 2);
    assert.deepEqual([n.conditions[1].status, n.conditions[1].reason], ['True', 'TooFewReplicas']);
  });

  it('with behavior: the default 300 s scale-down window keeps the highest recommendation', () => {
    const r = new Recommender();
    const h = hpa({ behavior: { scaleUp: { stabilizationWindowSeconds: 0 } } });
    r.recordInitial('k', 4, T0);
    assert.equal(r.normalize(h, 'k', 4, 1, 1, T0 + 15_000).replicas, 4);
    assert.equal(r.normalize(h, 'k', 4, 1, 1, T0 + 301_000).replicas, 1);
  });

  it('with behavior: a scale-up window takes the lowest recent recommendation', () => {
    const r = new Recommender();
    const h = hpa({ behavior: { scaleUp: { stabilizationWindowSeconds: 60 } } });
    r.recordInitial('k', 2, T0);
    const n = r.normalize(h, 'k', 2, 8, 1, T0 + 15_000);
    assert.equal(n.replicas, 2);
    assert.equal(n.conditions[0].reason, 'ScaleUpStabilized');
    // Out of the window: 8, limited by the default policies to max(2 + 4, 2 × 2) = 6.
    assert.equal(r.normalize(h, 'k', 2, 8, 1, T0 + 61_000).replicas, 6);
  });

  it('with behavior: scale events feed the rate limit of the next period', () => {
    const r = new Recommender();
    const h = hpa({
      maxReplicas: 50,
      behavior: {
        scaleUp: { policies: [{ type: 'Pods', value: 2, periodSeconds: 60 }], selectPolicy: 'Max' },
      },
    });
    const a = r.normalize(h, 'k', 2, 20, 1, T0);
    assert.equal(a.replicas, 4);
    assert.equal(a.conditions[1].reason, 'ScaleUpLimit');
    r.storeScaleEvent(h, 'k', 2, 4, T0);
    // 30 s later the +2 still counts: the period started at 2, so 4 is the limit.
    assert.equal(r.normalize(h, 'k', 4, 20, 1, T0 + 30_000).replicas, 4);
    assert.equal(r.normalize(h, 'k', 4, 20, 1, T0 + 61_000).replicas, 6);
  });
});
