import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Lease, Node } from '../../../api/types.js';
import { NodeHealthTracker, unknownConditions } from './health.js';

const node = (heartbeat?: string): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'n1', creationTimestamp: '2024-01-01T00:00:00Z' },
  status: heartbeat
    ? {
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            lastHeartbeatTime: heartbeat,
            lastTransitionTime: '2024-01-01T00:00:00Z',
          },
        ],
      }
    : {},
});
const lease = (renewTime: string): Lease => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name: 'n1', namespace: 'kube-node-lease' },
  spec: { renewTime },
});

test('NodeHealthTracker: the grace period counts from the last observed heartbeat change, by our clock', () => {
  const t = new NodeHealthTracker({ gracePeriodMs: 3000, startupGracePeriodMs: 10_000 });
  // Clock skew: the kubelet's timestamps are far in the past; only their changes matter.
  assert.deepEqual(t.observe(node('2000-01-01T00:00:00Z'), lease('2000-01-01T00:00:00.000000Z'), 1000), {
    probeTimestamp: 1000,
    gracePeriodMs: 3000,
    expired: false,
  });
  assert.equal(
    t.observe(node('2000-01-01T00:00:00Z'), lease('2000-01-01T00:00:00.000000Z'), 4000).expired,
    false,
  );
  assert.equal(
    t.observe(node('2000-01-01T00:00:00Z'), lease('2000-01-01T00:00:00.000000Z'), 4001).expired,
    true,
  );
  // A Lease renewal is a heartbeat.
  const renewed = t.observe(node('2000-01-01T00:00:00Z'), lease('2000-01-01T00:00:01.000000Z'), 5000);
  assert.deepEqual(renewed, { probeTimestamp: 5000, gracePeriodMs: 3000, expired: false });
  // A renewTime going backwards is not.
  assert.equal(
    t.observe(node('2000-01-01T00:00:00Z'), lease('1999-01-01T00:00:00Z'), 9000).probeTimestamp,
    5000,
  );
  // A changed Ready lastHeartbeatTime is.
  assert.equal(
    t.observe(node('2000-01-01T00:00:09Z'), lease('1999-01-01T00:00:00Z'), 9500).probeTimestamp,
    9500,
  );
});

test('NodeHealthTracker: a node without a Ready condition gets the startup grace period', () => {
  const t = new NodeHealthTracker({ gracePeriodMs: 3000, startupGracePeriodMs: 10_000 });
  assert.deepEqual(t.observe(node(), undefined, 0), {
    probeTimestamp: 0,
    gracePeriodMs: 10_000,
    expired: false,
  });
  assert.equal(t.observe(node(), undefined, 9000).expired, false);
  assert.equal(t.observe(node(), undefined, 10_001).expired, true);
});

test('NodeHealthTracker: forget and resetProbeTimestamps start nodes afresh', () => {
  const t = new NodeHealthTracker({ gracePeriodMs: 3000, startupGracePeriodMs: 10_000 });
  t.observe(node('x'), undefined, 0);
  assert.equal(t.observe(node('x'), undefined, 5000).expired, true);
  t.resetProbeTimestamps(5000);
  assert.equal(t.observe(node('x'), undefined, 6000).expired, false);
  t.forget('n1');
  assert.equal(t.observe(node('x'), undefined, 20_000).probeTimestamp, 20_000);
});

test('unknownConditions: existing conditions become Unknown, missing ones are added, heartbeats kept', () => {
  const n = node('2024-01-01T00:00:05Z');
  n.status!.conditions!.push({
    type: 'MemoryPressure',
    status: 'False',
    reason: 'KubeletHasSufficientMemory',
  });
  n.status!.conditions!.push({ type: 'NetworkUnavailable', status: 'False' });
  const now = '2024-01-01T00:01:00Z';
  assert.deepEqual(unknownConditions(n, now), [
    {
      type: 'Ready',
      status: 'Unknown',
      reason: 'NodeStatusUnknown',
      message: 'Kubelet stopped posting node status.',
      lastHeartbeatTime: '2024-01-01T00:00:05Z',
      lastTransitionTime: now,
    },
    {
      type: 'MemoryPressure',
      status: 'Unknown',
      reason: 'NodeStatusUnknown',
      message: 'Kubelet stopped posting node status.',
      lastTransitionTime: now,
    },
    { type: 'NetworkUnavailable', status: 'False' },
    ...['DiskPressure', 'PIDPressure'].map((type) => ({
      type,
      status: 'Unknown',
      reason: 'NodeStatusNeverUpdated',
      message: 'Kubelet never posted node status.',
      lastHeartbeatTime: '2024-01-01T00:00:00Z',
      lastTransitionTime: now,
    })),
  ]);
});

test('unknownConditions: nothing to write when Ready is already Unknown', () => {
  const n = node('2024-01-01T00:00:05Z');
  const once = unknownConditions(n, '2024-01-01T00:01:00Z')!;
  assert.equal(unknownConditions({ ...n, status: { conditions: once } }, '2024-01-01T00:02:00Z'), undefined);
});

test('unknownConditions: a node that never posted gets all four conditions', () => {
  const got = unknownConditions(node(), '2024-01-01T00:01:00Z')!;
  assert.deepEqual(
    got.map((c) => [c.type, c.status, c.reason]),
    ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'].map((t) => [
      t,
      'Unknown',
      'NodeStatusNeverUpdated',
    ]),
  );
});
