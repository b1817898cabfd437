/** The scheduling algorithm over a cache without a server; the FitError message; the cache's assume/forget. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RestClient } from '../../api/client/rest.js';
import { SchedulerCache } from './cache/cache.js';
import { fitErrorMessage } from './framework/fit-error.js';
import { Status } from './framework/status.js';
import { newDefaultFramework } from './plugins/registry.js';
import { SchedulingAlgorithm, numFeasibleNodesToFind } from './schedule-one.js';
import { testNode, testPod } from './testing/fixtures.js';

function setup(nodes: number, percentage = 0) {
  const cache = new SchedulerCache();
  for (let i = 0; i < nodes; i++) cache.addNode(testNode(`n${i}`));
  const framework = newDefaultFramework({
    client: new RestClient({ server: 'http://127.0.0.1:9' }),
    nodeInfos: () => cache.nodeInfos(),
    nodesGeneration: () => cache.nodesGeneration,
  });
  return { cache, algo: new SchedulingAlgorithm({ framework, cache, percentageOfNodesToScore: percentage }) };
}

describe('numFeasibleNodesToFind', () => {
  for (const [nodes, pct, want] of [
    [50, 0, 50],
    [99, 0, 99],
    [100, 0, 100],
    [1000, 0, 420], // 50 - 1000/125 = 42 %
    [5000, 0, 500], // 50 - 40 = 10 %
    [10_000, 0, 500], // min 5 %
    [1000, 10, 100],
    [300, 10, 100], // never fewer than 100
    [1000, 100, 1000],
  ] as const) {
    it(`${nodes} nodes at ${pct || 'adaptive'} % → ${want}`, () =>
      assert.equal(numFeasibleNodesToFind(nodes, pct), want));
  }
});

describe('SchedulingAlgorithm', () => {
  it('evaluates only enough nodes and starts the next search where this one stopped', () => {
    const { algo } = setup(1000);
    const r = algo.schedulePod(testPod('p', { requests: { cpu: '100m' } }));
    assert.equal(r.kind, 'scheduled');
    assert.ok(r.kind === 'scheduled' && r.feasibleNodes === 420 && r.evaluatedNodes === 420);
    assert.equal(algo.nextStartNodeIndex, 420);
    algo.schedulePod(testPod('q', { requests: { cpu: '100m' } }));
    assert.equal(algo.nextStartNodeIndex, 840);
    algo.schedulePod(testPod('r', { requests: { cpu: '100m' } }));
    assert.equal(algo.nextStartNodeIndex, 260);
  });

  it('spreads consecutive pods: an assumed pod is seen by the next cycle', () => {
    const { algo, cache } = setup(3);
    const hosts = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const pod = testPod(`p${i}`, { requests: { cpu: '3' } });
      const r = algo.schedulePod(pod);
      assert.equal(r.kind, 'scheduled');
      if (r.kind === 'scheduled') {
        hosts.add(r.host);
        cache.assumePod(pod, r.host);
      }
    }
    assert.equal(hosts.size, 3);
    const r = algo.schedulePod(testPod('p3', { requests: { cpu: '3' } }));
    assert.equal(r.kind, 'unschedulable');
    assert.ok(r.kind === 'unschedulable');
    assert.equal(r.fitError.message(), '0/3 nodes are available: 3 Insufficient cpu.');
    assert.deepEqual([...r.fitError.unschedulablePlugins()], ['NodeResourcesFit']);
  });

  it('forgetPod gives the resources back; the informer confirming an assumed pod keeps them', () => {
    const { algo, cache } = setup(1);
    const a = testPod('a', { requests: { cpu: '3' } });
    cache.assumePod(a, 'n0');
    assert.equal(algo.schedulePod(testPod('b', { requests: { cpu: '3' } })).kind, 'unschedulable');
    cache.forgetPod(a);
    assert.equal(algo.schedulePod(testPod('b', { requests: { cpu: '3' } })).kind, 'scheduled');
    cache.assumePod(a, 'n0');
    cache.addPod({ ...a, spec: { ...a.spec, nodeName: 'n0' } });
    assert.equal(cache.isAssumedPod(a), false);
    cache.forgetPod(a); // no longer assumed: ignored
    assert.equal(cache.getNodeInfo('n0')!.requested.milliCPU, 3000);
    cache.removePod(a);
    assert.equal(cache.getNodeInfo('n0')!.requested.milliCPU, 0);
  });

  it("no nodes: an error with Kubernetes' message", () => {
    const { algo } = setup(0);
    const r = algo.schedulePod(testPod('p'));
    assert.ok(r.kind === 'error');
    assert.equal(r.status.message(), 'no nodes available to schedule pods');
  });

  it('selectHost picks the top score and breaks ties at random', () => {
    const { algo, cache } = setup(3);
    const nodes = cache.nodeInfos();
    assert.equal(algo.selectHost(nodes, [1, 5, 3]), 'n1');
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) seen.add(algo.selectHost(nodes, [7, 7, 7]));
    assert.equal(seen.size, 3);
  });
});

describe('fitErrorMessage', () => {
  it('sorts "count reason" strings and appends the preemption sentence', () => {
    const statuses = [
      Status.unschedulable('Insufficient cpu'),
      Status.unresolvable('node(s) had untolerated taint {node-role: x}'),
      Status.unschedulable('Insufficient cpu'),
    ];
    assert.equal(
      fitErrorMessage(
        3,
        statuses,
        '',
        'preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.',
      ),
      '0/3 nodes are available: 1 node(s) had untolerated taint {node-role: x}, 2 Insufficient cpu. ' +
        'preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..',
    );
  });

  it('a PreFilter rejection replaces the per-node histogram', () => {
    assert.equal(
      fitErrorMessage(2, [Status.unschedulable('x')], 'pvc not found'),
      '0/2 nodes are available: pvc not found.',
    );
  });
});
