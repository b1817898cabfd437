// What the ProbeManager keeps of a pod: nothing for one without probes (a hollow node's
// heap snapshot had the pod version of each pod's first sync kept here, beside the
// informer's newer one). Probing itself is tested in worker.test.ts, probe.test.ts and
// through the PodManager (../pods/manager.test.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { FakeClock } from '../../../api/clock.js';
import { silentLogger } from '../../../api/log.js';
import type { KubeletContainer, KubeletPod } from '../pods/types.js';
import { ProbeManager } from './manager.js';

describe('ProbeManager', () => {
  it('keeps nothing of a pod without probes', async () => {
    const prober = new ProbeManager({
      clock: new FakeClock(),
      recorder: { event: () => {} },
      logger: silentLogger(),
      exec: () => Promise.reject(new Error('no exec here')),
      onChange: () => {},
    });
    const first = (() => {
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web', namespace: 'default', uid: 'uid-1' },
        spec: { containers: [{ name: 'c', image: 'busybox' }] },
      } as KubeletPod;
      prober.updatePod(
        pod,
        new Map([['c', { containerId: 'c1', running: true, startedAt: 0, podIP: '10.0.0.2' }]]),
      );
      return new WeakRef(pod);
    })();
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // A WeakRef's target stays alive until the job that made it ends.
    await new Promise((r) => setImmediate(r));
    gc();
    assert.equal(first.deref(), undefined, 'the pod is not kept');
    const container = { name: 'c', image: 'busybox' } as KubeletContainer;
    assert.equal(prober.ready('uid-1', container, 'c1'), true, 'no readiness probe: ready');
    await prober.stop();
  });
});
