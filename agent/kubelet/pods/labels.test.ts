// The kubelet's own labels on CRI configs (labels.ts): exactly these keys, and none of a
// runtime adapter's (dockershim's io.kubernetes.docker.type is the Docker adapter's).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from '../../../api/types.js';
import { containerLabels, podRefOf, sandboxLabels } from './labels.js';

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web-0', namespace: 'shop', uid: 'u-1', labels: { app: 'web' } },
  spec: { containers: [{ name: 'nginx', image: 'nginx:1' }] },
} as Pod;

describe("the kubelet's labels", () => {
  it("a sandbox's: the pod's labels, the pod's identity, the node", () =>
    assert.deepEqual(sandboxLabels(pod, 'node-a'), {
      app: 'web',
      'io.kubernetes.pod.name': 'web-0',
      'io.kubernetes.pod.namespace': 'shop',
      'io.kubernetes.pod.uid': 'u-1',
      'io.k8ts.node': 'node-a',
    }));

  it("a container's: the pod's identity, the container's name, the node", () =>
    assert.deepEqual(containerLabels(pod, 'nginx', 'node-a'), {
      'io.kubernetes.pod.name': 'web-0',
      'io.kubernetes.pod.namespace': 'shop',
      'io.kubernetes.pod.uid': 'u-1',
      'io.kubernetes.container.name': 'nginx',
      'io.k8ts.node': 'node-a',
    }));

  it('reads the pod back from either', () => {
    const want = { uid: 'u-1', name: 'web-0', namespace: 'shop' };
    assert.deepEqual(podRefOf(sandboxLabels(pod, 'node-a')), want);
    assert.deepEqual(podRefOf(containerLabels(pod, 'nginx', 'node-a')), want);
    assert.equal(podRefOf({ app: 'web' }), undefined);
  });
});
