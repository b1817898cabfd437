/**
 * The subresources with their own object shapes: `scale` (autoscaling/v1 Scale over
 * Deployments and ReplicaSets) and `binding` (the scheduler's way to set a pod's node).
 * A pod's `eviction` has its own file, eviction.ts.
 */
import { labelSelectorFromObject, type LabelSelectorObject } from '../../api/meta/labels.js';
import { invalid as invalidField, isDNS1123Subdomain, toStatusCauses } from '../../api/meta/validation.js';
import { rfc3339, type KubeObject } from '../../api/object.js';
import type { Registry } from './registry.js';
import type { ScaleAccessor } from './strategy.js';
import { badRequest, conflict, invalid } from './status.js';

/**
 * autoscaling/v1 Scale of a Deployment, ReplicaSet or StatefulSet; with `accessor`, of a
 * kind that keeps its replicas elsewhere (a custom resource's scale paths).
 */
export function toScale(obj: KubeObject, accessor?: ScaleAccessor): KubeObject {
  const m = obj.metadata!;
  const spec = (obj.spec ?? {}) as { replicas?: number; selector?: LabelSelectorObject };
  const status = (obj.status ?? {}) as { replicas?: number };
  const read = accessor?.read(obj);
  const scale: KubeObject = {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: m.name!,
      namespace: m.namespace!,
      uid: m.uid!,
      resourceVersion: m.resourceVersion!,
      creationTimestamp: m.creationTimestamp!,
    },
    spec: { replicas: read ? read.specReplicas : (spec.replicas ?? 0) },
    status: read
      ? { replicas: read.statusReplicas, ...(read.selector ? { selector: read.selector } : {}) }
      : { replicas: status.replicas ?? 0, selector: labelSelectorFromObject(spec.selector).toString() },
  };
  return scale;
}

/**
 * Applies a Scale written by a client to its Deployment/ReplicaSet: only
 * `spec.replicas` changes; a `metadata.resourceVersion` in the Scale is a precondition.
 * The write goes through the kind's update rules, so `warn` gets its update warnings (a
 * Deployment's pod template warnings, its generation having moved), as upstream's scale
 * REST, which updates through the kind's strategy.
 * @throws ApiError 422 for negative or non-integer replicas, 409 on a stale resourceVersion.
 */
export async function updateScale(
  registry: Registry,
  namespace: string,
  name: string,
  scale: KubeObject,
  dryRun: boolean,
  warn?: (message: string) => void,
): Promise<KubeObject> {
  // Go clients omit a zero `replicas` (omitempty), so a missing value means 0, as in Kubernetes.
  const replicas = (scale.spec as { replicas?: unknown } | undefined)?.replicas ?? 0;
  const ref = { group: 'autoscaling', resource: 'scale', name };
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0 || replicas > 2 ** 31 - 1) {
    replicasInvalid(ref, replicas, 'must be greater than or equal to 0');
  }
  const rv = scale.metadata?.resourceVersion;
  const updated = await registry.guaranteedUpdate(
    namespace,
    name,
    (cur) => {
      if (rv && rv !== cur.metadata!.resourceVersion)
        throw conflict({ group: registry.resource.group, resource: registry.resource.resource, name });
      if (registry.scale) registry.scale.setReplicas(cur, replicas as number);
      else (cur.spec as { replicas?: number }).replicas = replicas as number;
      return cur;
    },
    warn ? { dryRun, warn } : { dryRun },
  );
  return toScale(updated, registry.scale);
}

function replicasInvalid(
  ref: { group: string; resource: string; name: string },
  value: unknown,
  message: string,
): never {
  throw invalid('Scale', ref, [
    {
      reason: 'FieldValueInvalid',
      field: 'spec.replicas',
      message: `Invalid value: ${JSON.stringify(value)}: ${message}`,
    },
  ]);
}

/**
 * Binds a pod to a node (POST pods/NAME/binding with a v1 Binding), as the scheduler
 * does: sets `spec.nodeName` once. Like Kubernetes' BindingREST, the write goes below the
 * pod strategy (Registry.updateInStorage: the stored pod is already defaulted and valid,
 * and only spec.nodeName changes), so a binding costs one decode and one encode; the node
 * name is checked with the rule pod validation applies to it (a DNS subdomain).
 * @throws ApiError 400 for a Binding without `target.name` or for another kind; 409
 *   Conflict when the pod is already bound or is being deleted; 422 for a node name that
 *   is not a DNS subdomain; 404 for a missing pod.
 */
export async function bindPod(
  pods: Registry,
  namespace: string,
  name: string,
  binding: KubeObject,
  dryRun: boolean,
): Promise<void> {
  if (binding.kind !== undefined && binding.kind !== 'Binding')
    throw badRequest(`expected a Binding, got ${String(binding.kind)}`);
  if (binding.metadata?.name !== undefined && binding.metadata.name !== name) {
    throw badRequest(
      `the name of the Binding (${binding.metadata.name}) does not match the pod name on the URL (${name})`,
    );
  }
  const target = binding.target as { kind?: string; name?: string } | undefined;
  if (!target?.name) {
    throw invalid('Binding', { group: '', resource: 'bindings', name }, [
      { reason: 'FieldValueRequired', field: 'target.name', message: 'Required value' },
    ]);
  }
  if (target.kind !== undefined && target.kind !== '' && target.kind !== 'Node') {
    throw invalid('Binding', { group: '', resource: 'bindings', name }, [
      {
        reason: 'FieldValueNotSupported',
        field: 'target.kind',
        message: `Unsupported value: "${target.kind}": supported values: "Node"`,
      },
    ]);
  }
  const ref = { group: '', resource: 'pods', name };
  await pods.updateInStorage(
    namespace,
    name,
    (pod) => {
      const spec = (pod.spec ??= {}) as { nodeName?: string };
      if (pod.metadata?.deletionTimestamp)
        throw conflict(ref, 'pod is being deleted, cannot be assigned to a host');
      if (spec.nodeName) throw conflict(ref, `pod ${name} is already assigned to node "${spec.nodeName}"`);
      const nodeName = typeof target.name === 'string' ? target.name : '';
      const problems = nodeName === '' ? [] : isDNS1123Subdomain(nodeName);
      if (problems.length > 0)
        throw invalid(
          'Pod',
          ref,
          toStatusCauses(problems.map((m) => invalidField('spec.nodeName', nodeName, m))),
        );
      spec.nodeName = target.name;
      markScheduled(pod, rfc3339(pods.now()));
    },
    { dryRun },
  );
}

/**
 * Sets a bound pod's `PodScheduled` condition to True, as Kubernetes' binding REST does
 * (podutil.UpdatePodCondition): the condition is replaced (an Unschedulable reason and
 * message go), and its lastTransitionTime is now unless it was True already.
 */
function markScheduled(pod: KubeObject, now: string): void {
  type Condition = { type: string; status: string; lastTransitionTime?: string };
  const status = (pod.status ??= {}) as { conditions?: Condition[] };
  const conditions = (status.conditions ??= []);
  const i = conditions.findIndex((c) => c.type === 'PodScheduled');
  const old = i >= 0 ? conditions[i] : undefined;
  const next: Condition = {
    type: 'PodScheduled',
    status: 'True',
    lastTransitionTime: old?.status === 'True' && old.lastTransitionTime ? old.lastTransitionTime : now,
  };
  if (i >= 0) conditions[i] = next;
  else conditions.push(next);
}
