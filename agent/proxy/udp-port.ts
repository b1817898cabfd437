/**
 * One UDP Service port on this node: the same listeners as a TCP port (NodePort,
 * clusterIP:port, LoadBalancer ingress), relaying datagrams to the ready endpoints.
 *
 * UDP has no connections, so the proxy keeps sessions as conntrack does for kube-proxy's
 * iptables rules: the first datagram from a client address:port picks an endpoint (the
 * Balancer's round-robin and ClientIP affinity, as for TCP) and opens a socket connected
 * to it; later datagrams of that client go through the same socket and the endpoint's
 * replies go back to the client from the listening address. A session ends after
 * `idleTimeoutMs` without traffic either way (conntrack's `nf_conntrack_udp_timeout`,
 * 30 s), when its endpoint goes away, or when the endpoint answers with ICMP port
 * unreachable (Node reports ECONNREFUSED on the connected socket): that endpoint is then
 * skipped by new sessions for REFUSED_BACKOFF_MS, so a client's retry reaches another
 * one while any is ready.
 */
import dgram from 'node:dgram';
import { isIPv6 } from 'node:net';
import type { Balancer } from './balancer.js';
import { endpointKey, type Endpoint } from './balancer.js';
import type { ProxyMetrics } from './metrics.js';
import {
  syncListeners,
  type BindFailure,
  isExternal,
  TrafficBalancers,
  type ListenAddress,
  type ServicePortConfig,
} from './service-port.js';

/** conntrack's default UDP timeout (seconds → ms). */
export const DEFAULT_UDP_IDLE_TIMEOUT_MS = 30_000;
/** How long an endpoint that refused a datagram is skipped by new sessions. */
const REFUSED_BACKOFF_MS = 5_000;

/** Settings of a UdpServicePortProxy: a TCP port's, and the session idle timeout. */
export interface UdpServicePortConfig extends Omit<ServicePortConfig, 'connectTimeoutMs'> {
  /** Milliseconds a session lives without traffic; default DEFAULT_UDP_IDLE_TIMEOUT_MS. */
  idleTimeoutMs?: number;
}

interface Session {
  socket: dgram.Socket;
  endpoint: Endpoint;
  timer: NodeJS.Timeout | undefined;
  /** Datagrams that arrived before the socket was connected. */
  pending: Buffer[] | undefined;
}

/**
 * The UDP twin of ServicePortProxy (same methods, so the Proxy drives both alike).
 * Closing a listener ends its sessions: replies leave through the listening socket.
 */
export class UdpServicePortProxy {
  readonly balancers: TrafficBalancers;
  private readonly cfg: UdpServicePortConfig;
  private readonly idleTimeoutMs: number;
  private readonly listeners = new Map<string, dgram.Socket>();
  /** Sessions by `<listen key>|<client ip>|<client port>`. */
  private readonly sessions = new Map<string, Session>();
  /** Endpoint key → clock ms until which new sessions skip it. */
  private readonly refused = new Map<string, number>();

  constructor(cfg: UdpServicePortConfig) {
    this.cfg = cfg;
    this.idleTimeoutMs = cfg.idleTimeoutMs ?? DEFAULT_UDP_IDLE_TIMEOUT_MS;
    this.balancers = new TrafficBalancers(cfg.clock);
  }

  /**
   * Points new sessions at `endpoints` (ClientIP affinity of `affinitySeconds`, 0 = none),
   * sessions from NodePort / load-balancer listeners at `external` when given; ends
   * sessions to endpoints no longer in their set.
   */
  setEndpoints(
    endpoints: readonly Endpoint[],
    affinitySeconds: number,
    external?: readonly Endpoint[],
  ): void {
    this.balancers.set(endpoints, affinitySeconds, external);
    const internalKeys = new Set(endpoints.map(endpointKey));
    const externalKeys = new Set((external ?? endpoints).map(endpointKey));
    for (const [key, s] of this.sessions) {
      const keys = isExternal(kindOfSession(key)) ? externalKeys : internalKeys;
      if (!keys.has(endpointKey(s.endpoint))) this.endSession(key);
    }
  }

  /**
   * Opens the listeners in `addresses` that are not open yet and closes the others.
   * @returns the ones that could not be opened (tried again on the next call).
   */
  setListenAddresses(addresses: readonly ListenAddress[]): Promise<BindFailure[]> {
    return syncListeners(
      this.listeners,
      addresses,
      (key, address) => this.listen(key, address),
      (key) => this.closeListener(key),
    );
  }

  /** The addresses listened on now (listen keys), sorted. */
  listening(): string[] {
    return [...this.listeners.keys()].sort();
  }

  /** Open sessions. */
  openConnections(): number {
    return this.sessions.size;
  }

  /** Closes every listener and session (UDP sessions cannot outlive their listener). */
  async close(_dropConnections: boolean): Promise<void> {
    for (const key of [...this.listeners.keys()]) this.closeListener(key);
  }

  private listen(key: string, address: ListenAddress): Promise<dgram.Socket> {
    const host = address.host ?? '0.0.0.0';
    const socket = dgram.createSocket({ type: isIPv6(host) ? 'udp6' : 'udp4' });
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => {
        socket.close();
        reject(err);
      };
      socket.once('error', onError);
      socket.bind({ address: host, port: address.port }, () => {
        socket.off('error', onError);
        socket.on('error', (err) =>
          this.cfg.logger.warn('proxy: UDP listener failed', {
            service: this.cfg.service,
            error: err.message,
          }),
        );
        socket.on('message', (msg, rinfo) => this.receive(key, socket, msg, rinfo));
        resolve(socket);
      });
    });
  }

  private closeListener(key: string): void {
    const socket = this.listeners.get(key);
    if (!socket) return;
    this.listeners.delete(key);
    for (const sessionKey of [...this.sessions.keys()]) {
      if (sessionKey.startsWith(`${key}|`)) this.endSession(sessionKey);
    }
    socket.close();
  }

  /** A datagram from a client: through its session, or a new one to the next endpoint. */
  private receive(listenKeyOf: string, listener: dgram.Socket, msg: Buffer, rinfo: dgram.RemoteInfo): void {
    const { service, portName, metrics } = this.cfg;
    const key = `${listenKeyOf}|${rinfo.address}|${rinfo.port}`;
    let session = this.sessions.get(key);
    if (!session) {
      const balancer = this.balancers.for(kindOfSession(listenKeyOf));
      const endpoint = this.pick(balancer, rinfo.address);
      if (!endpoint) {
        // As kube-proxy with no endpoints: the datagram is dropped.
        metrics.connectionErrors.inc({ service, port: portName });
        return;
      }
      metrics.connections.inc({ service, port: portName });
      balancer.connected(rinfo.address, endpoint);
      session = this.openSession(key, listener, rinfo, endpoint, metrics);
    }
    this.touch(key, session);
    metrics.bytes.inc({ service, direction: 'in' }, msg.length);
    if (session.pending) session.pending.push(msg);
    else session.socket.send(msg);
  }

  private openSession(
    key: string,
    listener: dgram.Socket,
    client: dgram.RemoteInfo,
    endpoint: Endpoint,
    metrics: ProxyMetrics,
  ): Session {
    const { service } = this.cfg;
    const socket = dgram.createSocket({ type: isIPv6(endpoint.ip) ? 'udp6' : 'udp4' });
    const session: Session = { socket, endpoint, timer: undefined, pending: [] };
    this.sessions.set(key, session);
    socket.on('message', (reply) => {
      if (this.sessions.get(key) !== session) return;
      this.touch(key, session);
      metrics.bytes.inc({ service, direction: 'out' }, reply.length);
      listener.send(reply, client.port, client.address);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNREFUSED') {
        this.refused.set(endpointKey(endpoint), this.cfg.clock.now() + REFUSED_BACKOFF_MS);
      }
      this.cfg.logger.debug('proxy: UDP session ended', {
        service,
        endpoint: endpointKey(endpoint),
        error: err.message,
      });
      this.endSession(key);
    });
    socket.connect(endpoint.port, endpoint.ip, () => {
      const queued = session.pending ?? [];
      session.pending = undefined;
      for (const msg of queued) socket.send(msg);
    });
    return session;
  }

  /** The endpoint of a new session: the Balancer's order, skipping recently refusing endpoints while another remains. */
  private pick(balancer: Balancer, clientIP: string): Endpoint | undefined {
    const candidates = balancer.candidates(clientIP);
    const now = this.cfg.clock.now();
    for (const [key, until] of this.refused) if (until <= now) this.refused.delete(key);
    return candidates.find((e) => !this.refused.has(endpointKey(e))) ?? candidates[0];
  }

  private touch(key: string, session: Session): void {
    clearTimeout(session.timer);
    session.timer = setTimeout(() => this.endSession(key), this.idleTimeoutMs);
    session.timer.unref();
  }

  private endSession(key: string): void {
    const session = this.sessions.get(key);
    if (!session) return;
    this.sessions.delete(key);
    clearTimeout(session.timer);
    try {
      session.socket.close();
    } catch {
      // Already closed.
    }
  }
}

/** The listener kind of a session or listener key (`kind/host/port[|client]`, service-port.ts's listenKey). */
function kindOfSession(key: string): ListenAddress['kind'] {
  return key.slice(0, key.indexOf('/')) as ListenAddress['kind'];
}
