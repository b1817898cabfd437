// The summary behind metrics.k8s.io: /proc/stat parsing, and CPU rates taken from two
// samples a window apart (FakeClock), memory as capacity minus available.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, flushPromises } from '../../../api/clock.js';
import type { Container, ContainerStats, Runtime } from '../../../cri/index.js';
import { StubMachine } from '../../testing.js';
import { CONTAINER_NAME_LABEL, POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL } from '../pods/labels.js';
import { parseProcStatCpu, StatsProvider } from './stats.js';

describe('parseProcStatCpu', () => {
  it('counts user, nice, system, irq and softirq ticks as 10 ms each', () => {
    const stat = 'cpu  100 20 30 4000 50 6 7 8 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\nintr 1\n';
    assert.equal(parseProcStatCpu(stat), (100n + 20n + 30n + 6n + 7n) * 10_000_000n);
  });
  it('fails without a cpu line', () => {
    assert.throws(() => parseProcStatCpu('intr 1\n'), /no cpu line/);
  });
});

describe('StatsProvider', () => {
  it('averages CPU over the window between two samples', async () => {
    const clock = new FakeClock();
    const t0 = clock.now();
    // Node: 1.5 cores busy; container: a quarter core; memory fixed.
    const nodeCpu = async () => BigInt(clock.now() - t0) * 1_500_000n;
    const container: Container = {
      id: 'c1',
      podSandboxId: 's1',
      metadata: { name: 'app', attempt: 0 },
      image: 'x',
      imageRef: 'sha256:x',
      state: 'CONTAINER_RUNNING',
      createdAt: 0n,
      labels: {
        [POD_NAME_LABEL]: 'web',
        [POD_NAMESPACE_LABEL]: 'default',
        [POD_UID_LABEL]: 'uid-1',
        [CONTAINER_NAME_LABEL]: 'app',
      },
      annotations: {},
    };
    const runtime = {
      listContainers: async () => [container],
      containerStats: async (id: string): Promise<ContainerStats> => ({
        id,
        timestamp: BigInt(clock.now()) * 1_000_000n,
        cpuUsageCoreNanoSeconds: BigInt(clock.now() - t0) * 250_000n,
        memoryWorkingSetBytes: 42 * 1024 * 1024,
      }),
    } as unknown as Runtime;
    const machine = new StubMachine();
    const stats = new StatsProvider({
      runtime,
      machine,
      nodeName: 'n1',
      clock,
      nodeCpuUsage: nodeCpu,
      minWindowMs: 1000,
    });
    const first = stats.summary();
    await flushPromises();
    await clock.advance(1000);
    const s = await first;
    assert.equal(s.node.nodeName, 'n1');
    assert.equal(s.node.windowSeconds, 1);
    assert.equal(s.node.usageNanoCores, 1_500_000_000);
    assert.equal(
      s.node.workingSetBytes,
      machine.info_.memoryCapacityBytes - machine.usage_.memoryAvailableBytes,
    );
    assert.deepEqual(s.pods, [
      {
        podRef: { name: 'web', namespace: 'default', uid: 'uid-1' },
        containers: [
          {
            name: 'app',
            time: new Date(clock.now()).toISOString(),
            windowSeconds: 1,
            usageNanoCores: 250_000_000,
            workingSetBytes: 42 * 1024 * 1024,
          },
        ],
      },
    ]);
    // Five seconds later the previous sample is the window's start: no waiting.
    await clock.advance(5000);
    const second = await stats.summary();
    assert.equal(second.node.windowSeconds, 5);
    assert.equal(second.node.usageNanoCores, 1_500_000_000);
  });
});
