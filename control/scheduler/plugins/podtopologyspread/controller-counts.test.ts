// The default constraints count a node's pods of the pod's controller from NodeInfo's
// per-controller counts, which the scheduler cache keeps as pods are assumed, confirmed,
// updated (terminating, orphaned: metadata only, the same spec) and removed: the counts must
// be what looking at each pod finds.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from '../../../../api/types.js';
import { SchedulerCache } from '../../cache/cache.js';
import { countMatching, defaultConstraints, type SpreadConstraint } from './constraints.js';

const rs = (uid: string) => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: uid, uid, controller: true });

function pod(name: string, namespace: string, owner: string | undefined): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      uid: `uid-${namespace}-${name}`,
      ...(owner ? { ownerReferences: [rs(owner)] } : {}),
    },
    spec: { containers: [{ name: 'c', image: 'i' }] },
  } as Pod;
}

/** The count as it was made before the per-controller counts: pod by pod. */
function scanned(pods: Iterable<{ pod: Pod }>, c: SpreadConstraint, namespace: string): number {
  let n = 0;
  for (const { pod: p } of pods)
    if (p.metadata.namespace === namespace && !p.metadata.deletionTimestamp && c.selects(p)) n++;
  return n;
}

describe('PodTopologySpread default constraints count pods by controller', () => {
  it('as looking at each pod does, through assume, confirm, terminating, orphaning and removal', () => {
    const cache = new SchedulerCache();
    cache.addNode({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
    const incoming = pod('new', 'a', 'rs-1');
    const [hostname] = defaultConstraints(incoming);
    assert.ok(hostname?.controllerKey);
    const check = (want: number) => {
      const ni = cache.getNodeInfo('n1')!;
      assert.equal(scanned(ni.pods.values(), hostname, 'a'), want);
      assert.equal(countMatching(ni, hostname, 'a'), want);
    };
    check(0);
    const p1 = pod('p1', 'a', 'rs-1');
    cache.assumePod(p1, 'n1');
    check(1);
    // Confirmed by the informer, bound.
    const bound1: Pod = { ...p1, spec: { ...p1.spec, nodeName: 'n1' } };
    cache.addPod(bound1);
    check(1);
    // Same controller uid in another namespace, another controller, no controller.
    cache.addPod({ ...pod('x', 'b', 'rs-1'), spec: { ...p1.spec, nodeName: 'n1' } });
    cache.addPod({ ...pod('y', 'a', 'rs-2'), spec: { ...p1.spec, nodeName: 'n1' } });
    cache.addPod({ ...pod('z', 'a', undefined), spec: { ...p1.spec, nodeName: 'n1' } });
    check(1);
    const p2: Pod = { ...pod('p2', 'a', 'rs-1'), spec: { ...p1.spec, nodeName: 'n1' } };
    cache.addPod(p2);
    check(2);
    // Terminating: the same spec object, a new deletionTimestamp.
    cache.updatePod({ ...p2, metadata: { ...p2.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } });
    check(1);
    // Orphaned: the controller reference removed, the spec unchanged.
    cache.updatePod({ ...bound1, metadata: { ...bound1.metadata, ownerReferences: [] } });
    check(0);
    // Adopted again, then removed.
    cache.updatePod(bound1);
    check(1);
    cache.removePod(bound1);
    check(0);
  });
});
