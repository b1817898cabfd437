// One file because one cluster: issue 8's suites run in order on the server and agent started here (later ones use the node joined earlier).
// Secure by default (issue 8), with real processes: a real `k8ts server` (HTTPS, its CA in
// DATA_DIR/tls), real `k8ts agent` processes joining with join tokens, a real dockerd and
// the real kubectl. Every "Done when" bullet of the issue has its test below.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { configuredFetch, type ConfiguredFetch } from '../api/client/fetch.js';
import { createCA } from '../api/tls/certs.js';
import { freeClusterCIDR } from './support/cluster-cidr.js';
import { removeNodeFromDocker, startK8tsAgent, type K8tsAgent } from './support/k8ts-agent.js';
import {
  cliCommand,
  run,
  startK8tsServer,
  type CommandResult,
  type K8tsServer,
} from './support/k8ts-server.js';
import { untilTruthy } from './support/wait.js';

const unique = `sec-${process.pid}-${Date.now().toString(36)}`;
const node = `${unique}-n`;
const otherNode = `${unique}-other`;
const ns = `${unique}-team`;

/** Runs the k8ts CLI (from source) with a deadline. */
function k8ts(...args: string[]): Promise<CommandResult> {
  const cli = cliCommand(true);
  return run(cli.cmd, [...cli.args, ...args], { timeoutMs: 60_000 });
}

/** Polls `check` (support/wait.ts) with this file's deadline (60_000 ms) and pace (250 ms). */
const until = <T>(
  what: string,
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  ms = 60_000,
) => untilTruthy(what, check, ms, 250);

describe('secure by default', { timeout: 400_000 }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'k8ts-sec-'));
  const agentDir = mkdtempSync(join(tmpdir(), 'k8ts-sec-agent-'));
  const scratch = mkdtempSync(join(tmpdir(), 'k8ts-sec-scratch-'));
  let k: K8tsServer;
  let agent: K8tsAgent | undefined;
  let asNode: ConfiguredFetch;
  let clusterArgs: string[] = [];

  before(async () => {
    const started = await run('bash', ['scripts/start-dockerd.sh'], { timeoutMs: 60_000 });
    assert.equal(started.code, 0, `dockerd did not start: ${started.stderr}`);
    // Kept across the restart below; the agent's pod network takes a node CIDR from it.
    clusterArgs = ['--cluster-cidr', await freeClusterCIDR()];
    k = await startK8tsServer({ dataDir, fromSource: true, readyTimeoutMs: 60_000, args: clusterArgs });
  });

  after(async () => {
    await agent?.stop();
    await k?.stop();
    await removeNodeFromDocker(node);
    for (const d of [dataDir, agentDir, scratch]) rmSync(d, { recursive: true, force: true });
  });

  describe('kubectl and HTTPS', () => {
    it('serves HTTPS only, and kubectl with the written kubeconfig verifies the server', async () => {
      assert.match(k.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      const kc = readFileSync(k.kubeconfig, 'utf8');
      assert.match(kc, /certificate-authority-data:/);
      assert.doesNotMatch(kc, /insecure-skip-tls-verify/);
      const r = await k.kubectl('get', 'namespaces', '-o', 'name');
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /namespace\/kube-system/);
      const who = await k.kubectl('auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}');
      assert.equal(who.code, 0, who.stderr);
      assert.equal(who.stdout, 'system:admin');
      // Plain HTTP to the same port is not an API.
      const plain = await fetch(k.url.replace('https:', 'http:') + '/api').then(
        (res) => res.status,
        () => 'refused',
      );
      assert.notEqual(plain, 200);
    });

    it('answers 401 without credentials, except /healthz, /livez, /readyz and /version', async () => {
      const anonymous = configuredFetch({ ca: readFileSync(join(dataDir, 'tls', 'server-ca.crt'), 'utf8') });
      for (const path of ['/api/v1/namespaces', '/api', '/apis/apps/v1/deployments', '/metrics', '/nope']) {
        const res = await anonymous(k.url + path);
        assert.equal(res.status, 401, path);
        const status = (await res.json()) as { kind: string; reason: string; code: number };
        assert.deepEqual([status.kind, status.reason, status.code], ['Status', 'Unauthorized', 401], path);
      }
      for (const path of ['/healthz', '/livez', '/readyz', '/version']) {
        const res = await anonymous(k.url + path);
        assert.equal(res.status, 200, path);
        await res.arrayBuffer();
      }
      // kubectl without any credential gets nothing.
      const noCred = join(scratch, 'no-cred.yaml');
      const doc = parseYaml(readFileSync(k.kubeconfig, 'utf8')) as {
        users: { user: Record<string, unknown> }[];
      };
      for (const u of doc.users) u.user = {};
      writeFileSync(noCred, toYaml(doc));
      // (kubectl then asks for a user name, as it does against any cluster; no input: it gives up.)
      const r = await run('kubectl', ['--kubeconfig', noCred, 'get', 'pods']);
      assert.notEqual(r.code, 0);
      assert.doesNotMatch(r.stdout, /NAME|No resources/);
      // A bearer token the server does not know: 401 ("You must be logged in to the server").
      const bogus = join(scratch, 'bogus-token.yaml');
      for (const u of doc.users) u.user = { token: 'abcdef.0123456789abcdef' };
      writeFileSync(bogus, toYaml(doc));
      const t = await run('kubectl', ['--kubeconfig', bogus, 'get', 'pods']);
      assert.notEqual(t.code, 0);
      assert.match(t.stderr, /You must be logged in to the server/);
    });

    it('kubectl refuses a server whose certificate is not signed by the CA it was given', async () => {
      const wrong = await createCA('not-the-cluster-ca');
      const kc = join(scratch, 'wrong-ca.yaml');
      const doc = parseYaml(readFileSync(k.kubeconfig, 'utf8')) as {
        clusters: { cluster: Record<string, unknown> }[];
      };
      for (const c of doc.clusters)
        c.cluster['certificate-authority-data'] = Buffer.from(wrong.cert).toString('base64');
      writeFileSync(kc, toYaml(doc));
      const r = await run('kubectl', ['--kubeconfig', kc, 'get', 'namespaces']);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /x509: certificate signed by unknown authority|failed to verify certificate/);
    });
  });

  describe('joining', () => {
    it('refuses a token with the right CA but a wrong secret, with a clear message and a non-zero exit', async () => {
      const [prefix] = k.nodeToken().split('::');
      const r = await k8ts(
        'agent',
        '--server',
        k.url,
        '--token',
        `${prefix}::abcdef.0123456789abcdef`,
        '--node-name',
        `${unique}-wrong`,
        '--node-ip',
        '127.0.0.1',
        '--data-dir',
        join(scratch, 'wrong-agent'),
      );
      assert.notEqual(r.code, 0);
      assert.match(
        r.stderr,
        /refused the join token \(401 Unauthorized\): it is wrong, expired or was revoked/,
      );
    });

    it('refuses to trust a server whose CA does not match the token', async () => {
      const [, secret] = k.nodeToken().split('::');
      const r = await k8ts(
        'agent',
        '--server',
        k.url,
        '--token',
        `K10${'0'.repeat(64)}::${secret}`,
        '--node-name',
        `${unique}-wrongca`,
        '--node-ip',
        '127.0.0.1',
        '--data-dir',
        join(scratch, 'wrongca-agent'),
      );
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /does not match the CA hash in the join token/);
    });

    it('a token created with "k8ts token create" and then deleted cannot join', async () => {
      const created = await k8ts('token', 'create', '--data-dir', dataDir, '--description', 'e2e');
      assert.equal(created.code, 0, created.stderr);
      const token = created.stdout.trim();
      assert.match(token, /^K10[0-9a-f]{64}::[a-z0-9]{6}\.[a-z0-9]{16}$/);
      const id = token.split('::')[1]!.split('.')[0]!;
      const listed = await k8ts('token', 'list', '--data-dir', dataDir);
      assert.match(listed.stdout, new RegExp(`^${id} .* e2e$`, 'm'));
      assert.doesNotMatch(listed.stdout, new RegExp(token.split('.')[1]!), 'list never shows secrets');
      const deleted = await k8ts('token', 'delete', id, '--data-dir', dataDir);
      assert.equal(deleted.code, 0, deleted.stderr);
      const twice = await k8ts('token', 'delete', id, '--data-dir', dataDir);
      assert.equal(twice.code, 1);
      assert.match(twice.stderr, new RegExp(`^k8ts token: bootstrap token "${id}" not found`, 'm'));
      assert.doesNotMatch(
        (await k8ts('token', 'list', '--data-dir', dataDir)).stdout,
        new RegExp(`^${id} `, 'm'),
      );
      const r = await k8ts(
        'agent',
        '--server',
        k.url,
        '--token',
        token,
        '--node-name',
        `${unique}-revoked`,
        '--node-ip',
        '127.0.0.1',
        '--data-dir',
        join(scratch, 'revoked-agent'),
      );
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /refused the join token/);
      const nodes = await k.kubectl('get', 'nodes', '-o', 'name');
      assert.doesNotMatch(nodes.stdout, /revoked|wrong/);
    });

    it('an agent joins with the node token and keeps its own node credential', async () => {
      agent = await startK8tsAgent({
        server: k.url,
        token: k.nodeToken(),
        nodeName: node,
        nodeIP: '127.0.0.1',
        dataDir: agentDir,
        fromSource: true,
        readyTimeoutMs: 60_000,
      });
      const r = await k.kubectl('get', 'node', node, '-o', 'name');
      assert.equal(r.code, 0, r.stderr);
      for (const f of ['server-ca.crt', 'kubelet-client.crt', 'kubelet-client.key']) {
        assert.equal(statSync(join(agentDir, 'tls', f)).mode & 0o077, 0, f);
      }
      const tls = (f: string) => readFileSync(join(agentDir, 'tls', f), 'utf8');
      asNode = configuredFetch({
        ca: tls('server-ca.crt'),
        cert: tls('kubelet-client.crt'),
        key: tls('kubelet-client.key'),
      });
      const who = await asNode(`${k.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
      });
      assert.equal(who.status, 201);
      const info = ((await who.json()) as { status: { userInfo: { username: string; groups: string[] } } })
        .status.userInfo;
      assert.equal(info.username, `system:node:${node}`);
      assert.ok(info.groups.includes('system:nodes'));
    });
  });

  describe("a node's credential", () => {
    const json = (body: unknown, type = 'application/merge-patch+json') => ({
      headers: { 'Content-Type': type },
      body: JSON.stringify(body),
    });

    before(async () => {
      assert.ok(asNode, 'the agent joined');
      // Another node, a pod bound there, a pod bound to our node using one Secret, and one Secret no pod uses.
      const apply = await k.kubectlIn(
        [
          `{"apiVersion":"v1","kind":"Node","metadata":{"name":"${otherNode}"}}`,
          `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"used","namespace":"default"},"stringData":{"k":"v"}}`,
          `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"unused","namespace":"default"},"stringData":{"k":"v"}}`,
          `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"${unique}-elsewhere","namespace":"default"},"spec":{"nodeName":"${otherNode}","containers":[{"name":"c","image":"k8ts/pause:1.0"}]}}`,
          `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"${unique}-mine","namespace":"default"},"spec":{"nodeName":"${node}","containers":[{"name":"c","image":"k8ts/pause:1.0","env":[{"name":"K","valueFrom":{"secretKeyRef":{"name":"used","key":"k"}}}]}]}}`,
        ].join('\n'),
        'apply',
        '-f',
        '-',
      );
      assert.equal(apply.code, 0, apply.stderr);
    });

    after(async () => {
      await k.kubectl(
        'delete',
        'pod',
        `${unique}-mine`,
        `${unique}-elsewhere`,
        '--grace-period=0',
        '--force',
        '--wait=false',
      );
      await k.kubectl('delete', 'node', otherNode, '--wait=false');
    });

    it('is refused (403, in Kubernetes wording) for what belongs to other nodes or to no node', async () => {
      const cases: { what: string; url: string; init: Parameters<ConfiguredFetch>[1]; message: RegExp }[] = [
        {
          what: "patching another node's status",
          url: `/api/v1/nodes/${otherNode}/status`,
          init: { method: 'PATCH', ...json({ status: { phase: 'Running' } }) },
          message: new RegExp(
            `^nodes "${otherNode}" is forbidden: User "system:node:${node}" cannot patch resource "nodes/status" in API group "" at the cluster scope`,
          ),
        },
        {
          what: 'a restricted label on its own node',
          url: `/api/v1/nodes/${node}`,
          init: {
            method: 'PATCH',
            ...json({ metadata: { labels: { 'node-restriction.kubernetes.io/trusted': 'yes' } } }),
          },
          message: new RegExp(
            `^nodes "${node}" is forbidden: node "${node}" is not allowed to modify labels: node-restriction.kubernetes.io/trusted$`,
          ),
        },
        {
          what: 'a taint on its own node',
          url: `/api/v1/nodes/${node}`,
          init: {
            method: 'PATCH',
            ...json({ spec: { taints: [{ key: 'dedicated', value: 'mine', effect: 'NoSchedule' }] } }),
          },
          message: new RegExp(
            `^nodes "${node}" is forbidden: node "${node}" is not allowed to modify taints$`,
          ),
        },
        {
          what: 'changing a pod bound elsewhere',
          url: `/api/v1/namespaces/default/pods/${unique}-elsewhere/status`,
          init: { method: 'PATCH', ...json({ status: { message: 'mine now' } }) },
          message: new RegExp(`is bound to node "${otherNode}", not to node "${node}"`),
        },
        {
          what: 'changing the spec of its own pod',
          url: `/api/v1/namespaces/default/pods/${unique}-mine`,
          init: { method: 'PATCH', ...json({ metadata: { labels: { x: 'y' } } }) },
          message: /cannot patch resource "pods" in API group "" in the namespace "default"/,
        },
        {
          what: 'creating a Deployment',
          url: '/apis/apps/v1/namespaces/default/deployments',
          init: {
            method: 'POST',
            ...json(
              {
                apiVersion: 'apps/v1',
                kind: 'Deployment',
                metadata: { name: 'x' },
                spec: {
                  selector: { matchLabels: { a: 'b' } },
                  template: {
                    metadata: { labels: { a: 'b' } },
                    spec: { containers: [{ name: 'c', image: 'i' }] },
                  },
                },
              },
              'application/json',
            ),
          },
          message:
            /^deployments\.apps is forbidden: User "system:node:.*" cannot create resource "deployments" in API group "apps" in the namespace "default"/,
        },
        {
          what: 'reading a Secret no pod on the node uses',
          url: '/api/v1/namespaces/default/secrets/unused',
          init: {},
          message:
            /^secrets "unused" is forbidden: User "system:node:.*" cannot get resource "secrets" .*no relationship found between node/,
        },
        {
          what: 'listing Secrets',
          url: '/api/v1/secrets',
          init: {},
          message: /cannot list resource "secrets"/,
        },
        {
          what: "renewing another node's Lease",
          url: `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${otherNode}`,
          init: { method: 'PATCH', ...json({ spec: { holderIdentity: node } }) },
          message: /can only access node lease with the same name/,
        },
        {
          what: 'creating a Node of another name',
          url: '/api/v1/nodes',
          init: {
            method: 'POST',
            ...json(
              { apiVersion: 'v1', kind: 'Node', metadata: { name: `${unique}-fake` } },
              'application/json',
            ),
          },
          message: new RegExp(`node "${node}" is not allowed to modify node "${unique}-fake"`),
        },
      ];
      for (const c of cases) {
        const res = await asNode(k.url + c.url, c.init);
        const status = (await res.json()) as { code: number; reason: string; message: string };
        assert.equal(res.status, 403, `${c.what}: ${status.message}`);
        assert.equal(status.reason, 'Forbidden', c.what);
        assert.match(status.message, c.message, c.what);
      }
      // Nothing changed.
      const other = await k.kubectl('get', 'node', otherNode, '-o', 'jsonpath={.status.phase}');
      assert.equal(other.stdout, '');
      assert.equal((await k.kubectl('get', 'deployment', 'x')).code, 1);
    });

    it('works for its own Node, Lease, pods and the Secrets they use', async () => {
      const ok = async (what: string, url: string, init: Parameters<ConfiguredFetch>[1] = {}) => {
        const res = await asNode(k.url + url, init);
        const body = await res.text();
        assert.ok(res.status >= 200 && res.status < 300, `${what}: ${res.status} ${body}`);
        return body;
      };
      await ok('reading nodes', '/api/v1/nodes');
      await ok('labelling its own Node', `/api/v1/nodes/${node}`, {
        method: 'PATCH',
        ...json({ metadata: { labels: { 'e2e/own': 'yes' } } }),
      });
      await ok('patching its own Node status', `/api/v1/nodes/${node}/status`, {
        method: 'PATCH',
        ...json(
          {
            status: {
              conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'e2e' }],
            },
          },
          'application/strategic-merge-patch+json',
        ),
      });
      await ok('reading its Lease', `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${node}`);
      await ok(
        'renewing its Lease',
        `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${node}`,
        {
          method: 'PATCH',
          ...json({ spec: { renewTime: new Date().toISOString().replace('Z', '000Z') } }),
        },
      );
      await ok(
        'watching its pods',
        `/api/v1/pods?fieldSelector=spec.nodeName%3D${node}&watch=true&timeoutSeconds=1`,
      );
      await ok('patching the status of its pod', `/api/v1/namespaces/default/pods/${unique}-mine/status`, {
        method: 'PATCH',
        ...json({ metadata: { annotations: { 'e2e/status': 'ok' } } }),
      });
      await ok('reading the Secret its pod uses', '/api/v1/namespaces/default/secrets/used');
      await ok('recording an event', '/api/v1/namespaces/default/events', {
        method: 'POST',
        ...json(
          {
            apiVersion: 'v1',
            kind: 'Event',
            metadata: { name: `${unique}.e2e` },
            involvedObject: { kind: 'Node', name: node },
            reason: 'E2E',
            message: 'from the node credential',
            type: 'Normal',
            source: { component: 'kubelet', host: node },
          },
          'application/json',
        ),
      });
      const label = await k.kubectl('get', 'node', node, '-o', 'jsonpath={.metadata.labels.e2e/own}');
      assert.equal(label.stdout, 'yes');
      // The agent itself keeps working with this credential: its Lease is renewed.
      await until('the agent renewing its Lease', async () => {
        const r = await k.kubectl(
          'get',
          'lease',
          '-n',
          'kube-node-lease',
          node,
          '-o',
          'jsonpath={.spec.holderIdentity}',
        );
        return r.code === 0 && r.stdout === node;
      });
    });
  });

  describe('RBAC', () => {
    let userKubeconfig: string;
    const asUser = (...args: string[]) =>
      run('kubectl', [
        '--kubeconfig',
        userKubeconfig,
        '--cache-dir',
        join(scratch, 'kubectl-cache-alice'),
        ...args,
      ]);

    before(async () => {
      const made = await k8ts('kubeconfig', '--user', 'alice', '--group', 'e2e-devs', '--data-dir', dataDir);
      assert.equal(made.code, 0, made.stderr);
      userKubeconfig = join(scratch, 'alice.yaml');
      writeFileSync(userKubeconfig, made.stdout, { mode: 0o600 });
      for (const args of [
        ['create', 'namespace', ns],
        ['create', 'role', 'pod-reader', '-n', ns, '--verb=get,list,watch', '--resource=pods'],
        ['create', 'rolebinding', 'alice-reads-pods', '-n', ns, '--role=pod-reader', '--user=alice'],
        ['run', 'p', '-n', ns, '--image=k8ts/pause:1.0', '--overrides={"spec":{"nodeName":"nowhere"}}'],
      ]) {
        const r = await k.kubectl(...args);
        assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
      }
    });

    it('a user bound to a namespaced Role can list pods there and nothing elsewhere', async () => {
      const who = await asUser(
        'auth',
        'whoami',
        '-o',
        'jsonpath={.status.userInfo.username} {.status.userInfo.groups}',
      );
      assert.equal(who.code, 0, who.stderr);
      assert.match(who.stdout, /^alice .*e2e-devs/);
      const pods = await asUser('get', 'pods', '-n', ns, '-o', 'name');
      assert.equal(pods.code, 0, pods.stderr);
      assert.equal(pods.stdout.trim(), 'pod/p');
      for (const args of [
        ['get', 'pods', '-n', 'default'],
        ['get', 'pods', '-A'],
        ['get', 'deployments', '-n', ns],
        ['get', 'secrets', '-n', ns],
        ['delete', 'pod', 'p', '-n', ns],
        ['get', 'nodes'],
      ]) {
        const r = await asUser(...args);
        assert.notEqual(r.code, 0, `kubectl ${args.join(' ')} should be refused`);
        assert.match(r.stderr, /is forbidden: User "alice" cannot/, args.join(' '));
      }
    });

    it('kubectl auth can-i agrees', async () => {
      const cases: [string[], 'yes' | 'no'][] = [
        [['list', 'pods', '-n', ns], 'yes'],
        [['get', 'pods/p', '-n', ns], 'yes'],
        [['watch', 'pods', '-n', ns], 'yes'],
        [['delete', 'pods', '-n', ns], 'no'],
        [['list', 'pods', '-n', 'default'], 'no'],
        [['list', 'pods', '-A'], 'no'],
        [['create', 'deployments', '-n', ns], 'no'],
        [['get', 'secrets', '-n', ns], 'no'],
      ];
      for (const [args, want] of cases) {
        const r = await asUser('auth', 'can-i', ...args);
        assert.equal(r.stdout.trim(), want, `can-i ${args.join(' ')}: ${r.stderr}`);
        assert.equal(r.code, want === 'yes' ? 0 : 1);
      }
      // The admin may, and may ask on behalf of alice.
      assert.equal(
        (await k.kubectl('auth', 'can-i', 'create', 'deployments', '-n', ns)).stdout.trim(),
        'yes',
      );
      const as = (...args: string[]) => k.kubectl('auth', 'can-i', ...args, '--as', 'alice');
      assert.equal((await as('list', 'pods', '-n', ns)).stdout.trim(), 'yes');
      assert.equal((await as('list', 'pods', '-n', 'default')).stdout.trim(), 'no');
      // --list (SelfSubjectRulesReview): the Role's pods rule in its namespace, not elsewhere.
      const list = await asUser('auth', 'can-i', '--list', '-n', ns);
      assert.equal(list.code, 0, list.stderr);
      assert.match(list.stdout, /^pods\s+\[\]\s+\[\]\s+\[.*list.*\]$/m);
      const elsewhere = await asUser('auth', 'can-i', '--list', '-n', 'default');
      assert.equal(elsewhere.code, 0, elsewhere.stderr);
      assert.doesNotMatch(elsewhere.stdout, /^pods\s/m);
      // alice may not impersonate anyone.
      const r = await asUser('get', 'pods', '-n', ns, '--as', 'system:admin');
      assert.notEqual(r.code, 0);
      assert.match(
        r.stderr,
        /users "system:admin" is forbidden: User "alice" cannot impersonate resource "users"/,
      );
    });
  });

  describe('certificates on disk', () => {
    it('have owner-only permissions, and a restart reuses them (the agent too, without its token)', async () => {
      const files = [
        'server-ca.crt',
        'server-ca.key',
        'serving.crt',
        'serving.key',
        'client-admin.crt',
        'client-admin.key',
      ];
      assert.equal(statSync(join(dataDir, 'tls')).mode & 0o077, 0, 'tls/');
      for (const f of files) assert.equal(statSync(join(dataDir, 'tls', f)).mode & 0o077, 0, f);
      for (const f of ['kubeconfig.yaml', 'node-token'])
        assert.equal(statSync(join(dataDir, f)).mode & 0o077, 0, f);
      const before = Object.fromEntries(files.map((f) => [f, readFileSync(join(dataDir, 'tls', f), 'utf8')]));
      const token = k.nodeToken();

      await agent?.stop();
      agent = undefined;
      await k.stop();
      // A data dir that others can read (made by hand, say) is made owner-only at start:
      // it holds the store with every Secret.
      chmodSync(dataDir, 0o755);
      k = await startK8tsServer({ dataDir, fromSource: true, readyTimeoutMs: 60_000, args: clusterArgs });
      assert.equal(statSync(dataDir).mode & 0o077, 0, 'the data dir');
      for (const f of files)
        assert.equal(readFileSync(join(dataDir, 'tls', f), 'utf8'), before[f], `${f} reused`);
      assert.equal(k.nodeToken(), token);
      const r = await k.kubectl('get', 'namespaces', ns, '-o', 'name');
      assert.equal(r.code, 0, r.stderr);

      agent = await startK8tsAgent({
        server: k.url,
        nodeName: node,
        nodeIP: '127.0.0.1',
        dataDir: agentDir,
        fromSource: true,
        readyTimeoutMs: 60_000,
      });
      assert.match(agent.logs(), /using the stored node credential/);
    });
  });
});
