/**
 * One hollow node: the kubelet half of an agent (agent/main.ts) with the fake runtime
 * (cri/fake/) for a container runtime and the process's shared watches (watches.ts) for
 * its informers, in the manner of kubemark's hollow kubelet. It is the agent's own code
 * that runs, only smaller:
 *
 * - NodeStatusManager registers the Node with its capacity (hollowMachine) and posts its
 *   conditions (Ready once the pod network exists, no pressure) as the agent does, computed
 *   every 10 s against the Node of the shared watch (no GET) and posted when they change or
 *   every 5 minutes, the kubelet's default nodeStatusReportFrequency (an agent's is 60 s);
 * - NodeLeaseController renews `kube-node-lease/<node>` (40 s, every 10 s plus its 4 %
 *   jitter); the first renewal after the one at start comes after a random part of the
 *   interval, and so does the first status cycle, so that the nodes of one process spread
 *   their heartbeats over the interval instead of sending them in the second they started;
 * - PodNetworkManager makes the node's pod network in the fake runtime from spec.podCIDR,
 *   so each pod IP is an address of the node's podCIDR;
 * - PodManager runs each pod through the kubelet's pod workers and syncer (status.ts's
 *   phases and conditions, grace periods, preStop hooks, the final grace-0 delete) on the
 *   fake runtime, whose programs end as their commands say (`sh -c 'exit 1'`, `sleep 5`);
 *   the containers of a Job's pods whose program it does not model (`perl ...`, an image's
 *   entrypoint) exit 0 after `jobPodRunTimeMs`, as kwok completes Job pods.
 *
 * Not there: kube-proxy, the cluster DNS server, the local-path provisioner, the tunnel
 * (so `kubectl logs/exec` reach no hollow node), the network between hosts.
 */
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { realClock, type Clock } from '../../api/clock.js';
import { EventRecorder, SHUTDOWN_FLUSH_MS } from '../../api/client/events.js';
import { RestClient } from '../../api/client/rest.js';
import { errorMessage } from '../../api/errors.js';
import type { Logger } from '../../api/log.js';
import type { Node, Pod } from '../../api/types.js';
import { openRuntime, type FakeStep, type Runtime } from '../../cri/index.js';
import type { NodeCredential } from '../kubelet/bootstrap.js';
import { NodeLeaseController } from '../kubelet/node-lease.js';
import { KUBELET_VERSION, NodeStatusManager } from '../kubelet/node-status.js';
import { POD_NAME_LABEL, POD_NAMESPACE_LABEL } from '../kubelet/pods/labels.js';
import { PodManager } from '../kubelet/pods/manager.js';
import { PodNetworkManager } from '../network/pod-network.js';
import { hollowMachine, hollowMounter, type HollowCapacity } from './machine.js';
import type { HollowWatches } from './watches.js';

/** Settings of one hollow node. */
export interface HollowNodeConfig {
  /** The API server's https:// URL. */
  server: string;
  /** Other API servers of the cluster, failed over to (RestClient's alternateServers). */
  alternateServers?: readonly string[];
  nodeName: string;
  /** The node's InternalIP (and hostIP of its pods). */
  nodeIP: string;
  /** The node's own credential (kubelet/bootstrap.ts), so the Node authorizer sees `system:node:<nodeName>`. */
  credential: NodeCredential;
  capacity: HollowCapacity;
  /** This node's directory: pod volumes under `pods/`, container log files under `pod-logs/`. */
  dataDir: string;
  watches: HollowWatches;
  /** How long a Job pod's container runs whose program the fake runtime does not model, ms. */
  jobPodRunTimeMs: number;
  logger: Logger;
  clock?: Clock;
  /** Uniform in [0, 1); default Math.random (the heartbeats' offsets and jitter). */
  random?: () => number;
  /** Milliseconds between Lease renewals; default 10 000. */
  leaseRenewIntervalMs?: number;
  /** Milliseconds between node status computations; default 10 000. */
  nodeStatusUpdateFrequencyMs?: number;
  /**
   * Milliseconds after which an unchanged status is posted anyway; default
   * HOLLOW_NODE_STATUS_REPORT_FREQUENCY_MS (5 minutes).
   */
  nodeStatusReportFrequencyMs?: number;
  /** Milliseconds between relists of the fake runtime (the PLEG); default 1000. */
  relistPeriodMs?: number;
  /** Aborts registration. */
  signal?: AbortSignal;
  /** Connections the node keeps to the API server at most; default 2 (DEFAULT_MAX_CONNECTIONS). */
  maxConnections?: number;
}

/**
 * How often a hollow node posts an unchanged status, ms: the kubelet's default
 * nodeStatusReportFrequency, 5 minutes (its Lease says it is alive in between; the node
 * lifecycle controller reads both). A k8ts agent posts every minute (issue 5); at 1,000
 * idle nodes that was 16 status PATCHes a second, each a Node event to every Node watcher.
 */
export const HOLLOW_NODE_STATUS_REPORT_FREQUENCY_MS = 5 * 60_000;

/** Connections of one hollow node at most (RestClient's maxConnections; see start()). */
export const DEFAULT_MAX_CONNECTIONS = 2;

/** Whether `pod` is a Job's (its controller reference). */
function ownedByJob(pod: Pod): boolean {
  return (pod.metadata.ownerReferences ?? []).some(
    (r) => r.controller === true && r.kind === 'Job' && r.apiVersion.startsWith('batch/'),
  );
}

/** A running hollow node (see the file comment). */
export class HollowNode {
  private constructor(
    readonly nodeName: string,
    /** The Node as registered. */
    readonly node: Node,
    /** The node's API client (its own credential). */
    readonly client: RestClient,
    private readonly stopAll: () => Promise<void>,
  ) {}

  /**
   * Registers the node (retrying until the API server answers) and starts its loops.
   * @throws the abort reason when `cfg.signal` aborts first.
   */
  static async start(cfg: HollowNodeConfig): Promise<HollowNode> {
    const { nodeName, logger, watches } = cfg;
    const clock = cfg.clock ?? realClock;
    const random = cfg.random ?? Math.random;
    const { ca, cert, key } = cfg.credential;
    const client = new RestClient({
      server: cfg.server,
      ...(cfg.alternateServers ? { alternateServers: cfg.alternateServers } : {}),
      ca,
      cert,
      key,
      // One context for the node's life (some 36 KiB): one per connection, as Node makes
      // them, piles up between collections at a handshake every few seconds per node.
      secureContext: createSecureContext({ ca, cert, key }),
      // One connection kept between heartbeats (a request every few seconds), as a
      // kubelet keeps its one connection, rather than a TLS handshake for each.
      idleTimeoutMs: 30_000,
      // A bounded pool: without it every request in flight opens a connection, as many as
      // the node has pod status writes, events and deletes waiting when the server is
      // slow (7,866 from one process of 63 nodes in a 5,000-pod HA drill). A kubelet keeps
      // one HTTP/2 connection; over HTTP/1.1 a second one keeps the Lease from waiting
      // behind a whole queue of pod writes, and is closed again once idle.
      maxConnections: cfg.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
      userAgent: `kubelet/${KUBELET_VERSION} (${nodeName}; hollow)`,
    });
    const jobPodSteps: FakeStep[] = [
      { op: 'sleep', seconds: cfg.jobPodRunTimeMs / 1000 },
      { op: 'exit', code: 0 },
    ];
    const runtime: Runtime = await openRuntime('fake', {
      clock,
      pullAny: true,
      unmodelledProgram: (_container, sandbox) => {
        const pod = watches.pod(
          sandbox.labels[POD_NAMESPACE_LABEL] ?? '',
          sandbox.labels[POD_NAME_LABEL] ?? '',
        );
        return pod && ownedByJob(pod) ? jobPodSteps : undefined;
      },
    });
    const recorder = new EventRecorder({
      client,
      component: 'kubelet',
      host: nodeName,
      clock,
      // A node's events repeat little (a pod's Pulled, Created, Started): a small
      // deduplication cache keeps thousands of nodes small.
      cacheSize: 64,
      onError: (err, ev) => logger.debug('event dropped', { reason: ev.reason, error: errorMessage(err) }),
    });
    const running = new AbortController();
    const onAbort = () => running.abort(cfg.signal?.reason);
    cfg.signal?.addEventListener('abort', onAbort, { once: true });
    if (cfg.signal?.aborted) onAbort();

    // The status manager and the network refer to each other; the callback runs only
    // after both exist.
    const podNetwork = new PodNetworkManager({
      runtime,
      nodeName,
      logger,
      clock,
      onReady: () => {
        status.poke();
        pods.resyncAll();
      },
    });
    const status = new NodeStatusManager({
      client,
      runtime,
      machine: hollowMachine(cfg.capacity),
      nodeName,
      nodeIP: cfg.nodeIP,
      podNetworkError: () => podNetwork.error,
      logger,
      recorder,
      clock,
      maxPods: cfg.capacity.pods,
      ...(cfg.nodeStatusUpdateFrequencyMs !== undefined
        ? { updateFrequencyMs: cfg.nodeStatusUpdateFrequencyMs }
        : {}),
      reportFrequencyMs: cfg.nodeStatusReportFrequencyMs ?? HOLLOW_NODE_STATUS_REPORT_FREQUENCY_MS,
    });
    const leaseIntervalMs = cfg.leaseRenewIntervalMs ?? 10_000;
    const lease = new NodeLeaseController({
      client,
      nodeName,
      logger,
      clock,
      renewIntervalMs: leaseIntervalMs,
      random,
    });
    const pods = new PodManager({
      client,
      runtime,
      nodeName,
      nodeIP: cfg.nodeIP,
      podNetwork,
      recorder,
      clock,
      logger,
      dataDir: cfg.dataDir,
      podSource: watches.podSourceFor(nodeName),
      services: watches.services,
      // No host resolv.conf to read for every sandbox: pods get the cluster DNS only.
      dns: { resolvConf: '' },
      mounter: hollowMounter,
      ...(cfg.relistPeriodMs !== undefined ? { relistPeriodMs: cfg.relistPeriodMs } : {}),
    });

    let node: Node;
    try {
      recorder.event(
        { kind: 'Node', name: nodeName, uid: nodeName },
        'Normal',
        'Starting',
        'Starting kubelet.',
      );
      node = await status.register(running.signal);
    } catch (err) {
      cfg.signal?.removeEventListener('abort', onAbort);
      await recorder.flush(SHUTDOWN_FLUSH_MS);
      client.close();
      await runtime.close();
      throw err;
    }
    cfg.signal?.removeEventListener('abort', onAbort);
    podNetwork.setPodCIDR(node.spec?.podCIDR);
    watches.onNode(nodeName, (n) => {
      podNetwork.setPodCIDR(n.spec?.podCIDR);
      status.observeNode(n);
    });

    const statusIntervalMs = cfg.nodeStatusUpdateFrequencyMs ?? 10_000;
    const afterOffset = async (intervalMs: number, loop: () => Promise<void>) => {
      await clock.sleep(random() * intervalMs, running.signal);
      if (!running.signal.aborted) await loop();
    };
    // The first Lease at once (the node lifecycle controller looks for it), then the
    // renewals from a random point of the interval on.
    await lease
      .sync()
      .catch((err: unknown) =>
        logger.warn('failed to create node lease, will retry', { node: nodeName, error: errorMessage(err) }),
      );
    const loops = [
      afterOffset(leaseIntervalMs, () => lease.run(running.signal)),
      afterOffset(statusIntervalMs, () => status.run(running.signal)),
      podNetwork.run(running.signal),
    ];
    await pods.start();

    let stopped: Promise<void> | undefined;
    return new HollowNode(
      nodeName,
      node,
      client,
      () =>
        (stopped ??= (async () => {
          running.abort();
          await pods.stop();
          await Promise.all(loops);
          await recorder.flush(SHUTDOWN_FLUSH_MS);
          client.close();
          await runtime.close();
        })()),
    );
  }

  /** Stops the node's loops and closes its connections; its pods are left as they are. Idempotent. */
  stop(): Promise<void> {
    return this.stopAll();
  }
}

/** This node's directory under the process's data dir. */
export function hollowNodeDir(dataDir: string, nodeName: string): string {
  return join(dataDir, nodeName);
}
