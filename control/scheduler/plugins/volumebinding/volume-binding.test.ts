/**
 * VolumeBinding over plain objects (as upstream's volume_binding_test and binder_test):
 * PreFilter's rejections and skips, Filter's reasons per node (bound volumes' node
 * affinity, static volumes for WaitForFirstConsumer claims, provisioning classes, a claim
 * already selected for a node), Reserve's assumptions seen by the next pod, Unreserve,
 * and PreBind's writes, wait and failures with a fake clock that advances as it sleeps.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Indexer } from '../../../../api/client/indexer.js';
import { Lister } from '../../../../api/client/lister.js';
import { FakeClock } from '../../../../api/clock.js';
import type { KubeObject } from '../../../../api/object.js';
import type { PersistentVolume, PersistentVolumeClaim, StorageClass } from '../../../../api/storage/types.js';
import type { Node, Pod } from '../../../../api/types.js';
import { CycleState } from '../../framework/cycle-state.js';
import { Framework } from '../../framework/framework.js';
import { Code } from '../../framework/status.js';
import { nodeInfo, testNode, testPod } from '../../testing/fixtures.js';
import { VolumeBinding } from './volume-binding.js';

const HOSTNAME = 'kubernetes.io/hostname';

function pv(
  name: string,
  o: { capacity?: string; className?: string; node?: string; claim?: { name: string; uid: string } } = {},
): PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, resourceVersion: '10' },
    spec: {
      capacity: { storage: o.capacity ?? '1Gi' },
      accessModes: ['ReadWriteOnce'],
      storageClassName: o.className ?? 'local',
      persistentVolumeReclaimPolicy: 'Retain',
      hostPath: { path: `/data/${name}` },
      ...(o.node
        ? {
            nodeAffinity: {
              required: {
                nodeSelectorTerms: [
                  { matchExpressions: [{ key: HOSTNAME, operator: 'In', values: [o.node] }] },
                ],
              },
            },
          }
        : {}),
      ...(o.claim ? { claimRef: { namespace: 'default', name: o.claim.name, uid: o.claim.uid } } : {}),
    },
    status: { phase: o.claim ? 'Bound' : 'Available' },
  };
}

function pvc(
  name: string,
  o: {
    className?: string;
    request?: string;
    volumeName?: string;
    selectedNode?: string;
    deleting?: boolean;
  } = {},
): PersistentVolumeClaim {
  const annotations: Record<string, string> = {};
  if (o.volumeName) annotations['pv.kubernetes.io/bind-completed'] = 'yes';
  if (o.selectedNode) annotations['volume.kubernetes.io/selected-node'] = o.selectedNode;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      resourceVersion: '10',
      ...(Object.keys(annotations).length ? { annotations } : {}),
      ...(o.deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}),
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: o.request ?? '1Gi' } },
      storageClassName: o.className ?? 'local',
      ...(o.volumeName ? { volumeName: o.volumeName } : {}),
    },
    status: { phase: o.volumeName ? 'Bound' : 'Pending' },
  };
}

function sc(
  name: string,
  provisioner: string,
  mode: 'Immediate' | 'WaitForFirstConsumer' = 'WaitForFirstConsumer',
  allowedTopologies?: StorageClass['allowedTopologies'],
): StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name },
    provisioner,
    volumeBindingMode: mode,
    ...(allowedTopologies ? { allowedTopologies } : {}),
  };
}

function podWith(name: string, ...claims: string[]): Pod {
  return testPod(name, {
    spec: { volumes: claims.map((c, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName: c } })) },
  });
}

const CLASSES = [
  sc('local', 'kubernetes.io/no-provisioner'),
  sc('local-path', 'rancher.io/local-path'),
  sc('fast', 'example.com/fast', 'Immediate'),
  sc('zoned', 'example.com/zoned', 'WaitForFirstConsumer', [
    { matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: ['a'] }] },
  ]),
];

/** A plugin over indexers the test changes by hand, as the informers would. */
class Setup {
  readonly claims = new Indexer<PersistentVolumeClaim>();
  readonly volumes = new Indexer<PersistentVolume>();
  readonly classes = new Indexer<StorageClass>();
  readonly nodes = new Indexer<Node>();
  readonly pods = new Indexer<Pod>();
  readonly writes: string[] = [];
  readonly clock = new FakeClock(Date.UTC(2026, 0, 1), { sleepAdvances: true });
  readonly plugin: VolumeBinding;
  private rv = 100;
  /** Runs after every write, as the controllers would react (default: nothing). */
  onWrite: (obj: KubeObject) => void = () => {};

  constructor(
    o: { claims?: PersistentVolumeClaim[]; volumes?: PersistentVolume[]; bindTimeoutMs?: number } = {},
  ) {
    for (const c of o.claims ?? []) this.claims.add(c);
    for (const v of o.volumes ?? []) this.volumes.add(v);
    for (const c of CLASSES) this.classes.add(c);
    for (const n of ['n1', 'n2'])
      this.nodes.add(testNode(n, { labels: { 'topology.kubernetes.io/zone': n === 'n1' ? 'a' : 'b' } }));
    const written = <T extends KubeObject>(indexer: Indexer<T>, obj: T, what: string): Promise<T> => {
      const next = structuredClone(obj);
      next.metadata!.resourceVersion = String(++this.rv);
      indexer.add(next);
      this.writes.push(`${what} ${obj.metadata!.name}`);
      this.onWrite(next);
      return Promise.resolve(structuredClone(next));
    };
    this.plugin = new VolumeBinding({
      claims: new Lister(this.claims),
      volumes: new Lister(this.volumes),
      classes: new Lister(this.classes),
      nodes: new Lister(this.nodes),
      pods: new Lister(this.pods),
      api: {
        updateVolume: (v) => written(this.volumes, v, 'update pv'),
        updateClaim: (c) => written(this.claims, c, 'update pvc'),
      },
      clock: this.clock,
      bindTimeoutMs: o.bindTimeoutMs ?? 60_000,
    });
  }

  node(name: string) {
    return nodeInfo(this.nodes.getByKey(name)!);
  }

  /** PreFilter then Filter on each node: node name → [code, reasons]. */
  schedule(pod: Pod, state = new CycleState()): { pre: string; nodes: Record<string, string> } {
    const pre = this.plugin.preFilter(state, pod);
    const out: Record<string, string> = {};
    if (pre.code === Code.Success) {
      for (const n of ['n1', 'n2']) {
        const st = this.plugin.filter(state, pod, this.node(n));
        out[n] = st.code === Code.Success ? 'ok' : `${st.code}: ${st.reasons.join(', ')}`;
      }
    }
    return { pre: pre.code === Code.Success ? 'ok' : `${pre.code}: ${pre.reasons.join(', ')}`, nodes: out };
  }
}

describe('VolumeBinding PreFilter', () => {
  it('skips a pod without claims', () => {
    assert.equal(new Setup().schedule(testPod('p')).pre, 'Skip: ');
  });

  const cases: [string, PersistentVolumeClaim[], string][] = [
    ['a missing claim', [], 'UnschedulableAndUnresolvable: persistentvolumeclaim "data" not found'],
    [
      'a claim being deleted',
      [pvc('data', { deleting: true })],
      'UnschedulableAndUnresolvable: persistentvolumeclaim "data" is being deleted',
    ],
    [
      'an unbound Immediate claim',
      [pvc('data', { className: 'fast' })],
      'UnschedulableAndUnresolvable: pod has unbound immediate PersistentVolumeClaims',
    ],
    ['a bound claim', [pvc('data', { volumeName: 'pv1' })], 'ok'],
    ['an unbound WaitForFirstConsumer claim', [pvc('data', { className: 'local-path' })], 'ok'],
  ];
  for (const [name, claims, want] of cases)
    it(name, () => assert.equal(new Setup({ claims }).schedule(podWith('p', 'data')).pre, want));

  it('a Lost claim', () => {
    const lost = pvc('data', { volumeName: 'gone' });
    lost.status = { phase: 'Lost' };
    assert.equal(
      new Setup({ claims: [lost] }).schedule(podWith('p', 'data')).pre,
      'UnschedulableAndUnresolvable: persistentvolumeclaim "data" bound to non-existent persistentvolume "gone"',
    );
  });
});

describe('VolumeBinding Filter', () => {
  it('a bound volume’s node affinity picks its node', () => {
    const s = new Setup({
      claims: [pvc('data', { volumeName: 'pv1' })],
      volumes: [pv('pv1', { node: 'n2', claim: { name: 'data', uid: 'uid-data' } })],
    });
    assert.deepEqual(s.schedule(podWith('p', 'data')).nodes, {
      n1: 'UnschedulableAndUnresolvable: node(s) had volume node affinity conflict',
      n2: 'ok',
    });
  });

  it('a claim bound to a volume that does not exist fits nowhere', () => {
    const s = new Setup({ claims: [pvc('data', { volumeName: 'gone' })] });
    assert.deepEqual(s.schedule(podWith('p', 'data')).nodes, {
      n1: 'UnschedulableAndUnresolvable: node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)',
      n2: 'UnschedulableAndUnresolvable: node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)',
    });
  });

  it('a WaitForFirstConsumer claim of a class without provisioner needs a static volume on the node', () => {
    const s = new Setup({ claims: [pvc('data')], volumes: [pv('pv1', { node: 'n1' })] });
    assert.deepEqual(s.schedule(podWith('p', 'data')).nodes, {
      n1: 'ok',
      n2: "UnschedulableAndUnresolvable: node(s) didn't find available persistent volumes to bind",
    });
  });

  it('a WaitForFirstConsumer claim of a provisioning class fits every node', () => {
    const s = new Setup({ claims: [pvc('data', { className: 'local-path' })] });
    assert.deepEqual(s.schedule(podWith('p', 'data')).nodes, { n1: 'ok', n2: 'ok' });
  });

  it('a class’s allowedTopologies limit where it provisions', () => {
    const s = new Setup({ claims: [pvc('data', { className: 'zoned' })] });
    assert.deepEqual(s.schedule(podWith('p', 'data')).nodes, {
      n1: 'ok',
      n2: "UnschedulableAndUnresolvable: node(s) didn't find available persistent volumes to bind",
    });
  });

  it('a claim already selected for a node fits only there', () => {
    const s = new Setup({ claims: [pvc('data', { className: 'local-path', selectedNode: 'n2' })] });
    assert.deepEqual(s.schedule(podWith('p', 'data')).nodes, {
      n1: "UnschedulableAndUnresolvable: node(s) didn't find available persistent volumes to bind",
      n2: 'ok',
    });
  });

  it('two claims need two volumes: one volume on a node is not enough', () => {
    const s = new Setup({
      claims: [pvc('a'), pvc('b', { request: '2Gi' })],
      volumes: [
        pv('pv1', { node: 'n1', capacity: '5Gi' }),
        pv('pv2', { node: 'n2', capacity: '5Gi' }),
        pv('pv3', { node: 'n2', capacity: '1Gi' }),
      ],
    });
    assert.deepEqual(s.schedule(podWith('p', 'a', 'b')).nodes, {
      n1: "UnschedulableAndUnresolvable: node(s) didn't find available persistent volumes to bind",
      n2: 'ok',
    });
  });
});

describe('VolumeBinding Reserve, Unreserve and PreBind', () => {
  it('a reserved volume is taken for the next pod until Unreserve', () => {
    const s = new Setup({ claims: [pvc('a'), pvc('b')], volumes: [pv('pv1', { node: 'n1' })] });
    const first = new CycleState();
    const pod = podWith('p1', 'a');
    assert.equal(s.schedule(pod, first).nodes.n1, 'ok');
    assert.equal(s.plugin.reserve(first, pod, 'n1').code, Code.Success);
    assert.equal(s.plugin.binder.pvCache.get('pv1')?.spec?.claimRef?.name, 'a');
    assert.equal(
      s.schedule(podWith('p2', 'b')).nodes.n1,
      "UnschedulableAndUnresolvable: node(s) didn't find available persistent volumes to bind",
    );
    s.plugin.unreserve(first, pod, 'n1');
    assert.equal(s.schedule(podWith('p2', 'b')).nodes.n1, 'ok');
  });

  it('PreBind binds the static volume and waits for the PV controller to bind the claim', async () => {
    const s = new Setup({ claims: [pvc('a')], volumes: [pv('pv1', { node: 'n1' })] });
    const pod = podWith('p', 'a');
    s.pods.add(pod);
    const state = new CycleState();
    s.schedule(pod, state);
    s.plugin.reserve(state, pod, 'n1');
    s.onWrite = (obj) => {
      // The PV controller binds the claim to the volume the scheduler chose.
      if (obj.kind !== 'PersistentVolume') return;
      const claim = structuredClone(s.claims.getByKey('default/a')!);
      claim.spec.volumeName = obj.metadata!.name!;
      claim.metadata.annotations = { 'pv.kubernetes.io/bind-completed': 'yes' };
      claim.metadata.resourceVersion = '500';
      s.claims.add(claim);
    };
    const st = await s.plugin.preBind(state, pod, 'n1');
    assert.equal(st.code, Code.Success, st.message());
    assert.deepEqual(s.writes, ['update pv pv1']);
    const written = s.volumes.getByKey('pv1')!;
    assert.equal(written.spec?.claimRef?.uid, 'uid-a');
    assert.equal(written.metadata.annotations?.['pv.kubernetes.io/bound-by-controller'], 'yes');
  });

  it('PreBind asks for provisioning on the node and waits for the provisioned volume', async () => {
    const s = new Setup({ claims: [pvc('data', { className: 'local-path' })] });
    const pod = podWith('p', 'data');
    s.pods.add(pod);
    const state = new CycleState();
    s.schedule(pod, state);
    s.plugin.reserve(state, pod, 'n2');
    s.onWrite = (obj) => {
      if (obj.kind !== 'PersistentVolumeClaim') return;
      // The node's provisioner makes the volume; the PV controller binds it.
      s.volumes.add(
        pv('pvc-uid-data', { className: 'local-path', node: 'n2', claim: { name: 'data', uid: 'uid-data' } }),
      );
      const claim = structuredClone(obj as PersistentVolumeClaim);
      claim.spec.volumeName = 'pvc-uid-data';
      claim.metadata.annotations = {
        ...claim.metadata.annotations,
        'pv.kubernetes.io/bind-completed': 'yes',
      };
      claim.metadata.resourceVersion = '900';
      s.claims.add(claim);
    };
    const st = await s.plugin.preBind(state, pod, 'n2');
    assert.equal(st.code, Code.Success, st.message());
    assert.deepEqual(s.writes, ['update pvc data']);
  });

  const failing: [string, (s: Setup) => void, number | undefined, RegExp][] = [
    [
      'the provisioner gives the node back (selected-node removed)',
      (s) =>
        (s.onWrite = (obj) => {
          const claim = structuredClone(obj as PersistentVolumeClaim);
          delete claim.metadata.annotations!['volume.kubernetes.io/selected-node'];
          claim.metadata.resourceVersion = '900';
          s.claims.add(claim);
        }),
      undefined,
      /^running PreBind plugin "VolumeBinding": binding volumes: provisioning failed for PVC "data"$/,
    ],
    [
      'nothing happens until the bind timeout',
      () => {},
      5_000,
      /binding volumes: context deadline exceeded$/,
    ],
    [
      'the pod is deleted meanwhile',
      (s) => (s.onWrite = () => s.pods.deleteByKey('default/p')),
      undefined,
      /binding volumes: pod does not exist any more/,
    ],
  ];
  for (const [name, arrange, timeout, message] of failing) {
    it(`PreBind fails when ${name}, and the assumption is dropped`, async () => {
      const s = new Setup({ claims: [pvc('data', { className: 'local-path' })], bindTimeoutMs: timeout });
      const pod = podWith('p', 'data');
      s.pods.add(pod);
      const fwk = new Framework([{ plugin: s.plugin, weight: 0 }]);
      const state = new CycleState();
      assert.equal(fwk.runPreFilterPlugins(state, pod, [s.node('n1')]).code, Code.Success);
      assert.equal(fwk.runFilterPlugins(state, pod, s.node('n1')).code, Code.Success);
      assert.equal(fwk.runReservePlugins(state, pod, 'n1').code, Code.Success);
      assert.equal(
        s.plugin.binder.pvcCache.get('default/data')?.metadata.annotations?.[
          'volume.kubernetes.io/selected-node'
        ],
        'n1',
      );
      arrange(s);
      const st = await fwk.runPreBindPlugins(state, pod, 'n1');
      assert.equal(st.code, Code.Error);
      assert.match(st.message(), message);
      assert.equal(st.plugin, 'VolumeBinding');
    });
  }

  it('PreBind has nothing to do for bound claims', async () => {
    const s = new Setup({
      claims: [pvc('data', { volumeName: 'pv1' })],
      volumes: [pv('pv1', { claim: { name: 'data', uid: 'uid-data' } })],
    });
    const pod = podWith('p', 'data');
    const state = new CycleState();
    s.schedule(pod, state);
    s.plugin.reserve(state, pod, 'n1');
    assert.equal((await s.plugin.preBind(state, pod, 'n1')).code, Code.Success);
    assert.deepEqual(s.writes, []);
  });
});
