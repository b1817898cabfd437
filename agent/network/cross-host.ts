/**
 * The pod network between hosts, in flannel's model (its kube subnet manager with the
 * vxlan and host-gw backends). The control process gives each Node a `spec.podCIDR` and
 * writes the one cluster-wide setting, `kube-system/kube-flannel-cfg` (api/netconf.ts);
 * each agent then, in a loop:
 *
 *   read net-conf.json ──► backend none: nothing in the kernel (pods reach only their host)
 *        │
 *        ▼
 *   own podCIDR known? ──► vxlan: ensure the device k8ts.1 (vxlan.ts) · host-gw: no device
 *        │
 *        ▼
 *   firewall (firewall.ts) ─► publish public-ip / backend-type / backend-data on own Node
 *        │
 *        ▼
 *   peers from the Node list (peers.ts) ─► neighbours, FDB, routes (vxlan.ts, host-gw.ts)
 *
 * The loop runs again on every Node event (a handler only wakes it) and every `resyncMs`,
 * reading the whole Node list and the kernel each time (level-triggered: a missed event, a
 * restarted agent, a rebooted host all end in the same state). What already agrees is not
 * touched, so a restart drops no connection. A deleted Node's entries go at the next run.
 *
 * Until the first run has succeeded `error` says why (in the Ready condition), and the
 * pod network (pod-network.ts) waits for `podMTU`, which depends on the backend.
 */
import type { Logger } from '../../api/log.js';
import { realClock, type Clock } from '../../api/clock.js';
import { ApiStatusError } from '../../api/client/errors.js';
import { SharedInformer } from '../../api/client/informer.js';
import { resources } from '../../api/client/resource.js';
import type { RestClient } from '../../api/client/rest.js';
import {
  DEFAULT_VNI,
  DEFAULT_VXLAN_PORT,
  NET_CONF_CONFIGMAP,
  NET_CONF_KEY,
  NODE_ANNOTATIONS,
  parseNetConf,
  type NetConf,
} from '../../api/netconf.js';
import type { ConfigMap, Node } from '../../api/types.js';
import { removeCrossHostState } from './cleanup.js';
import { ensureFirewall } from './firewall.js';
import { runHostCommand, type HostCommand } from './host-command.js';
import { syncHostGw, type RefusedPeer } from './host-gw.js';
import { peersOf } from './peers.js';
import { ensureVxlanDevice, interfaceWithAddress, removeVxlanDevice, syncVxlanPeers } from './vxlan.js';

/** Settings of a CrossHostNetwork. */
export interface CrossHostNetworkConfig {
  client: RestClient;
  nodeName: string;
  /** The node's public IP: where other nodes send its pods' traffic (its InternalIP). */
  nodeIP: string;
  logger: Pick<Logger, 'info' | 'warn' | 'debug'>;
  clock?: Clock;
  /** The kernel's programs; default the real `ip`, `bridge`, `iptables`. */
  host?: HostCommand;
  /** Milliseconds between full runs; default 30 000 (flannel and kube-proxy resync alike). */
  resyncMs?: number;
  /** Told once per refused peer and reason (the agent records an Event on the Node). */
  onPeerRefused?: (refused: RefusedPeer) => void;
  /** Told each time the configuration is known or changes (the pod network's MTU follows it). */
  onConfigured?: (conf: NetConf, podMTU: number | undefined) => void;
}

/** The setting when the control process publishes none (an older server): single-host pods. */
const NO_CONF: NetConf = { network: '', backend: 'none', vni: DEFAULT_VNI, port: DEFAULT_VXLAN_PORT };

/** What of a Node the pod network depends on, as a comparable string. */
function networkFacts(n: Node): string {
  const a = n.metadata?.annotations ?? {};
  return JSON.stringify([
    n.spec?.podCIDR,
    n.metadata?.deletionTimestamp,
    a[NODE_ANNOTATIONS.backendType],
    a[NODE_ANNOTATIONS.backendData],
    a[NODE_ANNOTATIONS.publicIP],
    n.status?.addresses?.find((x) => x.type === 'InternalIP')?.address,
  ]);
}

/** Keeps this node's part of the cluster's pod network (see the file comment). */
export class CrossHostNetwork {
  private readonly cfg: CrossHostNetworkConfig;
  private readonly clock: Clock;
  private readonly host: HostCommand;
  private nodes: SharedInformer<Node> | undefined;
  private confValue: NetConf | undefined;
  private mtu: number | undefined;
  private lastError: string | undefined = 'waiting for the cluster network configuration';
  private woken: AbortController | undefined;
  private pendingWake = false;
  private readonly refusedSeen = new Set<string>();

  constructor(cfg: CrossHostNetworkConfig) {
    if (!cfg.nodeName) throw new Error('CrossHostNetwork: nodeName is required');
    if (!cfg.nodeIP) throw new Error('CrossHostNetwork: nodeIP is required');
    this.cfg = cfg;
    this.clock = cfg.clock ?? realClock;
    this.host = cfg.host ?? runHostCommand;
  }

  /** The cluster setting as last read (undefined before the first read). */
  get conf(): NetConf | undefined {
    return this.confValue;
  }

  /** The MTU pods get (undefined: the runtime's default, for backend none). */
  get podMTU(): number | undefined {
    return this.mtu;
  }

  /** Why the network between hosts is not in place yet (part of the Ready message); undefined when it is. */
  get error(): string | undefined {
    return this.lastError;
  }

  /** Keeps the network until `signal` aborts; never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    let backoffMs = 1_000;
    try {
      while (!signal.aborted) {
        let delay = this.cfg.resyncMs ?? 30_000;
        try {
          await this.syncOnce(signal);
          backoffMs = 1_000;
        } catch (err) {
          if (signal.aborted) break;
          this.lastError = (err as Error).message;
          delay = Math.min(delay, backoffMs);
          backoffMs = Math.min(backoffMs * 2, 30_000);
          this.cfg.logger.warn('pod network between hosts: will retry', {
            node: this.cfg.nodeName,
            error: this.lastError,
            retryInMs: delay,
          });
        }
        await this.pause(delay, signal);
      }
    } finally {
      await this.nodes?.stop();
    }
  }

  /** One pass of the loop in the file comment. */
  private async syncOnce(signal: AbortSignal): Promise<void> {
    const conf = await this.readConf();
    const changed =
      !this.confValue ||
      this.confValue.backend !== conf.backend ||
      this.confValue.network !== conf.network ||
      this.confValue.vni !== conf.vni ||
      this.confValue.port !== conf.port;
    if (changed) this.cfg.logger.info('cluster network', { node: this.cfg.nodeName, ...conf });
    if (conf.backend === 'none') {
      if (changed && this.confValue && this.confValue.backend !== 'none') await this.teardown();
      this.confValue = conf;
      this.setMTU(conf, undefined, changed);
      this.lastError = undefined;
      return;
    }
    const nodes = await this.nodeInformer(signal);
    const self = nodes.lister().get(this.cfg.nodeName);
    const podCIDR = self?.spec?.podCIDR;
    if (!podCIDR) {
      this.confValue = conf;
      // A Node deleted under a running agent is not made again by it (as with the
      // kubelet): say so rather than wait for a podCIDR that will not come.
      throw new Error(
        self
          ? "waiting for the node's spec.podCIDR"
          : `the Node ${this.cfg.nodeName} does not exist (deleted?); restart the agent to register it again`,
      );
    }
    let backendData = 'null';
    let mtu: number;
    if (conf.backend === 'vxlan') {
      const device = await ensureVxlanDevice(this.host, {
        nodeName: this.cfg.nodeName,
        nodeIP: this.cfg.nodeIP,
        podCIDR,
        vni: conf.vni,
        port: conf.port,
      });
      backendData = JSON.stringify({ VNI: conf.vni, VtepMAC: device.mac });
      mtu = device.mtu;
    } else {
      await removeVxlanDevice(this.host);
      mtu = (await interfaceWithAddress(this.host, this.cfg.nodeIP)).mtu;
    }
    await ensureFirewall(this.host, { clusterCIDR: conf.network, podCIDR });
    this.confValue = conf;
    this.setMTU(conf, mtu, changed);
    await this.publish(self, conf, backendData);
    const peers = peersOf(this.cfg.nodeName, nodes.lister().list(), conf.backend);
    if (conf.backend === 'vxlan') {
      await syncVxlanPeers(this.host, peers);
    } else {
      for (const r of await syncHostGw(this.host, peers)) {
        const key = `${r.nodeName}\n${r.reason}`;
        if (this.refusedSeen.has(key)) continue;
        this.refusedSeen.add(key);
        this.cfg.logger.warn('host-gw: no route to a node', {
          node: this.cfg.nodeName,
          peer: r.nodeName,
          reason: r.reason,
        });
        this.cfg.onPeerRefused?.(r);
      }
    }
    if (this.lastError)
      this.cfg.logger.info('pod network between hosts ready', {
        node: this.cfg.nodeName,
        backend: conf.backend,
        peers: peers.length,
        mtu,
      });
    this.lastError = undefined;
  }

  private setMTU(conf: NetConf, mtu: number | undefined, changed: boolean): void {
    if (!changed && mtu === this.mtu) return;
    this.mtu = mtu;
    this.cfg.onConfigured?.(conf, mtu);
  }

  /** net-conf.json from the API; NO_CONF when the server publishes none (404) or lets this node read none (403). */
  private async readConf(): Promise<NetConf> {
    try {
      const cm = await this.cfg.client.get<ConfigMap>(
        resources.configmaps,
        NET_CONF_CONFIGMAP.namespace,
        NET_CONF_CONFIGMAP.name,
      );
      const text = cm.data?.[NET_CONF_KEY];
      if (text === undefined)
        throw new Error(`${NET_CONF_CONFIGMAP.namespace}/${NET_CONF_CONFIGMAP.name} has no ${NET_CONF_KEY}`);
      return parseNetConf(text);
    } catch (err) {
      if (err instanceof ApiStatusError && (err.code === 404 || err.code === 403)) {
        if (this.confValue === undefined)
          this.cfg.logger.warn(
            'the server publishes no cluster network setting; pods are reachable from their own host only',
            {
              node: this.cfg.nodeName,
              status: err.code,
            },
          );
        return NO_CONF;
      }
      throw err;
    }
  }

  /** The Node informer (all nodes), started and synced on first use. */
  private async nodeInformer(signal: AbortSignal): Promise<SharedInformer<Node>> {
    if (!this.nodes) {
      this.nodes = SharedInformer.fromClient<Node>(this.cfg.client, resources.nodes, {
        onError: (err, during) =>
          this.cfg.logger.warn('node informer error', {
            node: this.cfg.nodeName,
            during,
            error: String(err),
          }),
      });
      // Only what peersOf() reads wakes the loop: heartbeats and status changes of other
      // nodes arrive every few seconds each and change nothing here.
      const wake = () => this.wake();
      this.nodes.addEventHandler({
        onAdd: wake,
        onUpdate: (before, after) => {
          if (networkFacts(before) !== networkFacts(after)) wake();
        },
        onDelete: wake,
      });
      this.nodes.start();
    }
    if (!(await this.nodes.waitForSync(60_000, signal))) throw new Error('the Node list did not sync');
    return this.nodes;
  }

  /** Writes this node's annotations when they differ from `self`'s (a merge patch of its own Node). */
  private async publish(self: Node, conf: NetConf, backendData: string): Promise<void> {
    const want: Record<string, string> = {
      [NODE_ANNOTATIONS.backendType]: conf.backend,
      [NODE_ANNOTATIONS.backendData]: backendData,
      [NODE_ANNOTATIONS.publicIP]: this.cfg.nodeIP,
      [NODE_ANNOTATIONS.kubeSubnetManager]: 'true',
    };
    const have = self.metadata?.annotations ?? {};
    if (Object.entries(want).every(([k, v]) => Object.hasOwn(have, k) && have[k] === v)) return;
    await this.cfg.client.patch(resources.nodes, undefined, this.cfg.nodeName, 'merge', {
      metadata: { annotations: want },
    });
  }

  /** Removes what a backend other than none made (a switch to none). */
  private async teardown(): Promise<void> {
    await removeCrossHostState(this.host);
  }

  /**
   * Runs the loop again now: the agent calls it when the pod network (the runtime's
   * bridge) was made, since Docker puts its own NAT rules at the top of POSTROUTING then.
   */
  poke(): void {
    this.wake();
  }

  private wake(): void {
    this.pendingWake = true;
    this.woken?.abort();
  }

  private async pause(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    if (this.pendingWake) {
      this.pendingWake = false;
      return;
    }
    const woken = new AbortController();
    this.woken = woken;
    const onAbort = () => woken.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    await this.clock.sleep(ms, woken.signal);
    signal.removeEventListener('abort', onAbort);
    this.woken = undefined;
    this.pendingWake = false;
  }
}
