/**
 * The node's pod network: the part a CNI plugin (kubenet, flannel's bridge) plays for the
 * kubelet on one host. The node IPAM controller of the control process gives each Node a
 * `spec.podCIDR`; once it is there, the agent asks the runtime for a bridge network with
 * that subnet, named `k8ts-<nodeName>` and labelled `io.k8ts.node=<nodeName>` (so that
 * cleanup finds it and other agents on the host leave it alone). Pod sandboxes join it and
 * get their pod IPs from it.
 *
 * Until the network exists, `error` says why, in the words the kubelet uses for a
 * network plugin that is not ready, and the node reports Ready=False. The network is
 * checked again every `resyncMs` (it may have been removed, or the runtime restarted);
 * failures are retried with backoff (1 s doubling to 30 s).
 */
import type { Logger } from '../../api/log.js';
import { realClock, type Clock } from '../../api/clock.js';
import type { NetworkService } from '../../cri/index.js';

/** The label that marks what belongs to a node (networks, containers). */
export const NODE_LABEL = 'io.k8ts.node';

/** The name of `nodeName`'s pod network. */
export function podNetworkName(nodeName: string): string {
  return `k8ts-${nodeName}`;
}

/** Settings of a PodNetworkManager. */
export interface PodNetworkManagerConfig {
  runtime: Pick<NetworkService, 'ensurePodNetwork'>;
  nodeName: string;
  logger: Logger;
  clock?: Clock;
  /** Milliseconds between checks that the network still exists; default 60 000. */
  resyncMs?: number;
  /** Called each time the network goes from not ready to ready. */
  onReady?: () => void;
  /**
   * Wait for setMTU() before making the network (the cross-host backend decides the pod
   * MTU; cross-host.ts). Default false: the runtime's default MTU, at once.
   */
  awaitMTU?: boolean;
}

/** Creates and keeps the node's pod network (see the file comment). */
export class PodNetworkManager {
  /** The network's name, handed to the pod sandboxes. */
  readonly name: string;
  private readonly cfg: PodNetworkManagerConfig;
  private readonly clock: Clock;
  private podCIDR: string | undefined;
  private mtuKnown: boolean;
  private mtu: number | undefined;
  private lastError: string | undefined;
  private isReady = false;
  private wake: (() => void) | undefined;
  private readonly readyWaiters = new Set<() => void>();

  constructor(cfg: PodNetworkManagerConfig) {
    if (!cfg.nodeName) throw new Error('PodNetworkManager: nodeName is required');
    this.cfg = cfg;
    this.clock = cfg.clock ?? realClock;
    this.name = podNetworkName(cfg.nodeName);
    this.mtuKnown = !cfg.awaitMTU;
  }

  /** The MTU pod interfaces get (undefined: the runtime's default); a change is acted on at once. */
  setMTU(mtu: number | undefined): void {
    if (this.mtuKnown && mtu === this.mtu) return;
    this.mtuKnown = true;
    this.mtu = mtu;
    this.wake?.();
  }

  /** The node's spec.podCIDR as last seen (from the agent's Node informer); a change is acted on at once. */
  setPodCIDR(cidr: string | undefined): void {
    if (!cidr || cidr === this.podCIDR) return;
    this.podCIDR = cidr;
    this.isReady = false;
    this.wake?.();
  }

  /** True while the network exists with the node's pod CIDR. */
  get ready(): boolean {
    return this.isReady;
  }

  /**
   * Why the network is not usable, as the kubelet words a network plugin that is not
   * ready (this is a part of the Ready condition's message); undefined when ready.
   */
  get error(): string | undefined {
    if (this.isReady) return undefined;
    const why = !this.podCIDR
      ? "waiting for the node's spec.podCIDR"
      : !this.mtuKnown
        ? 'waiting for the cluster network configuration'
        : `pod network ${this.name} (${this.podCIDR}): ${this.lastError ?? 'not created yet'}`;
    return `container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:${why}`;
  }

  /**
   * Resolves with the network's name once it is ready, or undefined if `signal` aborts
   * first.
   */
  whenReady(signal: AbortSignal): Promise<string | undefined> {
    if (this.isReady) return Promise.resolve(this.name);
    return new Promise((resolve) => {
      const done = () => {
        this.readyWaiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve(this.isReady ? this.name : undefined);
      };
      this.readyWaiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Keeps the network until `signal` aborts; never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    let backoffMs = 1_000;
    while (!signal.aborted) {
      let delay = this.cfg.resyncMs ?? 60_000;
      const cidr = this.podCIDR;
      const mtu = this.mtu;
      if (cidr === undefined || !this.mtuKnown) {
        delay = Infinity;
      } else {
        try {
          await this.cfg.runtime.ensurePodNetwork({
            name: this.name,
            subnet: cidr,
            labels: { [NODE_LABEL]: this.cfg.nodeName },
            ...(mtu !== undefined ? { mtu } : {}),
          });
          backoffMs = 1_000;
          this.lastError = undefined;
          if (!this.isReady && cidr === this.podCIDR) {
            this.isReady = true;
            this.cfg.logger.info('pod network ready', {
              node: this.cfg.nodeName,
              network: this.name,
              podCIDR: cidr,
              ...(mtu !== undefined ? { mtu } : {}),
            });
            for (const w of [...this.readyWaiters]) w();
            this.cfg.onReady?.();
          }
        } catch (err) {
          if (signal.aborted) break;
          this.isReady = false;
          this.lastError = (err as Error).message;
          delay = backoffMs;
          backoffMs = Math.min(backoffMs * 2, 30_000);
          this.cfg.logger.warn('unable to set up the pod network, will retry', {
            node: this.cfg.nodeName,
            network: this.name,
            podCIDR: cidr,
            error: this.lastError,
            retryInMs: delay,
          });
        }
      }
      if (cidr !== this.podCIDR || mtu !== this.mtu) continue;
      await this.pause(delay, signal);
    }
  }

  /** Waits `ms` (Infinity: until woken) or until setPodCIDR() wakes it or `signal` aborts. */
  private async pause(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const woken = new AbortController();
    const abort = () => woken.abort();
    signal.addEventListener('abort', abort, { once: true });
    this.wake = abort;
    if (ms === Infinity) {
      await new Promise<void>((resolve) =>
        woken.signal.addEventListener('abort', () => resolve(), { once: true }),
      );
    } else {
      await this.clock.sleep(ms, woken.signal);
    }
    this.wake = undefined;
    signal.removeEventListener('abort', abort);
  }
}
