/**
 * Where the HPA controller reads pod resource usage: the resource metrics API
 * (`metrics.k8s.io/v1beta1` PodMetrics, served by the API server as metrics-server serves
 * it; control/apiserver/resource-metrics.ts), read as an API client (Kubernetes'
 * pkg/controller/podautoscaler/metrics/client.go, resourceMetricsClient).
 */
import type { RestClient } from '../../../api/client/rest.js';
import { parseQuantity } from '../../../api/meta/quantity.js';
import type { PodMetric, PodMetricsInfo } from './replica-calculator.js';

/** The resource usage of a namespace's pods matching a selector. */
export interface MetricsSource {
  /**
   * Each matching pod's summed container usage of `resource` (`cpu`, `memory`) in
   * milli-units (millicores, milli-bytes), with the sample's time and window; with
   * `container`, that container's usage only (pods without it are left out).
   * @throws Error when the metrics API cannot be read or has no pods
   *   (`no metrics returned from resource metrics API`).
   */
  resourceMetric(
    resource: string,
    namespace: string,
    selector: string,
    container?: string,
  ): Promise<PodMetricsInfo>;
}

interface PodMetricsList {
  items?: {
    metadata?: { name?: string };
    timestamp?: string;
    window?: string;
    containers?: { name?: string; usage?: Record<string, string> }[];
  }[];
}

/** A Go duration as metrics-server writes a window (`1.002s`, `30s`, `1m0s`), in milliseconds. */
function durationMs(s: string | undefined): number {
  if (!s) return 0;
  let ms = 0;
  for (const m of s.matchAll(/([0-9.]+)(h|ms|m|s)/g)) {
    const v = Number(m[1]);
    ms += m[2] === 'h' ? v * 3_600_000 : m[2] === 'm' ? v * 60_000 : m[2] === 's' ? v * 1000 : v;
  }
  return ms;
}

/** A quantity in milli-units (Quantity.MilliValue). */
export function milliValue(q: string): number {
  return Number(parseQuantity(q).milliValue());
}

/** The MetricsSource over the API server's `metrics.k8s.io/v1beta1` (GetResourceMetric). */
export class RestMetricsSource implements MetricsSource {
  constructor(private readonly client: RestClient) {}

  async resourceMetric(
    resource: string,
    namespace: string,
    selector: string,
    container?: string,
  ): Promise<PodMetricsInfo> {
    const path = `/apis/metrics.k8s.io/v1beta1/namespaces/${encodeURIComponent(namespace)}/pods`;
    const list = await this.client.request<PodMetricsList>('GET', path, {
      query: { labelSelector: selector },
    });
    const items = list.items ?? [];
    if (items.length === 0) throw new Error('no metrics returned from resource metrics API');
    const out: PodMetricsInfo = new Map();
    for (const item of items) {
      let value = 0;
      // A pod counts only when every container reports the resource (getPodMetrics), or,
      // for one container, when that container does (getContainerMetrics).
      let complete = container === undefined || (item.containers ?? []).some((c) => c.name === container);
      for (const c of item.containers ?? []) {
        if (container !== undefined && c.name !== container) continue;
        const q = c.usage?.[resource];
        if (q === undefined) {
          complete = false;
          break;
        }
        value += milliValue(q);
      }
      if (!complete || !item.metadata?.name) continue;
      const metric: PodMetric = {
        value,
        timestamp: Date.parse(item.timestamp ?? '') || 0,
        windowMs: durationMs(item.window),
      };
      out.set(item.metadata.name, metric);
    }
    return out;
  }
}
