// NodeRestriction, attacked with a stolen node credential over real HTTPS: every verb ×
// subresource a node identity can reach, against what upstream's Node authorizer, RBAC
// role system:node and NodeRestriction admission allow. Each attack answers 403 and
// changes nothing; what the kubelet needs keeps working.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { configuredFetch, type ConfiguredFetch } from '../../../api/client/fetch.js';
import { signLeaf, type KeyPair } from '../../../api/tls/certs.js';
import { MemoryStore } from '../../storage/memory.js';
import type { ApiServer } from '../server.js';
import type { KubeObject } from '../../../api/object.js';
import type { UserInfo } from '../../../api/auth/user.js';
import { findResource } from '../resources.js';
import { nodeRestrictionViolation } from './noderestriction.js';
import { startSecureApiServer } from '../auth/testing.js';

interface Answer {
  code: number;
  body: {
    kind?: string;
    reason?: string;
    message?: string;
    metadata?: {
      labels?: Record<string, string>;
      annotations?: Record<string, string>;
      ownerReferences?: unknown[];
    };
  };
}

describe('NodeRestriction (a node credential against the API server)', () => {
  const store = new MemoryStore();
  let server: ApiServer;
  let url: string;
  let ca: KeyPair;
  let admin: ConfiguredFetch;
  let n1: ConfiguredFetch;

  const as = async (user: string, groups: string[]): Promise<ConfiguredFetch> => {
    const { cert, key } = await signLeaf(ca, { usage: 'client', user, groups });
    return configuredFetch({ ca: ca.cert, cert, key: key! });
  };
  const send = async (
    f: ConfiguredFetch,
    method: string,
    path: string,
    body?: unknown,
    type = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
  ): Promise<Answer> => {
    const r = await f(url + path, {
      method,
      headers: { 'Content-Type': type },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { code: r.status, body: (await r.json()) as Answer['body'] };
  };
  const node = (name: string, labels: Record<string, string> = {}) => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels } },
  });
  const get = async (path: string) => (await send(admin, 'GET', path)).body;

  before(async () => {
    ({ ca, server, url } = await startSecureApiServer(store));
    admin = await as('root', ['system:masters']);
    n1 = await as('system:node:n1', ['system:nodes']);
    // n1 registers itself; an admin marks it trusted. n2 is another node, with its network annotations.
    assert.equal((await send(n1, 'POST', '/api/v1/nodes', node('n1'))).code, 201);
    const trusted = { metadata: { labels: { 'node-restriction.kubernetes.io/trusted': 'yes' } } };
    assert.equal((await send(admin, 'PATCH', '/api/v1/nodes/n1', trusted)).code, 200);
    const n2 = node('n2');
    const annotations = { 'flannel.alpha.coreos.com/public-ip': '198.18.0.2' };
    assert.equal(
      (await send(admin, 'POST', '/api/v1/nodes', { ...n2, metadata: { ...n2.metadata, annotations } })).code,
      201,
    );
    for (const [name, nodeName] of [
      ['mine', 'n1'],
      ['theirs', 'n2'],
    ]) {
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, labels: { app: 'web' } },
        spec: { nodeName, containers: [{ name: 'c', image: 'i' }] },
      };
      assert.equal((await send(admin, 'POST', '/api/v1/namespaces/default/pods', pod)).code, 201);
    }
  });
  after(async () => {
    await server.stop();
    await store.close();
  });

  /** Runs one attack: 403 Forbidden as a Status whose message matches, and `unchanged` still holds. */
  const refused = async (answer: Promise<Answer>, message: RegExp) => {
    const a = await answer;
    assert.equal(a.code, 403, a.body.message);
    assert.equal(a.body.kind, 'Status');
    assert.equal(a.body.reason, 'Forbidden');
    assert.match(a.body.message ?? '', message);
  };

  describe('its own Node', () => {
    const restricted = 'node-restriction.kubernetes.io/trusted';
    const labels = async () => (await get('/api/v1/nodes/n1')).metadata?.labels ?? {};

    it('cannot set, change or remove restricted labels through nodes/<self>/status', async () => {
      const msg = /^nodes "n1" is forbidden: node "n1" is not allowed to modify labels: /;
      for (const change of [
        { 'node-restriction.kubernetes.io/other': 'x' },
        { [restricted]: 'no' },
        { [restricted]: null },
        { 'node-role.kubernetes.io/control-plane': '' },
      ]) {
        await refused(send(n1, 'PATCH', '/api/v1/nodes/n1/status', { metadata: { labels: change } }), msg);
        await refused(
          send(
            n1,
            'PATCH',
            '/api/v1/nodes/n1/status',
            { metadata: { labels: change } },
            'application/strategic-merge-patch+json',
          ),
          msg,
        );
      }
      const current = await get('/api/v1/nodes/n1');
      await refused(
        send(n1, 'PUT', '/api/v1/nodes/n1/status', {
          ...current,
          metadata: { ...current.metadata, labels: { 'kubernetes.io/hostname': 'n1' } },
        }),
        msg,
      );
      assert.deepEqual(await labels(), { 'kubernetes.io/hostname': 'n1', [restricted]: 'yes' });
    });

    it('cannot add or change its ownerReferences (its own garbage collection), main resource or status', async () => {
      const owned = {
        metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: 'gone', uid: 'x' }] },
      };
      for (const path of ['/api/v1/nodes/n1', '/api/v1/nodes/n1/status'])
        await refused(send(n1, 'PATCH', path, owned), /node "n1" is not allowed to modify ownerReferences/);
      assert.equal((await get('/api/v1/nodes/n1')).metadata?.ownerReferences, undefined);
    });

    it('cannot delete itself (system:node has no delete on nodes)', async () => {
      await refused(send(n1, 'DELETE', '/api/v1/nodes/n1'), /cannot delete resource "nodes"/);
      assert.equal((await send(admin, 'GET', '/api/v1/nodes/n1')).code, 200);
    });

    it('may change its own annotations and kubelet labels, through the main resource and status', async () => {
      const own = {
        metadata: {
          labels: { 'node.kubernetes.io/instance-type': 'small', team: 'a' },
          annotations: { 'flannel.alpha.coreos.com/public-ip': '198.18.0.1' },
        },
      };
      for (const path of ['/api/v1/nodes/n1', '/api/v1/nodes/n1/status']) {
        const a = await send(n1, 'PATCH', path, own);
        assert.equal(a.code, 200, `${path}: ${a.body.message}`);
      }
      assert.equal((await labels()).team, 'a');
    });
  });

  describe('creating its Node', () => {
    it('is refused with restricted labels, by POST or server-side apply, and nothing is created', async () => {
      const n3 = await as('system:node:n3', ['system:nodes']);
      for (const key of ['node-restriction.kubernetes.io/trusted', 'node-role.kubernetes.io/control-plane']) {
        await refused(
          send(n3, 'POST', '/api/v1/nodes', node('n3', { [key]: 'yes' })),
          new RegExp(
            `^nodes "n3" is forbidden: node "n3" is not allowed to set the following labels: ${key}$`,
          ),
        );
        await refused(
          send(
            n3,
            'PATCH',
            '/api/v1/nodes/n3?fieldManager=kubelet',
            node('n3', { [key]: 'yes' }),
            'application/apply-patch+yaml',
          ),
          /is not allowed to set the following labels/,
        );
      }
      assert.equal((await send(admin, 'GET', '/api/v1/nodes/n3')).code, 404);
      // Its own labels are fine.
      assert.equal(
        (await send(n3, 'POST', '/api/v1/nodes', node('n3', { 'kubernetes.io/os': 'linux' }))).code,
        201,
      );
    });
  });

  describe('another Node (issue 14: only its own network annotations)', () => {
    const annotations = async () => (await get('/api/v1/nodes/n2')).metadata?.annotations;
    it('cannot write it by any verb or subresource, and nothing is written', async () => {
      const change = { metadata: { annotations: { 'flannel.alpha.coreos.com/public-ip': '198.18.0.1' } } };
      const whole = { ...node('n2'), metadata: { ...node('n2').metadata, ...change.metadata } };
      const msg =
        /node "n1" is not allowed to modify node "n2"|cannot (patch|update|delete) resource "nodes(\/status)?"/;
      await refused(send(n1, 'PATCH', '/api/v1/nodes/n2', change), msg);
      await refused(send(n1, 'PATCH', '/api/v1/nodes/n2/status', change), msg);
      await refused(
        send(n1, 'PATCH', '/api/v1/nodes/n2', change, 'application/strategic-merge-patch+json'),
        msg,
      );
      await refused(
        send(
          n1,
          'PATCH',
          '/api/v1/nodes/n2?fieldManager=flannel&force=true',
          whole,
          'application/apply-patch+yaml',
        ),
        msg,
      );
      const current = await get('/api/v1/nodes/n2');
      const replaced = { ...current, metadata: { ...current.metadata, ...change.metadata } };
      await refused(send(n1, 'PUT', '/api/v1/nodes/n2', replaced), msg);
      await refused(send(n1, 'PUT', '/api/v1/nodes/n2/status', replaced), msg);
      await refused(send(n1, 'DELETE', '/api/v1/nodes/n2'), msg);
      await refused(send(n1, 'POST', '/api/v1/nodes', whole), msg);
      assert.deepEqual(await annotations(), { 'flannel.alpha.coreos.com/public-ip': '198.18.0.2' });
    });
  });

  describe('pods', () => {
    const podLabels = async (name: string) =>
      (await get(`/api/v1/namespaces/default/pods/${name}`)).metadata?.labels;

    it('cannot change the labels of its own pod through pods/<name>/status', async () => {
      const msg = /^pods "mine" is forbidden: node "n1" cannot update labels through pod status$/;
      for (const labels of [{ app: 'db' }, { app: null }, { extra: 'x' }]) {
        await refused(
          send(n1, 'PATCH', '/api/v1/namespaces/default/pods/mine/status', { metadata: { labels } }),
          msg,
        );
      }
      const current = await get('/api/v1/namespaces/default/pods/mine');
      await refused(
        send(n1, 'PUT', '/api/v1/namespaces/default/pods/mine/status', {
          ...current,
          metadata: { ...current.metadata, labels: { app: 'db' } },
        }),
        msg,
      );
      assert.deepEqual(await podLabels('mine'), { app: 'web' });
    });

    it("may still write its pod status and annotations (as upstream), not another node's pod", async () => {
      const ok = await send(n1, 'PATCH', '/api/v1/namespaces/default/pods/mine/status', {
        metadata: { annotations: { note: 'x' } },
        status: { message: 'running' },
      });
      assert.equal(ok.code, 200, ok.body.message);
      await refused(
        send(n1, 'PATCH', '/api/v1/namespaces/default/pods/theirs/status', { status: { message: 'mine' } }),
        /is bound to node "n2", not to node "n1"/,
      );
    });

    it('cannot create pods, or read status subresources it is not granted', async () => {
      await refused(
        send(n1, 'POST', '/api/v1/namespaces/default/pods', {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'new' },
          spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] },
        }),
        /cannot create resource "pods"/,
      );
      await refused(
        send(n1, 'GET', '/api/v1/namespaces/default/pods/mine/status'),
        /cannot get resource "pods\/status"/,
      );
      await refused(send(n1, 'GET', '/api/v1/nodes/n1/status'), /cannot get resource "nodes\/status"/);
    });
  });
});

describe('nodeRestrictionViolation (the rulebook)', () => {
  const n1: UserInfo = { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
  const admin: UserInfo = { name: 'root', groups: ['system:masters'] };
  const nodes = findResource('', 'v1', 'nodes')!;
  const node = (labels: Record<string, string>, taints: unknown[] = []): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'n1', labels },
    spec: { taints },
  });
  const update = (user: UserInfo, old: KubeObject, next: KubeObject, subresource?: string) =>
    nodeRestrictionViolation({
      operation: 'UPDATE',
      resource: nodes,
      subresource,
      namespace: undefined,
      name: 'n1',
      object: next,
      oldObject: old,
      user,
      dryRun: false,
    });
  const create = (
    user: UserInfo,
    group: string,
    resource: string,
    namespace: string | undefined,
    name: string,
  ) =>
    nodeRestrictionViolation({
      operation: 'CREATE',
      resource: findResource(group, 'v1', resource)!,
      subresource: undefined,
      namespace,
      name,
      object: { metadata: { name } },
      oldObject: undefined,
      user,
      dryRun: false,
    });
  const base = { 'kubernetes.io/hostname': 'n1', team: 'a' };

  it('lets a node create only its own Node and Lease, and no pods; other users pass', () => {
    assert.equal(create(n1, '', 'nodes', undefined, 'n1'), undefined);
    assert.equal(create(n1, 'coordination.k8s.io', 'leases', 'kube-node-lease', 'n1'), undefined);
    assert.equal(create(n1, '', 'nodes', undefined, 'n2'), 'node "n1" is not allowed to modify node "n2"');
    assert.match(
      create(n1, 'coordination.k8s.io', 'leases', 'kube-node-lease', 'n2')!,
      /same name as the requesting node/,
    );
    assert.match(create(n1, '', 'pods', 'default', 'p')!, /mirror pods/);
    const notANode = { name: 'system:node:n1', groups: ['system:authenticated'] }; // not in system:nodes
    for (const user of [admin, notANode]) {
      assert.equal(create(user, '', 'nodes', undefined, 'n2'), undefined);
      assert.equal(create(user, '', 'pods', 'default', 'p'), undefined);
    }
  });

  it('lets a node create only local-path volumes with node affinity to itself', () => {
    const volume = (node: string, provisioner = 'rancher.io/local-path') =>
      nodeRestrictionViolation({
        operation: 'CREATE',
        // Not looked up: the PV kind may be served after this test was written.
        resource: { group: '', version: 'v1', resource: 'persistentvolumes' } as Parameters<
          typeof nodeRestrictionViolation
        >[0]['resource'],
        subresource: undefined,
        namespace: undefined,
        name: 'pvc-1',
        object: {
          metadata: { name: 'pvc-1', annotations: { 'pv.kubernetes.io/provisioned-by': provisioner } },
          spec: {
            nodeAffinity: {
              required: {
                nodeSelectorTerms: [
                  { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] },
                ],
              },
            },
          },
        },
        oldObject: undefined,
        user: n1,
        dryRun: false,
      });
    assert.equal(volume('n1'), undefined);
    assert.equal(volume('n2'), 'node "n1" can only create local-path volumes with node affinity to itself');
    assert.match(volume('n1', 'ebs.csi.aws.com')!, /can only create local-path volumes/);
  });

  it('allows its own labels and labels outside the kubernetes.io / k8s.io namespaces', () => {
    const allowed: Record<string, string>[] = [
      { team: 'b', 'kubernetes.io/arch': 'amd64' },
      { 'node.kubernetes.io/instance-type': 'x' },
      { 'kubelet.kubernetes.io/x': 'y' },
      { 'example.node.kubernetes.io/x': 'y' },
      { 'example.com/x': 'y' },
    ];
    for (const labels of allowed)
      assert.equal(update(n1, node(base), node({ ...base, ...labels })), undefined, JSON.stringify(labels));
    // The same kind of change to a label in those namespaces and off the allow-list is
    // refused: the ones above pass for what they are, not because nothing is checked.
    for (const key of ['kubernetes.io/role', 'example.kubernetes.io/x'])
      assert.match(
        update(n1, node(base), node({ ...base, [key]: 'y' }))!,
        new RegExp(`modify labels: ${key}$`),
      );
  });

  for (const key of [
    'node-restriction.kubernetes.io/trusted',
    'node-role.kubernetes.io/control-plane',
    'example.k8s.io/x',
  ]) {
    it(`refuses adding, changing or removing ${key}, on the Node and its status`, () => {
      const want = `node "n1" is not allowed to modify labels: ${key}`;
      for (const sub of [undefined, 'status']) {
        assert.equal(update(n1, node(base), node({ ...base, [key]: 'v' }), sub), want);
        assert.equal(update(n1, node({ ...base, [key]: 'v' }), node({ ...base, [key]: 'w' }), sub), want);
        assert.equal(update(n1, node({ ...base, [key]: 'v' }), node(base), sub), want);
      }
    });
  }

  it('refuses changing taints or ownerReferences; other users pass', () => {
    const taint = { key: 'dedicated', value: 'x', effect: 'NoSchedule' };
    assert.equal(update(n1, node(base), node(base, [taint])), 'node "n1" is not allowed to modify taints');
    assert.equal(update(n1, node(base, [taint]), node(base)), 'node "n1" is not allowed to modify taints');
    const owned = node(base);
    owned.metadata!.ownerReferences = [{ apiVersion: 'v1', kind: 'Node', name: 'x', uid: 'u' }];
    assert.equal(update(n1, node(base), owned), 'node "n1" is not allowed to modify ownerReferences');
    assert.equal(update(n1, owned, node(base)), 'node "n1" is not allowed to modify ownerReferences');
    assert.equal(update(n1, owned, owned), undefined);
    assert.equal(update(admin, node(base), { ...owned, spec: { taints: [taint] } }), undefined);
  });
});
