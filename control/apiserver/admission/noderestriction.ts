/**
 * NodeRestriction (plugin/pkg/admission/noderestriction): what a node identity
 * `system:node:<node>` may write into the objects the Node authorizer (auth/node.ts) lets
 * it touch. Users that are not nodes pass. The rulebook, checked on the object as it will
 * be stored (the validate phase; the status strategies have already dropped what a status
 * write may not change, such as a Node's spec or a Pod's ownerReferences):
 *
 *   nodes, nodes/status   the name must be <node> ("not allowed to modify node")
 *     CREATE              no restricted label (isRestrictedNodeLabel)
 *     UPDATE              taints unchanged; ownerReferences unchanged (CVE-2025-5187: a
 *                         node that owned itself to a missing object would be garbage
 *                         collected, then register again with labels of its choice); no
 *                         restricted label added, changed or removed
 *   pods                  CREATE refused: the only pods a node may create are mirror
 *                         pods, which k8ts does not have
 *   pods/status UPDATE    only of a pod bound to <node>, and its labels unchanged (a node
 *                         relabelling its pods could pull another Service's traffic)
 *   leases CREATE         in kube-node-lease, named <node>
 *   persistentvolumes     only a local-path volume with node affinity to <node>
 *                         (auth/node.ts's localVolumeOfNode; k8ts's, for agent/storage/)
 *   serviceaccounts/token CREATE (admit phase, on the TokenRequest)   bound to a pod
 *                         (boundObjectRef v1 Pod with name and uid) that exists with that
 *                         uid and runs on <node>: a node gets tokens only for its own pods
 *
 * Messages are upstream's, except "node %q is not allowed to modify labels" (upstream
 * words it "is not allowed to modify labels" without the node), kept as k8ts has said it.
 * Upstream runs the plugin in the mutating phase, on the request's object; it changes
 * nothing, so running on the object about to be stored only sees what really changes.
 */
import type { KubeObject } from '../../../api/object.js';
import { newForbidden as forbiddenOf, notFound } from '../status.js';
import { ownValue } from '../../../api/meta/maps.js';
import { nodeNameOf } from '../../../api/auth/user.js';
import { localVolumeOfNode } from '../auth/node.js';
import { semanticEqual } from '../strategies/meta.js';
import type { AdmissionAttributes, AdmissionPlugin, AdmissionRequest } from './interfaces.js';

const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/** What NodeRestriction reads: a pod by name (undefined when missing). */
export interface NodeRestrictionConfig {
  getPod?(namespace: string, name: string): Promise<KubeObject | undefined>;
}

/** The NodeRestriction plugin. */
export function nodeRestriction(cfg: NodeRestrictionConfig = {}): AdmissionPlugin {
  return {
    name: 'NodeRestriction',
    async admit(r: AdmissionRequest): Promise<void> {
      const node = nodeNameOf(r.user);
      if (node === undefined || r.operation !== 'CREATE') return;
      if (r.resource.group !== '' || r.resource.resource !== 'serviceaccounts' || r.subresource !== 'token')
        return;
      const refuse = (why: string) =>
        forbiddenOf({ group: '', resource: 'serviceaccounts', name: r.name }, why);
      // Upstream's admitServiceAccount: a node's TokenRequest must be bound to a pod on it.
      const spec = (r.body?.spec ?? {}) as { boundObjectRef?: Record<string, unknown> | null };
      const ref = spec.boundObjectRef ?? undefined;
      const refName = typeof ref?.name === 'string' ? ref.name : '';
      if (!ref || (ref.apiVersion ?? 'v1') !== 'v1' || ref.kind !== 'Pod' || refName === '')
        throw refuse('node requested token not bound to a pod');
      const uid = typeof ref.uid === 'string' ? ref.uid : '';
      if (uid === '') throw refuse('node requested token with a pod binding without a uid');
      const pod = await cfg.getPod?.(r.namespace ?? '', refName);
      if (!pod) throw notFound({ group: '', resource: 'pods', name: refName });
      if (pod.metadata?.uid !== uid)
        throw refuse(
          `the UID in the bound object reference (${uid}) does not match the UID in record. The object might have been deleted and then recreated`,
        );
      if (specOf(pod).nodeName !== node)
        throw refuse('node requested token bound to a pod scheduled on a different node');
    },
    validate(a: AdmissionAttributes): void {
      const why = nodeRestrictionViolation(a);
      if (why === undefined) return;
      throw forbiddenOf({ group: a.resource.group, resource: a.resource.resource, name: a.name }, why);
    },
  };
}

/**
 * Why NodeRestriction refuses the write `a` (see the file comment), or undefined when it
 * admits it. Pure.
 */
export function nodeRestrictionViolation(a: AdmissionAttributes): string | undefined {
  const node = nodeNameOf(a.user);
  if (node === undefined) return undefined;
  const r = `${a.resource.group}/${a.resource.resource}`;
  if (r === '/nodes') {
    if (a.name !== node) return `node "${node}" is not allowed to modify node "${a.name}"`;
    if (a.operation === 'CREATE') {
      const forbidden = Object.keys(labelsOf(a.object)).filter(isRestrictedNodeLabel).sort();
      if (forbidden.length > 0)
        return `node "${node}" is not allowed to set the following labels: ${forbidden.join(', ')}`;
      return undefined;
    }
    const old = a.oldObject!;
    if (!semanticEqual(specOf(a.object).taints, specOf(old).taints))
      return `node "${node}" is not allowed to modify taints`;
    if (!semanticEqual(a.object.metadata?.ownerReferences, old.metadata?.ownerReferences))
      return `node "${node}" is not allowed to modify ownerReferences`;
    const changed = modifiedLabels(labelsOf(a.object), labelsOf(old)).filter(isRestrictedNodeLabel);
    if (changed.length > 0) return `node "${node}" is not allowed to modify labels: ${changed.join(', ')}`;
    return undefined;
  }
  if (r === '/pods') {
    if (a.subresource === undefined && a.operation === 'CREATE')
      return `node "${node}" can only create mirror pods, which k8ts does not support`;
    if (a.subresource === 'status' && a.operation === 'UPDATE') {
      const old = a.oldObject!;
      if (specOf(old).nodeName !== node)
        return `node "${node}" can only update pod status for pods with spec.nodeName set to itself`;
      if (modifiedLabels(labelsOf(a.object), labelsOf(old)).length > 0)
        return `node "${node}" cannot update labels through pod status`;
    }
    return undefined;
  }
  if (r === '/persistentvolumes' && !localVolumeOfNode(a.object, node))
    return `node "${node}" can only create local-path volumes with node affinity to itself`;
  if (r === 'coordination.k8s.io/leases' && a.operation === 'CREATE') {
    if (a.namespace !== NODE_LEASE_NAMESPACE)
      return `can only access leases in the "${NODE_LEASE_NAMESPACE}" system namespace`;
    if (a.name !== node) return 'can only access node lease with the same name as the requesting node';
  }
  return undefined;
}

/** Labels in the kubernetes.io / k8s.io namespaces a kubelet may set on its own Node (kubeletapis.IsKubeletLabel). */
const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname',
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'topology.kubernetes.io/zone',
]);
const KUBELET_LABEL_DOMAINS = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

/**
 * Whether a node may not set or change label `key` on its own Node: `node-restriction.kubernetes.io/`
 * labels (for admins to steer workloads to trusted nodes), and every other label in the
 * kubernetes.io or k8s.io namespaces except the kubelet's own (KUBELET_LABELS and the
 * [*.]kubelet.kubernetes.io/ and [*.]node.kubernetes.io/ namespaces), as NodeRestriction's
 * getForbiddenLabels.
 */
export function isRestrictedNodeLabel(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return false;
  const domain = key.slice(0, slash);
  const inDomain = (d: string) => domain === d || domain.endsWith(`.${d}`);
  if (inDomain('node-restriction.kubernetes.io')) return true;
  if (!inDomain('kubernetes.io') && !inDomain('k8s.io')) return false;
  return !KUBELET_LABELS.has(key) && !KUBELET_LABEL_DOMAINS.some(inDomain);
}

/** The keys whose values differ between two label sets (getModifiedLabels), sorted. */
function modifiedLabels(a: Record<string, string>, b: Record<string, string>): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => ownValue(a, k) !== ownValue(b, k)).sort();
}

function labelsOf(obj: KubeObject): Record<string, string> {
  return obj.metadata?.labels ?? {};
}

function specOf(obj: KubeObject): { taints?: unknown; nodeName?: unknown } {
  const spec = obj.spec;
  return typeof spec === 'object' && spec !== null ? (spec as { taints?: unknown; nodeName?: unknown }) : {};
}
