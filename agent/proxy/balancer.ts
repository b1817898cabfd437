/**
 * The load balancer of one Service port: which endpoint a new TCP connection tries first,
 * and which it falls back to (kube-proxy's userspace LoadBalancerRR: round-robin over the
 * endpoints, ClientIP session affinity with a timeout, and an affinity reset when the
 * sticky endpoint refuses).
 *
 * Pure bookkeeping, no sockets: the forwarder asks `candidates(clientIP)` for an order to
 * dial in, and reports the one that accepted with `connected()`.
 */
import type { Clock } from '../../api/clock.js';

/** One backend: an endpoint address and the resolved target port. */
export interface Endpoint {
  ip: string;
  port: number;
}

/** `ip:port` (IPv6 in brackets), the identity of an endpoint. */
export function endpointKey(e: Endpoint): string {
  return e.ip.includes(':') ? `[${e.ip}]:${e.port}` : `${e.ip}:${e.port}`;
}

/** Settings of a Balancer. */
export interface BalancerConfig {
  clock: Clock;
  /**
   * `sessionAffinityConfig.clientIP.timeoutSeconds` when `sessionAffinity: ClientIP`
   * (Kubernetes' default 10800 s); 0 or omitted: no affinity.
   */
  affinityTimeoutSeconds?: number;
}

interface Affinity {
  key: string;
  /** Clock ms of the last connection that used it. */
  lastUsed: number;
}

/**
 * Round-robin with optional ClientIP affinity. Endpoint changes keep the rotation going
 * (no restart at the first endpoint) and drop affinities to endpoints that went away.
 */
export class Balancer {
  private endpoints: Endpoint[] = [];
  private next = 0;
  private readonly clock: Clock;
  private affinityMs: number;
  private readonly affinity = new Map<string, Affinity>();

  constructor(cfg: BalancerConfig) {
    if (!cfg.clock) throw new Error('Balancer: clock is required');
    this.clock = cfg.clock;
    this.affinityMs = (cfg.affinityTimeoutSeconds ?? 0) * 1000;
  }

  /** The endpoints connections go to now, in a stable order (sorted by the caller or not). */
  setEndpoints(endpoints: readonly Endpoint[]): void {
    this.endpoints = [...endpoints];
    const keys = new Set(this.endpoints.map(endpointKey));
    for (const [client, a] of this.affinity) if (!keys.has(a.key)) this.affinity.delete(client);
    if (this.next >= this.endpoints.length) this.next = 0;
  }

  /** Seconds of ClientIP affinity (0 = none); a change drops the recorded affinities. */
  setAffinityTimeout(seconds: number): void {
    const ms = seconds * 1000;
    if (ms === this.affinityMs) return;
    this.affinityMs = ms;
    this.affinity.clear();
  }

  /** Whether ClientIP affinity is on (a timeout above 0). */
  affinityEnabled(): boolean {
    return this.affinityMs > 0;
  }

  /** The current endpoints. */
  list(): readonly Endpoint[] {
    return this.endpoints;
  }

  /**
   * The order in which a new connection from `clientIP` dials endpoints: its affinity
   * endpoint first (when affinity is on and has not expired), then the round-robin order
   * from the next position; every endpoint once. Advances the rotation by one.
   * Empty when there are no endpoints.
   */
  candidates(clientIP: string): Endpoint[] {
    const n = this.endpoints.length;
    if (n === 0) return [];
    const start = this.next;
    this.next = (this.next + 1) % n;
    const order = Array.from({ length: n }, (_, i) => this.endpoints[(start + i) % n]!);
    const sticky = this.stickyKey(clientIP);
    if (sticky === undefined) return order;
    const i = order.findIndex((e) => endpointKey(e) === sticky);
    if (i < 0) return order;
    // The rotation was not used for this connection: give the position back.
    this.next = start;
    return i === 0 ? order : [order[i]!, ...order.slice(0, i), ...order.slice(i + 1)];
  }

  /**
   * Records that `endpoint` took a connection from `clientIP`: with affinity on, that
   * client sticks to it until `timeoutSeconds` pass without a connection.
   */
  connected(clientIP: string, endpoint: Endpoint): void {
    if (this.affinityMs <= 0) return;
    this.affinity.set(clientIP, { key: endpointKey(endpoint), lastUsed: this.clock.now() });
  }

  /** The client's affinity endpoint key if affinity is on and not expired (expired ones are dropped). */
  private stickyKey(clientIP: string): string | undefined {
    if (this.affinityMs <= 0) return undefined;
    const a = this.affinity.get(clientIP);
    if (!a) return undefined;
    if (this.clock.now() - a.lastUsed > this.affinityMs) {
      this.affinity.delete(clientIP);
      return undefined;
    }
    return a.key;
  }
}
