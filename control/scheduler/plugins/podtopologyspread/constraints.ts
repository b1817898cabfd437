/**
 * The spread constraints of a pod, as PodTopologySpread evaluates them
 * (pkg/scheduler/framework/plugins/podtopologyspread/common.go): the pod's own
 * `topologySpreadConstraints`, or — when it has none — the system defaults (hostname
 * maxSkew 3, zone maxSkew 5, both ScheduleAnyway).
 *
 * Kubernetes builds the default selector from the Services, ReplicationControllers,
 * ReplicaSets and StatefulSets selecting the pod; k8ts selects the pods that share the
 * pod's controller (same namespace, same controller ownerReference uid), which spreads
 * the replicas of one ReplicaSet or StatefulSet alike without watching those kinds. A pod
 * without a controller gets no default constraints.
 */
import { labelSelectorFromObject } from '../../../../api/meta/labels.js';
import type { LabelRequirement } from '../../../../api/meta/labels.js';
import { controllerOf } from '../../../../api/podutil.js';
import type { Pod } from '../../../../api/types.js';
import type { NodeInfo } from '../../framework/node-info.js';
import { ownValue } from '../../../../api/meta/maps.js';

export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
export const LABEL_TOPOLOGY_ZONE = 'topology.kubernetes.io/zone';

/** One constraint ready to evaluate. */
export interface SpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway';
  /** Whether a pod counts towards this constraint (its namespace is checked separately). */
  selects: (pod: Pod) => boolean;
  minDomains: number;
  /**
   * Set on the default constraints: they select the non-terminating pods of this
   * NodeInfo.podsOfController key (`<namespace>/<controller uid>`), which a node counts as
   * its pods come and go, so countMatching need not look at each pod.
   */
  controllerKey?: string;
}

/**
 * The pod's own constraints with `whenUnsatisfiable` = `action`, their label selectors
 * extended with `matchLabelKeys` (the pod's values of those keys). A selector that does
 * not parse selects nothing.
 */
export function podConstraints(pod: Pod, action: SpreadConstraint['whenUnsatisfiable']): SpreadConstraint[] {
  const out: SpreadConstraint[] = [];
  for (const c of pod.spec.topologySpreadConstraints ?? []) {
    if (c.whenUnsatisfiable !== action) continue;
    let selects: (p: Pod) => boolean;
    try {
      let selector = labelSelectorFromObject(c.labelSelector);
      const extra: LabelRequirement[] = [];
      for (const key of c.matchLabelKeys ?? []) {
        const v = ownValue(pod.metadata.labels, key);
        if (v !== undefined) extra.push({ key, operator: 'in', values: [v] });
      }
      if (extra.length > 0) selector = selector.add(...extra);
      selects = (p) => selector.matches(p.metadata.labels);
    } catch {
      selects = () => false;
    }
    out.push({
      maxSkew: c.maxSkew,
      topologyKey: c.topologyKey,
      whenUnsatisfiable: c.whenUnsatisfiable,
      selects,
      minDomains: c.minDomains ?? 1,
    });
  }
  return out;
}

/** The system default constraints for `pod` (see the file comment); empty for a pod without a controller. */
export function defaultConstraints(pod: Pod): SpreadConstraint[] {
  const owner = controllerOf(pod)?.uid;
  if (!owner) return [];
  const selects = (p: Pod) => controllerOf(p)?.uid === owner;
  const controllerKey = `${pod.metadata.namespace ?? ''}/${owner}`;
  const constraint = { whenUnsatisfiable: 'ScheduleAnyway', selects, minDomains: 1, controllerKey } as const;
  return [
    { maxSkew: 3, topologyKey: LABEL_HOSTNAME, ...constraint },
    { maxSkew: 5, topologyKey: LABEL_TOPOLOGY_ZONE, ...constraint },
  ];
}

/** Whether `labels` carry every topology key of `constraints`. */
export function hasAllTopologyKeys(
  labels: Readonly<Record<string, string>> | undefined,
  constraints: readonly SpreadConstraint[],
): boolean {
  if (!labels) return constraints.length === 0;
  for (const c of constraints) if (!Object.hasOwn(labels, c.topologyKey)) return false;
  return true;
}

/**
 * How many of a node's pods count for `c`: same namespace as `namespace`, not terminating,
 * selected. A default constraint's (`controllerKey`, of a pod of `namespace`) is the node's
 * count of that controller's pods.
 */
export function countMatching(
  node: Pick<NodeInfo, 'pods' | 'podsOfController'>,
  c: SpreadConstraint,
  namespace: string | undefined,
): number {
  if (c.controllerKey !== undefined) return node.podsOfController(c.controllerKey);
  let n = 0;
  for (const { pod } of node.pods.values()) {
    if (pod.metadata.namespace !== namespace || pod.metadata.deletionTimestamp) continue;
    if (c.selects(pod)) n++;
  }
  return n;
}
