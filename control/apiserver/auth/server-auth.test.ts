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
import type { ApiServer } from '../server.js';
import { bootstrapTokenSecret } from '../../../api/auth/bootstrap-token.js';
import { startSecureApiServer } from './testing.js';

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
    ({ ca, server, url } = await startSecureApiServer(store));
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

  it("finds a node's pods in the pods' watch cache when it reads their Secrets, not in the store", async () => {
    const admin = await as('root', ['system:masters']);
    const n1 = await as('system:node:n1', ['system:nodes']);
    const ns = 'graph';
    await admin.client.create(resources.namespaces, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns },
    });
    await admin.client.create(resources.secrets, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'mounted', namespace: ns },
    });
    const pod = (name: string, nodeName: string, secret?: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: ns },
      spec: {
        nodeName,
        containers: [{ name: 'c', image: 'busybox' }],
        ...(secret ? { volumes: [{ name: 's', secret: { secretName: secret } }] } : {}),
      },
    });
    await admin.client.create(resources.pods, pod('uses-it', 'n1', 'mounted'));
    await admin.client.create(resources.pods, pod('elsewhere', 'n2'));
    // Once the cache has the pod (the kubelet learns of it through the cache's watch),
    // each authorization of n1's reads lists no pods from the store.
    for (let tries = 0; ; tries++) {
      const cached = await admin.client.list(resources.pods, { namespace: ns, resourceVersion: '0' });
      if (cached.items.some((p) => p.metadata?.name === 'uses-it')) break;
      assert.ok(tries < 200, 'the pod in the watch cache');
      await new Promise((r) => setTimeout(r, 10));
    }
    let storeLists = 0;
    const list = store.list.bind(store);
    store.list = (prefix, opts) => {
      if (prefix.startsWith('/registry/pods/')) storeLists++;
      return list(prefix, opts);
    };
    try {
      for (let i = 0; i < 5; i++) await n1.client.get(resources.secrets, ns, 'mounted');
      const refused = await n1.client.get(resources.configmaps, ns, 'other').then(
        () => undefined,
        (err: unknown) => err,
      );
      assert.ok(refused instanceof ApiStatusError && refused.code === 403, String(refused));
    } finally {
      store.list = list;
    }
    assert.equal(storeLists, 0);
  });

  it('authorizes from the RBAC watch caches, and honours a binding made a moment ago', async () => {
    const admin = await as('root', ['system:masters']);
    const dora = await as('dora', []);
    const rbacGroup = { group: 'rbac.authorization.k8s.io', version: 'v1' };
    const role = { ...rbacGroup, resource: 'roles', kind: 'Role', namespaced: true };
    const roleBinding = { ...rbacGroup, resource: 'rolebindings', kind: 'RoleBinding', namespaced: true };
    await admin.client.create(role, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'cm-reader', namespace: 'default' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }],
    });
    // Read after write: the binding counts on the very next request (the store confirms
    // what the caches do not allow yet).
    await admin.client.create(roleBinding, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'dora-cm', namespace: 'default' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'dora' }],
    });
    await dora.client.list(resources.configmaps, { namespace: 'default' });
    for (let tries = 0; ; tries++) {
      const cached = await admin.client.list(roleBinding, { namespace: 'default', resourceVersion: '0' });
      if (cached.items.some((b) => b.metadata?.name === 'dora-cm')) break;
      assert.ok(tries < 200, 'the binding in the watch cache');
      await new Promise((r) => setTimeout(r, 10));
    }
    let storeReads = 0;
    const list = store.list.bind(store);
    const get = store.get.bind(store);
    const rbacKey = (key: string) => /^\/registry\/(cluster)?role(binding)?s\//.test(key);
    store.list = (prefix, opts) => {
      if (rbacKey(prefix)) storeReads++;
      return list(prefix, opts);
    };
    store.get = (key) => {
      if (rbacKey(key)) storeReads++;
      return get(key);
    };
    try {
      for (let i = 0; i < 5; i++) await dora.client.list(resources.configmaps, { namespace: 'default' });
    } finally {
      store.list = list;
      store.get = get;
    }
    assert.equal(storeReads, 0, 'RBAC objects read from the store for five allowed requests');
    // What no binding allows is still refused (after the store confirmed it).
    const refused = await dora.client.list(resources.secrets, { namespace: 'default' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.ok(refused instanceof ApiStatusError && refused.code === 403, String(refused));
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

  describe('RBAC escalation prevention', () => {
    const RBAC = `/apis/rbac.authorization.k8s.io/v1`;
    const NS = `${RBAC}/namespaces/default`;
    let admin: ConfiguredFetch;
    let bob: ConfiguredFetch;
    /** Sends `body` as JSON with `method`; resolves with the status and the decoded answer. */
    const send = async (
      f: ConfiguredFetch,
      method: string,
      path: string,
      body?: object,
      type = 'application/json',
    ) => {
      const res = await f(`${url}${path}`, {
        method,
        headers: { 'Content-Type': type },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: (await res.json()) as { message?: string; rules?: unknown[] } };
    };
    /** The status code of a POST of `obj` to `default`'s roles or rolebindings as `f`. */
    const created = async (f: ConfiguredFetch, collection: 'roles' | 'rolebindings', obj: object) =>
      (await send(f, 'POST', `${NS}/${collection}`, obj)).status;
    const role = (name: string, rules: object[]) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name },
      rules,
    });
    const binding = (name: string, roleRef: { kind: string; name: string }, user = 'carol') => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...roleRef },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: user }],
    });
    const podReader = [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }];
    const secretReader = [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }];

    before(async () => {
      admin = (await as('root', ['system:masters'])).fetch;
      bob = (await as('bob', ['team'])).fetch;
      // bob may write roles and bindings in default, and read pods there; nothing else.
      const writer = role('rbac-writer', [
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['roles', 'rolebindings'],
          verbs: ['create', 'update', 'patch', 'get'],
        },
        ...podReader,
      ]);
      assert.equal(await created(admin, 'roles', writer), 201);
      assert.equal(
        await created(
          admin,
          'rolebindings',
          binding('bob-writes', { kind: 'Role', name: 'rbac-writer' }, 'bob'),
        ),
        201,
      );
      assert.equal(await created(admin, 'roles', role('secret-reader', secretReader)), 201);
    });

    it('lets a user write a Role with rules they hold, and bind a role whose rules they hold', async () => {
      assert.equal(await created(bob, 'roles', role('pods', podReader)), 201);
      assert.equal(
        (await send(bob, 'POST', `${NS}/rolebindings`, binding('carol-pods', { kind: 'Role', name: 'pods' })))
          .status,
        201,
      );
    });

    it('refuses a Role with rules the user does not hold, naming them, and writes nothing', async () => {
      const r = await send(bob, 'POST', `${NS}/roles`, role('secrets', [...podReader, ...secretReader]));
      assert.equal(r.status, 403);
      assert.equal(
        r.body.message,
        'roles.rbac.authorization.k8s.io "secrets" is forbidden: user "bob" (groups=["team" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
      );
      assert.equal((await send(admin, 'GET', `${NS}/roles/secrets`)).status, 404);
    });

    it('refuses a patch, an update or a server-side apply that adds such rules, and the role stays as it was', async () => {
      const patched = await send(
        bob,
        'PATCH',
        `${NS}/roles/pods`,
        { rules: [...podReader, ...secretReader] },
        'application/merge-patch+json',
      );
      assert.equal(patched.status, 403, JSON.stringify(patched.body));
      const current = await send(admin, 'GET', `${NS}/roles/pods`);
      assert.deepEqual(current.body.rules, podReader);
      const put = await send(bob, 'PUT', `${NS}/roles/pods`, {
        ...current.body,
        rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
      });
      assert.equal(put.status, 403);
      assert.match(put.body.message!, /\{APIGroups:\["\*"\], Resources:\["\*"\], Verbs:\["\*"\]\}/);
      const applied = await send(
        bob,
        'PATCH',
        `${NS}/roles/applied?fieldManager=bob`,
        role('applied', secretReader),
        'application/apply-patch+yaml',
      );
      assert.equal(applied.status, 403);
      assert.equal((await send(admin, 'GET', `${NS}/roles/applied`)).status, 404);
      assert.deepEqual((await send(admin, 'GET', `${NS}/roles/pods`)).body.rules, podReader);
    });

    it('refuses a PUT that creates a Role (create on update) with rules the user does not hold', async () => {
      const put = await send(bob, 'PUT', `${NS}/roles/put-secrets`, role('put-secrets', secretReader));
      assert.equal(put.status, 403, JSON.stringify(put.body));
      assert.match(put.body.message!, /attempting to grant RBAC permissions not currently held/);
      assert.equal((await send(admin, 'GET', `${NS}/roles/put-secrets`)).status, 404);
      const held = await send(bob, 'PUT', `${NS}/roles/put-pods`, role('put-pods', podReader));
      assert.equal(held.status, 201, JSON.stringify(held.body));
    });

    it('refuses binding a role whose rules the user does not hold (cluster-admin too), and a missing role is 404', async () => {
      const toSecrets = await send(
        bob,
        'POST',
        `${NS}/rolebindings`,
        binding('carol-secrets', { kind: 'Role', name: 'secret-reader' }),
      );
      assert.equal(toSecrets.status, 403);
      assert.match(
        toSecrets.body.message!,
        /^rolebindings\.rbac\.authorization\.k8s\.io "carol-secrets" is forbidden: user "bob" .*not currently held:\n\{APIGroups:\[""\], Resources:\["secrets"\], Verbs:\["get"\]\}$/s,
      );
      const toAdmin = await send(
        bob,
        'POST',
        `${NS}/rolebindings`,
        binding('carol-admin', { kind: 'ClusterRole', name: 'cluster-admin' }),
      );
      assert.equal(toAdmin.status, 403);
      assert.equal(
        await created(bob, 'rolebindings', binding('carol-none', { kind: 'Role', name: 'no-such-role' })),
        404,
      );
      // Adding a subject to an existing binding of a role bob does not hold is refused too.
      assert.equal(
        await created(
          admin,
          'rolebindings',
          binding('admins-secrets', { kind: 'Role', name: 'secret-reader' }),
        ),
        201,
      );
      const widened = await send(
        bob,
        'PATCH',
        `${NS}/rolebindings/admins-secrets`,
        { subjects: [{ kind: 'User', name: 'bob' }] },
        'application/merge-patch+json',
      );
      assert.equal(widened.status, 403);
    });

    it('lets a change of finalizers alone through; a ClusterRole with an aggregationRule needs everything', async () => {
      const finalized = {
        ...binding('finalized', { kind: 'Role', name: 'secret-reader' }),
        metadata: { name: 'finalized', finalizers: ['example.com/keep'] },
      };
      assert.equal(await created(admin, 'rolebindings', finalized), 201);
      const cleared = await send(
        bob,
        'PATCH',
        `${NS}/rolebindings/finalized`,
        [{ op: 'remove', path: '/metadata/finalizers' }],
        'application/json-patch+json',
      );
      assert.equal(cleared.status, 200, JSON.stringify(cleared.body));
      const clusterWriter = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'clusterrole-writer' },
        rules: [
          { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['create'] },
          ...podReader,
        ],
      };
      assert.equal((await send(admin, 'POST', `${RBAC}/clusterroles`, clusterWriter)).status, 201);
      const crb = {
        ...binding('bob-clusterroles', { kind: 'ClusterRole', name: 'clusterrole-writer' }, 'bob'),
        kind: 'ClusterRoleBinding',
      };
      assert.equal((await send(admin, 'POST', `${RBAC}/clusterrolebindings`, crb)).status, 201);
      const clusterRole = (name: string, extra: object) => ({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name },
        ...extra,
      });
      assert.equal(
        (await send(bob, 'POST', `${RBAC}/clusterroles`, clusterRole('bob-pods', { rules: podReader })))
          .status,
        201,
      );
      const aggregated = await send(
        bob,
        'POST',
        `${RBAC}/clusterroles`,
        clusterRole('bob-aggregated', {
          aggregationRule: { clusterRoleSelectors: [{ matchLabels: {} }] },
          rules: [],
        }),
      );
      assert.equal(aggregated.status, 403);
      assert.match(
        aggregated.body.message!,
        /"bob-aggregated" is forbidden: must have cluster-admin privileges to use the aggregationRule$/,
      );
    });

    it("a binding whose role is gone answers the role's 404 to a server-side apply, not AlreadyExists", async () => {
      assert.equal(await created(admin, 'roles', role('short-lived', podReader)), 201);
      assert.equal(
        await created(admin, 'rolebindings', binding('short-lived', { kind: 'Role', name: 'short-lived' })),
        201,
      );
      assert.equal((await send(admin, 'DELETE', `${NS}/roles/short-lived`)).status, 200);
      const applied = await send(
        bob,
        'PATCH',
        `${NS}/rolebindings/short-lived?fieldManager=bob`,
        binding('short-lived', { kind: 'Role', name: 'pods' }),
        'application/apply-patch+yaml',
      );
      assert.equal(applied.status, 404, JSON.stringify(applied.body));
      assert.match(applied.body.message!, /roles\.rbac\.authorization\.k8s\.io "short-lived" not found/);
    });

    it('allows it with the escalate verb on roles, or the bind verb on that role', async () => {
      const grants = role('grants', [
        { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['escalate'] },
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['roles'],
          verbs: ['bind'],
          resourceNames: ['secret-reader'],
        },
      ]);
      assert.equal(await created(admin, 'roles', grants), 201);
      assert.equal(
        await created(admin, 'rolebindings', binding('bob-grants', { kind: 'Role', name: 'grants' }, 'bob')),
        201,
      );
      assert.equal(await created(bob, 'roles', role('secrets', secretReader)), 201);
      assert.equal(
        await created(bob, 'rolebindings', binding('carol-secrets', { kind: 'Role', name: 'secret-reader' })),
        201,
      );
      // bind is per role name: cluster-admin is still out of reach.
      assert.equal(
        await created(
          bob,
          'rolebindings',
          binding('carol-admin', { kind: 'ClusterRole', name: 'cluster-admin' }),
        ),
        403,
      );
    });
  });
});
