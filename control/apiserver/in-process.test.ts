// In-process connections to the API server (in-process.ts): the socket pair, and clients of
// a secure ApiServer over them, held to what the same credential gets over TLS: identity,
// authorization (RBAC, the Node authorizer), watches, bearer tokens and the errors.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { configuredFetch } from '../../api/client/fetch.js';
import { ApiStatusError } from '../../api/client/errors.js';
import { resources } from '../../api/client/resource.js';
import { RestClient, type RestClientConfig } from '../../api/client/rest.js';
import { bootstrapTokenSecret } from '../../api/auth/bootstrap-token.js';
import { createCA, signLeaf, type KeyPair } from '../../api/tls/certs.js';
import type { KubeObject } from '../../api/object.js';
import { MemoryStore } from '../storage/memory.js';
import { startSecureApiServer } from './auth/testing.js';
import { InProcessSocket } from './in-process.js';
import type { ApiServer } from './server.js';

const WHOAMI = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
const whoami = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };

/** The status code a request answers with (200 for a 2xx). */
async function statusOf(call: Promise<unknown>): Promise<number> {
  try {
    await call;
    return 200;
  } catch (err) {
    if (err instanceof ApiStatusError) return err.code;
    throw err;
  }
}

describe('InProcessSocket', () => {
  it('carries bytes both ways, in order, and ends the peer when one end ends', async () => {
    const [a, b] = InProcessSocket.pair();
    const got: string[] = [];
    b.on('data', (d: Buffer) => got.push(d.toString()));
    b.write('back');
    const [reply] = (await once(a, 'data')) as [Buffer];
    assert.equal(reply.toString(), 'back');
    const ended = once(b, 'end');
    const closed = once(a, 'close');
    a.write('one ');
    a.write('two');
    a.end();
    await ended;
    assert.equal(got.join(''), 'one two');
    // As a net.Socket (allowHalfOpen false): the end of its reads ends its writes, and both close.
    await closed;
    assert.equal(b.writableEnded, true);
  });

  it('destroys the peer when one end is destroyed, and refuses writes after', async () => {
    const [a, b] = InProcessSocket.pair();
    const closed = once(b, 'close');
    a.destroy();
    await closed;
    assert.equal(b.destroyed, true);
    const err = await new Promise<Error | null | undefined>((resolve) => a.write('late', resolve));
    assert.ok(err, 'a write after the reset fails');
  });

  it('waits for the peer to read before a write beyond its buffer completes', async () => {
    const [a, b] = InProcessSocket.pair();
    b.pause();
    const big = Buffer.alloc(64 * 1024, 1);
    let done = 0;
    for (let i = 0; i < 4; i++) a.write(big, () => done++);
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(done < 4, `a paused reader holds writes back (${done} done)`);
    let read = 0;
    b.on('data', (d: Buffer) => (read += d.length));
    b.resume();
    await new Promise<void>((resolve) => a.end(resolve));
    assert.equal(done, 4);
    assert.equal(read, 4 * big.length);
  });

  it("emits 'timeout' after setTimeout's inactivity, and not once it is turned off", async () => {
    // The socket's timer is unref'd (it holds no process open): this one holds the test's.
    const hold = setTimeout(() => {}, 10_000);
    const [a, b] = InProcessSocket.pair();
    a.setTimeout(20);
    assert.equal(a.timeout, 20);
    await once(a, 'timeout');
    b.setTimeout(20);
    b.setTimeout(0);
    let fired = false;
    b.on('timeout', () => (fired = true));
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.equal(fired, false);
    a.destroy();
    clearTimeout(hold);
  });
});

describe('ApiServer in-process connections', () => {
  const store = new MemoryStore();
  let server: ApiServer;
  let url: string;
  let ca: KeyPair;
  const clients: RestClient[] = [];
  const credentialOf = async (user: string, groups: string[] = []) => {
    const { cert, key } = await signLeaf(ca, { usage: 'client', user, groups });
    return { cert, key: key! };
  };
  /** Two clients of one credential: over TLS, and in process. */
  const pairOf = async (user: string, groups: string[] = []) => {
    const cred = await credentialOf(user, groups);
    const tls = new RestClient({ server: url, ca: ca.cert, ...cred });
    const inProcess = new RestClient({ server: url, connect: await server.inProcessConnector(cred) });
    clients.push(tls, inProcess);
    return { tls, inProcess };
  };
  const inProcessClient = (config: Omit<RestClientConfig, 'server'>) => {
    const c = new RestClient({ server: url, ...config });
    clients.push(c);
    return c;
  };

  before(async () => {
    ({ ca, server, url } = await startSecureApiServer(store));
    await server.registry('', 'v1', 'namespaces').create(undefined, { metadata: { name: 'apps' } });
    await server.registry('', 'v1', 'secrets').create('apps', { metadata: { name: 'db' } } as KubeObject);
    await server
      .registry('', 'v1', 'secrets')
      .create('kube-system', bootstrapTokenSecret('abcdef', '0123456789abcdef'));
  });
  after(async () => {
    for (const c of clients) c.close();
    await server.stop();
    await store.close();
  });

  it("is its certificate's user, as over TLS", async () => {
    for (const [user, groups] of [
      ['system:kube-scheduler', []],
      ['system:kube-controller-manager', []],
      ['system:node:n1', ['system:nodes']],
    ] as const) {
      const { tls, inProcess } = await pairOf(user, [...groups]);
      const viaTLS = await tls.request<KubeObject & { status?: unknown }>('POST', WHOAMI, { body: whoami });
      const viaMemory = await inProcess.request<KubeObject & { status?: unknown }>('POST', WHOAMI, {
        body: whoami,
      });
      assert.deepEqual(viaMemory.status, {
        userInfo: { username: user, groups: [...groups, 'system:authenticated'] },
      });
      assert.deepEqual(viaMemory.status, viaTLS.status);
    }
  });

  it('is authorized as over TLS: RBAC and the Node authorizer give the same answers', async () => {
    // The scheduler holds its ClusterRoleBinding (policy.ts); alice none; the node what the
    // Node authorizer gives it.
    const scheduler = await pairOf('system:kube-scheduler');
    const alice = await pairOf('alice', ['devs']);
    const node = await pairOf('system:node:n1', ['system:nodes']);
    const cases: [
      string,
      { tls: RestClient; inProcess: RestClient },
      (c: RestClient) => Promise<unknown>,
      number,
    ][] = [
      ['scheduler lists secrets', scheduler, (c) => c.list(resources.secrets, { namespace: 'apps' }), 200],
      ['alice lists pods', alice, (c) => c.list(resources.pods), 403],
      ['alice gets a namespace', alice, (c) => c.get(resources.namespaces, undefined, 'apps'), 403],
      ['node gets a secret no pod of it uses', node, (c) => c.get(resources.secrets, 'apps', 'db'), 403],
      ['node lists nodes', node, (c) => c.list(resources.nodes), 200],
      ['node lists secrets', node, (c) => c.list(resources.secrets), 403],
    ];
    for (const [name, { tls, inProcess }, call, expected] of cases) {
      const viaTLS = await statusOf(call(tls));
      const viaMemory = await statusOf(call(inProcess));
      assert.equal(viaMemory, viaTLS, `${name}: ${viaMemory} in process, ${viaTLS} over TLS`);
      assert.equal(viaMemory, expected, name);
    }
  });

  it('streams a watch, and stop() ends it', async () => {
    const { inProcess } = await pairOf('system:kube-controller-manager');
    const list = await inProcess.list(resources.configmaps, { namespace: 'apps' });
    const watch = await inProcess.watch(resources.configmaps, {
      namespace: 'apps',
      resourceVersion: list.metadata?.resourceVersion,
    });
    const events = watch[Symbol.asyncIterator]();
    const admin = inProcessClient({
      connect: await server.inProcessConnector(await credentialOf('root', ['system:masters'])),
    });
    for (const name of ['a', 'b'])
      await admin.create(resources.configmaps, { metadata: { name, namespace: 'apps' }, data: { k: name } });
    for (const name of ['a', 'b']) {
      const next = await events.next();
      assert.equal(next.done, false);
      assert.equal(next.value?.type, 'ADDED');
      assert.equal(next.value?.object.metadata?.name, name);
    }
    watch.stop();
    assert.equal((await events.next()).done, true);
  });

  it('takes a bearer token as over TLS, and answers 401 without a credential', async () => {
    const token = inProcessClient({
      connect: await server.inProcessConnector(),
      token: 'abcdef.0123456789abcdef',
    });
    const who = await token.request<{ status?: { userInfo?: { username?: string } } }>('POST', WHOAMI, {
      body: whoami,
    });
    assert.equal(who.status?.userInfo?.username, 'system:bootstrap:abcdef');
    const none = inProcessClient({ connect: await server.inProcessConnector() });
    assert.equal(await statusOf(none.list(resources.pods)), 401);
    const anonymous = configuredFetch({ connect: await server.inProcessConnector() });
    assert.equal((await anonymous(`${url}/healthz`)).status, 200, 'a public path, anonymous');
    const fetch = configuredFetch({
      connect: await server.inProcessConnector(await credentialOf('root', ['system:masters'])),
    });
    const res = await fetch(`${url}/api/v1/namespaces/apps`);
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as KubeObject).metadata?.name, 'apps');
  });

  it('gives no user to a certificate another CA signed, or one expired; refuses a key not its own', async () => {
    const other = await createCA('other');
    const forged = await signLeaf(other, { usage: 'client', user: 'root', groups: ['system:masters'] });
    const viaForged = inProcessClient({
      connect: await server.inProcessConnector({ cert: forged.cert, key: forged.key! }),
    });
    assert.equal(await statusOf(viaForged.list(resources.pods)), 401);
    const expired = await signLeaf(
      ca,
      { usage: 'client', user: 'root', groups: ['system:masters'] },
      { now: new Date(Date.now() - 3 * 86_400_000), days: 1 },
    );
    const viaExpired = inProcessClient({
      connect: await server.inProcessConnector({ cert: expired.cert, key: expired.key! }),
    });
    assert.equal(await statusOf(viaExpired.list(resources.pods)), 401);
    const mine = await credentialOf('root', ['system:masters']);
    await assert.rejects(server.inProcessConnector({ cert: mine.cert, key: forged.key! }), TypeError);
  });

  it('refuses a client with connect and alternateServers', () => {
    assert.throws(
      () =>
        new RestClient({
          server: url,
          alternateServers: [url + '0'],
          connect: () => InProcessSocket.pair()[0],
        }),
      TypeError,
    );
  });

  it('ends open watches when the server stops, and refuses connections after', async () => {
    const own = new MemoryStore();
    const { server: s, url: u, ca: c } = await startSecureApiServer(own);
    const { cert, key } = await signLeaf(c, { usage: 'client', user: 'root', groups: ['system:masters'] });
    const client = new RestClient({ server: u, connect: await s.inProcessConnector({ cert, key: key! }) });
    try {
      const watch = await client.watch(resources.configmaps, { namespace: 'default' });
      const events = watch[Symbol.asyncIterator]();
      // Ended by the server (its watch caches stop) or broken off: either way it ends.
      const ended = events.next().then(
        (r) => ({ done: r.done }),
        () => ({ done: true }),
      );
      await s.stop();
      assert.equal((await ended).done, true, 'the watch ends');
      await assert.rejects(
        client.list(resources.pods),
        (err: NodeJS.ErrnoException) => err.code === 'ECONNREFUSED',
      );
    } finally {
      client.close();
      await own.close();
    }
  });
});
