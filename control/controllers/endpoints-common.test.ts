/** The endpoint controllers' shared helpers, without a server. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod, Service, ServicePort } from '../../api/types.js';
import {
  findPort,
  formatTriggerTime,
  podEndpointsChanged,
  ServiceSelectorCache,
  shouldPodBeInEndpoints,
  TriggerTimeTracker,
} from './endpoints-common.js';

const pod: Pod = {
  metadata: { name: 'p', namespace: 'default', labels: { app: 'web' } },
  spec: {
    containers: [
      {
        name: 'c',
        ports: [
          { name: 'http', containerPort: 8080 },
          { name: 'dns', containerPort: 53, protocol: 'UDP' },
        ],
      },
    ],
    initContainers: [
      { name: 'sidecar', restartPolicy: 'Always', ports: [{ name: 'metrics', containerPort: 9100 }] },
      { name: 'init', ports: [{ name: 'setup', containerPort: 7000 }] },
    ],
  },
  status: {
    phase: 'Running',
    podIP: '10.0.0.1',
    conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:10Z' }],
  },
};

describe('findPort', () => {
  const cases: [string, ServicePort, number | undefined][] = [
    ['a number', { port: 80, targetPort: 8081 }, 8081],
    ['unset: the service port', { port: 80 }, 80],
    ['a name', { port: 80, targetPort: 'http' }, 8080],
    ['a name of another protocol', { port: 53, targetPort: 'dns' }, undefined],
    ['a name with its protocol', { port: 53, targetPort: 'dns', protocol: 'UDP' }, 53],
    ['a sidecar port', { port: 80, targetPort: 'metrics' }, 9100],
    ['an init container port', { port: 80, targetPort: 'setup' }, undefined],
    ['a missing name', { port: 80, targetPort: 'grpc' }, undefined],
  ];
  for (const [name, sp, want] of cases) it(name, () => assert.equal(findPort(pod, sp), want));
});

describe('shouldPodBeInEndpoints', () => {
  const cases: [string, Pod, boolean, boolean][] = [
    ['running with IP', pod, false, true],
    ['without IP', { ...pod, status: { phase: 'Running' } }, false, false],
    ['succeeded', { ...pod, status: { ...pod.status, phase: 'Succeeded' } }, true, false],
    ['terminating', { ...pod, metadata: { ...pod.metadata, deletionTimestamp: 'x' } }, false, false],
    ['terminating, included', { ...pod, metadata: { ...pod.metadata, deletionTimestamp: 'x' } }, true, true],
  ];
  for (const [name, p, includeTerminating, want] of cases)
    it(name, () => assert.equal(shouldPodBeInEndpoints(p, includeTerminating), want));
});

describe('podEndpointsChanged', () => {
  const cases: [string, Pod, { podChanged: boolean; labelsChanged: boolean }][] = [
    [
      'an annotation',
      { ...pod, metadata: { ...pod.metadata, annotations: { a: 'b' } } },
      { podChanged: false, labelsChanged: false },
    ],
    [
      'labels',
      { ...pod, metadata: { ...pod.metadata, labels: { app: 'x' } } },
      { podChanged: false, labelsChanged: true },
    ],
    [
      'readiness',
      { ...pod, status: { ...pod.status, conditions: [{ type: 'Ready', status: 'False' }] } },
      { podChanged: true, labelsChanged: false },
    ],
    [
      'the IP',
      { ...pod, status: { ...pod.status, podIP: '10.0.0.2' } },
      { podChanged: true, labelsChanged: false },
    ],
    [
      'deletion',
      { ...pod, metadata: { ...pod.metadata, deletionTimestamp: 'x' } },
      { podChanged: true, labelsChanged: false },
    ],
  ];
  for (const [name, changed, want] of cases)
    it(name, () => assert.deepEqual(podEndpointsChanged(pod, changed), want));
});

describe('ServiceSelectorCache', () => {
  const svc = (name: string, selector?: Record<string, string>): Service => ({
    metadata: { name, namespace: 'default' },
    spec: selector ? { selector } : {},
  });
  it('matches Services whose selector selects the labels; none without or with an empty selector', () => {
    const cache = new ServiceSelectorCache();
    const services = [svc('web', { app: 'web' }), svc('all', {}), svc('none'), svc('db', { app: 'db' })];
    assert.deepEqual([...cache.matching(services, { app: 'web', x: 'y' })], ['default/web']);
    // The cached selector follows a changed Service.
    assert.deepEqual([...cache.matching([svc('web', { app: 'db' })], { app: 'web' })], []);
  });
});

describe('TriggerTimeTracker', () => {
  const svc: Service = {
    metadata: { name: 'web', namespace: 'default', creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: {},
  };
  const withReady = (t: string): Pod => ({
    ...pod,
    status: { ...pod.status, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: t }] },
  });
  it('reports the Service creation first, then the earliest changed pod transition, then nothing', () => {
    const tracker = new TriggerTimeTracker();
    assert.equal(
      tracker.compute(svc, [withReady('2026-01-01T00:00:10Z')]),
      Date.parse('2026-01-01T00:00:00Z'),
    );
    assert.equal(
      tracker.compute(svc, [withReady('2026-01-01T00:00:20Z')]),
      Date.parse('2026-01-01T00:00:20Z'),
    );
    assert.equal(tracker.compute(svc, [withReady('2026-01-01T00:00:20Z')]), undefined);
    tracker.deleteService('default/web');
    assert.equal(tracker.compute(svc, []), Date.parse('2026-01-01T00:00:00Z'));
  });
  it('formats as RFC 3339 with fractions only when there are some', () => {
    assert.equal(formatTriggerTime(Date.parse('2026-01-01T00:00:10Z')), '2026-01-01T00:00:10Z');
    assert.equal(formatTriggerTime(Date.parse('2026-01-01T00:00:10.250Z')), '2026-01-01T00:00:10.25Z');
  });
});
