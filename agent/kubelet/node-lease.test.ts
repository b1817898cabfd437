import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../api/clock.js';
import { resources } from '../../api/client/resource.js';
import { RestClient } from '../../api/client/rest.js';
import { waitFor } from '../../api/client/testing.js';
import type { Lease, Node } from '../../api/types.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';
import { startTcpProxy } from '../../test/support/tcp-proxy.js';
import { captureLogger } from '../testing.js';
import { NODE_LEASE_NAMESPACE, NodeLeaseController } from './node-lease.js';

describe('NodeLeaseController', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.stop());

  let seq = 0;
  const getLease = (name: string) => api.client.get<Lease>(resources.leases, NODE_LEASE_NAMESPACE, name);
  /** Polls the Lease until `ok` holds (10 s deadline). */
  const leaseWhen = async (name: string, what: string, ok: (l: Lease) => boolean): Promise<Lease> => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const stored = await getLease(name).catch(() => undefined);
      if (stored && ok(stored)) return stored;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const createNode = (name: string) =>
    api.client.create<Node>(resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name } });

  it('creates the Lease owned by the Node and renews it every 10 s', async () => {
    const name = `lease-${++seq}`;
    const node = await createNode(name);
    const clock = new FakeClock();
    const lease = new NodeLeaseController({
      client: api.client,
      nodeName: name,
      logger: captureLogger().logger,
      clock,
      random: () => 0,
    });
    const ac = new AbortController();
    const running = lease.run(ac.signal);
    try {
      const first = await leaseWhen(name, 'the lease', () => true);
      assert.deepEqual(first.spec, {
        holderIdentity: name,
        leaseDurationSeconds: 40,
        renewTime: '2026-01-01T00:00:00.000000Z',
      });
      assert.deepEqual(first.metadata.ownerReferences, [
        { apiVersion: 'v1', kind: 'Node', name, uid: node.metadata.uid },
      ]);
      await clock.advance(9_999);
      await clock.advance(1);
      const renewed = await leaseWhen(
        name,
        'a renewal',
        (l) => l.spec!.renewTime === '2026-01-01T00:00:10.000000Z',
      );
      assert.equal(renewed.metadata.uid, first.metadata.uid);
    } finally {
      ac.abort();
      await running;
    }
  });

  it('waits up to 4 % of the interval longer at random, so that Leases drift apart', async () => {
    const name = `lease-${++seq}`;
    await createNode(name);
    const clock = new FakeClock();
    const lease = new NodeLeaseController({
      client: api.client,
      nodeName: name,
      logger: captureLogger().logger,
      clock,
      random: () => 0.5,
    });
    const ac = new AbortController();
    const running = lease.run(ac.signal);
    try {
      await leaseWhen(name, 'the lease', () => true);
      // 10 s × (1 + 0.04 × 0.5): nothing at 10.199 s, the renewal at 10.2 s.
      await clock.advance(10_199);
      assert.equal((await getLease(name)).spec!.renewTime, '2026-01-01T00:00:00.000000Z');
      await clock.advance(1);
      await leaseWhen(name, 'a renewal', (l) => l.spec!.renewTime === '2026-01-01T00:00:10.200000Z');
    } finally {
      ac.abort();
      await running;
    }
    assert.throws(
      () =>
        new NodeLeaseController({
          client: api.client,
          nodeName: name,
          logger: captureLogger().logger,
          jitterFactor: -1,
        }),
      /jitterFactor must not be negative/,
    );
  });

  it('writes the Lease without an owner while the Node is missing and adds it later', async () => {
    const name = `lease-${++seq}`;
    const clock = new FakeClock();
    const lease = new NodeLeaseController({
      client: api.client,
      nodeName: name,
      logger: captureLogger().logger,
      clock,
    });
    const created = await lease.sync();
    assert.equal(created.metadata.ownerReferences, undefined);
    const before = structuredClone(created);
    const node = await createNode(name);
    await clock.advance(10_000);
    const renewed = await lease.sync();
    assert.equal(renewed.metadata.ownerReferences?.[0]?.uid, node.metadata.uid);
    assert.equal(renewed.spec!.renewTime, '2026-01-01T00:00:10.000000Z');
    // The renewal was built from a copy: the Lease it started from is as it was.
    assert.deepEqual(created, before);
  });

  it('recreates a deleted Lease and takes over one changed behind its back', async () => {
    const name = `lease-${++seq}`;
    const lease = new NodeLeaseController({
      client: api.client,
      nodeName: name,
      logger: captureLogger().logger,
    });
    await lease.sync();
    const other = await getLease(name);
    await api.client.update(resources.leases, {
      ...other,
      spec: { ...other.spec, holderIdentity: 'someone' },
    });
    await assert.rejects(lease.sync(), (err: Error) => /conflict|modified/i.test(err.message));
    assert.equal((await lease.sync()).spec!.holderIdentity, name);
    await api.client.delete(resources.leases, NODE_LEASE_NAMESPACE, name);
    assert.equal((await lease.sync()).spec!.holderIdentity, name);
  });

  it('retries failed renewals with backoff (200 ms doubling) and recovers', async () => {
    const name = `lease-${++seq}`;
    await createNode(name);
    const proxy = await startTcpProxy(api.url);
    const client = new RestClient({ server: proxy.url, timeoutMs: 2_000 });
    const clock = new FakeClock();
    const { logger, lines } = captureLogger();
    const lease = new NodeLeaseController({ client, nodeName: name, logger, clock });
    const ac = new AbortController();
    proxy.pause();
    const running = lease.run(ac.signal);
    try {
      const warnings = () => lines.filter((l) => l.level === 'warn');
      await waitFor('a failed renewal', () => warnings().length === 1);
      await clock.advance(200);
      await waitFor('a second failed renewal', () => warnings().length === 2);
      await clock.advance(400);
      await waitFor('a third failed renewal', () => warnings().length === 3);
      assert.deepEqual(
        warnings().map((l) => l.meta.retryInMs),
        [200, 400, 800],
      );
      proxy.resume();
      await clock.advance(800);
      const written = await leaseWhen(name, 'the lease after the API came back', () => true);
      assert.equal(written.spec!.renewTime, '2026-01-01T00:00:01.400000Z');
    } finally {
      ac.abort();
      await running;
      client.close();
      await proxy.close();
    }
  });
});
