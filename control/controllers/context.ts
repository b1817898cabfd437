/**
 * What every controller is built from (one config object, as kube-controller-manager's
 * ControllerContext): the REST client, the shared informer factory, the clock, a logger,
 * an event recorder per component, and the manager's settings. Controllers are API
 * clients only: they read through informers and write through `client` (hub and spoke).
 */
import type { Clock } from '../../api/clock.js';
import type { EventRecorder } from '../../api/client/events.js';
import type { InformerFactory } from '../../api/client/factory.js';
import type { RestClient } from '../../api/client/rest.js';
import type { Logger } from '../../api/log.js';

export type { Logger } from '../../api/log.js';

/** A logger that drops everything (tests). */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** Settings of the controllers, named as kube-controller-manager's flags. */
export interface ControllersConfig {
  /** --node-monitor-grace-period: seconds without a Lease renewal before a node is NotReady/Unknown. Default 50. */
  nodeMonitorGracePeriodSeconds: number;
  /** --node-monitor-period: seconds between node health checks. Default 5. */
  nodeMonitorPeriodSeconds: number;
  /** --node-startup-grace-period: seconds a new node has to become Ready before it is marked. Default 60. */
  nodeStartupGracePeriodSeconds: number;
  /** --terminated-pod-gc-threshold: terminated pods kept before Pod GC deletes the oldest. Default 12500. */
  terminatedPodGCThreshold: number;
  /** Seconds between Pod GC passes (podgc's gcCheckPeriod, not a flag upstream). Default 20. */
  podGCPeriodSeconds?: number;
  /** Seconds Pod GC waits before re-checking that a pod's missing Node is really gone (quarantineTime). Default 40. */
  podGCQuarantineSeconds?: number;
  /** Workers per controller (--concurrent-*-syncs). */
  concurrentReplicaSetSyncs: number;
  concurrentDeploymentSyncs: number;
  concurrentEndpointSyncs: number;
  concurrentGCSyncs: number;
  concurrentNamespaceSyncs: number;
  /** --cluster-cidr: the range node pod CIDRs are cut from. Default 10.42.0.0/16 (as k3s). */
  clusterCIDR: string;
  /** --node-cidr-mask-size: prefix length of each node's pod CIDR. Default 24. */
  nodeCIDRMaskSize: number;
  /**
   * --root-ca-file's content: the PEM CA bundle the root CA publisher writes as `ca.crt`
   * of every namespace's `kube-root-ca.crt` (the cluster CA, which signs the API server's
   * serving certificate). Unset: an empty `ca.crt` (a server on plain HTTP).
   */
  rootCACert?: string;
  /** --horizontal-pod-autoscaler-sync-period: seconds between two looks at each HorizontalPodAutoscaler. Default 15. */
  horizontalPodAutoscalerSyncPeriodSeconds?: number;
  /** --horizontal-pod-autoscaler-downscale-stabilization: seconds of the scale-down window without behavior. Default 300. */
  horizontalPodAutoscalerDownscaleStabilizationSeconds?: number;
  /** --horizontal-pod-autoscaler-tolerance: the usage ratio change below which an HPA does not scale. Default 0.1. */
  horizontalPodAutoscalerTolerance?: number;
  /** --horizontal-pod-autoscaler-cpu-initialization-period: seconds after a pod's start its CPU samples may be skipped. Default 300. */
  horizontalPodAutoscalerCPUInitializationPeriodSeconds?: number;
  /** --horizontal-pod-autoscaler-initial-readiness-delay: seconds after start a readiness change counts as the first. Default 30. */
  horizontalPodAutoscalerInitialReadinessDelaySeconds?: number;
}

/** kube-controller-manager's defaults. */
export const DEFAULT_CONTROLLERS_CONFIG: ControllersConfig = {
  nodeMonitorGracePeriodSeconds: 50,
  nodeMonitorPeriodSeconds: 5,
  nodeStartupGracePeriodSeconds: 60,
  terminatedPodGCThreshold: 12500,
  podGCPeriodSeconds: 20,
  podGCQuarantineSeconds: 40,
  concurrentReplicaSetSyncs: 5,
  concurrentDeploymentSyncs: 5,
  concurrentEndpointSyncs: 5,
  concurrentGCSyncs: 20,
  concurrentNamespaceSyncs: 10,
  clusterCIDR: '10.42.0.0/16',
  nodeCIDRMaskSize: 24,
};

/** Everything a controller's constructor gets. */
export interface ControllerContext {
  client: RestClient;
  /** Shared informers: ask here (in the constructor) rather than listing and watching yourself. */
  informers: InformerFactory;
  clock: Clock;
  logger: Logger;
  /** An EventRecorder reporting as `component` (e.g. `replicaset-controller`). */
  recorder(component: string): EventRecorder;
  config: ControllersConfig;
}

/**
 * A controller. The constructor registers informer handlers (which only enqueue keys);
 * run() starts once the informers have synced and works until `signal` aborts, then
 * resolves after its workers have stopped.
 */
export interface Controller {
  /** The controller's name as kube-controller-manager's `--controllers` list spells it, e.g. `replicaset`. */
  readonly name: string;
  run(signal: AbortSignal): Promise<void>;
}

/** Builds a controller from the shared context. */
export type ControllerFactory = (ctx: ControllerContext) => Controller;
