/**
 * The proxy's Prometheus metrics, in a registry of its own (several proxies may live in
 * one test process) that the agent serves next to its other metrics:
 *
 * - `k8ts_proxy_connections_total{service,port}`: connections accepted (UDP: sessions opened), per Service port
 *   (`service` = `namespace/name`, `port` = the port's name, or its number when unnamed);
 * - `k8ts_proxy_connection_errors_total{service,port}`: connections closed because no
 *   endpoint accepted them;
 * - `k8ts_proxy_bytes_total{service,direction}`: bytes relayed, `in` = client → endpoint,
 *   `out` = endpoint → client, counted when a connection closes;
 * - `k8ts_proxy_endpoints{service}`: endpoints connections currently go to (the most of
 *   any of its ports);
 * - `k8ts_proxy_sync_proxy_rules_duration_seconds`: time of one Service's sync (as
 *   kube-proxy's sync_proxy_rules_duration_seconds);
 * - `k8ts_proxy_network_programming_duration_seconds`: nftables and iptables modes, from an endpoint
 *   change (the EndpointSlice's `endpoints.kubernetes.io/last-change-trigger-time`) to its
 *   rules being live in the kernel (kube-proxy's network_programming_duration_seconds, its SLI);
 *   changes from before the proxy was made are not counted (KernelMode.noteTrigger);
 * - `k8ts_proxy_nftables_writes_total{kind}`: nftables transactions written, `full` or
 *   `partial`, and `k8ts_proxy_nftables_write_errors_total`;
 * - `k8ts_proxy_iptables_restores_total{kind}`: iptables mode's `iptables-restore` runs,
 *   `full` or `partial`, and `k8ts_proxy_iptables_restore_failures_total` (kube-proxy's
 *   sync_proxy_rules_iptables_restore_failures_total).
 */
import client from 'prom-client';

export class ProxyMetrics {
  readonly registry = new client.Registry();
  readonly connections = new client.Counter({
    name: 'k8ts_proxy_connections_total',
    help: 'TCP connections accepted and UDP sessions opened, by Service and port.',
    labelNames: ['service', 'port'] as const,
    registers: [this.registry],
  });
  readonly connectionErrors = new client.Counter({
    name: 'k8ts_proxy_connection_errors_total',
    help: 'Connections closed because no endpoint accepted them, by Service and port.',
    labelNames: ['service', 'port'] as const,
    registers: [this.registry],
  });
  readonly bytes = new client.Counter({
    name: 'k8ts_proxy_bytes_total',
    help: 'Bytes relayed, by Service and direction (in: client to endpoint, out: endpoint to client).',
    labelNames: ['service', 'direction'] as const,
    registers: [this.registry],
  });
  readonly endpoints = new client.Gauge({
    name: 'k8ts_proxy_endpoints',
    help: 'Endpoints connections go to, by Service.',
    labelNames: ['service'] as const,
    registers: [this.registry],
  });
  readonly syncDuration = new client.Histogram({
    name: 'k8ts_proxy_sync_proxy_rules_duration_seconds',
    help: 'Seconds one Service sync took.',
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [this.registry],
  });

  readonly networkProgramming = new client.Histogram({
    name: 'k8ts_proxy_network_programming_duration_seconds',
    help: 'Seconds from an endpoint change to its rules being live in the kernel (nftables and iptables modes).',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    registers: [this.registry],
  });
  readonly nftWrites = new client.Counter({
    name: 'k8ts_proxy_nftables_writes_total',
    help: 'nftables transactions written (kind: full or partial).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly nftWriteErrors = new client.Counter({
    name: 'k8ts_proxy_nftables_write_errors_total',
    help: 'nftables transactions the kernel refused (each is followed by a full rewrite).',
    registers: [this.registry],
  });

  readonly iptablesRestores = new client.Counter({
    name: 'k8ts_proxy_iptables_restores_total',
    help: 'iptables-restore runs of iptables mode (kind: full or partial).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly iptablesRestoreFailures = new client.Counter({
    name: 'k8ts_proxy_iptables_restore_failures_total',
    help: 'iptables-restore runs that failed (each is followed by a full write).',
    registers: [this.registry],
  });

  /** Removes every series of a Service that went away. */
  forgetService(service: string): void {
    this.endpoints.remove({ service });
    for (const direction of ['in', 'out']) this.bytes.remove({ service, direction });
  }
}
