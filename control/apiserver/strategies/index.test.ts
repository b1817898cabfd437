import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findResource, RESOURCES } from '../resources.js';
import { nameValidatorFor, strategyFor } from './index.js';

describe('strategyFor', () => {
  it('has a strategy for every served resource', () => {
    for (const r of RESOURCES) assert.ok(strategyFor(r), `${r.group}/${r.resource}`);
  });

  it('refuses an unknown resource', () => {
    assert.throws(
      () => strategyFor({ ...findResource('', 'v1', 'pods')!, resource: 'widgets' }),
      /no strategy/,
    );
  });

  it('names the same selectable fields for an empty object as for a full one', () => {
    for (const r of RESOURCES) {
      const s = strategyFor(r);
      const empty = Object.keys(s.selectableFields({ metadata: { name: '', namespace: '' } })).sort();
      const full = Object.keys(
        s.selectableFields({
          metadata: { name: 'x', namespace: 'y' },
          spec: { nodeName: 'n' },
          status: { phase: 'P' },
        }),
      ).sort();
      assert.deepEqual(full, empty, r.resource);
      assert.ok(empty.includes('metadata.name'), r.resource);
      assert.equal(empty.includes('metadata.namespace'), r.namespaced, r.resource);
    }
  });

  it('gives generation to the workloads, autoscalers, budgets, endpointslices and CRDs only', () => {
    const withGeneration = RESOURCES.filter((r) => strategyFor(r).generationFields.length > 0).map(
      (r) => `${r.group}/${r.resource}`,
    );
    assert.deepEqual(withGeneration.sort(), [
      'apiextensions.k8s.io/customresourcedefinitions',
      'apps/daemonsets',
      'apps/deployments',
      'apps/replicasets',
      'apps/statefulsets',
      // autoscaling/v1 and autoscaling/v2, one stored kind
      'autoscaling/horizontalpodautoscalers',
      'autoscaling/horizontalpodautoscalers',
      'batch/cronjobs',
      'batch/jobs',
      'discovery.k8s.io/endpointslices',
      'policy/poddisruptionbudgets',
    ]);
  });
});

describe('nameValidatorFor', () => {
  const CASES: [string, string, string, boolean][] = [
    ['', 'services', 'my-svc', true],
    ['', 'services', '1svc', false],
    ['', 'services', 'a.b', false],
    ['', 'namespaces', 'team-a', true],
    ['', 'namespaces', 'team.a', false],
    ['', 'pods', 'web.v1', true],
    ['', 'nodes', 'node-1.example.com', true],
    ['apps', 'deployments', 'Spring', false],
  ];
  for (const [group, resource, name, ok] of CASES) {
    it(`${resource}: ${name} is ${ok ? 'valid' : 'invalid'}`, () => {
      const r = RESOURCES.find((x) => x.group === group && x.resource === resource)!;
      assert.equal(nameValidatorFor(r)(name, false).length === 0, ok);
    });
  }
});

describe('malformed objects', () => {
  const junk: unknown[] = [null, 1, 'x', [], {}, [1, 'a', null], { a: 1 }, true];
  const shapes = (g: unknown): Record<string, unknown>[] => [
    {
      metadata: {
        name: 'x',
        namespace: 'default',
        labels: g,
        annotations: g,
        finalizers: g,
        ownerReferences: [g],
      },
      spec: g,
      status: g,
      data: g,
      subsets: g,
      endpoints: g,
      ports: g,
      involvedObject: g,
      regarding: g,
    },
    {
      metadata: { name: 'x', namespace: 'default' },
      spec: {
        containers: [
          g,
          { name: g, image: g, ports: [g, { containerPort: g }], env: [g], resources: { limits: g } },
        ],
        volumes: [g, { name: g, secret: g }],
        template: { metadata: g, spec: { containers: g } },
        selector: g,
        strategy: g,
        tolerations: [g],
        ports: [g, { port: g, targetPort: g }],
        taints: [g],
      },
    },
  ];

  it('never make a strategy throw (wrong JSON types become errors or are ignored)', () => {
    for (const r of RESOURCES) {
      const s = strategyFor(r);
      for (const g of junk) {
        for (const shape of shapes(g)) {
          const obj = structuredClone(shape);
          s.prepareForCreate(obj);
          s.defaults(obj);
          s.validate(obj);
          const next = structuredClone(shape);
          s.prepareForUpdate(next, obj);
          s.defaults(next);
          s.validate(next);
          s.validateUpdate(next, obj);
          const status = structuredClone(shape);
          s.prepareForStatusUpdate(status, obj);
          s.validateStatusUpdate(status, obj);
          s.selectableFields(status);
        }
      }
    }
  });
});
