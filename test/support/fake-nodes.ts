/**
 * Simulated nodes for controller and scheduler tests (no agent, no Docker): Node objects
 * with capacity, and a FakeKubelet that plays the kubelet's part through the API — it
 * renews each node's Lease, marks pods bound to its nodes Running (and Ready, unless told
 * otherwise), and confirms graceful deletions of its pods with a grace-0 delete, as a
 * kubelet does once containers are gone. Everything goes through the real API server.
 */
import type { RestClient } from '../../api/client/rest.js';
import { resources } from '../../api/client/resource.js';
import { isAlreadyExists, isConflict, isNotFound } from '../../api/client/errors.js';
import { InformerFactory } from '../../api/client/factory.js';
import { rfc3339 } from '../../api/object.js';
import type { Condition, Lease, Node, Pod, Taint } from '../../api/types.js';

/** What makeNode() accepts; quantities as strings. */
export interface FakeNodeSpec {
  cpu?: string;
  memory?: string;
  pods?: string;
  labels?: Record<string, string>;
  taints?: Taint[];
  unschedulable?: boolean;
  /** InternalIP; default 127.0.0.1. */
  ip?: string;
}

/** A Ready Node named `name` with capacity = allocatable (default 4 cpu, 8Gi, 110 pods). */
export function makeNode(name: string, spec: FakeNodeSpec = {}): Node {
  const capacity = { cpu: spec.cpu ?? '4', memory: spec.memory ?? '8Gi', pods: spec.pods ?? '110' };
  const now = rfc3339(new Date());
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        ...spec.labels,
      },
    },
    spec: {
      ...(spec.taints ? { taints: spec.taints } : {}),
      ...(spec.unschedulable ? { unschedulable: true } : {}),
    },
    status: {
      capacity,
      allocatable: capacity,
      addresses: [
        { type: 'InternalIP', address: spec.ip ?? '127.0.0.1' },
        { type: 'Hostname', address: name },
      ],
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          message: 'fake kubelet is posting ready status',
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        },
      ],
    },
  };
}

/** Settings of a FakeKubelet. */
export interface FakeKubeletOptions {
  client: RestClient;
  /** Nodes this kubelet serves (their Node objects are created by start() if missing). */
  nodes: Node[];
  /** Whether a pod becomes Ready when it starts running; default: always. */
  ready?: (pod: Pod) => boolean;
  /** Milliseconds between Lease renewals; default 1000. */
  leaseRenewMs?: number;
}

/** Plays the kubelet of a few nodes (see the file comment). */
export class FakeKubelet {
  private readonly opts: FakeKubeletOptions;
  private readonly factory: InformerFactory;
  private readonly names: Set<string>;
  private readonly paused = new Set<string>();
  /** Resumed nodes whose pods' readiness is still to be re-posted. */
  private readonly resyncing = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private readonly inflight = new Set<Promise<unknown>>();
  private ipSeq = 1;
  private stopped = false;

  constructor(opts: FakeKubeletOptions) {
    this.opts = opts;
    this.names = new Set(opts.nodes.map((n) => n.metadata.name!));
    this.factory = new InformerFactory({ client: opts.client });
    const pods = this.factory.informerFor<Pod>(resources.pods);
    pods.addEventHandler({
      onAdd: (p) => this.sync(p),
      onUpdate: (_, p) => this.sync(p),
    });
  }

  /** Creates the nodes (if missing) and their Leases, then starts serving. */
  async start(): Promise<void> {
    for (const node of this.opts.nodes) {
      try {
        await this.opts.client.create(resources.nodes, node);
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
    }
    await this.renewLeases();
    this.timer = setInterval(() => void this.renewLeases(), this.opts.leaseRenewMs ?? 1000);
    this.factory.start();
    await this.factory.waitForCacheSync(10_000);
  }

  /** Stops renewing `node`'s Lease (as if its agent died); resumeLease() undoes it. */
  pauseLease(node: string): void {
    this.paused.add(node);
  }

  /**
   * Resumes `node`'s agent, as a kubelet coming back: its Lease is renewed again, its Ready
   * condition re-posted True if someone (the node lifecycle controller) changed it, pods
   * bound or deleted meanwhile are started or confirmed deleted, and — once the node shows
   * Ready again — its running pods get back the readiness this kubelet gives them (`ready`),
   * re-posted at each renewal until they all show it.
   */
  resumeLease(node: string): void {
    if (!this.paused.delete(node)) return;
    this.resyncing.add(node);
    for (const pod of this.podsOn(node)) {
      if (pod.status?.phase !== 'Running' || pod.metadata.deletionTimestamp) this.sync(pod);
    }
  }

  /** Stops everything; waits for writes in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.factory.shutdown();
    await Promise.allSettled([...this.inflight]);
  }

  private track<T>(p: Promise<T>): void {
    this.inflight.add(p);
    void p.catch(() => {}).finally(() => this.inflight.delete(p));
  }

  /**
   * Runs a write, retrying failures (a busy server under a burst of pods) every 100 ms up to
   * 20 times, as a kubelet keeps retrying its status; a 404 (the pod is gone) ends it.
   */
  private retrying(write: () => Promise<unknown>): void {
    const attempt = async (): Promise<void> => {
      for (let i = 0; ; i++) {
        try {
          await write();
          return;
        } catch (err) {
          if (isNotFound(err) || this.stopped || i >= 20) return;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    };
    this.track(attempt());
  }

  private async renewLeases(): Promise<void> {
    const now = new Date().toISOString().replace('Z', '000Z');
    for (const name of this.names) {
      if (this.paused.has(name) || this.stopped) continue;
      const lease: Lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace: 'kube-node-lease' },
        spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: now },
      };
      const write = (async () => {
        try {
          const cur = await this.opts.client.get<Lease>(resources.leases, 'kube-node-lease', name);
          await this.opts.client.update(resources.leases, { ...cur, spec: { ...cur.spec, renewTime: now } });
        } catch (err) {
          if (isNotFound(err)) await this.opts.client.create(resources.leases, lease);
          else if (!isConflict(err)) throw err;
        }
        const nodeWasReady = await this.repostNodeReady(name);
        if (nodeWasReady && this.resyncing.has(name) && !this.repostPodsReady(name))
          this.resyncing.delete(name);
      })();
      this.track(write);
      await write.catch(() => {});
    }
  }

  /**
   * Posts Ready=True (fresh lastHeartbeatTime) through nodes/status when the node's Ready
   * condition is not True, and the pressure conditions False where they are not, as a
   * kubelet re-posts its status once it finds it wrong. A conflict waits for the next renewal.
   * Resolves true when the node already showed Ready=True.
   */
  private async repostNodeReady(name: string): Promise<boolean> {
    let node: Node;
    try {
      node = await this.opts.client.get<Node>(resources.nodes, '', name);
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
    const conditions = node.status?.conditions ?? [];
    if (conditions.find((c) => c.type === 'Ready')?.status === 'True') return true;
    const now = rfc3339(new Date());
    const fixed = conditions.map((c): Condition => {
      if (c.type === 'Ready') {
        return {
          ...c,
          status: 'True',
          reason: 'KubeletReady',
          message: 'fake kubelet is posting ready status',
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        };
      }
      if (c.status === 'False' || !['MemoryPressure', 'DiskPressure', 'PIDPressure'].includes(c.type))
        return c;
      return {
        ...c,
        status: 'False',
        reason: 'KubeletHasSufficientResources',
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      };
    });
    if (!fixed.some((c) => c.type === 'Ready')) {
      fixed.push({
        type: 'Ready',
        status: 'True',
        reason: 'KubeletReady',
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      });
    }
    try {
      await this.opts.client.updateStatus<Node>(resources.nodes, {
        ...node,
        status: { ...node.status, conditions: fixed },
      });
    } catch (err) {
      if (!isConflict(err) && !isNotFound(err)) throw err;
    }
    return false;
  }

  /**
   * Re-posts the readiness this kubelet gives (option `ready`) to each running pod on `node`
   * whose Ready condition says otherwise; returns whether any needed it.
   */
  private repostPodsReady(node: string): boolean {
    let pending = false;
    for (const pod of this.podsOn(node)) {
      if (pod.status?.phase !== 'Running' || pod.metadata.deletionTimestamp) continue;
      const want = (this.opts.ready ?? (() => true))(pod);
      if (pod.status?.conditions?.find((c) => c.type === 'Ready')?.status === (want ? 'True' : 'False'))
        continue;
      pending = true;
      this.track(
        setPodReady(this.opts.client, pod, want).catch((err: unknown) => {
          if (!isNotFound(err) && !isConflict(err)) throw err;
        }),
      );
    }
    return pending;
  }

  private podsOn(node: string): Pod[] {
    return this.factory
      .informerFor<Pod>(resources.pods)
      .lister()
      .list()
      .filter((p) => p.spec.nodeName === node);
  }

  private sync(pod: Pod): void {
    const node = pod.spec.nodeName;
    if (this.stopped || !node || !this.names.has(node) || this.paused.has(node)) return;
    const { namespace, name } = pod.metadata;
    if (pod.metadata.deletionTimestamp) {
      this.retrying(() =>
        this.opts.client.delete(resources.pods, namespace, name!, { gracePeriodSeconds: 0 }),
      );
      return;
    }
    if (
      pod.status?.phase === 'Running' ||
      pod.status?.phase === 'Succeeded' ||
      pod.status?.phase === 'Failed'
    )
      return;
    const now = rfc3339(new Date());
    const ready = (this.opts.ready ?? (() => true))(pod) ? 'True' : 'False';
    const n = this.ipSeq++;
    const status = {
      phase: 'Running',
      hostIP: '127.0.0.1',
      podIP: `10.42.${(n >> 8) & 255}.${n & 255}`,
      podIPs: [{ ip: `10.42.${(n >> 8) & 255}.${n & 255}` }],
      startTime: now,
      conditions: [
        { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
        { type: 'Initialized', status: 'True', lastTransitionTime: now },
        { type: 'ContainersReady', status: ready, lastTransitionTime: now },
        { type: 'Ready', status: ready, lastTransitionTime: now },
      ],
      containerStatuses: pod.spec.containers.map((c) => ({
        name: c.name,
        image: c.image ?? '',
        imageID: '',
        ready: ready === 'True',
        started: true,
        restartCount: 0,
        state: { running: { startedAt: now } },
      })),
    };
    this.retrying(() =>
      this.opts.client.patch(
        resources.pods,
        namespace,
        name!,
        'merge',
        { status },
        { subresource: 'status' },
      ),
    );
  }
}

/**
 * Sets a pod's Ready condition (and its containers' readiness) through the status
 * subresource, as a kubelet's readiness probe would.
 */
export async function setPodReady(client: RestClient, pod: Pod, ready: boolean): Promise<Pod> {
  const cur = await client.get<Pod>(resources.pods, pod.metadata.namespace, pod.metadata.name!);
  const now = rfc3339(new Date());
  const status = ready ? 'True' : 'False';
  const conditions = (cur.status?.conditions ?? []).filter(
    (c) => c.type !== 'Ready' && c.type !== 'ContainersReady',
  );
  conditions.push(
    { type: 'ContainersReady', status, lastTransitionTime: now },
    { type: 'Ready', status, lastTransitionTime: now },
  );
  return client.updateStatus<Pod>(resources.pods, {
    ...cur,
    status: {
      ...cur.status,
      conditions,
      containerStatuses: (cur.status?.containerStatuses ?? []).map((c) => ({ ...c, ready })),
    },
  });
}
