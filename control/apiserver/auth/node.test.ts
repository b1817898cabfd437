import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../api/object.js';
import type { Attributes } from './authz.js';
import { nodeAuthorizer, podReferences } from './node.js';

const n1 = { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
const pod = (name: string, nodeName: string, spec: object = {}): KubeObject => ({
  metadata: { name, namespace: 'default' },
  spec: { nodeName, containers: [{ name: 'c', image: 'i' }], ...spec },
});
const PODS: KubeObject[] = [
  pod('mine', 'n1', {
    serviceAccountName: 'app',
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
  pod('theirs', 'n2', {
    serviceAccountName: 'other',
    volumes: [{ name: 'v', secret: { secretName: 'their-secret' } }],
  }),
];
const localVolume = (name: string, node: string): KubeObject => ({
  metadata: { name, annotations: { 'pv.kubernetes.io/provisioned-by': 'rancher.io/local-path' } },
  spec: {
    nodeAffinity: {
      required: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] },
        ],
      },
    },
  },
});
const VOLUMES: KubeObject[] = [
  localVolume('pvc-mine', 'n1'),
  localVolume('pvc-theirs', 'n2'),
  { metadata: { name: 'nfs' }, spec: { nfs: { server: 's', path: '/' } } },
];
const z = nodeAuthorizer({
  getPod: (ns, name) =>
    Promise.resolve(PODS.find((p) => p.metadata?.namespace === ns && p.metadata?.name === name)),
  podsOnNode: (node, ns) =>
    Promise.resolve(
      PODS.filter((p) => (p.spec as { nodeName: string }).nodeName === node && p.metadata?.namespace === ns),
    ),
  getPersistentVolume: (name) => Promise.resolve(VOLUMES.find((v) => v.metadata?.name === name)),
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
    // The local-path provisioner of each agent (agent/storage/).
    ['watch claims', a('watch', '', 'persistentvolumeclaims'), 'allow'],
    [
      'update a claim',
      a('update', '', 'persistentvolumeclaims', { namespace: 'default', name: 'c' }),
      'deny',
    ],
    ['list storage classes', a('list', 'storage.k8s.io', 'storageclasses'), 'allow'],
    ['create a storage class', a('create', 'storage.k8s.io', 'storageclasses'), 'deny'],
    ['watch volumes', a('watch', '', 'persistentvolumes'), 'allow'],
    ['create a volume (NodeRestriction checks it)', a('create', '', 'persistentvolumes'), 'allow'],
    ['delete its own local volume', a('delete', '', 'persistentvolumes', { name: 'pvc-mine' }), 'allow'],
    [
      "delete another node's local volume",
      a('delete', '', 'persistentvolumes', { name: 'pvc-theirs' }),
      'deny',
    ],
    ['delete a volume it did not provision', a('delete', '', 'persistentvolumes', { name: 'nfs' }), 'deny'],
    ['update a volume', a('update', '', 'persistentvolumes', { name: 'pvc-mine' }), 'deny'],
    ['patch own node status', a('patch', '', 'nodes', { name: 'n1', subresource: 'status' }), 'allow'],
    ['update own node', a('update', '', 'nodes', { name: 'n1' }), 'allow'],
    ["patch another node's status", a('patch', '', 'nodes', { name: 'n2', subresource: 'status' }), 'deny'],
    ['delete another node', a('delete', '', 'nodes', { name: 'n2' }), 'deny'],
    // system:node grants no delete of nodes, and no get of nodes/status or pods/status.
    ['delete its own node', a('delete', '', 'nodes', { name: 'n1' }), 'deny'],
    ['get its own node status', a('get', '', 'nodes', { name: 'n1', subresource: 'status' }), 'deny'],
    [
      'get the status of its pod',
      a('get', '', 'pods', { namespace: 'default', name: 'mine', subresource: 'status' }),
      'deny',
    ],
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
    // Tokens for the ServiceAccounts of its pods only (the kubelet's projected tokens).
    [
      "a token for its pod's ServiceAccount",
      a('create', '', 'serviceaccounts', { namespace: 'default', name: 'app', subresource: 'token' }),
      'allow',
    ],
    [
      "a token for another node's pod's ServiceAccount",
      a('create', '', 'serviceaccounts', { namespace: 'default', name: 'other', subresource: 'token' }),
      'deny',
    ],
    [
      'a token in another namespace',
      a('create', '', 'serviceaccounts', { namespace: 'kube-system', name: 'app', subresource: 'token' }),
      'deny',
    ],
    ['get a ServiceAccount', a('get', '', 'serviceaccounts', { namespace: 'default', name: 'app' }), 'deny'],
    ['create a ServiceAccount', a('create', '', 'serviceaccounts', { namespace: 'default' }), 'deny'],
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
