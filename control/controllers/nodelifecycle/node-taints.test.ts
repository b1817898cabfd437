import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Condition, Node, Taint } from '../../../api/types.js';
import type { NoExecuteMode } from './node-taints.js';
import { reconcileNodeTaints } from './node-taints.js';

const NOW = '2024-01-01T00:00:00Z';
const OLD = '2023-01-01T00:00:00Z';

const node = (
  conditions: Partial<Record<string, Condition['status']>>,
  taints?: Taint[],
  unschedulable?: boolean,
): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'n' },
  spec: { ...(taints ? { taints } : {}), ...(unschedulable ? { unschedulable } : {}) },
  status: { conditions: Object.entries(conditions).map(([type, status]) => ({ type, status: status! })) },
});

const cases: {
  name: string;
  node: Node;
  mode?: NoExecuteMode;
  want: Taint[] | undefined;
}[] = [
  { name: 'Ready and no taints: nothing to do', node: node({ Ready: 'True' }), want: undefined },
  {
    name: 'Ready Unknown: unreachable NoSchedule and NoExecute',
    node: node({ Ready: 'Unknown' }),
    want: [
      { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule', timeAdded: NOW },
      { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: NOW },
    ],
  },
  {
    name: 'Ready False: not-ready NoSchedule and NoExecute',
    node: node({ Ready: 'False' }),
    want: [
      { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule', timeAdded: NOW },
      { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute', timeAdded: NOW },
    ],
  },
  {
    // A node that never reported gets no pods (NoSchedule) but evicts none (no NoExecute):
    // otherwise an empty hand-made Node attracts pods and evicts them in a loop.
    name: 'no Ready condition: not-ready NoSchedule only',
    node: node({}),
    want: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule', timeAdded: NOW }],
  },
  {
    name: 'Ready again: the controller taints go, others stay',
    node: node({ Ready: 'True' }, [
      { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule', timeAdded: OLD },
      { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: OLD },
      { key: 'node.kubernetes.io/unreachable', effect: 'PreferNoSchedule' },
    ]),
    want: [
      { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/unreachable', effect: 'PreferNoSchedule' },
    ],
  },
  {
    name: 'already tainted as it should be: nothing to do (timeAdded kept)',
    node: node({ Ready: 'Unknown' }, [
      { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: OLD },
      { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule', timeAdded: OLD },
    ]),
    want: undefined,
  },
  {
    name: 'not-ready swapped for unreachable',
    node: node({ Ready: 'Unknown' }, [
      { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule', timeAdded: OLD },
      { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute', timeAdded: OLD },
    ]),
    want: [
      { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule', timeAdded: NOW },
      { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: NOW },
    ],
  },
  {
    name: 'pressure conditions and unschedulable',
    node: node(
      {
        Ready: 'True',
        MemoryPressure: 'True',
        DiskPressure: 'False',
        PIDPressure: 'True',
        NetworkUnavailable: 'True',
      },
      undefined,
      true,
    ),
    want: [
      { key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule', timeAdded: NOW },
      { key: 'node.kubernetes.io/pid-pressure', effect: 'NoSchedule', timeAdded: NOW },
      { key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule', timeAdded: NOW },
      { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: NOW },
    ],
  },
  {
    name: 'hold: no new NoExecute taint',
    node: node({ Ready: 'Unknown' }),
    mode: 'hold',
    want: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule', timeAdded: NOW }],
  },
  {
    name: 'hold: an existing NoExecute taint is still swapped',
    node: node({ Ready: 'Unknown' }, [
      { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule', timeAdded: OLD },
      { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute', timeAdded: OLD },
    ]),
    mode: 'hold',
    want: [
      { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule', timeAdded: OLD },
      { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: NOW },
    ],
  },
  {
    name: 'clear: NoExecute taints removed even though not Ready',
    node: node({ Ready: 'Unknown' }, [
      { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule', timeAdded: OLD },
      { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: OLD },
    ]),
    mode: 'clear',
    want: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule', timeAdded: OLD }],
  },
];

for (const c of cases) {
  test(`reconcileNodeTaints: ${c.name}`, () => {
    assert.deepEqual(reconcileNodeTaints(c.node, c.mode ?? 'normal', NOW), c.want);
  });
}
