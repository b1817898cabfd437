/**
 * Typed wire views of batch/v1 Job and CronJob (k8s.io/api/batch/v1), the fields the
 * Job, CronJob and TTL-after-finished controllers read and write. Everything else passes
 * through via KubeObject's index signature. Timestamps are RFC 3339 strings.
 */
import type { LabelSelectorObject } from './meta/labels.js';
import type { KubeObject, ObjectMeta } from './object.js';
import type { Condition, PodTemplateSpec } from './types.js';

/** A podFailurePolicy rule's exit-code requirement (PodFailurePolicyOnExitCodesRequirement). */
export interface PodFailurePolicyOnExitCodes {
  containerName?: string;
  operator: 'In' | 'NotIn';
  values: number[];
}

/** One podFailurePolicy rule (PodFailurePolicyRule). */
export interface PodFailurePolicyRule {
  action: 'FailJob' | 'Ignore' | 'Count' | 'FailIndex';
  onExitCodes?: PodFailurePolicyOnExitCodes;
  onPodConditions?: { type: string; status?: string }[];
}

export interface JobSpec {
  parallelism?: number;
  completions?: number | null;
  activeDeadlineSeconds?: number;
  backoffLimit?: number;
  selector?: LabelSelectorObject;
  manualSelector?: boolean;
  template: PodTemplateSpec;
  ttlSecondsAfterFinished?: number;
  completionMode?: 'NonIndexed' | 'Indexed';
  suspend?: boolean;
  podFailurePolicy?: { rules: PodFailurePolicyRule[] };
  podReplacementPolicy?: 'TerminatingOrFailed' | 'Failed';
  [field: string]: unknown;
}

export interface JobStatus {
  conditions?: Condition[];
  startTime?: string;
  completionTime?: string;
  active?: number;
  succeeded?: number;
  failed?: number;
  terminating?: number;
  ready?: number;
  /** Indexed Jobs: the succeeded indexes as ranges, `1,3-5`. */
  completedIndexes?: string;
  /** Pods finished but not yet counted in succeeded/failed (their finalizer not yet removed). */
  uncountedTerminatedPods?: { succeeded?: string[]; failed?: string[] };
  [field: string]: unknown;
}

export interface Job extends KubeObject {
  metadata: ObjectMeta;
  spec: JobSpec;
  status?: JobStatus;
}

export interface CronJob extends KubeObject {
  metadata: ObjectMeta;
  spec: {
    schedule: string;
    timeZone?: string;
    startingDeadlineSeconds?: number;
    concurrencyPolicy?: 'Allow' | 'Forbid' | 'Replace';
    suspend?: boolean;
    successfulJobsHistoryLimit?: number;
    failedJobsHistoryLimit?: number;
    jobTemplate: { metadata?: ObjectMeta; spec: JobSpec };
  };
  status?: {
    active?: {
      apiVersion?: string;
      kind?: string;
      name?: string;
      namespace?: string;
      uid?: string;
      resourceVersion?: string;
    }[];
    lastScheduleTime?: string;
    lastSuccessfulTime?: string;
  };
}
