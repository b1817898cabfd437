import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from '../../../api/types.js';
import { milliValue } from './metrics.js';
import {
  DEFAULT_CPU_INITIALIZATION_PERIOD_MS,
  DEFAULT_INITIAL_READINESS_DELAY_MS,
  DEFAULT_TOLERANCE,
  resourceReplicas,
  type PodMetricsInfo,
  type ResourceTarget,
} from './replica-calculator.js';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const CFG = {
  tolerance: DEFAULT_TOLERANCE,
  cpuInitializationPeriodMs: DEFAULT_CPU_INITIALIZATION_PERIOD_MS,
  initialReadinessDelayMs: DEFAULT_INITIAL_READINESS_DELAY_MS,
  now: NOW,
};
const iso = (ms: number) => new Date(ms).toISOString();

interface PodCase {
  /** Request of the one container, e.g. `1` (cpu) or `100Mi`; undefined: none. */
  request?: string;
  phase?: 'Pending' | 'Running' | 'Failed';
  ready?: 'True' | 'False' | 'none';
  /** Milliseconds before NOW the pod started; default 10 min (past the CPU initialization period). */
  startedAgo?: number;
  /** Milliseconds before NOW its Ready condition last changed; default startedAgo - 10 s. */
  transitionAgo?: number;
  deleting?: boolean;
  /** Usage in milli-units; undefined: no metric. */
  usage?: number;
  /** A second container `side` without requests. */
  sidecar?: boolean;
}

function pod(i: number, c: PodCase): Pod {
  const started = c.startedAgo ?? 600_000;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `p${i}`,
      namespace: 'default',
      ...(c.deleting ? { deletionTimestamp: iso(NOW) } : {}),
    },
    spec: {
      containers: [
        {
          name: 'c',
          image: 'busybox',
          resources: c.request === undefined ? {} : { requests: { cpu: c.request, memory: c.request } },
        },
        ...(c.sidecar ? [{ name: 'side', image: 'busybox' }] : []),
      ],
    },
    status: {
      phase: c.phase ?? 'Running',
      startTime: iso(NOW - started),
      conditions:
        c.ready === 'none'
          ? []
          : [
              {
                type: 'Ready',
                status: c.ready ?? 'True',
                lastTransitionTime: iso(NOW - (c.transitionAgo ?? started - 10_000)),
              },
            ],
    },
  } as Pod;
}

function metricsOf(pods: PodCase[]): PodMetricsInfo {
  const m: PodMetricsInfo = new Map();
  pods.forEach((c, i) => {
    if (c.usage !== undefined) m.set(`p${i}`, { value: c.usage, timestamp: NOW - 1000, windowMs: 30_000 });
  });
  return m;
}

const running = (usage: number, request = '1'): PodCase => ({ request, usage });

describe('resourceReplicas (GetResourceReplicas / GetRawResourceReplicas)', () => {
  const cases: {
    name: string;
    current: number;
    target: ResourceTarget;
    resource?: string;
    pods: PodCase[];
    container?: string;
    want?: { replicas: number; utilization?: number; rawUsage?: number };
    error?: RegExp;
  }[] = [
    {
      name: 'scale up: 3 pods at 90 % of 1 CPU for a 50 % target → ceil(1.8 × 3) = 6',
      current: 3,
      target: { utilization: 50 },
      pods: [running(900), running(900), running(900)],
      want: { replicas: 6, utilization: 90, rawUsage: 900 },
    },
    {
      name: 'scale down: 4 pods at 10 % for a 50 % target → ceil(0.2 × 4) = 1',
      current: 4,
      target: { utilization: 50 },
      pods: [running(100), running(100), running(100), running(100)],
      want: { replicas: 1, utilization: 10 },
    },
    {
      name: 'within the tolerance (54 % for 50 %): keep the count',
      current: 3,
      target: { utilization: 50 },
      pods: [running(540), running(540), running(540)],
      want: { replicas: 3, utilization: 54 },
    },
    {
      name: 'just outside the tolerance (56 % for 50 %): scale',
      current: 3,
      target: { utilization: 50 },
      pods: [running(560), running(560), running(560)],
      want: { replicas: 4, utilization: 56 },
    },
    {
      name: 'scale up with a missing metric: the missing pod counts as 0 → ceil(1.2 × 3) = 4',
      current: 3,
      target: { utilization: 50 },
      pods: [running(900), running(900), { request: '1' }],
      want: { replicas: 4, utilization: 90 },
    },
    {
      name: 'scale down with a missing metric: the missing pod counts as 100 % → 36 %, ceil(0.73 × 3) = 3',
      current: 3,
      target: { utilization: 50 },
      pods: [running(50), running(50), { request: '1' }],
      want: { replicas: 3, utilization: 5 },
    },
    {
      name: 'scale down with a missing metric below the target: ceil(((10+10+100)/4)/50 × 4)',
      current: 4,
      target: { utilization: 50 },
      pods: [running(100), running(100), running(0), { request: '1' }],
      // 100+100+0+1000 = 1200 / 4000 = 30 % → ratio 0.6 → ceil(0.6 × 4) = 3
      want: { replicas: 3, utilization: 6 },
    },
    {
      name: 'unready pods count as 0 on a scale-up (CPU): ceil((1800/3000×100)/50 × 3) = 4',
      current: 3,
      target: { utilization: 50 },
      pods: [
        running(900),
        running(900),
        { request: '1', usage: 900, ready: 'False', transitionAgo: 5000, startedAgo: 20_000 },
      ],
      want: { replicas: 4, utilization: 90 },
    },
    {
      name: 'a Pending pod is unready and counts as 0 on a scale-up',
      current: 2,
      target: { utilization: 50 },
      pods: [running(1000), { request: '1', phase: 'Pending' }],
      want: { replicas: 2, utilization: 100 },
    },
    {
      name: 'a pod within the CPU initialization period whose sample predates a window since readiness is unready',
      current: 2,
      target: { utilization: 50 },
      pods: [running(800), { request: '1', usage: 2000, startedAgo: 60_000, transitionAgo: 10_000 }],
      // second pod ignored (unready) on a scale-up: (800+0)/2000 = 40 % → direction changes → keep 2
      want: { replicas: 2, utilization: 80 },
    },
    {
      name: 'memory ignores readiness: an unready pod counts as measured',
      current: 2,
      target: { utilization: 50 },
      resource: 'memory',
      pods: [
        { request: '100', usage: 90_000 },
        { request: '100', usage: 90_000, ready: 'False' },
      ],
      want: { replicas: 4, utilization: 90 },
    },
    {
      name: 'deleted and Failed pods are ignored',
      current: 2,
      target: { utilization: 50 },
      pods: [
        running(1000),
        running(1000),
        { ...running(0), deleting: true },
        { ...running(0), phase: 'Failed' },
      ],
      want: { replicas: 4, utilization: 100 },
    },
    {
      name: 'AverageValue: 2 pods at 300m for 100m → 6',
      current: 2,
      target: { averageValue: 100 },
      pods: [running(300), running(300)],
      want: { replicas: 6, rawUsage: 300 },
    },
    {
      name: 'AverageValue scale-down with a missing pod counted at the target',
      current: 3,
      target: { averageValue: 100 },
      pods: [running(10), running(10), { request: '1' }],
      // (10+10+100)/3 = 40 → ratio 0.4 → ceil(0.4 × 3) = 2
      want: { replicas: 2, rawUsage: 10 },
    },
    {
      name: 'no pods',
      current: 1,
      target: { utilization: 50 },
      pods: [],
      error: /no pods returned by selector/,
    },
    {
      name: 'only unready pods',
      current: 1,
      target: { utilization: 50 },
      pods: [{ request: '1', phase: 'Pending' }],
      error: /did not receive metrics for targeted pods \(pods might be unready\)/,
    },
    {
      name: 'a container without a request',
      current: 1,
      target: { utilization: 50 },
      pods: [{ usage: 100 }],
      error: /missing request for cpu in container c of Pod p0/,
    },
    {
      name: "ContainerResource: only the named container's request counts (a sidecar without one is fine)",
      current: 2,
      target: { utilization: 50 },
      container: 'c',
      pods: [
        { ...running(900), sidecar: true },
        { ...running(900), sidecar: true },
      ],
      want: { replicas: 4, utilization: 90 },
    },
    {
      name: 'Resource: a sidecar without a request is an error',
      current: 2,
      target: { utilization: 50 },
      pods: [{ ...running(900), sidecar: true }],
      error: /missing request for cpu in container side of Pod p0/,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const pods = c.pods.map((p, i) => pod(i, p));
      const run = () =>
        resourceReplicas(
          c.current,
          c.target,
          c.resource ?? 'cpu',
          pods,
          metricsOf(c.pods),
          CFG,
          milliValue,
          c.container,
        );
      if (c.error) {
        assert.throws(run, c.error);
        return;
      }
      const got = run();
      assert.equal(got.replicas, c.want!.replicas);
      if (c.want!.utilization !== undefined) assert.equal(got.utilization, c.want!.utilization);
      if (c.want!.rawUsage !== undefined) assert.equal(got.rawUsage, c.want!.rawUsage);
    });
  }
});
