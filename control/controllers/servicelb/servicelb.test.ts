import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resources } from '../../../api/client/resource.js';
import type { CoreEvent, Node, Service } from '../../../api/types.js';
import { makeNode } from '../../../test/support/fake-nodes.js';
import { untilTruthy } from '../../../test/support/wait.js';
import { useControllers } from '../testing.js';
import { admittedLoadBalancers, ingressIPs, serviceLBController } from './index.js';

test('ingressIPs takes the InternalIPs of Ready, schedulable nodes, sorted and unique', () => {
  const notReady = makeNode('c', { ip: '10.0.0.3' });
  notReady.status!.conditions![0]!.status = 'Unknown';
  const cordoned = makeNode('d', { ip: '10.0.0.4', unschedulable: true });
  assert.deepEqual(
    ingressIPs([makeNode('b', { ip: '10.0.0.2' }), makeNode('a', { ip: '10.0.0.1' }), notReady, cordoned]),
    ['10.0.0.1', '10.0.0.2'],
  );
});

/** A Service for admittedLoadBalancers: `ports` as `port/protocol`, created at second `created`. */
function lb(
  name: string,
  ports: string[],
  created: number,
  opts: { type?: Service['spec']['type']; serving?: boolean } = {},
): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default', creationTimestamp: new Date(created * 1000).toISOString() },
    spec: {
      type: opts.type ?? 'LoadBalancer',
      ports: ports.map((p) => {
        const [port, protocol] = p.split('/') as [string, 'TCP' | 'UDP' | undefined];
        return { port: Number(port), ...(protocol ? { protocol } : {}) };
      }),
    },
    status: opts.serving ? { loadBalancer: { ingress: [{ ip: '10.0.0.1' }] } } : {},
  };
}

test('admittedLoadBalancers gives each port to one LoadBalancer Service, as hostPorts of servicelb pods', () => {
  const cases: { name: string; services: Service[]; blocked: Record<string, string> }[] = [
    {
      name: 'the older of two on one port',
      services: [lb('b', ['80'], 2), lb('a', ['80'], 1)],
      blocked: { 'default/b': '80/TCP default/a' },
    },
    {
      name: 'the one served keeps its port against an older one',
      services: [lb('old', ['80'], 1), lb('served', ['80'], 2, { serving: true })],
      blocked: { 'default/old': '80/TCP default/served' },
    },
    {
      name: 'another protocol or port is no conflict; the default protocol is TCP',
      services: [lb('a', ['80/TCP'], 1), lb('b', ['80/UDP'], 2), lb('c', ['81'], 3), lb('d', ['80'], 4)],
      blocked: { 'default/d': '80/TCP default/a' },
    },
    {
      name: 'a blocked Service takes none of its ports (all or none)',
      services: [lb('a', ['80'], 1), lb('b', ['80', '443'], 2), lb('c', ['443'], 3)],
      blocked: { 'default/b': '80/TCP default/a' },
    },
    {
      name: 'other types take no port',
      services: [lb('np', ['80'], 1, { type: 'NodePort' }), lb('a', ['80'], 2)],
      blocked: {},
    },
    {
      name: 'the same creation time: by key',
      services: [lb('y', ['80'], 1), lb('x', ['80'], 1)],
      blocked: { 'default/y': '80/TCP default/x' },
    },
  ];
  for (const c of cases) {
    const got = Object.fromEntries(
      [...admittedLoadBalancers(c.services)].map(([k, v]) => [k, `${v.port} ${v.holder}`]),
    );
    assert.deepEqual(got, c.blocked, c.name);
  }
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

test('a second LoadBalancer Service on a taken port gets no ingress and an Event until the port frees', async () => {
  const svc = (name: string, port: number): Service => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default' },
    spec: { type: 'LoadBalancer', selector: { app: name }, ports: [{ port, targetPort: 8080 }] },
  });
  await cluster.api.client.create(resources.services, svc('first', 8081));
  await ingress('first', ['127.0.0.1']);
  await cluster.api.client.create(resources.services, svc('second', 8081));
  const events = async () =>
    (await cluster.api.client.list<CoreEvent>(resources.events, { namespace: 'default' })).items.filter(
      (e) => e.involvedObject.name === 'second' && e.reason === 'PortInUse',
    );
  await untilTruthy('the PortInUse event', async () => (await events()).length > 0, 10_000, 20);
  assert.match((await events())[0]!.message ?? '', /8081\/TCP .*default\/first/);
  await ingress('second', []);
  await ingress('first', ['127.0.0.1']);
  // The port frees: the second gets its ingress.
  await cluster.api.client.delete(resources.services, 'default', 'first');
  await ingress('second', ['127.0.0.1']);
  await cluster.api.client.delete(resources.services, 'default', 'second');
});
