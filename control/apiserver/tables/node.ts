/**
 * Nodes: NAME STATUS ROLES AGE VERSION, wide INTERNAL-IP EXTERNAL-IP OS-IMAGE
 * KERNEL-VERSION CONTAINER-RUNTIME (printNode).
 *
 * STATUS is `Ready` when the Ready condition is True, `NotReady` when it is False or
 * Unknown, `Unknown` when the node has no Ready condition; `,SchedulingDisabled` is
 * appended for a cordoned node (spec.unschedulable). ROLES are the sorted suffixes of
 * `node-role.kubernetes.io/<role>` labels and the value of a `kubernetes.io/role` label.
 */
import type { KubeObject } from '../../../api/object.js';
import { since } from './format.js';
import { AGE_COLUMN, NAME_COLUMN, column, nameOf, type PrintedRow, type TablePrinter } from './printer.js';

interface NodeWire extends KubeObject {
  spec?: { unschedulable?: boolean };
  status?: {
    conditions?: { type: string; status: string }[];
    addresses?: { type: string; address: string }[];
    nodeInfo?: {
      kubeletVersion?: string;
      osImage?: string;
      kernelVersion?: string;
      containerRuntimeVersion?: string;
    };
  };
}

const ROLE_LABEL_PREFIX = 'node-role.kubernetes.io/';
const LEGACY_ROLE_LABEL = 'kubernetes.io/role';

/** The node's roles, sorted, from its role labels. */
export function nodeRoles(labels: Record<string, string> | undefined): string[] {
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(labels ?? {})) {
    if (key.startsWith(ROLE_LABEL_PREFIX)) {
      const role = key.slice(ROLE_LABEL_PREFIX.length);
      if (role) roles.add(role);
    } else if (key === LEGACY_ROLE_LABEL && value) {
      roles.add(value);
    }
  }
  return [...roles].sort();
}

function printNode(obj: KubeObject, now: Date): PrintedRow {
  const node = obj as NodeWire;
  const status = node.status ?? {};
  // The last condition of a type wins, as Kubernetes indexes them into a map.
  const readyCondition = status.conditions?.filter((c) => c.type === 'Ready').pop();
  const states: string[] = [];
  if (!readyCondition) states.push('Unknown');
  else states.push(readyCondition.status === 'True' ? 'Ready' : 'NotReady');
  if (node.spec?.unschedulable) states.push('SchedulingDisabled');

  const roles = nodeRoles(node.metadata?.labels);
  const address = (type: string): string =>
    status.addresses?.find((a) => a.type === type)?.address ?? '<none>';
  const info = status.nodeInfo ?? {};
  return {
    cells: [
      nameOf(node),
      states.join(','),
      roles.length > 0 ? roles.join(',') : '<none>',
      since(node.metadata?.creationTimestamp, now),
      info.kubeletVersion ?? '',
      address('InternalIP'),
      address('ExternalIP'),
      info.osImage || '<unknown>',
      info.kernelVersion || '<unknown>',
      info.containerRuntimeVersion || '<unknown>',
    ],
  };
}

export const nodePrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Status', 'string', 'Ready, NotReady or Unknown, and SchedulingDisabled when cordoned.'),
    column('Roles', 'string', 'The roles of the node, from its node-role.kubernetes.io/ labels.'),
    AGE_COLUMN,
    column('Version', 'string', 'The version of the kubelet on the node.'),
    column('Internal-IP', 'string', "The node's first InternalIP address.", { priority: 1 }),
    column('External-IP', 'string', "The node's first ExternalIP address.", { priority: 1 }),
    column('OS-Image', 'string', 'The operating system image of the node.', { priority: 1 }),
    column('Kernel-Version', 'string', 'The kernel version of the node.', { priority: 1 }),
    column('Container-Runtime', 'string', 'The container runtime and its version.', { priority: 1 }),
  ],
  row: printNode,
};
