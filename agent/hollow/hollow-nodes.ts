/**
 * `k8ts hollow-nodes`: one process that plays `count` nodes against a real API server, in
 * the manner of kwok and kubemark's hollow nodes, to measure the control plane at a scale
 * no one has the hosts for.
 *
 *   const hollow = await startHollowNodes({ server, token, count: 1000, prefix: 'hollow-node-',
 *     dataDir, capacity: { cpu: 4, memoryBytes: 16 * 2 ** 30, pods: 110 }, ... });
 *   console.log(formatMemoryReport(hollow.memory()));
 *   await hollow.stop();
 *
 * Each node (node.ts) is the agent's kubelet code on the fake runtime. What makes N of them
 * cheap enough for one process:
 *
 * 1. Credentials: every node joins as an agent does (kubelet/bootstrap.ts: the CA pinned by
 *    the join token, a key and certificate request per node, the bootstrap token's
 *    exchange), so each writes as `system:node:<name>` and the Node authorizer and
 *    NodeRestriction apply to it as to a real one. Credentials are kept under
 *    `<dataDir>/<node>/tls/` and reused by later starts. Joins run `concurrency` at a time.
 * 2. Watches: one pod watch, one Node watch and one Service watch for all nodes
 *    (watches.ts), over the first node's credential; each node's requests (Lease, status,
 *    pod status, deletes, events) go over its own, on at most `connectionsPerNode`
 *    connections (2; one while it is not busy): a client certificate is the identity of
 *    a TLS connection, so nodes cannot share one.
 * 3. Heartbeats: spread over the renew interval (node.ts).
 *
 * Memory: memory() reports the process's RSS and heap after a full garbage collection,
 * against what they were before the first node joined, per node; the CLI prints it at
 * start-up, on SIGUSR1 and every report interval.
 */
import { setMaxListeners } from 'node:events';
import { mkdirSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Clock } from '../../api/clock.js';
import { RestClient } from '../../api/client/rest.js';
import { errorMessage } from '../../api/errors.js';
import type { Logger } from '../../api/log.js';
import { openRuntime } from '../../cri/index.js';
import { bootstrapNodeCredential, type NodeCredential } from '../kubelet/bootstrap.js';
import { KUBELET_VERSION } from '../kubelet/node-status.js';
import type { HollowCapacity } from './machine.js';
import { HollowNode, hollowNodeDir } from './node.js';
import { HollowWatches } from './watches.js';

/** Settings of startHollowNodes (the `k8ts hollow-nodes` flags). */
export interface HollowNodesConfig {
  /** The API server's https:// URL. */
  server: string;
  /**
   * Other API servers of the same cluster (`--server` repeated): every node's client, and
   * the shared watches', fail over to them in turn (RestClient's alternateServers), and a
   * node joins through the next one while one cannot be reached.
   */
  alternateServers?: readonly string[];
  /** The join token (`K10<CA hash>::<id>.<secret>`); not needed once every node's credential is stored. */
  token?: string;
  /** How many nodes; they are named `<prefix><i>`, i from 0. */
  count: number;
  prefix: string;
  /** Where each node keeps its credential and pod volumes (`<dataDir>/<node>/`). */
  dataDir: string;
  capacity: HollowCapacity;
  /** Every node's InternalIP. */
  nodeIP: string;
  /** See HollowNodeConfig.jobPodRunTimeMs. */
  jobPodRunTimeMs: number;
  /** Joins and registrations in flight at once; default 16. */
  concurrency?: number;
  logger: Logger;
  clock?: Clock;
  /** Aborts start-up. */
  signal?: AbortSignal;
  /** Told after each stage of start-up (`joined 100/1000`), for the CLI's progress lines. */
  onProgress?: (line: string) => void;
  /** Milliseconds between Lease renewals of each node; default 10 000. */
  leaseRenewIntervalMs?: number;
  /** Connections each node keeps to the API server at most; default 2 (node.ts DEFAULT_MAX_CONNECTIONS). */
  connectionsPerNode?: number;
}

/** What memory() measures; bytes unless said otherwise. */
export interface MemoryReport {
  nodes: number;
  /** Pods bound to these nodes in the shared cache. */
  pods: number;
  rss: number;
  heapUsed: number;
  /** RSS and heap before the first node joined. */
  baselineRss: number;
  baselineHeapUsed: number;
  /** (rss - baselineRss) / nodes. */
  rssPerNode: number;
  heapPerNode: number;
  /** V8's heap as reserved, and memory outside it that JS objects hold (TLS contexts, buffers). */
  heapTotal: number;
  external: number;
}

/** The running nodes. */
export interface HollowNodes {
  readonly nodeNames: readonly string[];
  /** Milliseconds start-up took: joining (credentials) and registering. */
  readonly timings: { joinMs: number; registerMs: number };
  memory(): MemoryReport;
  /** Stops every node and the shared watches; pods and Nodes stay in the API. Idempotent. */
  stop(): Promise<void>;
}

/** One line of a MemoryReport: `1000 nodes, 0 pods: RSS 180.2 MiB (+150.1 MiB, 153.7 KiB per node), heap ...`. */
export function formatMemoryReport(m: MemoryReport): string {
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
  const kib = (b: number) => `${(b / 1024).toFixed(1)} KiB`;
  return (
    `${m.nodes} nodes, ${m.pods} pods: RSS ${mib(m.rss)} (+${mib(m.rss - m.baselineRss)}, ${kib(m.rssPerNode)} per node), ` +
    `heap ${mib(m.heapUsed)} (+${mib(m.heapUsed - m.baselineHeapUsed)}, ${kib(m.heapPerNode)} per node; ` +
    `reserved ${mib(m.heapTotal)}, external ${mib(m.external)})`
  );
}

/**
 * Node's garbage collector as a function, so that memory() measures what is live rather
 * than what the collector has not got to yet (`--expose-gc` set at run time, the global
 * taken from a fresh context).
 */
function garbageCollector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** The process's memory after a full collection. */
function measure(gc: () => void): NodeJS.MemoryUsage {
  gc();
  return process.memoryUsage();
}

/** Runs `fn` over `items`, at most `limit` at a time; rejects with the first failure once all are settled. */
async function inBatches<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  let failure: { err: unknown } | undefined;
  const worker = async () => {
    while (next < items.length && !failure) {
      const i = next++;
      try {
        out[i] = await fn(items[i]!);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.err;
  return out;
}

/**
 * Joins and registers the nodes and starts them; resolves once every node is registered.
 * @throws Error for a config that cannot work (no https server, count < 1);
 *   BootstrapError when a node cannot join (token refused, CA mismatch); the abort
 *   reason when `signal` aborts first. Nodes started before a failure are stopped.
 */
export async function startHollowNodes(cfg: HollowNodesConfig): Promise<HollowNodes> {
  if (!cfg.server.startsWith('https://'))
    throw new Error('hollow nodes need an https:// server: each node joins with its own credential');
  if (!(cfg.count >= 1)) throw new Error('hollow nodes: count must be at least 1');
  const concurrency = cfg.concurrency ?? 16;
  // One signal for every join and registration in flight, each of which listens on it.
  const starting = new AbortController();
  setMaxListeners(4 * concurrency + 16, starting.signal);
  const onAbort = () => starting.abort(cfg.signal?.reason);
  cfg.signal?.addEventListener('abort', onAbort, { once: true });
  if (cfg.signal?.aborted) onAbort();
  try {
    return await start(cfg, concurrency, starting.signal);
  } finally {
    cfg.signal?.removeEventListener('abort', onAbort);
  }
}

async function start(cfg: HollowNodesConfig, concurrency: number, signal: AbortSignal): Promise<HollowNodes> {
  const { logger } = cfg;
  const names = Array.from({ length: cfg.count }, (_, i) => `${cfg.prefix}${i}`);
  mkdirSync(cfg.dataDir, { recursive: true, mode: 0o700 });
  // The baseline holds the code every node runs (the fake runtime is loaded on first use),
  // so that the difference is what the nodes themselves take.
  await (await openRuntime('fake', {})).close();
  const gc = garbageCollector();
  const before = measure(gc);

  const t0 = performance.now();
  let joined = 0;
  const credentials = await inBatches(names, concurrency, async (nodeName): Promise<NodeCredential> => {
    const cred = await bootstrapNodeCredential({
      server: cfg.server,
      ...(cfg.alternateServers ? { alternateServers: cfg.alternateServers } : {}),
      ...(cfg.token ? { token: cfg.token } : {}),
      nodeName,
      dataDir: hollowNodeDir(cfg.dataDir, nodeName),
      logger,
      signal,
    });
    if (++joined % 500 === 0 || joined === names.length) cfg.onProgress?.(`joined ${joined}/${names.length}`);
    return cred;
  });
  const joinMs = performance.now() - t0;

  const first = credentials[0]!;
  const watchClient = new RestClient({
    server: cfg.server,
    ...(cfg.alternateServers ? { alternateServers: cfg.alternateServers } : {}),
    ca: first.ca,
    cert: first.cert,
    key: first.key,
    userAgent: `kubelet/${KUBELET_VERSION} (hollow-nodes watches)`,
  });
  const watches = new HollowWatches({ client: watchClient, nodeNames: new Set(names), logger });
  const stopWatches = async () => {
    await watches.stop();
    watchClient.close();
  };
  if (!(await watches.start(60_000))) {
    await stopWatches();
    throw new Error('hollow nodes: the shared pod, Node and Service watches did not sync within 60 s');
  }

  const t1 = performance.now();
  const nodes: HollowNode[] = [];
  let registered = 0;
  try {
    await inBatches([...names.keys()], concurrency, async (i) => {
      const nodeName = names[i]!;
      const node = await HollowNode.start({
        server: cfg.server,
        ...(cfg.alternateServers ? { alternateServers: cfg.alternateServers } : {}),
        nodeName,
        nodeIP: cfg.nodeIP,
        credential: credentials[i]!,
        capacity: cfg.capacity,
        dataDir: hollowNodeDir(cfg.dataDir, nodeName),
        watches,
        jobPodRunTimeMs: cfg.jobPodRunTimeMs,
        logger,
        ...(cfg.clock ? { clock: cfg.clock } : {}),
        signal,
        ...(cfg.leaseRenewIntervalMs !== undefined ? { leaseRenewIntervalMs: cfg.leaseRenewIntervalMs } : {}),
        ...(cfg.connectionsPerNode !== undefined ? { maxConnections: cfg.connectionsPerNode } : {}),
      });
      nodes.push(node);
      if (++registered % 500 === 0 || registered === names.length)
        cfg.onProgress?.(`registered ${registered}/${names.length}`);
    });
  } catch (err) {
    await Promise.all(nodes.map((n) => n.stop()));
    await stopWatches();
    throw err;
  }
  const registerMs = performance.now() - t1;
  logger.info('hollow nodes started', { count: names.length, joinMs, registerMs });

  let stopped: Promise<void> | undefined;
  return {
    nodeNames: names,
    timings: { joinMs, registerMs },
    memory: () => {
      const now = measure(gc);
      return {
        nodes: nodes.length,
        pods: watches.pods.indexer.list().length,
        rss: now.rss,
        heapUsed: now.heapUsed,
        baselineRss: before.rss,
        baselineHeapUsed: before.heapUsed,
        rssPerNode: (now.rss - before.rss) / Math.max(1, nodes.length),
        heapPerNode: (now.heapUsed - before.heapUsed) / Math.max(1, nodes.length),
        heapTotal: now.heapTotal,
        external: now.external,
      };
    },
    stop: () =>
      (stopped ??= (async () => {
        await inBatches(nodes, 64, (n) =>
          n
            .stop()
            .catch((err: unknown) =>
              logger.warn('hollow node did not stop cleanly', { node: n.nodeName, error: errorMessage(err) }),
            ),
        );
        await stopWatches();
      })()),
  };
}
