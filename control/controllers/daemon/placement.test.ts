import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Node, PodTemplateSpec, Taint } from '../../../api/types.js';
import { makeNode } from '../../../test/support/fake-nodes.js';
import {
  addDaemonPodTolerations,
  createPodTemplate,
  daemonTolerations,
  nodeShouldRunDaemonPod,
  replaceNodeNameAffinity,
  scaledValue,
  targetNodeName,
} from './placement.js';

const template = (spec: Partial<PodTemplateSpec['spec']> = {}): PodTemplateSpec => ({
  metadata: { labels: { app: 'a' } },
  spec: { containers: [{ name: 'c', image: 'x' }], ...spec },
});

const tainted = (...taints: Taint[]): Node => makeNode('n', { taints });

describe('nodeShouldRunDaemonPod (NodeShouldRunDaemonPod)', () => {
  const cases: [string, Node, PodTemplateSpec, boolean, boolean][] = [
    ['plain node', makeNode('n'), template(), true, true],
    [
      'nodeSelector matches',
      makeNode('n', { labels: { r: 'x' } }),
      template({ nodeSelector: { r: 'x' } }),
      true,
      true,
    ],
    ['nodeSelector does not match', makeNode('n'), template({ nodeSelector: { r: 'x' } }), false, false],
    ['another nodeName', makeNode('n'), template({ nodeName: 'm' }), false, false],
    [
      'required node affinity NotIn',
      makeNode('n', { labels: { zone: 'z1' } }),
      template({
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['z1'] }] }],
            },
          },
        },
      }),
      false,
      false,
    ],
    [
      'untolerated NoSchedule: no new pod, an old one stays',
      tainted({ key: 'k', effect: 'NoSchedule' }),
      template(),
      false,
      true,
    ],
    [
      'untolerated NoExecute: nothing runs',
      tainted({ key: 'k', effect: 'NoExecute' }),
      template(),
      false,
      false,
    ],
    [
      'PreferNoSchedule is ignored',
      tainted({ key: 'k', effect: 'PreferNoSchedule' }),
      template(),
      true,
      true,
    ],
    [
      'not-ready NoExecute is tolerated by default',
      tainted({ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }),
      template(),
      true,
      true,
    ],
    [
      'unschedulable is tolerated by default',
      tainted({ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }),
      template(),
      true,
      true,
    ],
    [
      'network-unavailable only for hostNetwork',
      tainted({ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }),
      template(),
      false,
      true,
    ],
    [
      'network-unavailable with hostNetwork',
      tainted({ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }),
      template({ hostNetwork: true }),
      true,
      true,
    ],
    [
      'a template toleration',
      tainted({ key: 'k', value: 'v', effect: 'NoExecute' }),
      template({ tolerations: [{ key: 'k', operator: 'Equal', value: 'v', effect: 'NoExecute' }] }),
      true,
      true,
    ],
  ];
  for (const [name, node, tpl, shouldRun, shouldContinueRunning] of cases) {
    it(name, () => {
      assert.deepEqual(nodeShouldRunDaemonPod(node, tpl, daemonTolerations(tpl)), {
        shouldRun,
        shouldContinueRunning,
      });
    });
  }
});

describe('the daemon pod template', () => {
  it('adds the default tolerations once, replacing a matching one (AddOrUpdateDaemonPodTolerations)', () => {
    const spec = addDaemonPodTolerations({
      containers: [],
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 5,
        },
      ],
    });
    assert.equal(spec.tolerations!.filter((t) => t.key === 'node.kubernetes.io/not-ready').length, 1);
    assert.equal(spec.tolerations!.length, 6);
    assert.equal(addDaemonPodTolerations(spec).tolerations!.length, 6);
  });

  it('labels pods with the hash and the template generation (CreatePodTemplate)', () => {
    const t = createPodTemplate(template(), 3, 'abc');
    assert.deepEqual(t.metadata?.labels, {
      app: 'a',
      'pod-template-generation': '3',
      'controller-revision-hash': 'abc',
    });
  });

  it('pins a pod to its node by a required matchFields term, keeping preferred terms', () => {
    const preferred = [
      { weight: 1, preference: { matchExpressions: [{ key: 'a', operator: 'Exists' as const }] } },
    ];
    const a = replaceNodeNameAffinity(
      {
        nodeAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: preferred,
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'b', operator: 'Exists' }] }],
          },
        },
      },
      'n7',
    );
    assert.deepEqual(a.nodeAffinity, {
      preferredDuringSchedulingIgnoredDuringExecution: preferred,
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n7'] }] }],
      },
    });
    assert.equal(targetNodeName({ metadata: {}, spec: { containers: [], affinity: a } }), 'n7');
    assert.equal(
      targetNodeName({ metadata: {}, spec: { containers: [], nodeName: 'n8', affinity: a } }),
      'n8',
    );
  });

  it('scales maxUnavailable/maxSurge against the desired count, rounding up', () => {
    assert.equal(scaledValue('10%', 1000), 100);
    assert.equal(scaledValue('25%', 10), 3);
    assert.equal(scaledValue(2, 10), 2);
    assert.equal(scaledValue(undefined, 10), 0);
  });
});
