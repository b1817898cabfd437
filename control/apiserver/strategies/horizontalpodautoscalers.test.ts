import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../api/object.js';
import { assertErrors, create, modified, updateStatus, type Json } from './testing.js';

const GVR = 'autoscaling/v2/horizontalpodautoscalers';

/** What `kubectl autoscale deployment web --max=5` sends, as v2. */
const HPA: KubeObject = {
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name: 'web', namespace: 'default' },
  spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 5 },
};

describe('HorizontalPodAutoscaler strategy', () => {
  it('defaults minReplicas 1 and the cpu 80 % metric, no behavior, status {desiredReplicas: 0}', () => {
    const { obj, errs } = create(GVR, { ...HPA, status: { currentReplicas: 3, desiredReplicas: 3 } });
    assert.deepEqual(errs, []);
    assert.deepEqual(obj.spec, {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      maxReplicas: 5,
      minReplicas: 1,
      metrics: [
        {
          type: 'Resource',
          resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } },
        },
      ],
    });
    assert.deepEqual(obj.status, { desiredReplicas: 0 });
  });

  it('fills a given behavior with the upstream rules (GenerateHPAScaleUpRules / ScaleDownRules)', () => {
    const { obj, errs } = create(
      GVR,
      modified(HPA, (h: Json) => {
        h.spec.behavior = { scaleDown: { stabilizationWindowSeconds: 0 } };
      }),
    );
    assert.deepEqual(errs, []);
    assert.deepEqual((obj.spec as Json).behavior, {
      scaleDown: {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max',
        policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }],
      },
      scaleUp: {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max',
        policies: [
          { type: 'Pods', value: 4, periodSeconds: 15 },
          { type: 'Percent', value: 100, periodSeconds: 15 },
        ],
      },
    });
  });

  const cases: [string, (h: Json) => void, [string, string][], RegExp?][] = [
    [
      'maxReplicas below minReplicas',
      (h) => {
        h.spec.minReplicas = 3;
        h.spec.maxReplicas = 2;
      },
      [['spec.maxReplicas', 'Invalid']],
      /must be greater than or equal to `minReplicas`/,
    ],
    [
      'maxReplicas 0 (also below the defaulted minReplicas 1)',
      (h) => (h.spec.maxReplicas = 0),
      [
        ['spec.maxReplicas', 'Invalid'],
        ['spec.maxReplicas', 'Invalid'],
      ],
      /must be greater than 0/,
    ],
    ['minReplicas 0', (h) => (h.spec.minReplicas = 0), [['spec.minReplicas', 'Invalid']]],
    [
      'no scaleTargetRef',
      (h) => delete h.spec.scaleTargetRef,
      [
        ['spec.scaleTargetRef.kind', 'Required'],
        ['spec.scaleTargetRef.name', 'Required'],
      ],
    ],
    [
      'a metric without type',
      (h) =>
        (h.spec.metrics = [
          { resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 5 } } },
        ]),
      [
        ['spec.metrics[0].type', 'Required'],
        ['spec.metrics[0].resource', 'Forbidden'],
      ],
      /must specify a metric source type/,
    ],
    [
      'a Resource metric without its source',
      (h) => (h.spec.metrics = [{ type: 'Resource' }]),
      [['spec.metrics[0].resource', 'Required']],
      /must populate information for the given metric source/,
    ],
    [
      'both utilization and value',
      (h) =>
        (h.spec.metrics = [
          {
            type: 'Resource',
            resource: {
              name: 'memory',
              target: { type: 'AverageValue', averageValue: '100Mi', averageUtilization: 5 },
            },
          },
        ]),
      [['spec.metrics[0].resource.target.averageValue', 'Forbidden']],
    ],
    [
      'a zero averageValue and a bad target type',
      (h) =>
        (h.spec.metrics = [
          { type: 'Resource', resource: { name: 'memory', target: { type: 'Raw', averageValue: '0' } } },
        ]),
      [
        ['spec.metrics[0].resource.target.type', 'Invalid'],
        ['spec.metrics[0].resource.target.averageValue', 'Invalid'],
      ],
    ],
    [
      'a ContainerResource metric without its container',
      (h) =>
        (h.spec.metrics = [
          {
            type: 'ContainerResource',
            containerResource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } },
          },
        ]),
      [['spec.metrics[0].containerResource.container', 'Required']],
      /must populate container name/,
    ],
    [
      'behavior out of range',
      (h) =>
        (h.spec.behavior = {
          scaleUp: { stabilizationWindowSeconds: 4000, policies: [] },
          scaleDown: { selectPolicy: 'Most', policies: [{ type: 'Pods', value: 0, periodSeconds: 2000 }] },
        }),
      [
        ['spec.behavior.scaleUp.stabilizationWindowSeconds', 'Invalid'],
        ['spec.behavior.scaleUp.policies', 'Required'],
        ['spec.behavior.scaleDown.selectPolicy', 'NotSupported'],
        ['spec.behavior.scaleDown.policies[0].value', 'Invalid'],
        ['spec.behavior.scaleDown.policies[0].periodSeconds', 'Invalid'],
      ],
    ],
  ];
  for (const [name, edit, want, message] of cases) {
    it(`refuses ${name}`, () => {
      const { errs } = create(GVR, modified(HPA, edit));
      assertErrors(errs, want);
      if (message)
        assert.ok(
          errs.some((e) => message.test(e.message ?? '')),
          JSON.stringify(errs),
        );
    });
  }

  it('status writes keep the spec and refuse negative counts', () => {
    const stored = create(GVR, HPA).obj;
    const { obj, errs } = updateStatus(
      GVR,
      stored,
      modified(stored, (h: Json) => {
        h.spec.maxReplicas = 9;
        h.status = { currentReplicas: -1, desiredReplicas: 2 };
      }),
    );
    assert.equal((obj.spec as Json).maxReplicas, 5);
    assertErrors(errs, [['status.currentReplicas', 'Invalid']]);
  });
});
