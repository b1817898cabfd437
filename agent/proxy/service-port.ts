/**
 * One TCP Service port on this node: its listeners (the NodePort on the node address or
 * on all addresses, the clusterIP:port, a LoadBalancer ingress IP that is this node's),
 * its Balancer, and the connections it relays.
 *
 * A connection is accepted paused, the Balancer gives the order to dial endpoints in,
 * the first endpoint that accepts gets it (a refusing one is skipped), and the two
 * sockets are spliced (forwarder.ts). Endpoint changes only affect new connections:
 * connections to an endpoint that went away are left to finish, as conntrack keeps them
 * with kube-proxy's iptables rules.
 */
import net from 'node:net';
import type { Logger } from '../../api/log.js';
import type { Clock } from '../../api/clock.js';
import { Balancer, type Endpoint } from './balancer.js';
import { dialFirst, splice } from './forwarder.js';
import type { ProxyMetrics } from './metrics.js';

/** One address a Service port listens on. */
export interface ListenAddress {
  /** An IP, or undefined for all addresses (a NodePort without a node IP). */
  host: string | undefined;
  port: number;
  /** What it is, for logs and events. */
  kind: 'NodePort' | 'ClusterIP' | 'LoadBalancer';
}

export const listenKey = (a: ListenAddress): string => `${a.kind}/${a.host ?? '*'}/${a.port}`;

/** Whether traffic arriving on a listener of `kind` is external (externalTrafficPolicy) or internal (internalTrafficPolicy). */
export const isExternal = (kind: ListenAddress['kind']): boolean => kind !== 'ClusterIP';

/**
 * The two balancers of a Service port: one for traffic to the ClusterIP (internal, ruled by
 * `internalTrafficPolicy`) and one for traffic to a NodePort or load-balancer address
 * (external, ruled by `externalTrafficPolicy`). With both policies Cluster they hold the
 * same endpoints; with Local, only the endpoints on this node (kube-proxy's topology
 * filter, pkg/proxy/topology.go).
 */
export class TrafficBalancers {
  readonly internal: Balancer;
  readonly external: Balancer;

  constructor(clock: Clock) {
    this.internal = new Balancer({ clock });
    this.external = new Balancer({ clock });
  }

  /** Sets both: `external` defaults to `internal`'s endpoints. */
  set(
    internal: readonly Endpoint[],
    affinitySeconds: number,
    external: readonly Endpoint[] = internal,
  ): void {
    for (const [b, eps] of [
      [this.internal, internal],
      [this.external, external],
    ] as const) {
      b.setAffinityTimeout(affinitySeconds);
      b.setEndpoints(eps);
    }
  }

  /** The balancer for a listener of `kind`. */
  for(kind: ListenAddress['kind']): Balancer {
    return isExternal(kind) ? this.external : this.internal;
  }
}

/**
 * Brings `open` (listeners by listenKey) in line with `addresses`: closes the ones no
 * longer wanted with `close(key)` (which removes them from `open`), opens the missing ones
 * with `listen` and records them. Shared by the TCP and UDP Service ports.
 * @returns the addresses that could not be opened, with the errno code (tried again on the next call).
 */
export async function syncListeners<T>(
  open: Map<string, T>,
  addresses: readonly ListenAddress[],
  listen: (key: string, address: ListenAddress) => Promise<T>,
  close: (key: string) => void,
): Promise<BindFailure[]> {
  const wanted = new Map(addresses.map((a) => [listenKey(a), a]));
  for (const key of [...open.keys()]) if (!wanted.has(key)) close(key);
  const failures: BindFailure[] = [];
  for (const [key, address] of wanted) {
    if (open.has(key)) continue;
    try {
      open.set(key, await listen(key, address));
    } catch (err) {
      failures.push({ address, error: (err as NodeJS.ErrnoException).code ?? String(err) });
    }
  }
  return failures;
}

/** A listener that could not be opened (port taken, address missing). */
export interface BindFailure {
  address: ListenAddress;
  error: string;
}

/** Settings of a ServicePortProxy. */
export interface ServicePortConfig {
  /** `namespace/name`. */
  service: string;
  /** The port's name, or its number when unnamed (metrics label). */
  portName: string;
  clock: Clock;
  metrics: ProxyMetrics;
  logger: Pick<Logger, 'debug' | 'info' | 'warn'>;
  /** Milliseconds an endpoint gets to accept before the next is tried. */
  connectTimeoutMs: number;
}

export class ServicePortProxy {
  readonly balancers: TrafficBalancers;
  private readonly cfg: ServicePortConfig;
  private readonly listeners = new Map<string, net.Server>();
  private readonly connections = new Set<net.Socket>();
  private closing = false;
  /** Closed: the Service port went away and its metric series with it. */
  private closed = false;

  constructor(cfg: ServicePortConfig) {
    this.cfg = cfg;
    this.balancers = new TrafficBalancers(cfg.clock);
  }

  /**
   * Points new connections at `endpoints`, with ClientIP affinity of `affinitySeconds` (0 =
   * none); connections to a NodePort or load-balancer address at `external` when given
   * (externalTrafficPolicy Local).
   */
  setEndpoints(
    endpoints: readonly Endpoint[],
    affinitySeconds: number,
    external?: readonly Endpoint[],
  ): void {
    this.balancers.set(endpoints, affinitySeconds, external);
  }

  /**
   * Opens the listeners in `addresses` that are not open yet and closes the others.
   * @returns the ones that could not be opened (they are tried again on the next call).
   */
  setListenAddresses(addresses: readonly ListenAddress[]): Promise<BindFailure[]> {
    return syncListeners(
      this.listeners,
      addresses,
      (_key, address) => this.listen(address),
      (key) => {
        this.listeners.get(key)?.close();
        this.listeners.delete(key);
      },
    );
  }

  /** The addresses listened on now (`host:port`, `*` for all addresses), sorted. */
  listening(): string[] {
    return [...this.listeners.keys()].sort();
  }

  /** Open relayed connections. */
  openConnections(): number {
    return this.connections.size;
  }

  /**
   * Closes every listener. With `dropConnections` (the proxy stops) the open connections
   * are destroyed as well; otherwise (the Service port went away) they may finish.
   */
  async close(dropConnections: boolean): Promise<void> {
    const servers = [...this.listeners.values()];
    this.listeners.clear();
    this.closed = true;
    // server.close() releases the listening socket at once, but calls back only when the
    // server's last connection has ended: only a close that ends them waits for that.
    const closed = servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())));
    if (!dropConnections) return;
    this.closing = true;
    for (const c of this.connections) c.destroy();
    await Promise.all(closed);
  }

  private listen(address: ListenAddress): Promise<net.Server> {
    const balancer = this.balancers.for(address.kind);
    const server = net.createServer({ allowHalfOpen: true, pauseOnConnect: true, noDelay: true }, (socket) =>
      this.accept(socket, balancer),
    );
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => {
        server.close();
        reject(err);
      };
      server.once('error', onError);
      server.listen({ host: address.host, port: address.port, backlog: 1024 }, () => {
        server.off('error', onError);
        server.on('error', (err) =>
          this.cfg.logger.warn('proxy: listener failed', { service: this.cfg.service, error: err.message }),
        );
        resolve(server);
      });
    });
  }

  private accept(client: net.Socket, balancer: Balancer): void {
    const { service, portName, metrics } = this.cfg;
    metrics.connections.inc({ service, port: portName });
    this.track(client);
    client.on('error', () => client.destroy());
    // The peer address costs a system call: asked only when affinity needs it.
    const clientIP = balancer.affinityEnabled() ? (client.remoteAddress ?? '') : '';
    dialFirst(
      balancer.candidates(clientIP),
      this.cfg.connectTimeoutMs,
      (socket) => this.track(socket),
      (err, socket, endpoint) => {
        if (err || !socket || !endpoint) {
          metrics.connectionErrors.inc({ service, port: portName });
          this.cfg.logger.debug('proxy: no endpoint accepted a connection', {
            service,
            port: portName,
            error: err?.message,
          });
          // As kube-proxy with no endpoints (REJECT): the client sees the connection end at once.
          if (!client.destroyed) client.resetAndDestroy();
          return;
        }
        if (client.destroyed) {
          socket.destroy();
          return;
        }
        balancer.connected(clientIP, endpoint);
        splice(client, socket, ({ bytesIn, bytesOut }) => {
          // A connection that outlived its Service port must not bring its series back.
          if (this.closed) return;
          metrics.bytes.inc({ service, direction: 'in' }, bytesIn);
          metrics.bytes.inc({ service, direction: 'out' }, bytesOut);
        });
      },
    );
  }

  /** Counts `socket` among the open connections until it closes (close(true) destroys them). */
  private track(socket: net.Socket): void {
    if (this.closing) {
      socket.destroy();
      return;
    }
    this.connections.add(socket);
    socket.once('close', () => this.connections.delete(socket));
  }
}
