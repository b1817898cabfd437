import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { resources } from '../../../api/client/resource.js';
import type { CoreEvent, Node } from '../../../api/types.js';
import { startTestApi, type TestApi } from '../../../test/support/api.js';
import { makeNode } from '../../../test/support/fake-nodes.js';
import { silentLogger } from '../context.js';
import { ControllerManager } from '../manager.js';
import { nodeIpamController } from './index.js';

let api: TestApi;
let ac: AbortController;
let done: Promise<void>;

before(async () => {
  api = await startTestApi();
  // A node that already has a CIDR before the controller starts: it must keep it and it must not be handed out again.
  const preset = makeNode('preset');
  preset.spec = { podCIDR: '192.168.0.0/24' };
  await api.client.create(resources.nodes, preset);
  ac = new AbortController();
  done = new ControllerManager({
    client: api.client,
    controllers: { nodeipam: nodeIpamController },
    logger: silentLogger,
    config: { clusterCIDR: '192.168.0.0/23', nodeCIDRMaskSize: 24 },
  }).run(ac.signal);
});
after(async () => {
  ac.abort();
  await done;
  await api.stop();
});

async function until<T>(what: string, f: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const cidrOf = async (name: string) =>
  (await api.client.get<Node>(resources.nodes, undefined, name)).spec?.podCIDR;

test('a new node gets the free pod CIDR; existing ones are kept; an exhausted range says so', async () => {
  await api.client.create(resources.nodes, makeNode('n1'));
  assert.equal(await until('n1 CIDR', () => cidrOf('n1')), '192.168.1.0/24');
  const n1 = await api.client.get<Node>(resources.nodes, undefined, 'n1');
  assert.deepEqual(n1.spec?.podCIDRs, ['192.168.1.0/24']);
  assert.equal(await cidrOf('preset'), '192.168.0.0/24');

  await api.client.create(resources.nodes, makeNode('n2'));
  const event = await until('CIDRNotAvailable', async () => {
    const evs = (await api.client.list<CoreEvent>(resources.events, { namespace: 'default' })).items;
    return evs.find((e) => e.reason === 'CIDRNotAvailable' && e.involvedObject.name === 'n2');
  });
  assert.equal(event.type, 'Warning');
  assert.equal(await cidrOf('n2'), undefined);

  // Deleting a node frees its range for the waiting one.
  await api.client.delete(resources.nodes, undefined, 'n1');
  assert.equal(await until('n2 CIDR', () => cidrOf('n2')), '192.168.1.0/24');
});
