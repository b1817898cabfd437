/**
 * The Proxy's ClusterIP addresses on its periodic resync, against the in-process API server
 * with a model of `ip` (fake-ip.ts) and a FakeClock: nothing touches the host's network.
 */
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../api/clock.js';
import { resources } from '../../api/client/resource.js';
import { silentLogger } from '../../api/log.js';
import type { Service } from '../../api/types.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';
import { untilTruthy } from '../../test/support/wait.js';
import { modelIp } from './fake-ip.js';
import { Proxy } from './proxy.js';

describe('Proxy: ClusterIP addresses', () => {
  let api: TestApi;
  let proxy: Proxy | undefined;

  before(async () => {
    api = await startTestApi();
  });

  after(async () => {
    await proxy?.stop();
    await api?.stop();
  });

  it('puts back a ClusterIP removed from its interface under it, at the next sync period', async () => {
    const svc = await api.client.create<Service>(resources.services, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default' },
      spec: { ports: [{ name: 'http', port: 80 }], selector: { app: 'web' } },
    });
    const clusterIP = svc.spec.clusterIP!;
    const { ip, links } = modelIp();
    const clock = new FakeClock(Date.now());
    proxy = new Proxy({
      client: api.client,
      nodeName: 'node-1',
      nodeIP: '198.18.0.11',
      clusterIPInterface: 'k8ts-addrs',
      logger: silentLogger(),
      ip,
      clock,
      syncPeriodMs: 30_000,
    });
    await proxy.start();
    await untilTruthy('the ClusterIP added', () => links.get('k8ts-addrs')?.has(clusterIP), 5000, 20);

    // Someone runs `ip addr del <clusterIP>/32 dev k8ts-addrs`.
    links.get('k8ts-addrs')!.delete(clusterIP);
    await clock.advance(30_000);
    await untilTruthy('the ClusterIP added again', () => links.get('k8ts-addrs')?.has(clusterIP), 5000, 20);
  });
});
