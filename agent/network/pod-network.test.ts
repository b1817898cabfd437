import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../api/clock.js';
import { waitFor } from '../../api/client/testing.js';
import { captureLogger, StubRuntime } from '../testing.js';
import { PodNetworkManager, podNetworkName } from './pod-network.js';

function setup() {
  const runtime = new StubRuntime();
  const clock = new FakeClock();
  const { logger, lines } = captureLogger();
  let readyCalls = 0;
  const net = new PodNetworkManager({
    runtime,
    nodeName: 'n1',
    logger,
    clock,
    resyncMs: 60_000,
    onReady: () => readyCalls++,
  });
  const ac = new AbortController();
  const running = net.run(ac.signal);
  const stop = async () => {
    ac.abort();
    await running;
  };
  return { runtime, clock, lines, net, stop, readyCalls: () => readyCalls };
}

describe('PodNetworkManager', () => {
  it('names the network after the node', () => assert.equal(podNetworkName('worker-1'), 'k8ts-worker-1'));

  it('waits for spec.podCIDR, then creates the labelled bridge network and reports ready', async () => {
    const { runtime, net, stop, readyCalls } = setup();
    try {
      const ready = net.whenReady(AbortSignal.timeout(10_000));
      assert.equal(net.ready, false);
      assert.match(
        net.error!,
        /^container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:waiting for the node's spec.podCIDR$/,
      );
      assert.equal(runtime.networkCalls.length, 0);
      net.setPodCIDR('10.42.3.0/24');
      assert.equal(await ready, 'k8ts-n1');
      assert.deepEqual(runtime.networkCalls, [
        { name: 'k8ts-n1', subnet: '10.42.3.0/24', labels: { 'io.k8ts.node': 'n1' } },
      ]);
      assert.equal(net.error, undefined);
      assert.equal(readyCalls(), 1);
    } finally {
      await stop();
    }
  });

  it('retries a failing runtime with backoff (1 s, 2 s), saying why meanwhile', async () => {
    const { runtime, clock, lines, net, stop } = setup();
    try {
      runtime.networkFailures = 2;
      net.setPodCIDR('10.42.4.0/24');
      await waitFor('a first attempt', () => runtime.networkCalls.length === 1);
      await waitFor('its warning', () => lines.some((l) => l.level === 'warn'));
      assert.match(
        net.error!,
        /pod network k8ts-n1 \(10\.42\.4\.0\/24\): network in use with another subnet$/,
      );
      await clock.advance(999);
      assert.equal(runtime.networkCalls.length, 1);
      await clock.advance(1);
      await waitFor('a second attempt', () => runtime.networkCalls.length === 2);
      await waitFor('its warning', () => lines.filter((l) => l.level === 'warn').length === 2);
      await clock.advance(2_000);
      await waitFor('the network', () => net.ready);
      assert.deepEqual(
        lines.filter((l) => l.level === 'warn').map((l) => l.meta.retryInMs),
        [1_000, 2_000],
      );
    } finally {
      await stop();
    }
  });

  it('checks the network again every resync period', async () => {
    const { runtime, clock, net, stop } = setup();
    try {
      net.setPodCIDR('10.42.5.0/24');
      await waitFor('the network', () => net.ready);
      await clock.advance(60_000);
      await waitFor('a re-check', () => runtime.networkCalls.length === 2);
    } finally {
      await stop();
    }
  });

  it('stops waiting when stopped', async () => {
    const { net, stop } = setup();
    const ac = new AbortController();
    const ready = net.whenReady(ac.signal);
    ac.abort();
    assert.equal(await ready, undefined);
    await stop();
  });
});
