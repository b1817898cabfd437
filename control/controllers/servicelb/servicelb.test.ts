import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resources } from '../../../api/client/resource.js';
import type { Node, Service } from '../../../api/types.js';
import { makeNode } from '../../../test/support/fake-nodes.js';
import { useControllers } from '../testing.js';
import { ingressIPs, serviceLBController } from './index.js';

test('ingressIPs takes the InternalIPs of Ready, schedulable nodes, sorted and unique', () => {
  const notReady = makeNode('c', { ip: '10.0.0.3' });
  notReady.status!.conditions![0]!.status = 'Unknown';
  const cordoned = makeNode('d', { ip: '10.0.0.4', unschedulable: true });
  assert.deepEqual(
    ingressIPs([makeNode('b', { ip: '10.0.0.2' }), makeNode('a', { ip: '10.0.0.1' }), notReady, cordoned]),
    ['10.0.0.1', '10.0.0.2'],
  );
});

const cluster = useControllers({
  controllers: { servicelb: serviceLBController },
  setup: async (api) => {
    await api.client.create(resources.nodes, makeNode('n1', { ip: '127.0.0.1' }));
  },
});

async function ingress(name: string, want: string[]): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const s = await cluster.api.client.get<Service>(resources.services, 'default', name);
    const got = (s.status?.loadBalancer?.ingress ?? []).map((i) => i.ip ?? '');
    if (JSON.stringify(got) === JSON.stringify(want)) return;
    if (Date.now() > deadline) assert.deepEqual(got, want);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('a LoadBalancer Service reports the nodes; node changes and type changes follow', async () => {
  await cluster.api.client.create(resources.services, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'default' },
    spec: { type: 'LoadBalancer', selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
  });
  await ingress('web', ['127.0.0.1']);
  await cluster.api.client.create(resources.nodes, makeNode('n2', { ip: '127.0.0.2' }));
  await ingress('web', ['127.0.0.1', '127.0.0.2']);
  await cluster.api.client.patch<Node>(resources.nodes, undefined, 'n2', 'merge', {
    spec: { unschedulable: true },
  });
  await ingress('web', ['127.0.0.1']);
  await cluster.api.client.patch(resources.services, 'default', 'web', 'merge', {
    spec: { type: 'NodePort' },
  });
  await ingress('web', []);
});
