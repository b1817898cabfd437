import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../api/object.js';
import { ApiError } from '../status.js';
import type { Attributes } from './authz.js';
import type { UserInfo } from './user.js';
import { admitNodeCreate, admitNodeUpdate, nodeAuthorizer, podReferences } from './node.js';

const n1 = { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
const pod = (name: string, nodeName: string, spec: object = {}): KubeObject => ({
  metadata: { name, namespace: 'default' },
  spec: { nodeName, containers: [{ name: 'c', image: 'i' }], ...spec },
});
const PODS: KubeObject[] = [
  pod('mine', 'n1', {
    volumes: [
      { name: 'v', secret: { secretName: 'vol-secret' } },
      { name: 'w', configMap: { name: 'vol-cm' } },
    ],
    containers: [
      {
        name: 'c',
        image: 'i',
        env: [{ name: 'E', valueFrom: { secretKeyRef: { name: 'env-secret', key: 'k' } } }],
        envFrom: [{ configMapRef: { name: 'envfrom-cm' } }],
      },
    ],
  }),
  pod('theirs', 'n2', { volumes: [{ name: 'v', secret: { secretName: 'their-secret' } }] }),
];
const z = nodeAuthorizer({
  getPod: (ns, name) =>
    Promise.resolve(PODS.find((p) => p.metadata?.namespace === ns && p.metadata?.name === name)),
  podsOnNode: (node, ns) =>
    Promise.resolve(
      PODS.filter((p) => (p.spec as { nodeName: string }).nodeName === node && p.metadata?.namespace === ns),
    ),
});
const a = (verb: string, group: string, resource: string, extra: Partial<Attributes> = {}): Attributes => ({
  user: n1,
  verb,
  resourceRequest: true,
  group,
  resource,
  ...extra,
});

describe('nodeAuthorizer (Node authorizer)', () => {
  const cases: [string, Attributes, 'allow' | 'deny' | 'noOpinion'][] = [
    ['list nodes', a('list', '', 'nodes'), 'allow'],
    ['patch own node status', a('patch', '', 'nodes', { name: 'n1', subresource: 'status' }), 'allow'],
    ['update own node', a('update', '', 'nodes', { name: 'n1' }), 'allow'],
    ["patch another node's status", a('patch', '', 'nodes', { name: 'n2', subresource: 'status' }), 'deny'],
    ['delete another node', a('delete', '', 'nodes', { name: 'n2' }), 'deny'],
    ['watch pods', a('watch', '', 'pods'), 'allow'],
    [
      'patch status of its pod',
      a('patch', '', 'pods', { namespace: 'default', name: 'mine', subresource: 'status' }),
      'allow',
    ],
    [
      'patch status of a pod elsewhere',
      a('patch', '', 'pods', { namespace: 'default', name: 'theirs', subresource: 'status' }),
      'deny',
    ],
    ['delete its pod', a('delete', '', 'pods', { namespace: 'default', name: 'mine' }), 'allow'],
    ['delete a pod elsewhere', a('delete', '', 'pods', { namespace: 'default', name: 'theirs' }), 'deny'],
    ['patch the spec of its pod', a('patch', '', 'pods', { namespace: 'default', name: 'mine' }), 'deny'],
    ['create pods', a('create', '', 'pods', { namespace: 'default' }), 'deny'],
    ['list endpointslices', a('list', 'discovery.k8s.io', 'endpointslices'), 'allow'],
    ['write services', a('update', '', 'services', { namespace: 'default', name: 's' }), 'deny'],
    [
      'its own lease',
      a('update', 'coordination.k8s.io', 'leases', { namespace: 'kube-node-lease', name: 'n1' }),
      'allow',
    ],
    [
      "another node's lease",
      a('update', 'coordination.k8s.io', 'leases', { namespace: 'kube-node-lease', name: 'n2' }),
      'deny',
    ],
    [
      'a lease elsewhere',
      a('get', 'coordination.k8s.io', 'leases', { namespace: 'kube-system', name: 'n1' }),
      'deny',
    ],
    ['create events', a('create', '', 'events', { namespace: 'default' }), 'allow'],
    [
      'create events.k8s.io events',
      a('create', 'events.k8s.io', 'events', { namespace: 'default' }),
      'allow',
    ],
    [
      'a secret its pod mounts',
      a('get', '', 'secrets', { namespace: 'default', name: 'vol-secret' }),
      'allow',
    ],
    [
      'a secret its pod reads in env',
      a('get', '', 'secrets', { namespace: 'default', name: 'env-secret' }),
      'allow',
    ],
    [
      'a configmap its pod mounts',
      a('get', '', 'configmaps', { namespace: 'default', name: 'vol-cm' }),
      'allow',
    ],
    [
      'a configmap its pod reads with envFrom',
      a('get', '', 'configmaps', { namespace: 'default', name: 'envfrom-cm' }),
      'allow',
    ],
    [
      'the cluster network setting every node reads',
      a('get', '', 'configmaps', { namespace: 'kube-system', name: 'kube-flannel-cfg' }),
      'allow',
    ],
    [
      'a secret named like the network setting',
      a('get', '', 'secrets', { namespace: 'kube-system', name: 'kube-flannel-cfg' }),
      'deny',
    ],
    [
      'writing the network setting',
      a('update', '', 'configmaps', { namespace: 'kube-system', name: 'kube-flannel-cfg' }),
      'deny',
    ],
    [
      "another node's pod's secret",
      a('get', '', 'secrets', { namespace: 'default', name: 'their-secret' }),
      'deny',
    ],
    [
      'a secret of the same name in another namespace',
      a('get', '', 'secrets', { namespace: 'other', name: 'vol-secret' }),
      'deny',
    ],
    ['list secrets', a('list', '', 'secrets', { namespace: 'default' }), 'deny'],
    [
      'deployments: no opinion (RBAC decides)',
      a('create', 'apps', 'deployments', { namespace: 'default' }),
      'noOpinion',
    ],
  ];
  for (const [name, attrs, want] of cases) {
    it(name, async () => assert.equal((await z.authorize(attrs)).decision, want));
  }
  it('has no opinion about users that are not nodes', async () => {
    const user = { name: 'system:node:n1', groups: ['system:authenticated'] }; // not in system:nodes
    assert.equal(
      (await z.authorize({ ...a('get', '', 'secrets', { namespace: 'default', name: 'x' }), user })).decision,
      'noOpinion',
    );
  });
});

describe('admitNodeCreate (NodeRestriction)', () => {
  const forbidden = (fn: () => void, msg: RegExp) =>
    assert.throws(fn, (err: unknown) => err instanceof ApiError && err.code === 403 && msg.test(err.message));
  it('lets a node create only its own Node and Lease, and no pods', () => {
    admitNodeCreate(n1, { group: '', resource: 'nodes' }, undefined, { metadata: { name: 'n1' } });
    admitNodeCreate(n1, { group: 'coordination.k8s.io', resource: 'leases' }, 'kube-node-lease', {
      metadata: { name: 'n1' },
    });
    forbidden(
      () => admitNodeCreate(n1, { group: '', resource: 'nodes' }, undefined, { metadata: { name: 'n2' } }),
      /^nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"$/,
    );
    forbidden(
      () =>
        admitNodeCreate(n1, { group: 'coordination.k8s.io', resource: 'leases' }, 'kube-node-lease', {
          metadata: { name: 'n2' },
        }),
      /same name as the requesting node/,
    );
    forbidden(
      () => admitNodeCreate(n1, { group: '', resource: 'pods' }, 'default', { metadata: { name: 'p' } }),
      /mirror pods/,
    );
  });
  it('does not concern other users', () => {
    // Each create is refused to node n1, and admitted for users that are not nodes.
    const creates: Array<[{ group: string; resource: string }, string | undefined, string]> = [
      [{ group: '', resource: 'nodes' }, undefined, 'n2'],
      [{ group: 'coordination.k8s.io', resource: 'leases' }, 'kube-node-lease', 'n2'],
      [{ group: '', resource: 'pods' }, 'default', 'p'],
    ];
    const others = [
      { name: 'alice', groups: [] },
      { name: 'system:node:n1', groups: ['system:authenticated'] }, // not in system:nodes
    ];
    for (const [r, ns, name] of creates) {
      const create = (user: UserInfo) => () => admitNodeCreate(user, r, ns, { metadata: { name } });
      assert.throws(create(n1), ApiError, `${r.resource} ${name} by n1`);
      for (const user of others) assert.doesNotThrow(create(user), `${r.resource} ${name} by ${user.name}`);
    }
  });
});

describe('podReferences', () => {
  it('finds secrets and configmaps in volumes, projected volumes, env, envFrom and imagePullSecrets', () => {
    const refs = podReferences({
      spec: {
        imagePullSecrets: [{ name: 'pull' }],
        volumes: [
          { name: 'p', projected: { sources: [{ secret: { name: 'ps' } }, { configMap: { name: 'pc' } }] } },
        ],
        initContainers: [{ name: 'i', envFrom: [{ secretRef: { name: 'init-s' } }] }],
        containers: [
          { name: 'c', env: [{ name: 'E', valueFrom: { configMapKeyRef: { name: 'env-c', key: 'k' } } }] },
        ],
      },
    });
    assert.deepEqual([...refs.secrets].sort(), ['init-s', 'ps', 'pull']);
    assert.deepEqual([...refs.configMaps].sort(), ['env-c', 'pc']);
  });
});

describe('NodeRestriction of a node updating its own Node', () => {
  const n1: UserInfo = { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
  const node = (labels: Record<string, string>, taints: unknown[] = []): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'n1', labels },
    spec: { taints },
  });
  const base = { 'kubernetes.io/hostname': 'n1', team: 'a' };

  it('allows its own labels and labels outside the kubernetes.io / k8s.io namespaces', () => {
    const update = (labels: Record<string, string>) => () =>
      admitNodeUpdate(n1, node(base), node({ ...base, ...labels }));
    const allowed: Record<string, string>[] = [
      { team: 'b', 'kubernetes.io/arch': 'amd64' },
      { 'node.kubernetes.io/instance-type': 'x' },
      { 'kubelet.kubernetes.io/x': 'y' },
      { 'example.com/x': 'y' },
    ];
    for (const labels of allowed) assert.doesNotThrow(update(labels), JSON.stringify(labels));
    // The same kind of change to a label in those namespaces and off the allow-list is
    // refused: the ones above pass for what they are, not because nothing is checked.
    for (const key of ['kubernetes.io/role', 'example.kubernetes.io/x'])
      assert.throws(update({ [key]: 'y' }), new RegExp(`not allowed to modify labels: ${key}$`));
  });

  for (const key of [
    'node-restriction.kubernetes.io/trusted',
    'node-role.kubernetes.io/control-plane',
    'example.k8s.io/x',
  ]) {
    it(`refuses adding, changing or removing ${key}`, () => {
      const refused = (before: Record<string, string>, after: Record<string, string>) =>
        assert.throws(
          () => admitNodeUpdate(n1, node(before), node(after)),
          (err: unknown) =>
            err instanceof ApiError &&
            err.code === 403 &&
            err.message === `nodes "n1" is forbidden: node "n1" is not allowed to modify labels: ${key}`,
        );
      refused(base, { ...base, [key]: 'v' });
      refused({ ...base, [key]: 'v' }, { ...base, [key]: 'w' });
      refused({ ...base, [key]: 'v' }, base);
    });
  }

  it('refuses changing taints; other users pass', () => {
    const taint = { key: 'dedicated', value: 'x', effect: 'NoSchedule' };
    assert.throws(
      () => admitNodeUpdate(n1, node(base), node(base, [taint])),
      /node "n1" is not allowed to modify taints/,
    );
    assert.throws(() => admitNodeUpdate(n1, node(base, [taint]), node(base)), /not allowed to modify taints/);
    const admin: UserInfo = { name: 'root', groups: ['system:masters'] };
    admitNodeUpdate(admin, node(base), node({ ...base, 'node-role.kubernetes.io/x': '' }, [taint]));
  });
});
