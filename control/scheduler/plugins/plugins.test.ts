/**
 * Every plugin's predicate and score as pure functions over pods and NodeInfos, table
 * driven: fits(pod, node) per plugin, then the scores.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NodeSelectorTerm, Pod } from '../../../api/types.js';
import { CycleState } from '../framework/cycle-state.js';
import type { NodeScore } from '../framework/interface.js';
import type { NodeInfo } from '../framework/node-info.js';
import { Code } from '../framework/status.js';
import { nodeInfo, testNode, testPod } from '../testing/fixtures.js';
import { BalancedAllocation, balancedResourceScore } from './balancedallocation/balanced-allocation.js';
import { calculatePriority, normalizedImageName } from './imagelocality/image-locality.js';
import { NodeAffinity } from './nodeaffinity/node-affinity.js';
import { NodeName } from './nodename/node-name.js';
import { NodePorts } from './nodeports/node-ports.js';
import { NodeResourcesFit } from './noderesourcesfit/node-resources-fit.js';
import { leastAllocatedScore, leastRequestedScore } from './noderesourcesfit/least-allocated.js';
import { NodeUnschedulable } from './nodeunschedulable/node-unschedulable.js';
import { PodTopologySpread } from './podtopologyspread/pod-topology-spread.js';
import { TaintToleration } from './tainttoleration/taint-toleration.js';

interface FilterCase {
  name: string;
  pod: Pod;
  node: NodeInfo;
  code: Code;
  reasons?: string[];
}

/** Runs PreFilter (when the plugin has one; Skip counts as Success) then Filter. */
function runFilter(
  plugin: {
    preFilter?(s: CycleState, p: Pod, n: readonly NodeInfo[]): { code: Code; reasons: readonly string[] };
    filter(s: CycleState, p: Pod, n: NodeInfo): { code: Code; reasons: readonly string[] };
  },
  c: FilterCase,
  all: NodeInfo[] = [c.node],
) {
  const state = new CycleState();
  const pre = plugin.preFilter?.(state, c.pod, all);
  if (pre && pre.code === Code.Skip) return { code: Code.Success, reasons: [] as readonly string[] };
  if (pre && pre.code !== Code.Success) return pre;
  return plugin.filter(state, c.pod, c.node);
}

function check(pluginName: string, plugin: Parameters<typeof runFilter>[0], cases: FilterCase[]) {
  describe(`${pluginName} filter`, () => {
    for (const c of cases) {
      it(c.name, () => {
        const st = runFilter(plugin, c);
        assert.equal(st.code, c.code);
        if (c.reasons) assert.deepEqual([...st.reasons], c.reasons);
      });
    }
  });
}

const S = Code.Success;
const U = Code.Unschedulable;
const UU = Code.UnschedulableAndUnresolvable;

check('NodeResourcesFit', new NodeResourcesFit(), [
  {
    name: 'fits an empty node',
    pod: testPod('p', { requests: { cpu: '1', memory: '1Gi' } }),
    node: nodeInfo(testNode('n')),
    code: S,
  },
  {
    name: 'Insufficient cpu against what bound pods use',
    pod: testPod('p', { requests: { cpu: '2' } }),
    node: nodeInfo(testNode('n', { cpu: '4' }), testPod('a', { requests: { cpu: '2500m' } })),
    code: U,
    reasons: ['Insufficient cpu'],
  },
  {
    name: 'cpu and memory both short: both reasons',
    pod: testPod('p', { requests: { cpu: '5', memory: '9Gi' } }),
    node: nodeInfo(testNode('n')),
    code: U,
    reasons: ['Insufficient cpu', 'Insufficient memory'],
  },
  {
    name: 'Too many pods even for a pod without requests',
    pod: testPod('p'),
    node: nodeInfo(testNode('n', { pods: '1' }), testPod('a')),
    code: U,
    reasons: ['Too many pods'],
  },
  {
    name: 'init containers: the max of the largest init container and the sum of containers',
    pod: testPod('p', {
      containers: [{ name: 'a', resources: { requests: { cpu: '1' } } }],
      initContainers: [{ name: 'i', resources: { requests: { cpu: '3' } } }],
    }),
    node: nodeInfo(testNode('n', { cpu: '2' })),
    code: U,
    reasons: ['Insufficient cpu'],
  },
  {
    name: 'overhead is added',
    pod: testPod('p', { requests: { memory: '1Gi' }, overhead: { memory: '512Mi' } }),
    node: nodeInfo(testNode('n', { memory: '1280Mi' })),
    code: U,
    reasons: ['Insufficient memory'],
  },
  {
    name: 'ephemeral-storage',
    pod: testPod('p', { requests: { 'ephemeral-storage': '2Gi' } }),
    node: nodeInfo(testNode('n', { extra: { 'ephemeral-storage': '1Gi' } })),
    code: U,
    reasons: ['Insufficient ephemeral-storage'],
  },
  {
    name: 'extended resource the node lacks',
    pod: testPod('p', { requests: { 'example.com/gpu': '1' } }),
    node: nodeInfo(testNode('n')),
    code: U,
    reasons: ['Insufficient example.com/gpu'],
  },
  {
    name: 'extended resource the node has',
    pod: testPod('p', { requests: { 'example.com/gpu': '1' } }),
    node: nodeInfo(
      testNode('n', { extra: { 'example.com/gpu': '2' } }),
      testPod('a', { requests: { 'example.com/gpu': '1' } }),
    ),
    code: S,
  },
]);

check('NodeUnschedulable', new NodeUnschedulable(), [
  { name: 'schedulable node', pod: testPod('p'), node: nodeInfo(testNode('n')), code: S },
  {
    name: 'cordoned node',
    pod: testPod('p'),
    node: nodeInfo(testNode('n', { unschedulable: true })),
    code: UU,
    reasons: ['node(s) were unschedulable'],
  },
  {
    name: 'cordoned node, tolerated',
    pod: testPod('p', {
      tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }],
    }),
    node: nodeInfo(testNode('n', { unschedulable: true })),
    code: S,
  },
]);

check('NodeName', new NodeName(), [
  { name: 'no nodeName', pod: testPod('p'), node: nodeInfo(testNode('n')), code: S },
  { name: 'matching nodeName', pod: testPod('p', { nodeName: 'n' }), node: nodeInfo(testNode('n')), code: S },
  {
    name: 'other nodeName',
    pod: testPod('p', { nodeName: 'm' }),
    node: nodeInfo(testNode('n')),
    code: UU,
    reasons: ["node(s) didn't match the requested node name"],
  },
]);

const gpuTaint = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' as const };
check('TaintToleration', new TaintToleration(), [
  { name: 'untainted node', pod: testPod('p'), node: nodeInfo(testNode('n')), code: S },
  {
    name: 'NoSchedule taint not tolerated',
    pod: testPod('p'),
    node: nodeInfo(testNode('n', { taints: [gpuTaint] })),
    code: UU,
    reasons: ['node(s) had untolerated taint {dedicated: gpu}'],
  },
  {
    name: 'NoExecute taint without value',
    pod: testPod('p'),
    node: nodeInfo(testNode('n', { taints: [{ key: 'node-role', effect: 'NoExecute' }] })),
    code: UU,
    reasons: ['node(s) had untolerated taint {node-role: }'],
  },
  {
    name: 'PreferNoSchedule never filters',
    pod: testPod('p'),
    node: nodeInfo(testNode('n', { taints: [{ key: 'k', effect: 'PreferNoSchedule' }] })),
    code: S,
  },
  {
    name: 'tolerated by Equal',
    pod: testPod('p', {
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }],
    }),
    node: nodeInfo(testNode('n', { taints: [gpuTaint] })),
    code: S,
  },
  {
    name: 'tolerated by Exists on every key',
    pod: testPod('p', { tolerations: [{ operator: 'Exists' }] }),
    node: nodeInfo(testNode('n', { taints: [gpuTaint] })),
    code: S,
  },
]);

/** Pod `p` whose required node affinity is `terms` (ORed). */
const requiredAffinityPod = (...terms: NodeSelectorTerm[]): Pod =>
  testPod('p', {
    spec: {
      affinity: {
        nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } },
      },
    },
  });

check('NodeAffinity', new NodeAffinity(), [
  { name: 'no selector: skipped', pod: testPod('p'), node: nodeInfo(testNode('n')), code: S },
  {
    name: 'nodeSelector matches',
    pod: testPod('p', { nodeSelector: { disk: 'ssd' } }),
    node: nodeInfo(testNode('n', { labels: { disk: 'ssd' } })),
    code: S,
  },
  {
    name: 'nodeSelector does not match',
    pod: testPod('p', { nodeSelector: { disk: 'ssd' } }),
    node: nodeInfo(testNode('n', { labels: { disk: 'hdd' } })),
    code: UU,
    reasons: ["node(s) didn't match Pod's node affinity/selector"],
  },
  ...(
    [
      ['In matches', { key: 'zone', operator: 'In', values: ['a', 'b'] }, S],
      ['NotIn on absent label matches', { key: 'other', operator: 'NotIn', values: ['x'] }, S],
      ['Exists fails', { key: 'other', operator: 'Exists' }, UU],
      ['DoesNotExist', { key: 'other', operator: 'DoesNotExist' }, S],
      ['Gt', { key: 'cores', operator: 'Gt', values: ['8'] }, S],
      ['Gt fails', { key: 'cores', operator: 'Gt', values: ['16'] }, UU],
      ['Lt', { key: 'cores', operator: 'Lt', values: ['32'] }, S],
      ['Lt on a non-integer fails', { key: 'zone', operator: 'Lt', values: ['32'] }, UU],
    ] as const
  ).map(([name, expr, code]) => ({
    name: `required matchExpressions: ${name}`,
    pod: requiredAffinityPod({
      matchExpressions: [{ ...expr, values: 'values' in expr ? [...expr.values] : undefined }],
    }),
    node: nodeInfo(testNode('n', { labels: { zone: 'a', cores: '16' } })),
    code,
  })),
  {
    name: 'required matchFields metadata.name, terms ORed',
    pod: requiredAffinityPod(
      { matchExpressions: [{ key: 'zone', operator: 'In', values: ['z'] }] },
      { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n'] }] },
    ),
    node: nodeInfo(testNode('n')),
    code: S,
  },
  {
    name: 'an empty term matches nothing',
    pod: requiredAffinityPod({}),
    node: nodeInfo(testNode('n')),
    code: UU,
  },
]);

check('NodePorts', new NodePorts(), [
  { name: 'no host ports: skipped', pod: testPod('p'), node: nodeInfo(testNode('n')), code: S },
  {
    name: 'free port',
    pod: testPod('p', { hostPorts: [{ port: 80 }] }),
    node: nodeInfo(testNode('n'), testPod('a', { hostPorts: [{ port: 81 }] })),
    code: S,
  },
  {
    name: 'same port taken on 0.0.0.0',
    pod: testPod('p', { hostPorts: [{ port: 80 }] }),
    node: nodeInfo(testNode('n'), testPod('a', { hostPorts: [{ port: 80 }] })),
    code: U,
    reasons: ["node(s) didn't have free ports for the requested pod ports"],
  },
  {
    name: 'same port on another address is free',
    pod: testPod('p', { hostPorts: [{ port: 80, ip: '127.0.0.2' }] }),
    node: nodeInfo(testNode('n'), testPod('a', { hostPorts: [{ port: 80, ip: '127.0.0.3' }] })),
    code: S,
  },
  {
    name: 'wanting 0.0.0.0 conflicts with any address',
    pod: testPod('p', { hostPorts: [{ port: 80 }] }),
    node: nodeInfo(testNode('n'), testPod('a', { hostPorts: [{ port: 80, ip: '127.0.0.3' }] })),
    code: U,
  },
  {
    name: 'same port, other protocol',
    pod: testPod('p', { hostPorts: [{ port: 53, protocol: 'UDP' }] }),
    node: nodeInfo(testNode('n'), testPod('a', { hostPorts: [{ port: 53 }] })),
    code: S,
  },
]);

describe('PodTopologySpread filter', () => {
  const constraint = {
    maxSkew: 1,
    topologyKey: 'zone',
    whenUnsatisfiable: 'DoNotSchedule' as const,
    labelSelector: { matchLabels: { app: 'web' } },
  };
  const web = (name: string) => testPod(name, { labels: { app: 'web' } });
  const a = nodeInfo(testNode('a', { labels: { zone: 'z1' } }), web('w1'), web('w2'));
  const b = nodeInfo(testNode('b', { labels: { zone: 'z2' } }), web('w3'));
  const nolabel = nodeInfo(testNode('c'));
  const nodes = [a, b, nolabel];
  const plugin = new PodTopologySpread({ nodeInfos: () => nodes, nodesGeneration: () => 0 });
  const pod = testPod('new', { labels: { app: 'web' }, spec: { topologySpreadConstraints: [constraint] } });
  for (const [name, node, code] of [
    ['the fuller zone would exceed maxSkew', a, U],
    ['the emptier zone is fine', b, S],
    ['a node without the topology key', nolabel, UU],
  ] as const) {
    it(name, () => assert.equal(runFilter(plugin, { name, pod, node, code }, nodes).code, code));
  }
});

/** Scores of `nodes` from a score plugin after PreScore and NormalizeScore. */
function scores(
  plugin: {
    preScore?(s: CycleState, p: Pod, n: readonly NodeInfo[]): { code: Code };
    score(s: CycleState, p: Pod, n: NodeInfo): number;
    normalizeScore?(s: CycleState, p: Pod, scores: NodeScore[]): void;
  },
  pod: Pod,
  nodes: NodeInfo[],
): number[] | 'skip' {
  const state = new CycleState();
  if (plugin.preScore?.(state, pod, nodes).code === Code.Skip) return 'skip';
  const list = nodes.map((n) => ({ name: n.name, score: plugin.score(state, pod, n) }));
  plugin.normalizeScore?.(state, pod, list);
  return list.map((s) => s.score);
}

describe('scores', () => {
  it('leastRequestedScore and leastAllocatedScore (Kubernetes figures)', () => {
    assert.equal(leastRequestedScore(0, 4000), 100);
    assert.equal(leastRequestedScore(3000, 4000), 25);
    assert.equal(leastRequestedScore(5000, 4000), 0);
    assert.equal(leastRequestedScore(1, 0), 0);
    // cpu (4000-3000)*100/4000 = 25, memory (10000-5000)*100/10000 = 50 → 37
    assert.equal(leastAllocatedScore(3000, 4000, 5000, 10000), 37);
  });

  it('NodeResourcesFit prefers the emptier node, counting 100m/200Mi for request-less pods', () => {
    const pod = testPod('p');
    const empty = nodeInfo(testNode('e', { cpu: '1', memory: '1Gi' }));
    const busy = nodeInfo(testNode('b', { cpu: '1', memory: '1Gi' }), testPod('x'), testPod('y'));
    // empty: cpu (1000-100)/1000 → 90, memory (1024-200)/1024 → 80 → 85; busy: 70, 41 → 55
    assert.deepEqual(scores(new NodeResourcesFit(), pod, [empty, busy]), [85, 55]);
  });

  it('balancedResourceScore: 100 when balanced, less when lopsided', () => {
    assert.equal(balancedResourceScore(1000, 4000, 2 ** 30, 4 * 2 ** 30), 100);
    assert.equal(balancedResourceScore(4000, 4000, 0, 4 * 2 ** 30), 50);
    assert.equal(balancedResourceScore(1000, 4000, 3 * 2 ** 30, 4 * 2 ** 30), 75);
  });

  it('BalancedAllocation skips best-effort pods', () => {
    assert.equal(scores(new BalancedAllocation(), testPod('p'), [nodeInfo(testNode('n'))]), 'skip');
  });

  it('TaintToleration scores untolerated PreferNoSchedule taints in reverse', () => {
    const soft = { key: 'k', effect: 'PreferNoSchedule' as const };
    const nodes = [
      nodeInfo(testNode('clean')),
      nodeInfo(testNode('one', { taints: [soft] })),
      nodeInfo(testNode('two', { taints: [soft, { key: 'j', effect: 'PreferNoSchedule' }] })),
    ];
    assert.deepEqual(scores(new TaintToleration(), testPod('p'), nodes), [100, 50, 0]);
    const tolerant = testPod('t', { tolerations: [{ operator: 'Exists', effect: 'PreferNoSchedule' }] });
    assert.deepEqual(scores(new TaintToleration(), tolerant, nodes), [100, 100, 100]);
  });

  it('NodeAffinity scores preferred terms by weight, normalised', () => {
    const pod = testPod('p', {
      spec: {
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              {
                weight: 10,
                preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] },
              },
              {
                weight: 30,
                preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
              },
            ],
          },
        },
      },
    });
    const nodes = [
      nodeInfo(testNode('both', { labels: { disk: 'ssd', zone: 'a' } })),
      nodeInfo(testNode('ssd', { labels: { disk: 'ssd' } })),
      nodeInfo(testNode('none')),
    ];
    assert.deepEqual(scores(new NodeAffinity(), pod, nodes), [100, 25, 0]);
    assert.equal(scores(new NodeAffinity(), testPod('q'), nodes), 'skip');
  });

  it('PodTopologySpread (system default) prefers nodes with fewer pods of the same owner', () => {
    const mine = (n: string) => testPod(n, { owner: 'rs1' });
    const nodes = [
      nodeInfo(testNode('a'), mine('m1'), mine('m2')),
      nodeInfo(testNode('b'), mine('m3'), testPod('other', { owner: 'rs2' })),
      nodeInfo(testNode('c')),
    ];
    const plugin = new PodTopologySpread({ nodeInfos: () => nodes, nodesGeneration: () => 0 });
    const s = scores(plugin, testPod('new', { owner: 'rs1' }), nodes);
    assert.ok(Array.isArray(s));
    assert.ok(s[2]! > s[1]! && s[1]! > s[0]!, `scores ${s.join(',')}`);
    assert.equal(s[2], 100);
    assert.equal(scores(plugin, testPod('orphan'), nodes), 'skip');
  });

  it('ImageLocality helpers', () => {
    assert.equal(normalizedImageName('nginx'), 'nginx:latest');
    assert.equal(normalizedImageName('registry:5000/nginx'), 'registry:5000/nginx:latest');
    assert.equal(normalizedImageName('nginx:1.25'), 'nginx:1.25');
    assert.equal(calculatePriority(0, 1), 0);
    assert.equal(calculatePriority(2000 * 2 ** 20, 1), 100);
  });
});
