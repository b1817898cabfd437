/**
 * The HorizontalPodAutoscaler controller (Kubernetes' pkg/controller/podautoscaler,
 * kube-controller-manager's `horizontalpodautoscaling`): every sync period (15 s,
 * --horizontal-pod-autoscaler-sync-period) it sets each HPA's target's replica count from
 * the pods' resource usage, through the target's `scale` subresource.
 *
 * Handlers only enqueue, always after the sync period (upstream's fixed-interval rate
 * limiter), and a reconciled key is enqueued again after the period: each HPA is looked at
 * once per period whatever happens to it. A failed reconcile is not retried sooner.
 *
 * reconcile(key) (reconcileAutoscaler):
 *  1. the HPA from the cache (gone: forget its recommendations);
 *  2. the target's resource from discovery (the REST mapping of scaleTargetRef's
 *     apiVersion and kind to a resource with a `scale` subresource: Deployments,
 *     ReplicaSets, StatefulSets, any kind that serves one), then its Scale — failing:
 *     FailedGetScale event, AbleToScale False;
 *  3. the desired count: 0 replicas with minReplicas > 0 disables scaling (ScalingActive
 *     False ScalingDisabled); above max / below min go to max / min; otherwise the highest
 *     proposal of the metrics (replica-calculator.ts over metrics.ts; only Resource and
 *     ContainerResource metrics are computed: k8ts serves no custom or external metrics API), normalized by
 *     behavior.ts (stabilization and rate limits, min/max);
 *  4. a changed count is written to the Scale, with a SuccessfulRescale event
 *     (`New size: N; reason: cpu resource utilization (percentage of request) above
 *     target`) or FailedRescale;
 *  5. status (currentReplicas, desiredReplicas, currentMetrics, lastScaleTime, the
 *     AbleToScale, ScalingActive and ScalingLimited conditions) through `/status` when it
 *     changed.
 */
import { resources, type ResourceRef } from '../../../api/client/resource.js';
import type { Lister } from '../../../api/client/lister.js';
import { metaNamespaceKey, splitMetaNamespaceKey } from '../../../api/client/store.js';
import { deletedObject } from '../../../api/client/informer.js';
import type { EventRecorder } from '../../../api/client/events.js';
import type { Clock } from '../../../api/clock.js';
import { errorMessage } from '../../../api/errors.js';
import { parseLabelSelector } from '../../../api/meta/labels.js';
import { formatQuantity, parseQuantity } from '../../../api/meta/quantity.js';
import type { KubeObject } from '../../../api/object.js';
import { rfc3339 } from '../../../api/object.js';
import type {
  Condition,
  HorizontalPodAutoscaler,
  HorizontalPodAutoscalerMetricSpec,
  Pod,
} from '../../../api/types.js';
import { RateLimitingQueue } from '../../../api/workqueue/rateLimited.js';
import type { Controller, ControllerContext, Logger } from '../context.js';
import { runQueue } from '../run.js';
import { DEFAULT_DOWNSCALE_STABILIZATION_MS, Recommender, type NormalizationCondition } from './behavior.js';
import { milliValue, RestMetricsSource, type MetricsSource } from './metrics.js';
import {
  DEFAULT_CPU_INITIALIZATION_PERIOD_MS,
  DEFAULT_INITIAL_READINESS_DELAY_MS,
  DEFAULT_TOLERANCE,
  resourceReplicas,
} from './replica-calculator.js';

/** The component name of its events. */
export const HPA_CONTROLLER_COMPONENT = 'horizontal-pod-autoscaler';
/** --horizontal-pod-autoscaler-sync-period's default, seconds. */
export const DEFAULT_HPA_SYNC_PERIOD_SECONDS = 15;

/** Options beyond the shared context (tests). */
export interface HorizontalControllerOptions {
  /** Where pod usage comes from; default the metrics.k8s.io API through ctx.client. */
  metrics?: MetricsSource;
}

type Status = NonNullable<HorizontalPodAutoscaler['status']>;
type MetricStatus = NonNullable<Status['currentMetrics']>[number];

interface ScaleObject extends KubeObject {
  spec?: { replicas?: number };
  status?: { replicas?: number; selector?: string };
}

interface APIResourceList {
  resources?: { name: string; kind?: string; namespaced?: boolean }[];
}

/** One metric's outcome (computeReplicasForMetric). */
type MetricOutcome =
  | { ok: true; replicas: number; name: string; status: MetricStatus }
  | { ok: false; reason: string; error: string };

/** The HPA controller; see the file comment. */
export class HorizontalController implements Controller {
  readonly name = 'horizontalpodautoscaling';
  private readonly ctx: ControllerContext;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly queue: RateLimitingQueue<string>;
  private readonly hpaLister: Lister<HorizontalPodAutoscaler>;
  private readonly podLister: Lister<Pod>;
  private readonly recorder: EventRecorder;
  private readonly metrics: MetricsSource;
  private readonly recommender: Recommender;
  private readonly syncPeriodMs: number;
  /** Reconciles finished, for tests that drive the clock one sync period at a time. */
  syncs = 0;
  /** `apiVersion` → its resources (discovery), refreshed when a kind is not found. */
  private readonly mappings = new Map<string, APIResourceList>();

  /** @throws Error for a sync period that is not a positive number. */
  constructor(ctx: ControllerContext, opts: HorizontalControllerOptions = {}) {
    this.ctx = ctx;
    this.logger = ctx.logger;
    this.clock = ctx.clock;
    const cfg = ctx.config;
    this.syncPeriodMs =
      (cfg.horizontalPodAutoscalerSyncPeriodSeconds ?? DEFAULT_HPA_SYNC_PERIOD_SECONDS) * 1000;
    if (!(this.syncPeriodMs > 0))
      throw new Error(`horizontalpodautoscaling: sync period must be positive, got ${this.syncPeriodMs} ms`);
    this.recommender = new Recommender(
      (cfg.horizontalPodAutoscalerDownscaleStabilizationSeconds ??
        DEFAULT_DOWNSCALE_STABILIZATION_MS / 1000) * 1000,
    );
    this.queue = new RateLimitingQueue<string>({ clock: ctx.clock });
    this.recorder = ctx.recorder(HPA_CONTROLLER_COMPONENT);
    this.metrics = opts.metrics ?? new RestMetricsSource(ctx.client);
    const hpaInformer = ctx.informers.informerFor<HorizontalPodAutoscaler>(
      resources.horizontalpodautoscalers,
    );
    this.hpaLister = hpaInformer.lister();
    this.podLister = ctx.informers.informerFor<Pod>(resources.pods).lister();
    hpaInformer.addEventHandler({
      onAdd: (hpa) => this.enqueue(metaNamespaceKey(hpa)),
      onUpdate: (_old, cur) => this.enqueue(metaNamespaceKey(cur)),
      onDelete: (obj) => {
        const key = metaNamespaceKey(deletedObject(obj));
        this.recommender.forget(key);
      },
    });
  }

  /** Runs one worker per HPA key at a time (upstream's --concurrent-horizontal-pod-autoscaler-syncs: 5). */
  run(signal: AbortSignal): Promise<void> {
    return runQueue({
      name: this.name,
      queue: this.queue,
      workers: 5,
      reconcile: (key) => this.reconcileKey(key),
      signal,
      logger: this.logger,
    });
  }

  /** An HPA waits a sync period in the queue, held once however often it is added. */
  private enqueue(key: string): void {
    this.queue.addAfter(key, this.syncPeriodMs);
  }

  private async reconcileKey(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const hpa = this.hpaLister.get(namespace, name);
    if (!hpa) {
      this.recommender.forget(key);
      return;
    }
    try {
      await this.reconcileAutoscaler(hpa, key);
    } catch (err) {
      this.logger.warn(`${this.name}: reconcile failed`, { key, error: errorMessage(err) });
    } finally {
      // Requeued here too in case an add raced with this sync (see upstream's processNextWorkItem).
      this.enqueue(key);
      this.syncs++;
    }
  }

  private now(): string {
    return rfc3339(new Date(this.clock.now()));
  }

  /** setCondition: lastTransitionTime changes only with the status. */
  private setCondition(hpa: HorizontalPodAutoscaler, c: Omit<Condition, 'lastTransitionTime'>): void {
    const status = (hpa.status ??= { desiredReplicas: 0 });
    const conditions = (status.conditions ??= []);
    const old = conditions.find((x) => x.type === c.type);
    const next: Condition = {
      type: c.type,
      status: c.status,
      lastTransitionTime:
        old && old.status === c.status && old.lastTransitionTime ? old.lastTransitionTime : this.now(),
      ...(c.reason !== undefined ? { reason: c.reason } : {}),
      ...(c.message !== undefined ? { message: c.message } : {}),
    };
    if (old) conditions[conditions.indexOf(old)] = next;
    else conditions.push(next);
  }

  /**
   * The resource of `apiVersion`/`kind` that serves a `scale` subresource (the REST mapper
   * plus scaleForResourceMappings), from the API's discovery document of that version.
   * @throws Error when the version is not served or the kind has no scale subresource.
   */
  private async scaleResource(apiVersion: string | undefined, kind: string): Promise<ResourceRef> {
    const gv = apiVersion ?? '';
    const [group, version] = gv.includes('/') ? gv.split('/', 2) : ['', gv];
    if (!version) throw new Error(`no matches for kind "${kind}" in group "${group ?? ''}"`);
    const find = (list: APIResourceList | undefined) => {
      const names = new Set((list?.resources ?? []).map((r) => r.name));
      return (list?.resources ?? []).find(
        (r) => r.kind === kind && !r.name.includes('/') && names.has(`${r.name}/scale`),
      );
    };
    let found = find(this.mappings.get(gv));
    if (!found) {
      const path = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
      const list = await this.ctx.client.request<APIResourceList>('GET', path);
      this.mappings.set(gv, list);
      found = find(list);
    }
    if (!found) throw new Error(`no matches for kind "${kind}" in group "${group ?? ''}"`);
    return { group: group ?? '', version, resource: found.name, kind, namespaced: found.namespaced ?? true };
  }

  private async reconcileAutoscaler(shared: HorizontalPodAutoscaler, key: string): Promise<void> {
    const hpa = structuredClone(shared);
    const original = structuredClone(shared.status);
    const namespace = hpa.metadata.namespace ?? '';
    const target = hpa.spec.scaleTargetRef;
    const reference = `${target.kind}/${namespace}/${target.name}`;

    let scaleRef: ResourceRef;
    let scale: ScaleObject;
    try {
      scaleRef = await this.scaleResource(target.apiVersion, target.kind);
      scale = await this.ctx.client.get<ScaleObject>(scaleRef, namespace, target.name, {
        subresource: 'scale',
      });
    } catch (err) {
      this.recorder.event(hpa, 'Warning', 'FailedGetScale', errorMessage(err));
      this.setCondition(hpa, {
        type: 'AbleToScale',
        status: 'False',
        reason: 'FailedGetScale',
        message: `the HPA controller was unable to get the target's current scale: ${errorMessage(err)}`,
      });
      await this.updateStatusIfNeeded(original, hpa);
      throw new Error(`failed to query scale subresource for ${reference}: ${errorMessage(err)}`);
    }
    this.setCondition(hpa, {
      type: 'AbleToScale',
      status: 'True',
      reason: 'SucceededGetScale',
      message: "the HPA controller was able to get the target's current scale",
    });
    const current = scale.spec?.replicas ?? 0;
    const now = this.clock.now();
    this.recommender.recordInitial(key, current, now);
    const minReplicas = hpa.spec.minReplicas ?? 1;

    let desired = 0;
    let reason = '';
    let rescale = true;
    let metricStatuses: MetricStatus[] = [];
    if (current === 0 && minReplicas !== 0) {
      rescale = false;
      this.setCondition(hpa, {
        type: 'ScalingActive',
        status: 'False',
        reason: 'ScalingDisabled',
        message: 'scaling is disabled since the replica count of the target is zero',
      });
    } else if (current > hpa.spec.maxReplicas) {
      reason = 'Current number of replicas above Spec.MaxReplicas';
      desired = hpa.spec.maxReplicas;
    } else if (current < minReplicas) {
      reason = 'Current number of replicas below Spec.MinReplicas';
      desired = minReplicas;
    } else {
      const computed = await this.computeReplicasForMetrics(hpa, scale, current);
      metricStatuses = computed.statuses;
      if (computed.replicas === -1) {
        this.setStatus(hpa, current, hpa.status?.desiredReplicas ?? 0, metricStatuses, false);
        await this.updateStatusIfNeeded(original, hpa);
        this.recorder.event(hpa, 'Warning', 'FailedComputeMetricsReplicas', computed.error ?? '');
        throw new Error(
          `failed to compute desired number of replicas based on listed metrics for ${reference}: ${computed.error}`,
        );
      }
      let metricName = '';
      if (computed.replicas > desired) {
        desired = computed.replicas;
        metricName = computed.metric;
      }
      if (desired > current) reason = `${metricName} above target`;
      if (desired < current) reason = 'All metrics below target';
      const normalized = this.recommender.normalize(hpa, key, current, desired, minReplicas, now);
      for (const c of normalized.conditions) this.setCondition(hpa, c satisfies NormalizationCondition);
      desired = normalized.replicas;
      rescale = desired !== current;
    }

    if (rescale) {
      try {
        await this.ctx.client.update(
          scaleRef,
          { ...scale, spec: { ...scale.spec, replicas: desired } },
          { subresource: 'scale' },
        );
      } catch (err) {
        this.recorder.event(
          hpa,
          'Warning',
          'FailedRescale',
          `New size: ${desired}; reason: ${reason}; error: ${errorMessage(err)}`,
        );
        this.setCondition(hpa, {
          type: 'AbleToScale',
          status: 'False',
          reason: 'FailedUpdateScale',
          message: `the HPA controller was unable to update the target scale: ${errorMessage(err)}`,
        });
        this.setStatus(hpa, current, hpa.status?.desiredReplicas ?? 0, metricStatuses, false);
        await this.updateStatusIfNeeded(original, hpa);
        throw new Error(`failed to rescale ${reference}: ${errorMessage(err)}`);
      }
      this.setCondition(hpa, {
        type: 'AbleToScale',
        status: 'True',
        reason: 'SucceededRescale',
        message: `the HPA controller was able to update the target scale to ${desired}`,
      });
      this.recorder.event(hpa, 'Normal', 'SuccessfulRescale', `New size: ${desired}; reason: ${reason}`);
      this.recommender.storeScaleEvent(hpa, key, current, desired, now);
      this.logger.info(`${this.name}: rescaled`, { hpa: key, reference, from: current, to: desired, reason });
    } else {
      desired = current;
    }
    this.setStatus(hpa, current, desired, metricStatuses, rescale);
    await this.updateStatusIfNeeded(original, hpa);
  }

  /** computeReplicasForMetrics: the highest proposal; -1 when every metric (or one on a scale-down) failed. */
  private async computeReplicasForMetrics(
    hpa: HorizontalPodAutoscaler,
    scale: ScaleObject,
    current: number,
  ): Promise<{ replicas: number; metric: string; statuses: MetricStatus[]; error?: string }> {
    const selectorText = scale.status?.selector ?? '';
    if (selectorText === '') {
      this.recorder.event(hpa, 'Warning', 'SelectorRequired', 'selector is required');
      this.setCondition(hpa, {
        type: 'ScalingActive',
        status: 'False',
        reason: 'InvalidSelector',
        message: "the HPA target's scale is missing a selector",
      });
      return { replicas: -1, metric: '', statuses: [], error: 'selector is required' };
    }
    const specs = hpa.spec.metrics ?? [];
    const statuses: MetricStatus[] = specs.map(() => ({ type: '' }));
    let replicas = 0;
    let metric = '';
    let invalid = 0;
    let firstError: { reason: string; error: string } | undefined;
    for (const [i, spec] of specs.entries()) {
      const outcome = await this.computeReplicasForMetric(hpa, spec, current, selectorText);
      if (!outcome.ok) {
        this.recorder.event(hpa, 'Warning', outcome.reason, outcome.error);
        firstError ??= outcome;
        invalid++;
        continue;
      }
      statuses[i] = outcome.status;
      if (replicas === 0 || outcome.replicas > replicas) {
        replicas = outcome.replicas;
        metric = outcome.name;
      }
    }
    const error = firstError
      ? `invalid metrics (${invalid} invalid out of ${specs.length}), first error is: ${firstError.error}`
      : undefined;
    if (firstError && (invalid >= specs.length || replicas < current)) {
      this.setCondition(hpa, {
        type: 'ScalingActive',
        status: 'False',
        reason: firstError.reason,
        message: `the HPA was unable to compute the replica count: ${firstError.error}`,
      });
      return { replicas: -1, metric: '', statuses, error: error! };
    }
    this.setCondition(hpa, {
      type: 'ScalingActive',
      status: 'True',
      reason: 'ValidMetricFound',
      message: `the HPA was able to successfully calculate a replica count from ${metric}`,
    });
    return { replicas, metric, statuses, ...(error ? { error } : {}) };
  }

  /** One metric (computeStatusForResourceMetric); only Resource metrics can be computed here. */
  private async computeReplicasForMetric(
    hpa: HorizontalPodAutoscaler,
    spec: HorizontalPodAutoscalerMetricSpec,
    current: number,
    selectorText: string,
  ): Promise<MetricOutcome> {
    const source =
      spec.type === 'Resource'
        ? spec.resource
        : spec.type === 'ContainerResource'
          ? spec.containerResource
          : undefined;
    if (!source) {
      return {
        ok: false,
        reason: `FailedGet${spec.type}Metric`,
        error: `unable to get metric of source type ${spec.type}: k8ts serves no custom or external metrics API`,
      };
    }
    const resource = source.name;
    const t = source.target;
    const container = spec.type === 'ContainerResource' ? spec.containerResource?.container : undefined;
    const namespace = hpa.metadata.namespace ?? '';
    const fail = (err: unknown): MetricOutcome => ({
      ok: false,
      reason: container === undefined ? 'FailedGetResourceMetric' : 'FailedGetContainerResourceMetric',
      error:
        container === undefined
          ? `failed to get ${resource} resource metric value: ${errorMessage(err)}`
          : `failed to get ${resource} container metric value: ${errorMessage(err)}`,
    });
    const byValue = t.averageValue !== undefined;
    if (!byValue && t.averageUtilization === undefined)
      return fail(
        new Error(
          'invalid resource metric source: neither an average utilization target nor an average value (usage) target was set',
        ),
      );
    try {
      const selector = parseLabelSelector(selectorText);
      let sampled;
      try {
        sampled = await this.metrics.resourceMetric(resource, namespace, selectorText, container);
      } catch (err) {
        throw new Error(`unable to get metrics for resource ${resource}: ${errorMessage(err)}`);
      }
      const pods = this.podLister.namespace(namespace).list(selector);
      const result = resourceReplicas(
        current,
        byValue ? { averageValue: milliValue(t.averageValue!) } : { utilization: t.averageUtilization! },
        resource,
        pods,
        sampled,
        {
          tolerance: this.ctx.config.horizontalPodAutoscalerTolerance ?? DEFAULT_TOLERANCE,
          cpuInitializationPeriodMs:
            (this.ctx.config.horizontalPodAutoscalerCPUInitializationPeriodSeconds ??
              DEFAULT_CPU_INITIALIZATION_PERIOD_MS / 1000) * 1000,
          initialReadinessDelayMs:
            (this.ctx.config.horizontalPodAutoscalerInitialReadinessDelaySeconds ??
              DEFAULT_INITIAL_READINESS_DELAY_MS / 1000) * 1000,
          now: this.clock.now(),
        },
        milliValue,
        container,
      );
      const averageValue = milliQuantity(result.rawUsage);
      const measured = byValue
        ? { averageValue }
        : { averageUtilization: result.utilization ?? 0, averageValue };
      const what = container === undefined ? `${resource} resource` : `${resource} container resource`;
      return {
        ok: true,
        replicas: result.replicas,
        name: byValue ? what : `${what} utilization (percentage of request)`,
        status:
          container === undefined
            ? { type: 'Resource', resource: { name: resource, current: measured } }
            : {
                type: 'ContainerResource',
                containerResource: { name: resource, container, current: measured },
              },
      };
    } catch (err) {
      return fail(
        new Error(`failed to get ${resource} ${byValue ? 'usage' : 'utilization'}: ${errorMessage(err)}`),
      );
    }
  }

  /** setStatus: lastScaleTime moves on a rescale; conditions are kept. */
  private setStatus(
    hpa: HorizontalPodAutoscaler,
    current: number,
    desired: number,
    metrics: MetricStatus[],
    rescale: boolean,
  ): void {
    const old = hpa.status;
    const status: Status = { currentReplicas: current, desiredReplicas: desired };
    const lastScaleTime = rescale ? this.now() : old?.lastScaleTime;
    if (lastScaleTime) status.lastScaleTime = lastScaleTime;
    if (metrics.length > 0) status.currentMetrics = metrics;
    if (old?.conditions) status.conditions = old.conditions;
    hpa.status = status;
  }

  /** Writes the status when it changed (updateStatusIfNeeded). */
  private async updateStatusIfNeeded(
    original: Status | undefined,
    hpa: HorizontalPodAutoscaler,
  ): Promise<void> {
    if (JSON.stringify(original) === JSON.stringify(hpa.status)) return;
    await this.ctx.client.updateStatus(resources.horizontalpodautoscalers, hpa);
  }
}

/** resource.NewMilliQuantity(v, DecimalSI).String(): `250m`, `2`, `2M`, `104857600`. */
export function milliQuantity(milli: number): string {
  return formatQuantity(parseQuantity(`${Math.trunc(milli)}m`));
}
