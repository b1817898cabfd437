/**
 * The API server's request metrics (kube-apiserver's `apiserver_request_total` and
 * `apiserver_request_duration_seconds`), with the children of each label set kept after
 * first use.
 */
import client from 'prom-client';

/** The metric children one request updates. */
export interface RequestMetricChildren {
  count: { inc(): void };
  latency: { observe(seconds: number): void };
}

/** The request counter and latency histogram, registered in one prom-client registry. */
export class RequestMetrics {
  private readonly requestCount: client.Counter<'verb' | 'resource' | 'code'>;
  private readonly requestLatency: client.Histogram<'verb' | 'resource'>;
  private readonly byLabels = new Map<string, RequestMetricChildren>();

  constructor(registry: client.Registry) {
    this.requestCount = new client.Counter({
      name: 'apiserver_request_total',
      help: 'Requests by verb, resource and HTTP code.',
      labelNames: ['verb', 'resource', 'code'],
      registers: [registry],
    });
    this.requestLatency = new client.Histogram({
      name: 'apiserver_request_duration_seconds',
      help: 'Request latency in seconds by verb and resource (watches excluded).',
      labelNames: ['verb', 'resource'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
  }

  /**
   * The request counter and latency histogram children of one verb, resource and code,
   * kept after first use: prom-client validates and hashes label sets on every call
   * otherwise. (Bounded: verbs, served resources and HTTP codes are finite sets.)
   */
  of(verb: string, resource: string, code: number): RequestMetricChildren {
    const key = `${verb} ${resource} ${code}`;
    let m = this.byLabels.get(key);
    if (!m) {
      m = {
        count: this.requestCount.labels({ verb, resource, code: String(code) }),
        latency: this.requestLatency.labels({ verb, resource }),
      };
      this.byLabels.set(key, m);
    }
    return m;
  }
}
