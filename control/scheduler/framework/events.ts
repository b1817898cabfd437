/**
 * Cluster events (pkg/scheduler/framework/types.go ClusterEvent): what changed in the
 * cluster, so that the scheduling queue moves back only the unschedulable pods whose
 * rejecting plugins care about that change (EventsToRegister).
 */

/** The kinds of change, as Kubernetes' ActionType names them. */
export const ActionType = {
  Add: 1,
  Delete: 2,
  UpdateNodeAllocatable: 4,
  UpdateNodeLabel: 8,
  UpdateNodeTaint: 16,
  UpdateNodeCondition: 32,
  UpdatePodLabel: 64,
  /** Any other update of the object. */
  Update: 128,
} as const;
/** Every update kind together. */
export const ANY_UPDATE = 4 | 8 | 16 | 32 | 64 | 128;
/** Every action. */
export const ALL_ACTIONS = 255;

export type EventResource =
  'Node' | 'Pod' | 'PersistentVolumeClaim' | 'PersistentVolume' | 'StorageClass' | 'WildCard';

/** A change: the resource kind and a bit set of ActionType. */
export interface ClusterEvent {
  resource: EventResource;
  actionType: number;
  /** A short label for logs and metrics, e.g. `NodeAdd`, `AssignedPodDelete`. */
  label: string;
}

/** Whether `registered` (what a plugin listens to) covers the `event` that happened. */
export function eventMatches(registered: ClusterEvent, event: ClusterEvent): boolean {
  if (registered.resource === 'WildCard' || event.resource === 'WildCard') return true;
  return registered.resource === event.resource && (registered.actionType & event.actionType) !== 0;
}

/** The events the scheduler itself raises. */
export const events = {
  nodeAdd: { resource: 'Node', actionType: ActionType.Add, label: 'NodeAdd' },
  nodeDelete: { resource: 'Node', actionType: ActionType.Delete, label: 'NodeDelete' },
  assignedPodAdd: { resource: 'Pod', actionType: ActionType.Add, label: 'AssignedPodAdd' },
  assignedPodUpdate: {
    resource: 'Pod',
    actionType: ActionType.Update | ActionType.UpdatePodLabel,
    label: 'AssignedPodUpdate',
  },
  assignedPodDelete: { resource: 'Pod', actionType: ActionType.Delete, label: 'AssignedPodDelete' },
  /** Periodic flush of pods that stayed unschedulable too long. */
  unschedulableTimeout: { resource: 'WildCard', actionType: ALL_ACTIONS, label: 'UnschedulableTimeout' },
  /** A binding failed and its assumed resources were given back. */
  forgetPod: { resource: 'Pod', actionType: ActionType.Delete, label: 'AssumePodForget' },
} as const satisfies Record<string, ClusterEvent>;
