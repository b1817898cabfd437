/**
 * The programming-latency histogram (k8ts_proxy_network_programming_duration_seconds) of a
 * Proxy in nftables mode, against the in-process API server with a fake kernel (every `nft`
 * call succeeds; nothing touches the host's network): only endpoint changes made after the
 * proxy started are counted, as kube-proxy's trackerStartTime has it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resources } from '../../api/client/resource.js';
import { silentLogger } from '../../api/log.js';
import type { EndpointSlice, Service } from '../../api/types.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';
import { untilTruthy } from '../../test/support/wait.js';
import type { HostCommand } from '../network/host-command.js';
import type { IpCommand } from './cluster-ip.js';
import { Proxy } from './proxy.js';

const TRIGGER = 'endpoints.kubernetes.io/last-change-trigger-time';
const ok = { code: 0, stdout: '', stderr: '' };
const fakeIp: IpCommand = () => Promise.resolve(ok);
const fakeHost: HostCommand = () => Promise.resolve(ok);

/** The slice of Service web with endpoint `ip`, its change at `trigger`. */
const slice = (ip: string, trigger: string): EndpointSlice => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: {
    name: 'web-1',
    namespace: 'default',
    labels: { 'kubernetes.io/service-name': 'web' },
    annotations: { [TRIGGER]: trigger },
  },
  addressType: 'IPv4',
  endpoints: [{ addresses: [ip], conditions: { ready: true, serving: true, terminating: false } }],
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
});

describe('Proxy: network programming latency', () => {
  let api: TestApi;
  let proxy: Proxy | undefined;

  before(async () => {
    api = await startTestApi();
  });

  after(async () => {
    await proxy?.stop();
    await api?.stop();
  });

  const observed = async (): Promise<{ count: number; sum: number }> => {
    const text = await proxy!.metrics();
    const of = (suffix: string) =>
      Number(
        new RegExp(`^k8ts_proxy_network_programming_duration_seconds_${suffix} (\\S+)$`, 'm').exec(text)?.[1],
      );
    return { count: of('count'), sum: of('sum') };
  };

  it('does not count changes from before the proxy started (an agent restart), and counts the next one', async () => {
    await api.client.create<Service>(resources.services, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default' },
      spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }], selector: { app: 'web' } },
    });
    // Written an hour ago, before this proxy (the slice an agent lists after a restart).
    await api.client.create(
      resources.endpointslices,
      slice('10.42.1.5', new Date(Date.now() - 3_600_000).toISOString()),
    );
    proxy = new Proxy({
      client: api.client,
      nodeName: 'node-1',
      nodeIP: '198.18.0.11',
      clusterIPInterface: 'k8ts-proglat',
      logger: silentLogger(),
      ip: fakeIp,
      syncPeriodMs: 0,
      mode: 'nftables',
      kernel: {
        host: fakeHost,
        enabled: () => true,
        clusterCIDR: () => '10.42.0.0/16',
        table: 'k8ts-proglat',
        chainPrefix: 'K8TSPLAT',
      },
    });
    await proxy.start();
    assert.ok(await proxy.waitForIdle());
    assert.deepEqual(proxy.snapshot()['default/web']?.http?.endpoints, ['10.42.1.5:8080']);
    assert.equal((await observed()).count, 0, 'the change from an hour ago is not a programming latency');

    // A change after the start is counted once its rules are written.
    const current = await api.client.get<EndpointSlice>(resources.endpointslices, 'default', 'web-1');
    const next = slice('10.42.1.6', new Date().toISOString());
    await api.client.update(resources.endpointslices, {
      ...next,
      metadata: { ...current.metadata, annotations: next.metadata.annotations },
    });
    await untilTruthy('the new change counted', async () => (await observed()).count === 1, 5000, 20);
    assert.deepEqual(proxy.snapshot()['default/web']?.http?.endpoints, ['10.42.1.6:8080']);
  });
});
