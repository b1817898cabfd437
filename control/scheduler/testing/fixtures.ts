/**
 * Small builders for the scheduler's unit tests: Nodes, Pods and NodeInfos without a
 * server. Quantities are strings as on the wire.
 */
import type { Container, Node, Pod, Taint, Toleration } from '../../../api/types.js';
import { NodeInfo, PodInfo } from '../framework/node-info.js';

export interface TestNode {
  cpu?: string;
  memory?: string;
  pods?: string;
  extra?: Record<string, string>;
  labels?: Record<string, string>;
  taints?: Taint[];
  unschedulable?: boolean;
}

export function testNode(name: string, o: TestNode = {}): Node {
  const allocatable = { cpu: o.cpu ?? '4', memory: o.memory ?? '8Gi', pods: o.pods ?? '110', ...o.extra };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...o.labels } },
    spec: { ...(o.taints ? { taints: o.taints } : {}), ...(o.unschedulable ? { unschedulable: true } : {}) },
    status: { capacity: allocatable, allocatable },
  };
}

export interface TestPod {
  requests?: Record<string, string>;
  containers?: Container[];
  initContainers?: Container[];
  overhead?: Record<string, string>;
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
  hostPorts?: { port: number; ip?: string; protocol?: 'TCP' | 'UDP' }[];
  labels?: Record<string, string>;
  priority?: number;
  owner?: string;
  spec?: Partial<Pod['spec']>;
}

let uid = 0;

export function testPod(name: string, o: TestPod = {}): Pod {
  const containers: Container[] = o.containers ?? [
    {
      name: 'c',
      image: 'pause',
      ...(o.requests ? { resources: { requests: o.requests } } : {}),
      ...(o.hostPorts
        ? {
            ports: o.hostPorts.map((p) => ({
              containerPort: p.port,
              hostPort: p.port,
              ...(p.ip ? { hostIP: p.ip } : {}),
              ...(p.protocol ? { protocol: p.protocol } : {}),
            })),
          }
        : {}),
    },
  ];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}-${uid++}`,
      ...(o.labels ? { labels: o.labels } : {}),
      ...(o.owner
        ? {
            ownerReferences: [
              {
                apiVersion: 'apps/v1',
                kind: 'ReplicaSet',
                name: o.owner,
                uid: `rs-${o.owner}`,
                controller: true,
              },
            ],
          }
        : {}),
    },
    spec: {
      containers,
      ...(o.initContainers ? { initContainers: o.initContainers } : {}),
      ...(o.overhead ? { overhead: o.overhead } : {}),
      ...(o.nodeName ? { nodeName: o.nodeName } : {}),
      ...(o.nodeSelector ? { nodeSelector: o.nodeSelector } : {}),
      ...(o.tolerations ? { tolerations: o.tolerations } : {}),
      priority: o.priority,
      ...o.spec,
    },
  };
}

/** A NodeInfo for `node` holding `pods` (bound there). */
export function nodeInfo(node: Node, ...pods: Pod[]): NodeInfo {
  const ni = new NodeInfo(node.metadata.name!, node);
  for (const p of pods) ni.addPod(new PodInfo({ ...p, spec: { ...p.spec, nodeName: node.metadata.name! } }));
  return ni;
}
