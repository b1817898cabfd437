/**
 * The HPA controller against the real API server in process, with a fake MetricsSource
 * (the usage the test sets) and a FakeClock driven one sync period (15 s) at a time: the
 * target is a ReplicaSet whose pods the test creates Running and Ready, so the scale the
 * controller writes is what is checked (no ReplicaSet controller runs).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../../api/clock.js';
import { waitFor } from '../../../api/client/testing.js';
import { resources } from '../../../api/client/resource.js';
import type { CoreEvent, HorizontalPodAutoscaler, Pod, ReplicaSet } from '../../../api/types.js';
import { startTestApi, type TestApi } from '../../../test/support/api.js';
import { silentLogger } from '../context.js';
import { ControllerManager } from '../manager.js';
import { makeReplicaSet, until } from '../testing.js';
import { HorizontalController } from './controller.js';
import type { MetricsSource } from './metrics.js';
import type { PodMetricsInfo } from './replica-calculator.js';

const NS = 'default';
let api: TestApi;
let clock: FakeClock;
let hpaController: HorizontalController | undefined;
let ac: AbortController;
let done: Promise<void>;
/** Millicores each pod uses now. */
let usage = 0;

const metrics: MetricsSource = {
  resourceMetric(): Promise<PodMetricsInfo> {
    const m: PodMetricsInfo = new Map();
    for (const name of ['web-0', 'web-1'])
      m.set(name, { value: usage, timestamp: clock.now(), windowMs: 15_000 });
    return Promise.resolve(m);
  },
};

async function replicas(): Promise<number> {
  return (await api.client.get<ReplicaSet>(resources.replicasets, NS, 'web')).spec.replicas ?? 0;
}

async function hpa(): Promise<HorizontalPodAutoscaler> {
  return api.client.get<HorizontalPodAutoscaler>(resources.horizontalpodautoscalers, NS, 'web');
}

function condition(h: HorizontalPodAutoscaler, type: string) {
  return h.status?.conditions?.find((c) => c.type === type);
}

/** Moves the clock by one sync period and waits until the sync it starts has finished. */
async function nextSync(): Promise<void> {
  const target = hpaController!.syncs + 1;
  await clock.advance(15_000);
  await waitFor(`HPA sync ${target}`, () => hpaController!.syncs >= target);
}

before(async () => {
  api = await startTestApi();
  const rs = makeReplicaSet(NS, 'web', { replicas: 2 });
  await api.client.create(resources.replicasets, rs);
  const started = new Date(Date.now() - 600_000).toISOString();
  for (const name of ['web-0', 'web-1']) {
    await api.client.create<Pod>(resources.pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS, labels: { app: 'web' } },
      spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '100m' } } }] },
    } as Pod);
    await api.client.patch(
      resources.pods,
      NS,
      name,
      'merge',
      {
        status: {
          phase: 'Running',
          startTime: started,
          conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: started }],
        },
      },
      { subresource: 'status' },
    );
  }
  clock = new FakeClock(Date.now());
  ac = new AbortController();
  done = new ControllerManager({
    client: api.client,
    controllers: {
      horizontalpodautoscaling: (ctx) => (hpaController = new HorizontalController(ctx, { metrics })),
    },
    clock,
    logger: silentLogger,
  }).run(ac.signal);
});

after(async () => {
  ac.abort();
  await done;
  await api.stop();
});

describe('HorizontalPodAutoscaler controller', () => {
  it('scales up when utilization is above target, with the SuccessfulRescale event and status', async () => {
    usage = 90; // 90 % of 100m
    await api.client.create<HorizontalPodAutoscaler>(resources.horizontalpodautoscalers, {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'web', namespace: NS },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web' },
        minReplicas: 1,
        maxReplicas: 5,
        metrics: [
          {
            type: 'Resource',
            resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } },
          },
        ],
        behavior: { scaleDown: { stabilizationWindowSeconds: 60 } },
      },
    });
    // The first sync comes one period after the informer saw the HPA, whenever that was:
    // time moves in 1 s steps so that it stops within a second of that sync, long before
    // the next one is due.
    await waitFor('first HPA sync', async () => {
      if (hpaController!.syncs >= 1) return true;
      await clock.advance(1000);
      return hpaController!.syncs >= 1;
    });
    assert.equal(await replicas(), 4); // ceil(90/50 × 2)
    const h = await hpa();
    assert.equal(h.status?.desiredReplicas, 4);
    assert.deepEqual(h.status?.currentMetrics, [
      {
        type: 'Resource',
        resource: { name: 'cpu', current: { averageUtilization: 90, averageValue: '90m' } },
      },
    ]);
    assert.equal(condition(h, 'AbleToScale')?.reason, 'SucceededRescale');
    assert.equal(condition(h, 'ScalingActive')?.reason, 'ValidMetricFound');
    assert.ok(h.status?.lastScaleTime);
    const event = await until('SuccessfulRescale event', async () => {
      const list = await api.client.list<CoreEvent>(resources.events, { namespace: NS });
      return list.items.find((e) => e.reason === 'SuccessfulRescale');
    });
    assert.equal(
      event.message,
      'New size: 4; reason: cpu resource utilization (percentage of request) above target',
    );
    assert.equal(event.involvedObject.kind, 'HorizontalPodAutoscaler');
  });

  it('holds a scale-down for the stabilization window, then scales down to minReplicas', async () => {
    usage = 10;
    await nextSync();
    let h = await hpa();
    assert.equal(await replicas(), 4);
    assert.equal(condition(h, 'AbleToScale')?.reason, 'ScaleDownStabilized');
    assert.equal(h.status?.desiredReplicas, 4);
    // The 4 recommended 15 s ago leaves the 60 s window after 4 more periods.
    for (let i = 0; i < 4 && (await replicas()) === 4; i++) await nextSync();
    assert.equal(await replicas(), 1);
    h = await hpa();
    // Status reports the count the sync found, and the one it set.
    assert.deepEqual([h.status?.currentReplicas, h.status?.desiredReplicas], [4, 1]);
    assert.deepEqual(
      [condition(h, 'ScalingLimited')?.status, condition(h, 'ScalingLimited')?.reason],
      ['False', 'DesiredWithinRange'],
    );
    assert.equal(h.status?.currentMetrics?.[0]?.resource?.current.averageUtilization, 10);
  });

  it('keeps the count within maxReplicas (ScalingLimited TooManyReplicas)', async () => {
    usage = 1000; // 1000 % of request
    await nextSync();
    assert.equal(await replicas(), 5);
    const h = await hpa();
    assert.deepEqual(
      [condition(h, 'ScalingLimited')?.status, condition(h, 'ScalingLimited')?.reason],
      ['True', 'TooManyReplicas'],
    );
  });

  it('reports a missing scale target (FailedGetScale, AbleToScale False)', async () => {
    await api.client.patch(resources.horizontalpodautoscalers, NS, 'web', 'merge', {
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'nope' } },
    });
    await waitFor('AbleToScale False', async () => {
      await nextSync();
      return condition(await hpa(), 'AbleToScale')?.reason === 'FailedGetScale';
    });
    assert.equal(condition(await hpa(), 'AbleToScale')?.status, 'False');
  });
});
