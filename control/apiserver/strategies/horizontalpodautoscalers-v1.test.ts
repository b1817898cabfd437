/**
 * autoscaling/v1 HorizontalPodAutoscalers over the stored autoscaling/v2 ones: the
 * conversion both ways (annotations carry what v1 cannot say), and through the API
 * server, the real kubectl: `kubectl autoscale` (which sends autoscaling/v1) and
 * `kubectl get hpa` (which reads the preferred autoscaling/v2).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resources } from '../../../api/client/resource.js';
import type { KubeObject } from '../../../api/object.js';
import type { HorizontalPodAutoscaler } from '../../../api/types.js';
import { startTestApi, type TestApi } from '../../../test/support/api.js';
import { makeReplicaSet } from '../../controllers/testing.js';
import {
  BEHAVIOR_ANNOTATION,
  CONDITIONS_ANNOTATION,
  METRIC_SPECS_ANNOTATION,
  hpaFromV1,
  hpaToV1,
} from './horizontalpodautoscalers-v1.js';

const V2: KubeObject = {
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name: 'web', namespace: 'default', annotations: { keep: 'me' } },
  spec: {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    minReplicas: 1,
    maxReplicas: 5,
    metrics: [
      {
        type: 'Resource',
        resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } },
      },
      {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } },
      },
    ],
    behavior: { scaleDown: { stabilizationWindowSeconds: 0 } },
  },
  status: {
    currentReplicas: 2,
    desiredReplicas: 3,
    currentMetrics: [
      { type: 'Resource', resource: { name: 'memory', current: { averageValue: '50Mi' } } },
      {
        type: 'Resource',
        resource: { name: 'cpu', current: { averageUtilization: 12, averageValue: '12m' } },
      },
    ],
    conditions: [{ type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale' }],
  },
};

describe('autoscaling/v1 conversion', () => {
  it('v2 → v1: the cpu target and utilization in v1 fields, the rest in annotations', () => {
    const v1 = hpaToV1(V2);
    assert.equal(v1.apiVersion, 'autoscaling/v1');
    assert.deepEqual(v1.spec, {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      minReplicas: 1,
      maxReplicas: 5,
      targetCPUUtilizationPercentage: 50,
    });
    assert.deepEqual(v1.status, {
      currentReplicas: 2,
      desiredReplicas: 3,
      currentCPUUtilizationPercentage: 12,
    });
    const a = v1.metadata!.annotations!;
    assert.equal(a.keep, 'me');
    assert.deepEqual(JSON.parse(a[METRIC_SPECS_ANNOTATION]!), [
      { type: 'Resource', resource: { name: 'memory', targetAverageValue: '100Mi' } },
    ]);
    assert.deepEqual(JSON.parse(a[BEHAVIOR_ANNOTATION]!), { scaleDown: { stabilizationWindowSeconds: 0 } });
    assert.equal(JSON.parse(a[CONDITIONS_ANNOTATION]!)[0].reason, 'ReadyForNewScale');
  });

  it('v1 → v2 restores the v2 object (metrics in upstream order: annotation ones first)', () => {
    assert.deepEqual(hpaFromV1(hpaToV1(V2)), V2);
  });

  it('a v1 HPA without a CPU target gets the implicit cpu 80 % metric', () => {
    const v2 = hpaFromV1({
      apiVersion: 'autoscaling/v1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'x' },
      spec: { scaleTargetRef: { kind: 'Deployment', name: 'x' }, maxReplicas: 3 },
    });
    assert.deepEqual((v2.spec as HorizontalPodAutoscaler['spec']).metrics, [
      {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } },
      },
    ]);
  });
});

describe('autoscaling/v1 through the API server and kubectl', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
    await api.client.create(resources.deployments, {
      ...makeReplicaSet('default', 'web', { replicas: 1 }),
      apiVersion: 'apps/v1',
      kind: 'Deployment',
    });
  });
  after(async () => {
    await api.stop();
  });

  it('kubectl autoscale creates the HPA, stored once and read in both versions', async () => {
    const r = await api.kubectl('autoscale', 'deployment', 'web', '--cpu-percent=50', '--min=1', '--max=5');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /horizontalpodautoscaler.autoscaling\/web autoscaled/);
    const v2 = await api.client.get<HorizontalPodAutoscaler>(
      resources.horizontalpodautoscalers,
      'default',
      'web',
    );
    assert.equal(v2.apiVersion, 'autoscaling/v2');
    assert.deepEqual(v2.spec.metrics, [
      {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } },
      },
    ]);
    assert.deepEqual(v2.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' });
    const v1 = await api.client.request<KubeObject>(
      'GET',
      '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/web',
    );
    assert.equal(v1.apiVersion, 'autoscaling/v1');
    assert.equal((v1.spec as { targetCPUUtilizationPercentage?: number }).targetCPUUtilizationPercentage, 50);
    assert.equal(v1.metadata?.resourceVersion, v2.metadata.resourceVersion);
    assert.equal(v1.metadata?.uid, v2.metadata.uid);
  });

  it('kubectl get hpa shows REFERENCE, TARGETS as cpu: <unknown>/50%, MINPODS, MAXPODS, REPLICAS', async () => {
    const r = await api.kubectl('get', 'hpa');
    assert.equal(r.code, 0, r.stderr);
    const [header, row] = r.stdout.trim().split('\n');
    assert.deepEqual(header!.split(/\s+/), [
      'NAME',
      'REFERENCE',
      'TARGETS',
      'MINPODS',
      'MAXPODS',
      'REPLICAS',
      'AGE',
    ]);
    assert.match(row!, /^web\s+Deployment\/web\s+cpu: <unknown>\/50%\s+1\s+5\s+0\s+\S+$/);
  });

  it('a v2 status write shows in v1 as currentCPUUtilizationPercentage', async () => {
    const v2 = await api.client.get<HorizontalPodAutoscaler>(
      resources.horizontalpodautoscalers,
      'default',
      'web',
    );
    v2.status = {
      currentReplicas: 1,
      desiredReplicas: 1,
      currentMetrics: [
        {
          type: 'Resource',
          resource: { name: 'cpu', current: { averageUtilization: 12, averageValue: '12m' } },
        },
      ],
    };
    await api.client.updateStatus(resources.horizontalpodautoscalers, v2);
    const v1 = await api.client.request<KubeObject>(
      'GET',
      '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/web',
    );
    assert.equal(
      (v1.status as { currentCPUUtilizationPercentage?: number }).currentCPUUtilizationPercentage,
      12,
    );
    const r = await api.kubectl('get', 'hpa', 'web', '--no-headers');
    assert.match(r.stdout, /cpu: 12%\/50%/);
  });

  it('a v1 watch sees a write made through v2, converted', async () => {
    const v1Ref = { ...resources.horizontalpodautoscalers, version: 'v1' };
    const listed = await api.client.list(v1Ref, { namespace: 'default' });
    const stream = await api.client.watch(v1Ref, {
      namespace: 'default',
      resourceVersion: listed.metadata?.resourceVersion ?? '',
    });
    try {
      await api.client.patch(resources.horizontalpodautoscalers, 'default', 'web', 'merge', {
        spec: {
          metrics: [
            {
              type: 'Resource',
              resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } },
            },
          ],
        },
      });
      for await (const ev of stream) {
        assert.equal(ev.type, 'MODIFIED');
        assert.equal(ev.object.apiVersion, 'autoscaling/v1');
        assert.equal(
          (ev.object.spec as { targetCPUUtilizationPercentage?: number }).targetCPUUtilizationPercentage,
          70,
        );
        break;
      }
    } finally {
      stream.stop();
    }
  });

  it('refuses a v1 HPA with maxReplicas below minReplicas with upstream words, storing nothing', async () => {
    const r = await api.kubectlIn(
      JSON.stringify({
        apiVersion: 'autoscaling/v1',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'bad' },
        spec: {
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
          minReplicas: 4,
          maxReplicas: 2,
        },
      }),
      'create',
      '-f',
      '-',
    );
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /spec\.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`/,
    );
    const list = await api.client.list(resources.horizontalpodautoscalers, { namespace: 'default' });
    assert.deepEqual(
      list.items.map((h) => h.metadata?.name),
      ['web'],
    );
  });
});
