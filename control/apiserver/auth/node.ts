/**
 * The Node authorizer (plugin/pkg/auth/authorizer/node, with what the RBAC role
 * system:node grants): what a node identity `system:node:<name>` may do. What it may
 * write into the objects it may touch is NodeRestriction admission's
 * (admission/noderestriction.ts).
 *
 * Read: nodes, pods, services, endpoints, endpointslices (kubelet and kube-proxy watch
 * them); secrets and configmaps only when a pod bound to the node refers to them
 * (volumes, env, envFrom, imagePullSecrets) — Kubernetes keeps a graph for this, k8ts
 * lists the node's pods in the namespace on each such read.
 * Write: create, update and patch of its own Node and nodes/status (not delete, not a get
 * of nodes/status: system:node has neither); its own Lease in kube-node-lease; update and
 * patch of the status of pods bound to it, their deletion and eviction; events; a token
 * (`create serviceaccounts/<name>/token`) for a ServiceAccount a pod bound to it runs as
 * (the projected token volume; NodeRestriction then requires the token to be bound to
 * such a pod).
 * Storage (k8ts's own, for the local-path provisioner each agent runs): read of
 * PersistentVolumeClaims, PersistentVolumes and StorageClasses; create of
 * PersistentVolumes (NodeRestriction: only local-path volumes of its own node) and delete
 * of its own node's local-path volumes.
 * Everything else that concerns these kinds is denied outright (RBAC cannot widen it, as
 * NodeRestriction runs after authorization in Kubernetes); other requests get no
 * opinion, so RBAC decides (and grants nodes nothing beyond discovery).
 */
import { NET_CONF_CONFIGMAP } from '../../../api/netconf.js';
import type { KubeObject } from '../../../api/object.js';
import { ALLOW, NO_OPINION, type Attributes, type Authorizer, type Decision } from './authz.js';
import { nodeNameOf } from '../../../api/auth/user.js';

/** What the Node authorizer reads (the API server's registries). */
export interface NodeGraphSource {
  getPod(namespace: string, name: string): Promise<KubeObject | undefined>;
  /** Pods with `spec.nodeName == node` in `namespace`. */
  podsOnNode(node: string, namespace: string): Promise<KubeObject[]>;
  /** A PersistentVolume by name (undefined when missing); unset: nodes delete none. */
  getPersistentVolume?(name: string): Promise<KubeObject | undefined>;
}

/**
 * Whether `pv` is a volume of node `node`'s local-path provisioner: annotated
 * `pv.kubernetes.io/provisioned-by: rancher.io/local-path`, and every term of its required
 * node affinity is `kubernetes.io/hostname In [<node>]` (the kubelet's hostname label is
 * its node name).
 */
export function localVolumeOfNode(pv: KubeObject, node: string): boolean {
  if (pv.metadata?.annotations?.['pv.kubernetes.io/provisioned-by'] !== 'rancher.io/local-path') return false;
  const terms = objs(o(o(o(o(pv.spec).nodeAffinity).required)).nodeSelectorTerms);
  return (
    terms.length > 0 &&
    terms.every((t) => {
      const exprs = objs(t.matchExpressions);
      const values = exprs[0]?.values;
      return (
        exprs.length === 1 &&
        objs(t.matchFields).length === 0 &&
        exprs[0]!.key === 'kubernetes.io/hostname' &&
        exprs[0]!.operator === 'In' &&
        Array.isArray(values) &&
        values.length === 1 &&
        values[0] === node
      );
    })
  );
}

const READ = new Set(['get', 'list', 'watch']);
const NODE_LEASE_NAMESPACE = 'kube-node-lease';
const NO_RELATIONSHIP = (node: string) => `no relationship found between node '${node}' and this object`;

const deny = (reason: string): Decision => ({ decision: 'deny', reason });

type Obj = Record<string, unknown>;
const objs = (v: unknown): Obj[] =>
  Array.isArray(v) ? v.filter((x): x is Obj => typeof x === 'object' && x !== null) : [];
const o = (v: unknown): Obj => (typeof v === 'object' && v !== null ? (v as Obj) : {});
const s = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The names of the Secrets and ConfigMaps a pod refers to. */
export function podReferences(pod: KubeObject): { secrets: Set<string>; configMaps: Set<string> } {
  const secrets = new Set<string>();
  const configMaps = new Set<string>();
  const add = (set: Set<string>, v: unknown) => {
    const name = s(v);
    if (name) set.add(name);
  };
  const spec = o(pod.spec);
  for (const ref of objs(spec.imagePullSecrets)) add(secrets, ref.name);
  for (const vol of objs(spec.volumes)) {
    add(secrets, o(vol.secret).secretName);
    add(configMaps, o(vol.configMap).name);
    for (const src of objs(o(vol.projected).sources)) {
      add(secrets, o(src.secret).name);
      add(configMaps, o(src.configMap).name);
    }
  }
  for (const c of [
    ...objs(spec.containers),
    ...objs(spec.initContainers),
    ...objs(spec.ephemeralContainers),
  ]) {
    for (const e of objs(c.env)) {
      const from = o(e.valueFrom);
      add(secrets, o(from.secretKeyRef).name);
      add(configMaps, o(from.configMapKeyRef).name);
    }
    for (const e of objs(c.envFrom)) {
      add(secrets, o(e.secretRef).name);
      add(configMaps, o(e.configMapRef).name);
    }
  }
  return { secrets, configMaps };
}

/** The Node authorizer over `src`. */
export function nodeAuthorizer(src: NodeGraphSource): Authorizer {
  return {
    async authorize(a: Attributes): Promise<Decision> {
      const node = nodeNameOf(a.user);
      if (node === undefined || !a.resourceRequest) return NO_OPINION;
      const group = a.group ?? '';
      const resource = a.resource ?? '';
      const sub = a.subresource;
      const key = `${group}/${resource}`;
      switch (key) {
        case '/nodes': {
          if (READ.has(a.verb) && sub === undefined) return ALLOW;
          // Creating is checked against the body's name by NodeRestriction.
          if (a.verb === 'create' && sub === undefined) return ALLOW;
          if (['update', 'patch'].includes(a.verb) && (sub === undefined || sub === 'status')) {
            return a.name === node
              ? ALLOW
              : deny(`node "${node}" is not allowed to modify node "${a.name ?? ''}"`);
          }
          return deny(NO_RELATIONSHIP(node));
        }
        case '/pods': {
          if (READ.has(a.verb) && sub === undefined) return ALLOW;
          const podWrite =
            (sub === 'status' && ['update', 'patch'].includes(a.verb)) ||
            (sub === undefined && a.verb === 'delete') ||
            (sub === 'eviction' && a.verb === 'create');
          if (!podWrite || !a.namespace || !a.name) return deny(NO_RELATIONSHIP(node));
          const pod = await src.getPod(a.namespace, a.name);
          // A pod that does not exist: let the request through to its 404.
          if (!pod) return ALLOW;
          const boundTo = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
          return boundTo === node
            ? ALLOW
            : deny(`pod "${a.name}" is bound to node "${boundTo ?? ''}", not to node "${node}"`);
        }
        case '/services':
        case '/endpoints':
        case 'discovery.k8s.io/endpointslices':
          return READ.has(a.verb) && sub === undefined ? ALLOW : deny(NO_RELATIONSHIP(node));
        case 'coordination.k8s.io/leases': {
          if (a.namespace !== NODE_LEASE_NAMESPACE) return deny(NO_RELATIONSHIP(node));
          if (a.verb === 'create') return ALLOW; // the body's name: NodeRestriction
          if (['get', 'update', 'patch', 'delete'].includes(a.verb) && a.name === node) return ALLOW;
          return deny(`can only access node lease with the same name as the requesting node`);
        }
        case '/events':
        case 'events.k8s.io/events':
          return ['create', 'update', 'patch'].includes(a.verb) ? ALLOW : deny(NO_RELATIONSHIP(node));
        case '/secrets':
        case '/configmaps': {
          if (a.verb !== 'get' || !a.namespace || !a.name || sub !== undefined)
            return deny(NO_RELATIONSHIP(node));
          // Every node reads the cluster network setting (api/netconf.ts), as flannel's
          // DaemonSet mounts kube-flannel-cfg on every node.
          if (
            resource === 'configmaps' &&
            a.namespace === NET_CONF_CONFIGMAP.namespace &&
            a.name === NET_CONF_CONFIGMAP.name
          )
            return ALLOW;
          for (const pod of await src.podsOnNode(node, a.namespace)) {
            const refs = podReferences(pod);
            if ((resource === 'secrets' ? refs.secrets : refs.configMaps).has(a.name)) return ALLOW;
          }
          return deny(NO_RELATIONSHIP(node));
        }
        case '/serviceaccounts': {
          // Upstream's authorizeCreateToken, over the pod → service account edges of its graph.
          if (a.verb !== 'create' || !a.name || !a.namespace)
            return deny('can only create tokens for individual service accounts');
          if (sub !== 'token') return deny('can only create token subresource of serviceaccount');
          for (const pod of await src.podsOnNode(node, a.namespace)) {
            if ((pod.spec as { serviceAccountName?: string } | undefined)?.serviceAccountName === a.name)
              return ALLOW;
          }
          return deny(NO_RELATIONSHIP(node));
        }
        // The local-path provisioner in every agent (agent/storage/) watches claims,
        // volumes and classes, and creates and deletes the volumes of its own node; the
        // kubelet reads a pod's claim and volume. Upstream a node reads only what its
        // pods use (the graph) and a provisioner runs with its own ServiceAccount.
        case '/persistentvolumeclaims':
        case 'storage.k8s.io/storageclasses':
          return READ.has(a.verb) && sub === undefined ? ALLOW : deny(NO_RELATIONSHIP(node));
        case '/persistentvolumes': {
          if (READ.has(a.verb) && sub === undefined) return ALLOW;
          // What it creates is NodeRestriction's to check (the body: localVolumeOfNode).
          if (a.verb === 'create' && sub === undefined) return ALLOW;
          if (a.verb !== 'delete' || sub !== undefined || !a.name || !src.getPersistentVolume)
            return deny(NO_RELATIONSHIP(node));
          const pv = await src.getPersistentVolume(a.name);
          if (!pv) return ALLOW; // its 404
          return localVolumeOfNode(pv, node)
            ? ALLOW
            : deny(`node "${node}" may only delete the local-path volumes of its own node`);
        }
        default:
          return NO_OPINION;
      }
    },
  };
}
