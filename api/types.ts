/**
 * Typed wire views of the kinds k8ts's own components read and write (core/v1 Pod, Node,
 * Service, Endpoints, Event, PersistentVolumeClaim; apps/v1 ReplicaSet, Deployment, StatefulSet; discovery.k8s.io/v1
 * EndpointSlice; coordination.k8s.io/v1 Lease). Only the fields some component uses are
 * listed; everything else passes through untouched via KubeObject's index signature.
 * Timestamps are RFC 3339 strings, quantities strings ("500m", "1Gi"), as on the wire.
 * Field names and meanings are Kubernetes' (k8s.io/api).
 */
import type { KubeObject, ObjectMeta } from './object.js';
import type { LabelSelectorObject } from './meta/labels.js';

/** A condition of a Pod, Node, Deployment, ... (`status` is the string 'True' | 'False' | 'Unknown'). */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastProbeTime?: string | null;
  lastHeartbeatTime?: string;
  lastUpdateTime?: string;
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  hostPort?: number;
  hostIP?: string;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
}

export interface ResourceRequirements {
  limits?: Record<string, string>;
  requests?: Record<string, string>;
}

export interface Container {
  name: string;
  image?: string;
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  command?: string[];
  args?: string[];
  workingDir?: string;
  ports?: ContainerPort[];
  resources?: ResourceRequirements;
  /** Init containers only: `Always` makes it a sidecar (runs alongside the app containers). */
  restartPolicy?: 'Always';
  [field: string]: unknown;
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: '' | 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  tolerationSeconds?: number;
}

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  timeAdded?: string;
}

export interface NodeSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface NodeAffinity {
  requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: NodeSelectorTerm[] };
  preferredDuringSchedulingIgnoredDuringExecution?: { weight: number; preference: NodeSelectorTerm }[];
}

export interface TopologySpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway';
  labelSelector?: LabelSelectorObject;
  minDomains?: number;
  matchLabelKeys?: string[];
}

export interface PodSpec {
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  affinity?: { nodeAffinity?: NodeAffinity; [field: string]: unknown };
  tolerations?: Toleration[];
  topologySpreadConstraints?: TopologySpreadConstraint[];
  containers: Container[];
  initContainers?: Container[];
  restartPolicy?: 'Always' | 'OnFailure' | 'Never';
  terminationGracePeriodSeconds?: number;
  schedulerName?: string;
  priority?: number;
  /** With `subdomain`, the pod's DNS name `<hostname>.<subdomain>.<ns>.svc` (a headless Service named as the subdomain). */
  hostname?: string;
  subdomain?: string;
  overhead?: Record<string, string>;
  [field: string]: unknown;
}

export interface ContainerStatus {
  name: string;
  ready: boolean;
  started?: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
  state?: Record<string, unknown>;
  lastState?: Record<string, unknown>;
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export interface PodStatus {
  phase?: PodPhase;
  conditions?: Condition[];
  message?: string;
  reason?: string;
  hostIP?: string;
  podIP?: string;
  podIPs?: { ip: string }[];
  startTime?: string;
  containerStatuses?: ContainerStatus[];
  [field: string]: unknown;
}

export interface Pod extends KubeObject {
  metadata: ObjectMeta;
  spec: PodSpec;
  status?: PodStatus;
}

export interface PodTemplateSpec {
  metadata?: ObjectMeta;
  spec: PodSpec;
}

export interface NodeAddress {
  type: 'InternalIP' | 'ExternalIP' | 'Hostname' | 'InternalDNS' | 'ExternalDNS';
  address: string;
}

export interface Node extends KubeObject {
  metadata: ObjectMeta;
  spec?: {
    unschedulable?: boolean;
    taints?: Taint[];
    podCIDR?: string;
    podCIDRs?: string[];
    [f: string]: unknown;
  };
  status?: {
    capacity?: Record<string, string>;
    allocatable?: Record<string, string>;
    conditions?: Condition[];
    addresses?: NodeAddress[];
    [field: string]: unknown;
  };
}

/** core/v1 PersistentVolumeClaim (also the shape of a StatefulSet's volumeClaimTemplates). */
export interface PersistentVolumeClaim extends KubeObject {
  metadata: ObjectMeta;
  spec: {
    accessModes?: string[];
    resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
    storageClassName?: string;
    volumeMode?: 'Filesystem' | 'Block';
    volumeName?: string;
    selector?: LabelSelectorObject;
    [field: string]: unknown;
  };
  status?: { phase?: 'Pending' | 'Bound' | 'Lost'; [field: string]: unknown };
}

/** apps/v1 StatefulSet: pods with stable names `<set>-<ordinal>`, created and updated in order. */
export interface StatefulSet extends KubeObject {
  metadata: ObjectMeta;
  spec: {
    replicas?: number;
    selector: LabelSelectorObject;
    template: PodTemplateSpec;
    serviceName?: string;
    volumeClaimTemplates?: PersistentVolumeClaim[];
    podManagementPolicy?: 'OrderedReady' | 'Parallel';
    updateStrategy?: {
      type?: 'RollingUpdate' | 'OnDelete';
      rollingUpdate?: { partition?: number; maxUnavailable?: number | string };
    };
    revisionHistoryLimit?: number;
    minReadySeconds?: number;
    persistentVolumeClaimRetentionPolicy?: {
      whenDeleted?: 'Retain' | 'Delete';
      whenScaled?: 'Retain' | 'Delete';
    };
    ordinals?: { start?: number };
  };
  status?: {
    observedGeneration?: number;
    replicas: number;
    readyReplicas?: number;
    currentReplicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    currentRevision?: string;
    updateRevision?: string;
    collisionCount?: number;
    conditions?: Condition[];
  };
}

export interface ReplicaSet extends KubeObject {
  metadata: ObjectMeta;
  spec: {
    replicas?: number;
    minReadySeconds?: number;
    selector: LabelSelectorObject;
    template: PodTemplateSpec;
  };
  status?: {
    replicas: number;
    fullyLabeledReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    observedGeneration?: number;
    conditions?: Condition[];
  };
}

/** apps/v1 DaemonSet (the fields k8ts reads and writes). */
export interface DaemonSet extends KubeObject {
  metadata: ObjectMeta;
  spec: {
    selector: LabelSelectorObject;
    template: PodTemplateSpec;
    updateStrategy?: {
      type?: 'RollingUpdate' | 'OnDelete';
      rollingUpdate?: { maxUnavailable?: number | string; maxSurge?: number | string };
    };
    minReadySeconds?: number;
    revisionHistoryLimit?: number;
  };
  status?: {
    currentNumberScheduled: number;
    numberMisscheduled: number;
    desiredNumberScheduled: number;
    numberReady: number;
    observedGeneration?: number;
    updatedNumberScheduled?: number;
    numberAvailable?: number;
    numberUnavailable?: number;
    collisionCount?: number;
    conditions?: Condition[];
  };
}

/** apps/v1 ControllerRevision: an immutable snapshot (`data`) of a controller's state, numbered `revision`. */
export interface ControllerRevision extends KubeObject {
  metadata: ObjectMeta;
  data?: unknown;
  revision: number;
}

export interface Deployment extends KubeObject {
  metadata: ObjectMeta;
  spec: {
    replicas?: number;
    selector: LabelSelectorObject;
    template: PodTemplateSpec;
    strategy?: {
      type?: 'RollingUpdate' | 'Recreate';
      rollingUpdate?: { maxSurge?: number | string; maxUnavailable?: number | string };
    };
    minReadySeconds?: number;
    revisionHistoryLimit?: number;
    paused?: boolean;
    progressDeadlineSeconds?: number;
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    unavailableReplicas?: number;
    conditions?: Condition[];
    collisionCount?: number;
  };
}

export interface ServicePort {
  name?: string;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  port: number;
  targetPort?: number | string;
  nodePort?: number;
  appProtocol?: string;
}

export interface Service extends KubeObject {
  metadata: ObjectMeta;
  spec: {
    type?: 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';
    selector?: Record<string, string>;
    ports?: ServicePort[];
    clusterIP?: string;
    clusterIPs?: string[];
    sessionAffinity?: 'None' | 'ClientIP';
    sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } };
    publishNotReadyAddresses?: boolean;
    externalName?: string;
    ipFamilies?: ('IPv4' | 'IPv6')[];
    externalTrafficPolicy?: 'Cluster' | 'Local';
    internalTrafficPolicy?: 'Cluster' | 'Local';
    [field: string]: unknown;
  };
  status?: {
    /** ipMode (Kubernetes 1.30): VIP (unset) delivers to the ingress IP, Proxy to the node. */
    loadBalancer?: { ingress?: { ip?: string; hostname?: string; ipMode?: 'VIP' | 'Proxy' }[] };
  };
}

/** core/v1 ObjectReference (Endpoints' targetRef, Event's involvedObject). */
export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

export interface EndpointAddress {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: ObjectReference;
}

export interface EndpointPort {
  name?: string;
  port: number;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  appProtocol?: string;
}

/** core/v1 EndpointSubset: addresses that all serve the same `ports`. */
export interface EndpointSubset {
  addresses?: EndpointAddress[];
  notReadyAddresses?: EndpointAddress[];
  ports?: EndpointPort[];
}

export interface Endpoints extends KubeObject {
  metadata: ObjectMeta;
  subsets?: EndpointSubset[];
}

export interface Endpoint {
  addresses: string[];
  conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
  hostname?: string;
  nodeName?: string;
  zone?: string;
  targetRef?: ObjectReference;
}

export interface EndpointSlice extends KubeObject {
  metadata: ObjectMeta;
  addressType: 'IPv4' | 'IPv6' | 'FQDN';
  endpoints: Endpoint[];
  ports?: EndpointPort[];
}

export interface Lease extends KubeObject {
  metadata: ObjectMeta;
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

export interface Namespace extends KubeObject {
  metadata: ObjectMeta;
  spec?: { finalizers?: string[] };
  status?: { phase?: 'Active' | 'Terminating'; conditions?: Condition[] };
}

/** core/v1 Event. */
export interface CoreEvent extends KubeObject {
  metadata: ObjectMeta;
  involvedObject: ObjectReference;
  reason?: string;
  message?: string;
  source?: { component?: string; host?: string };
  firstTimestamp?: string;
  lastTimestamp?: string;
  count?: number;
  type?: 'Normal' | 'Warning';
  reportingComponent?: string;
  reportingInstance?: string;
}

/** core/v1 ConfigMap. */
export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
  immutable?: boolean;
}

/** autoscaling/v2 CrossVersionObjectReference: what a HorizontalPodAutoscaler scales. */
export interface HorizontalPodAutoscalerTargetRef {
  apiVersion?: string;
  kind: string;
  name: string;
}

/** autoscaling/v2 MetricTarget: `Utilization` (averageUtilization, percent of request), `Value` or `AverageValue` (quantities). */
export interface HorizontalPodAutoscalerMetricTarget {
  type: 'Utilization' | 'Value' | 'AverageValue';
  averageUtilization?: number;
  averageValue?: string;
  value?: string;
}

/** autoscaling/v2 MetricSpec (the Resource source is the one k8ts computes; others are kept and reported invalid). */
export interface HorizontalPodAutoscalerMetricSpec {
  type: 'Resource' | 'ContainerResource' | 'Pods' | 'Object' | 'External';
  resource?: { name: string; target: HorizontalPodAutoscalerMetricTarget };
  containerResource?: { name: string; container: string; target: HorizontalPodAutoscalerMetricTarget };
  [source: string]: unknown;
}

/** autoscaling/v2 HPAScalingRules. */
export interface HorizontalPodAutoscalerScalingRules {
  stabilizationWindowSeconds?: number;
  selectPolicy?: 'Max' | 'Min' | 'Disabled';
  policies?: { type: 'Pods' | 'Percent'; value: number; periodSeconds: number }[];
}

/** autoscaling/v2 HorizontalPodAutoscaler. */
export interface HorizontalPodAutoscaler extends KubeObject {
  metadata: ObjectMeta;
  spec: {
    scaleTargetRef: HorizontalPodAutoscalerTargetRef;
    minReplicas?: number;
    maxReplicas: number;
    metrics?: HorizontalPodAutoscalerMetricSpec[];
    behavior?: {
      scaleUp?: HorizontalPodAutoscalerScalingRules;
      scaleDown?: HorizontalPodAutoscalerScalingRules;
    };
  };
  status?: {
    observedGeneration?: number;
    lastScaleTime?: string;
    currentReplicas?: number;
    desiredReplicas: number;
    currentMetrics?: {
      type: string;
      resource?: {
        name: string;
        current: { averageUtilization?: number; averageValue?: string; value?: string };
      };
      containerResource?: {
        name: string;
        container: string;
        current: { averageUtilization?: number; averageValue?: string; value?: string };
      };
    }[];
    conditions?: Condition[];
  };
}
