// The API server with `security` on, in process: authentication, authorization, the node
// credential exchange and the reviews, over real HTTPS with real client certificates.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import winston from 'winston';
import { configuredFetch, type ConfiguredFetch } from '../../../api/client/fetch.js';
import { resources } from '../../../api/client/resource.js';
import { RestClient } from '../../../api/client/rest.js';
import { ApiStatusError } from '../../../api/client/errors.js';
import {
  createCA,
  createCertificateRequest,
  certificateSubject,
  signLeaf,
  type KeyPair,
} from '../../../api/tls/certs.js';
import { TunnelClient } from '../../../agent/kubelet/tunnel.js';
import { MemoryStore } from '../../storage/memory.js';
import { ApiServer } from '../server.js';
import { nameValidatorFor, strategyFor } from '../strategies/index.js';
import { bootstrapTokenSecret } from './bootstrap-token.js';

describe('ApiServer with security', () => {
  const store = new MemoryStore();
  let server: ApiServer;
  let url: string;
  let ca: KeyPair;
  const clients: RestClient[] = [];
  const as = async (
    user: string,
    groups: string[],
  ): Promise<{ client: RestClient; fetch: ConfiguredFetch }> => {
    const { cert, key } = await signLeaf(ca, { usage: 'client', user, groups });
    const client = new RestClient({ server: url, ca: ca.cert, cert, key: key! });
    clients.push(client);
    return { client, fetch: configuredFetch({ ca: ca.cert, cert, key: key! }) };
  };

  before(async () => {
    ca = await createCA('test-ca');
    const served = await signLeaf(ca, {
      usage: 'server',
      commonName: 'k8ts',
      sans: [{ type: 'ip', value: '127.0.0.1' }],
    });
    server = new ApiServer({
      store,
      strategyFor,
      nameValidatorFor,
      port: 0,
      logger: winston.createLogger({ silent: true }),
      security: { ca, serving: { cert: served.cert, key: served.key! } },
    });
    url = `https://127.0.0.1:${(await server.start()).port}`;
    await server
      .registry('', 'v1', 'secrets')
      .create('kube-system', bootstrapTokenSecret('abcdef', '0123456789abcdef'));
  });
  after(async () => {
    for (const c of clients) c.close();
    await server.stop();
    await store.close();
  });

  it('answers anonymous requests 401, except the public paths', async () => {
    const anonymous = configuredFetch({ ca: ca.cert });
    assert.equal((await anonymous(`${url}/api/v1/pods`)).status, 401);
    assert.equal((await anonymous(`${url}/apis/nope/v1/things`)).status, 401, 'before any 404');
    assert.equal((await anonymous(`${url}/healthz`)).status, 200);
    const cacerts = await anonymous(`${url}/cacerts`);
    assert.equal(await cacerts.text(), ca.cert);
    // A certificate from another CA is no credential.
    const other = await createCA('other');
    const forged = await signLeaf(other, {
      usage: 'client',
      user: 'system:admin',
      groups: ['system:masters'],
    });
    const f = configuredFetch({ ca: ca.cert, cert: forged.cert, key: forged.key! });
    assert.equal((await f(`${url}/api/v1/pods`)).status, 401);
  });

  it('lets system:masters do everything and creates the bootstrap policy', async () => {
    const { client } = await as('root', ['system:masters']);
    const crbs = await client.list({
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      resource: 'clusterrolebindings',
      kind: 'ClusterRoleBinding',
      namespaced: false,
    });
    assert.ok(crbs.items.some((b) => b.metadata?.name === 'cluster-admin'));
  });

  it('exchanges a bootstrap token and a certificate request for a node certificate', async () => {
    const { csr, key } = await createCertificateRequest('system:node:n1', ['system:nodes']);
    const post = (token: string, body: unknown) =>
      configuredFetch({ ca: ca.cert, token })(`${url}/k8ts/v1/node-credential`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    assert.equal((await post('abcdef.wrongwrongwrongw', { csr })).status, 401);
    const bad = await post('abcdef.0123456789abcdef', {
      csr: (await createCertificateRequest('alice', ['system:masters'])).csr,
    });
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { message: string }).message, /system:node:<node name>/);
    const res = await post('abcdef.0123456789abcdef', { csr });
    assert.equal(res.status, 201);
    const { certificate } = (await res.json()) as { certificate: string };
    assert.deepEqual(certificateSubject(certificate), {
      commonName: 'system:node:n1',
      organizations: ['system:nodes'],
    });
    const node = new RestClient({ server: url, ca: ca.cert, cert: certificate, key });
    clients.push(node);
    await node.create(resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
    await assert.rejects(
      node.create(resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n2' } }),
      (err: unknown) => err instanceof ApiStatusError && err.status.code === 403,
    );
    // The token does not buy the identity of a node that exists now.
    const again = await post('abcdef.0123456789abcdef', {
      csr: (await createCertificateRequest('system:node:n1', ['system:nodes'])).csr,
    });
    assert.equal(again.status, 409);
    assert.match(((await again.json()) as { message: string }).message, /nodes "n1" already exists/);
    // The bootstrap token itself buys nothing else.
    const bootstrapper = new RestClient({ server: url, ca: ca.cert, token: 'abcdef.0123456789abcdef' });
    clients.push(bootstrapper);
    await assert.rejects(
      bootstrapper.list(resources.pods),
      (err: unknown) => err instanceof ApiStatusError && err.status.code === 403,
    );
  });

  it('answers SelfSubjectAccessReview, SubjectAccessReview and SelfSubjectReview', async () => {
    const alice = await as('alice', ['devs']);
    const review = async (f: ConfiguredFetch, path: string, body: object) => {
      const res = await f(`${url}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      return {
        status: res.status,
        body: (await res.json()) as { status?: Record<string, unknown>; message?: string },
      };
    };
    const ssar = await review(alice.fetch, '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      spec: { resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'default' } },
    });
    assert.equal(ssar.status, 201);
    assert.equal(ssar.body.status?.allowed, false);
    const who = await review(alice.fetch, '/apis/authentication.k8s.io/v1/selfsubjectreviews', {});
    assert.deepEqual(who.body.status?.userInfo, {
      username: 'alice',
      groups: ['devs', 'system:authenticated'],
    });
    // SubjectAccessReview is for those RBAC lets create it (the admin), not alice.
    const denied = await review(alice.fetch, '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      spec: { user: 'x', resourceAttributes: { verb: 'get', resource: 'pods' } },
    });
    assert.equal(denied.status, 403);
    const admin = await as('root', ['system:masters']);
    const sar = await review(admin.fetch, '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      spec: {
        user: 'system:node:n1',
        groups: ['system:nodes'],
        resourceAttributes: { verb: 'patch', resource: 'nodes', subresource: 'status', name: 'n2' },
      },
    });
    assert.equal(sar.status, 201);
    assert.equal(sar.body.status?.allowed, false);
    assert.equal(sar.body.status?.denied, true);
    assert.match(String(sar.body.status?.reason), /not allowed to modify node "n2"/);
    const invalid = await review(admin.fetch, '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      spec: {},
    });
    assert.equal(invalid.status, 400);
  });

  it("opens a node's tunnel only for that node's own certificate", async () => {
    const n1 = await signLeaf(ca, { usage: 'client', user: 'system:node:n1', groups: ['system:nodes'] });
    /** Runs a TunnelClient until it connects (true) or is refused (false). */
    const tunnel = async (
      nodeName: string,
      opts: { tls?: { ca: string; cert: string; key: string }; token?: string },
    ) => {
      const seen: string[] = [];
      const logger = winston.createLogger({
        silent: false,
        transports: [
          new winston.transports.Stream({
            stream: new (await import('node:stream')).Writable({
              write(chunk: Buffer, _enc, cb) {
                seen.push(String(JSON.parse(chunk.toString()).message));
                cb();
              },
            }),
          }),
        ],
      });
      const ac = new AbortController();
      let connected = false;
      const client = new TunnelClient({
        server: url,
        nodeName,
        ...opts,
        onStream: (s) => s.destroy(),
        logger,
        onConnectionChange: (up) => (connected ||= up),
      });
      const running = client.run(ac.signal);
      const deadline = Date.now() + 5000;
      while (!connected && !seen.includes('agent tunnel refused')) {
        if (Date.now() > deadline) assert.fail(`neither connected nor refused: ${seen.join(', ')}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      ac.abort();
      await running;
      return connected;
    };
    const own = { ca: ca.cert, cert: n1.cert, key: n1.key! };
    assert.equal(await tunnel('n1', { tls: own }), true);
    assert.equal(await tunnel('n2', { tls: own }), false, "n1's certificate does not open n2's tunnel");
    const admin = await signLeaf(ca, { usage: 'client', user: 'root', groups: ['system:masters'] });
    assert.equal(
      await tunnel('n1', { tls: { ca: ca.cert, cert: admin.cert, key: admin.key! } }),
      false,
      'not even an admin',
    );
  });

  it('impersonates only for those allowed to', async () => {
    const admin = await as('root', ['system:masters']);
    const res = await admin.fetch(`${url}/api/v1/namespaces/default/pods`, {
      headers: { 'Impersonate-User': 'alice' },
    });
    assert.equal(res.status, 403);
    assert.match(
      ((await res.json()) as { message: string }).message,
      /User "alice" cannot list resource "pods"/,
    );
    const alice = await as('alice', []);
    const refused = await alice.fetch(`${url}/api/v1/pods`, {
      headers: { 'Impersonate-User': 'root', 'Impersonate-Group': 'system:masters' },
    });
    assert.equal(refused.status, 403);
    assert.match(
      ((await refused.json()) as { message: string }).message,
      /cannot impersonate resource "users"/,
    );
  });
});
