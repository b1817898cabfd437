/**
 * The cluster DNS server's Prometheus metrics, in a registry of its own (as the proxy's,
 * proxy/metrics.ts), named after CoreDNS's so that its dashboards read them:
 *
 * - `k8ts_dns_requests_total{proto}`: queries received, `udp` or `tcp` (coredns_dns_requests_total);
 * - `k8ts_dns_responses_total{rcode}`: responses sent by rcode (coredns_dns_responses_total);
 * - `k8ts_dns_cache_hits_total{type}` / `k8ts_dns_cache_misses_total`: the forwarder's cache
 *   (`type` = success or denial, coredns_cache_hits_total), read from it at scrape time;
 * - `k8ts_dns_records`: names in the records index.
 */
import client from 'prom-client';

/** Metrics of one server. */
export class DnsMetrics {
  readonly registry = new client.Registry();
  readonly requests = new client.Counter({
    name: 'k8ts_dns_requests_total',
    help: 'DNS queries received, by transport.',
    labelNames: ['proto'] as const,
    registers: [this.registry],
  });
  readonly responses = new client.Counter({
    name: 'k8ts_dns_responses_total',
    help: 'DNS responses sent, by rcode.',
    labelNames: ['rcode'] as const,
    registers: [this.registry],
  });
  /** Children made once: a labelled inc() per query is then a property increment. */
  readonly udp = this.requests.labels('udp');
  readonly tcp = this.requests.labels('tcp');
  private readonly byRcode = new Map<string, client.Counter.Internal>();

  /**
   * @param read what the forwarder's cache and the index hold now, read at scrape time.
   */
  constructor(read: () => { hits: number; misses: number; records: number }) {
    new client.Gauge({
      name: 'k8ts_dns_cache_hits_total',
      help: 'Forwarded questions answered from the cache.',
      registers: [this.registry],
      collect() {
        this.set(read().hits);
      },
    });
    new client.Gauge({
      name: 'k8ts_dns_cache_misses_total',
      help: 'Forwarded questions sent upstream.',
      registers: [this.registry],
      collect() {
        this.set(read().misses);
      },
    });
    new client.Gauge({
      name: 'k8ts_dns_records',
      help: 'Names in the records index.',
      registers: [this.registry],
      collect() {
        this.set(read().records);
      },
    });
  }

  /** Counts one response with `rcode` (NOERROR, NXDOMAIN, ...). */
  response(rcode: string): void {
    let c = this.byRcode.get(rcode);
    if (!c) this.byRcode.set(rcode, (c = this.responses.labels(rcode)));
    c.inc();
  }
}
