/**
 * The high-availability drill of issue 20 (item 4), shared by test/ha.e2e.test.ts (CI
 * size) and scripts/bench-ha.ts (full size): a real 3-member etcd cluster on loopback, two
 * `k8ts server` processes over it with short leader-election leases, and `k8ts
 * hollow-nodes` given both servers' URLs.
 *
 *   const drill = await HADrill.start({ pods: 120, nodes: 10 });
 *   try {
 *     const roll = await drill.rollAndKillLeader();   // kill -9 of the leader mid-rollout
 *     const checks = drill.checks();                  // bindings, surge, acknowledged writes
 *     await drill.etcdOneMemberDown(); await drill.etcdQuorumLost(); await drill.etcdRecovered();
 *   } finally { await drill.stop(); }
 *
 * The leader is made known before anything else: server A starts alone and takes the
 * kube-controller-manager and kube-scheduler Leases, then B starts (and adopts A's CA from
 * the store, control/cluster-ca.ts). Every client that should fail over (the hollow nodes,
 * the writer, a ConfigMap informer) is given A first and B second, so that A's death
 * makes each of them move by itself. What is recorded comes from informers on B alone
 * (the survivor), which see every change of the drill's namespace in revision order:
 *
 * - every nodeName each pod (by UID) was ever seen with: more than one is a pod bound twice;
 * - the Deployment's active pods (not terminating, not finished) and the sum of its
 *   ReplicaSets' spec.replicas after every event: neither may exceed replicas + maxSurge;
 * - the writer's acknowledged creates (a ConfigMap every `writeIntervalMs` through the
 *   failover client): each must be in the store at the end; the longest time between two
 *   acknowledgements in a phase is that phase's write gap.
 *
 * Nothing here asserts: the phases return what they measured and checks() what it found;
 * the test asserts, the bench prints. Nothing sleeps to wait: conditions are polled with
 * deadlines. stop() ends every process this drill started (by PID) and removes their dirs.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InformerFactory } from '../../api/client/factory.js';
import { ApiStatusError, type Status } from '../../api/client/errors.js';
import { resources } from '../../api/client/resource.js';
import { RestClient } from '../../api/client/rest.js';
import { deletedObject, SharedInformer } from '../../api/client/informer.js';
import { loadKubeconfig } from '../../api/client/kubeconfig.js';
import type { KubeObject } from '../../api/object.js';
import type { ConfigMap, CoreEvent, Deployment, Lease, Pod, ReplicaSet } from '../../api/types.js';
import { freePorts, startEtcdCluster, type EtcdCluster, type EtcdClusterMember } from './etcd.js';
import { startHollowNodesProcess, type HollowNodesProcess } from './hollow-nodes.js';
import { cleanUp, run, startK8tsServer, type CommandResult, type K8tsServer } from './k8ts-server.js';
import { until } from './wait.js';

export interface HADrillOptions {
  /** The Deployment's replicas. */
  pods: number;
  /** Hollow nodes (110 pods each at most). */
  nodes: number;
  /** --leader-elect-lease-duration of both servers, seconds; renew deadline 2/3 of it, retry period 1/6. Default 3. */
  leaseDurationSeconds?: number;
  /** The share of the replicas available in the new ReplicaSet at which the leader is killed. Default 0.3. */
  killAtAvailableFraction?: number;
  /** Milliseconds between the writer's creates. Default 100. */
  writeIntervalMs?: number;
  /** How long to wait for the Deployment and for the rollout, ms. Default 10 min. */
  rolloutTimeoutMs?: number;
  /** Progress lines (`# ...`). Default: none. */
  log?: (line: string) => void;
  /** Run cli.ts through tsx instead of dist/cli.js. Default false (the built CLI). */
  fromSource?: boolean;
}

export const DRILL_NAMESPACE = 'ha-drill';
export const WRITES_NAMESPACE = 'ha-writes';
const DEPLOYMENT = 'web';

/** One acknowledged or failed write of the writer. */
interface WriteRecord {
  name: string;
  at: number;
  ok: boolean;
  error?: string;
}

/** What rollAndKillLeader() measured (ms unless said otherwise). */
export interface RolloutResult {
  /** From `kubectl set image` to the Deployment complete (updated = available = replicas, old ReplicaSets at 0). */
  rolloutMs: number;
  /** From the kill to the Deployment complete. */
  afterKillMs: number;
  /** When the leader was killed: the new ReplicaSet's available pods, and the old ReplicaSets' pods. */
  atKill: { available: number; old: number };
  /** From the kill until B held each Lease. */
  takeover: { scheduler: number; controllerManager: number };
  /** Which Leases A held at the kill (it may have lost one before, under load). */
  heldAtKill: { scheduler: boolean; controllerManager: boolean };
  /** Both servers' leadership log lines (became leader, stopped leading), time-ordered, `A|B time message`. */
  leadership: string[];
  /** From the kill until every hollow node's Lease was renewed again (through B). */
  nodesRenewedMs: number;
  /** From the kill until a ConfigMap written after it was in the A-first informer's cache. */
  informerFollowedMs: number;
  /** The longest time between two acknowledged writes from the kill to the rollout's end. */
  writeGapMs: number;
  /** Writes that failed in that time (the writer goes on; a failed write is not acknowledged), and why. */
  failedWrites: number;
  failedWriteErrors: string[];
  /** `kubectl rollout status` with A's kubeconfig and `--server` B, after the kill. */
  kubectl: CommandResult;
  /**
   * `kubectl rollout status` with A's kubeconfig through the TCP load balancer in front of
   * both servers (HAProxy, `balance first`: A while it is up), started before the kill;
   * undefined when `haproxy` is not installed.
   */
  kubectlThroughLB: CommandResult | undefined;
  /** Two nodes joined after the kill with `--server A,B`: how long their join took, ms. */
  lateJoinMs: number;
}

/** What checks() found. */
export interface DrillChecks {
  /** Pods seen with more than one nodeName (`name: node1,node2`). */
  reboundPods: string[];
  /** Pods with more than one Scheduled event. */
  twiceScheduled: string[];
  /** Pods bound in all. */
  boundPods: number;
  /** replicas + maxSurge. */
  surgeLimit: number;
  /**
   * The most active pods of the Deployment at once, and when (ms after the kill; negative:
   * before). It may pass replicas + maxSurge for a moment, as upstream's: the Deployment
   * controller bounds the ReplicaSets' spec.replicas (GetReplicaCountForReplicaSets), and
   * an old ReplicaSet's pods leave only after its controller has deleted them.
   */
  maxActivePods: number;
  maxActiveAfterKillMs: number;
  /** Each ReplicaSet's active pods and spec.replicas then. */
  maxActiveBreakdown: string;
  /** ReplicaSets that had more active pods than any spec.replicas they had had by then (`name: pods > spec`). */
  overCreated: string[];
  /** The largest sum of its ReplicaSets' spec.replicas. */
  maxReplicaSum: number;
  /** Pods per node above its max-pods (node: count). */
  overcommittedNodes: string[];
  /** Acknowledged writes, and those of them missing from the store now. */
  acknowledged: number;
  lost: string[];
}

/** What an etcd phase measured. */
export interface EtcdPhaseResult {
  /** Writes tried in the phase, and those that failed (their Status messages). */
  writes: number;
  failures: string[];
  /** The longest time between two acknowledged writes of the writer in the phase, ms. */
  writeGapMs: number;
}

/** What etcdQuorumLost() saw: the first refused write. */
export interface QuorumLostResult {
  /** How long the refused write took to be answered, ms. */
  answeredInMs: number;
  /** The answer: HTTP code and the metav1.Status. */
  code: number;
  status: Status | undefined;
  /** When something other than a Status answered (a connection error, a timeout). */
  otherError?: string;
}

/** See the file comment. */
export class HADrill {
  private readonly written: WriteRecord[] = [];
  private writerStop = false;
  private writer: Promise<void> | undefined;
  private seq = 0;
  /** Pod UID → name and every nodeName it was seen with. */
  private readonly bindings = new Map<string, { name: string; nodes: Set<string> }>();
  private readonly activePods = new Set<string>();
  private maxActive = 0;
  /** When the most active pods were seen (ms since the epoch). */
  private maxActiveAt = 0;
  /** Each ReplicaSet's active pods and spec.replicas (as its informer had it) at that moment. */
  private maxActiveBreakdown = '';
  private maxReplicaSum = 0;
  /** ReplicaSet UID → its active pods' UIDs (by controller reference). */
  private readonly activeByRS = new Map<string, Set<string>>();
  /** ReplicaSet UID → name and every (resourceVersion, spec.replicas) it was seen with, in order. */
  private readonly rsHistory = new Map<string, { name: string; specs: [number, number][] }>();
  /** Pod events after which a ReplicaSet had more active pods than any spec.replicas known then: checked in checks(). */
  private readonly rsSuspects: { rs: string; pods: number; rv: number }[] = [];
  private killedAt = 0;
  private lateNodes: HollowNodesProcess | undefined;
  /** The etcd followers when etcdOneMemberDown() began; the first of them is killed then. */
  private killed: EtcdClusterMember[] = [];

  private constructor(
    private readonly opts: Required<Omit<HADrillOptions, 'log' | 'fromSource'>> & Pick<HADrillOptions, 'log'>,
    readonly etcd: EtcdCluster,
    /** The first server: the leader, killed by rollAndKillLeader(). */
    readonly leader: K8tsServer,
    /** The survivor. */
    readonly survivor: K8tsServer,
    readonly hollow: HollowNodesProcess,
    /** Clients of B alone (the recorder's) and of A then B (the writer's). */
    private readonly survivorClient: RestClient,
    private readonly failoverClient: RestClient,
    private readonly recorder: InformerFactory,
    private readonly followers: SharedInformer<ConfigMap>,
    private readonly identities: { leader: string; survivor: string },
    private readonly fromSource: boolean,
    /** The HAProxy in front of both servers: its URL, and its stop(). */
    private readonly lb: { url: string; stop(): Promise<void> } | undefined,
  ) {}

  /** replicas + maxSurge (25 %, rounded up, as the Deployment's default). */
  get surgeLimit(): number {
    return this.opts.pods + Math.ceil(this.opts.pods / 4);
  }

  /**
   * Starts the cluster and waits until the Deployment's pods are all available.
   * Everything started is stopped again when a step fails.
   */
  static async start(options: HADrillOptions): Promise<HADrill> {
    const opts = {
      leaseDurationSeconds: 3,
      killAtAvailableFraction: 0.3,
      writeIntervalMs: 100,
      rolloutTimeoutMs: 600_000,
      ...options,
    };
    const log = opts.log ?? (() => {});
    const lease = opts.leaseDurationSeconds;
    const started: (() => unknown)[] = [];
    try {
      const t0 = Date.now();
      const etcd = await startEtcdCluster({ size: 3 });
      started.push(() => etcd.stop());
      log(`# etcd: 3 members up in ${Date.now() - t0} ms (${etcd.endpoints.join(', ')})`);
      const args = [
        '--datastore',
        'etcd',
        '--etcd-endpoints',
        etcd.endpoints.join(','),
        '--leader-elect-lease-duration',
        `${lease}s`,
        '--leader-elect-renew-deadline',
        `${Math.max(1, Math.round((lease * 2) / 3))}s`,
        '--leader-elect-retry-period',
        `${Math.max(100, Math.round((lease * 1000) / 6))}ms`,
      ];
      const serverOpts = { args, readyTimeoutMs: 60_000, fromSource: options.fromSource ?? false };
      const a = await startK8tsServer(serverOpts);
      started.push(() => a.stop());
      const aClient = RestClient.fromKubeconfig(a.kubeconfig);
      started.push(() => aClient.close());
      const idA = identityOf(a);
      for (const name of ['kube-scheduler', 'kube-controller-manager'])
        await until(
          `A holds ${name}`,
          async () => ((await holder(aClient, name)) === idA ? true : undefined),
          60_000,
        );
      const b = await startK8tsServer(serverOpts);
      started.push(() => b.stop());
      const idB = identityOf(b);
      log(`# servers: A ${a.url} (pid ${a.pid}, the leader), B ${b.url} (pid ${b.pid})`);
      const lb = await startLoadBalancer([a.url, b.url]);
      if (lb) started.push(() => lb.stop());
      log(
        lb
          ? `# HAProxy in front of both: ${lb.url}`
          : '# no haproxy installed: kubectl through a load balancer is not tried',
      );

      const survivorClient = RestClient.fromKubeconfig(b.kubeconfig);
      started.push(() => survivorClient.close());
      // A's kubeconfig, both servers: B verifies A's admin certificate (one cluster CA).
      const { config } = loadKubeconfig(a.kubeconfig);
      const failoverClient = new RestClient({ ...config, alternateServers: [b.url], timeoutMs: 15_000 });
      started.push(() => failoverClient.close());
      for (const ns of [DRILL_NAMESPACE, WRITES_NAMESPACE])
        await survivorClient.create(resources.namespaces, {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: ns },
        });

      const t1 = Date.now();
      const hollow = await startHollowNodesProcess({
        server: a.url,
        token: a.nodeToken(),
        count: opts.nodes,
        built: !(options.fromSource ?? false),
        args: ['--server', b.url, '--concurrency', '32', '--log-level', 'error'],
        readyTimeoutMs: 120_000 + 200 * opts.nodes,
      });
      started.push(() => hollow.stop());
      log(
        `# hollow nodes: ${opts.nodes} joined through A, with B as the second server, in ${Date.now() - t1} ms`,
      );

      const recorder = new InformerFactory({ client: survivorClient });
      started.push(() => recorder.shutdown());
      const followers = SharedInformer.fromClient<ConfigMap>(failoverClient, resources.configmaps, {
        namespace: WRITES_NAMESPACE,
      });
      started.push(() => followers.stop());
      const drill = new HADrill(
        opts,
        etcd,
        a,
        b,
        hollow,
        survivorClient,
        failoverClient,
        recorder,
        followers,
        { leader: idA, survivor: idB },
        options.fromSource ?? false,
        lb,
      );
      started.push(() => drill.stopWriter());
      drill.record();
      recorder.start();
      followers.start();
      assert.ok(await recorder.waitForCacheSync(30_000), 'the recorder informers synced');
      assert.ok(await followers.waitForSync(30_000), 'the A-first ConfigMap informer synced');
      drill.writer = drill.write();

      const t2 = Date.now();
      await survivorClient.create(resources.deployments, deployment(opts.pods));
      await drill.untilComplete('spring-server:1.0', opts.rolloutTimeoutMs);
      log(`# deployment: ${opts.pods} pods available in ${Date.now() - t2} ms`);
      return drill;
    } catch (err) {
      await cleanUp(started.reverse());
      throw err;
    }
  }

  /** The informers on B that record bindings and counts (see the file comment). */
  private record(): void {
    const pods = this.recorder.informerFor<Pod>(resources.pods, { namespace: DRILL_NAMESPACE });
    const onPod = (p: Pod) => {
      const uid = p.metadata.uid!;
      if (p.spec.nodeName) {
        const b = this.bindings.get(uid) ?? { name: p.metadata.name!, nodes: new Set<string>() };
        b.nodes.add(p.spec.nodeName);
        this.bindings.set(uid, b);
      }
      // Active as the ReplicaSet controller counts pods (controller.FilterActivePods).
      const active =
        !p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';
      if (active) this.activePods.add(uid);
      else this.activePods.delete(uid);
      if (this.activePods.size > this.maxActive) {
        this.maxActive = this.activePods.size;
        this.maxActiveAt = Date.now();
        this.maxActiveBreakdown = 'pending';
      }
      const owner = p.metadata.ownerReferences?.find((r) => r.controller)?.uid;
      if (owner) {
        let set = this.activeByRS.get(owner);
        if (!set) this.activeByRS.set(owner, (set = new Set()));
        if (active) set.add(uid);
        else set.delete(uid);
        // The RS informer may be behind the pod informer (two watches): a pod count above
        // the largest spec.replicas known now is checked again in checks(), against the
        // ReplicaSet's specs up to this pod's resourceVersion.
        const specs = this.rsHistory.get(owner)?.specs ?? [];
        if (set.size > Math.max(0, ...specs.map(([, n]) => n)))
          this.rsSuspects.push({ rs: owner, pods: set.size, rv: Number(p.metadata.resourceVersion) });
      }
      if (this.maxActiveBreakdown === 'pending')
        this.maxActiveBreakdown = [...this.activeByRS]
          .filter(([, pods]) => pods.size > 0)
          .map(([rs, pods]) => {
            const h = this.rsHistory.get(rs);
            return `${h?.name ?? rs} ${pods.size} pods, spec.replicas ${h?.specs.at(-1)?.[1] ?? '?'}`;
          })
          .join('; ');
    };
    pods.addEventHandler({
      onAdd: onPod,
      onUpdate: (_, p) => onPod(p),
      onDelete: (p) => {
        const pod = deletedObject(p);
        this.activePods.delete(pod.metadata.uid!);
        const owner = pod.metadata.ownerReferences?.find((r) => r.controller)?.uid;
        if (owner) this.activeByRS.get(owner)?.delete(pod.metadata.uid!);
      },
    });
    const rss = this.recorder.informerFor<ReplicaSet>(resources.replicasets, { namespace: DRILL_NAMESPACE });
    const onRS = (rs: ReplicaSet) => {
      const h = this.rsHistory.get(rs.metadata.uid!) ?? { name: rs.metadata.name!, specs: [] };
      h.specs.push([Number(rs.metadata.resourceVersion), rs.spec?.replicas ?? 0]);
      this.rsHistory.set(rs.metadata.uid!, h);
      const sum = rss
        .lister()
        .list()
        .reduce((n, rs) => n + (rs.spec?.replicas ?? 0), 0);
      this.maxReplicaSum = Math.max(this.maxReplicaSum, sum);
    };
    rss.addEventHandler({
      onAdd: onRS,
      onUpdate: (_, rs) => onRS(rs),
      onDelete: (rs) => onRS(deletedObject(rs)),
    });
  }

  /** `kubectl rollout status` of the drill's Deployment with the leader's kubeconfig, through `server`. */
  private rolloutStatus(server: string): ReturnType<typeof run> {
    return run(
      'kubectl',
      [
        '--kubeconfig',
        this.leader.kubeconfig,
        '--server',
        server,
        '-n',
        DRILL_NAMESPACE,
        'rollout',
        'status',
        `deployment/${DEPLOYMENT}`,
        `--timeout=${Math.round(this.opts.rolloutTimeoutMs / 1000)}s`,
      ],
      { timeoutMs: this.opts.rolloutTimeoutMs + 30_000 },
    );
  }

  /** The writer: a ConfigMap create every writeIntervalMs through the A-then-B client, until stopWriter(). */
  private async write(): Promise<void> {
    while (!this.writerStop) {
      const name = `w-${++this.seq}`;
      try {
        await this.failoverClient.create(resources.configmaps, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name, namespace: WRITES_NAMESPACE },
          data: { at: String(Date.now()) },
        });
        this.written.push({ name, at: Date.now(), ok: true });
      } catch (err) {
        this.written.push({ name, at: Date.now(), ok: false, error: String(err) });
      }
      await new Promise((r) => setTimeout(r, this.opts.writeIntervalMs));
    }
  }

  private async stopWriter(): Promise<void> {
    this.writerStop = true;
    await this.writer;
  }

  /** The longest time between two acknowledged writes in [from, to], ms, and the failed writes there (their errors). */
  private writeGap(from: number, to: number): { gapMs: number; failed: number; errors: string[] } {
    const acks = this.written.filter((w) => w.ok && w.at >= from && w.at <= to).map((w) => w.at);
    const points = [from, ...acks, to];
    let gapMs = 0;
    for (let i = 1; i < points.length; i++) gapMs = Math.max(gapMs, points[i]! - points[i - 1]!);
    const failed = this.written.filter((w) => !w.ok && w.at >= from && w.at <= to);
    return { gapMs, failed: failed.length, errors: failed.map((w) => w.error ?? '') };
  }

  /** Waits until the Deployment runs `image` everywhere: updated = available = replicas, observed, old ReplicaSets at 0. */
  private async untilComplete(image: string, timeoutMs: number): Promise<void> {
    const c = this.survivorClient;
    await until(
      `deployment ${DEPLOYMENT} complete on ${image}`,
      async () => {
        const d = await c.get<Deployment>(resources.deployments, DRILL_NAMESPACE, DEPLOYMENT);
        const s = d.status;
        const want = this.opts.pods;
        if (
          d.spec?.template.spec?.containers[0]?.image !== image ||
          (s?.observedGeneration ?? 0) < (d.metadata.generation ?? 0) ||
          s?.updatedReplicas !== want ||
          s?.availableReplicas !== want ||
          s?.replicas !== want
        )
          return undefined;
        const rss = (await c.list<ReplicaSet>(resources.replicasets, { namespace: DRILL_NAMESPACE })).items;
        const old = rss.filter((rs) => rs.spec?.template?.spec?.containers[0]?.image !== image);
        return old.every((rs) => (rs.spec?.replicas ?? 0) === 0 && (rs.status?.replicas ?? 0) === 0)
          ? true
          : undefined;
      },
      timeoutMs,
      500,
    );
  }

  /**
   * The rolling update (spring-server:1.0 → 1.1, through A) and, once `killAtAvailableFraction`
   * of the replicas are updated, kill -9 of A; then waits for B to take both Leases, every
   * hollow node to renew its Lease again, the A-first informer to follow, and the rollout to
   * complete; runs kubectl through B with A's kubeconfig and joins two late nodes through
   * `--server A,B`.
   */
  async rollAndKillLeader(): Promise<RolloutResult> {
    const log = this.opts.log ?? (() => {});
    const start = Date.now();
    const set = await run('kubectl', [
      '--kubeconfig',
      this.leader.kubeconfig,
      '-n',
      DRILL_NAMESPACE,
      'set',
      'image',
      `deployment/${DEPLOYMENT}`,
      'web=spring-server:1.1',
    ]);
    assert.equal(set.code, 0, set.stderr);
    // Killed once that share of the new pods is available: the old ReplicaSet still has
    // pods then, so the rollout is in its middle whatever its pace.
    const threshold = Math.max(1, Math.floor(this.opts.pods * this.opts.killAtAvailableFraction));
    const atKill = await until(
      `${threshold} available updated replicas`,
      async () => {
        const rss = (
          await this.survivorClient.list<ReplicaSet>(resources.replicasets, { namespace: DRILL_NAMESPACE })
        ).items;
        const isNew = (rs: ReplicaSet) =>
          rs.spec?.template?.spec?.containers[0]?.image === 'spring-server:1.1';
        const available = rss.filter(isNew).reduce((n, rs) => n + (rs.status?.availableReplicas ?? 0), 0);
        const old = rss.filter((rs) => !isNew(rs)).reduce((n, rs) => n + (rs.status?.replicas ?? 0), 0);
        return available >= threshold ? { available, old } : undefined;
      },
      this.opts.rolloutTimeoutMs,
      50,
    );
    // kubectl as users run it in front of several servers: through one address.
    const throughLB = this.lb ? this.rolloutStatus(this.lb.url) : undefined;
    const heldAtKill = {
      scheduler: (await holder(this.survivorClient, 'kube-scheduler')) === this.identities.leader,
      controllerManager:
        (await holder(this.survivorClient, 'kube-controller-manager')) === this.identities.leader,
    };
    const killedAt = Date.now();
    this.killedAt = killedAt;
    process.kill(this.leader.pid, 'SIGKILL');
    log(
      `# kill -9 of A (pid ${this.leader.pid}) with ${atKill.available}/${this.opts.pods} new pods available and ${atKill.old} old pods left`,
    );

    const c = this.survivorClient;
    const takeover = { scheduler: 0, controllerManager: 0 };
    const holderWatch = until(
      'B holds both Leases',
      async () => {
        for (const [name, key] of [
          ['kube-scheduler', 'scheduler'],
          ['kube-controller-manager', 'controllerManager'],
        ] as const) {
          if (
            takeover[key] === 0 &&
            (await holder(c, name).catch(() => undefined)) === this.identities.survivor
          )
            takeover[key] = Date.now() - killedAt;
        }
        return takeover.scheduler > 0 && takeover.controllerManager > 0 ? true : undefined;
      },
      120_000,
      50,
    );
    const followWatch = (async () => {
      const after = await until(
        'a write acknowledged after the kill',
        () => this.written.find((w) => w.ok && w.at > killedAt),
        120_000,
        50,
      );
      await until(
        `${after.name} in the A-first informer`,
        () => (this.followers.lister().namespace(WRITES_NAMESPACE).get(after.name) ? true : undefined),
        120_000,
        50,
      );
      return Date.now() - killedAt;
    })();
    const nodesWatch = until(
      'every hollow node renewed its Lease after the kill',
      async () => {
        const leases = (await c.list<Lease>(resources.leases, { namespace: 'kube-node-lease' })).items;
        const renewed = leases.filter(
          (l) =>
            l.metadata.name!.startsWith('hollow-node-') && Date.parse(l.spec?.renewTime ?? '') > killedAt,
        );
        return renewed.length >= this.opts.nodes ? Date.now() - killedAt : undefined;
      },
      120_000,
      500,
    );
    await holderWatch;
    log(
      `# takeover: scheduler ${takeover.scheduler} ms, controller manager ${takeover.controllerManager} ms (lease ${this.opts.leaseDurationSeconds} s)`,
    );
    const informerFollowedMs = await followWatch;
    const nodesRenewedMs = await nodesWatch;
    log(
      `# clients followed: the A-first informer after ${informerFollowedMs} ms, every hollow node's Lease renewed through B after ${nodesRenewedMs} ms`,
    );

    const tJoin = Date.now();
    this.lateNodes = await startHollowNodesProcess({
      server: this.leader.url,
      token: this.leader.nodeToken(),
      count: 2,
      built: !this.fromSource,
      args: ['--server', this.survivor.url, '--prefix', 'late-node-', '--log-level', 'error'],
    });
    const lateJoinMs = Date.now() - tJoin;
    log(`# two nodes joined with --server A(dead),B in ${lateJoinMs} ms`);

    const kubectl = await this.rolloutStatus(this.survivor.url);
    await this.untilComplete('spring-server:1.1', this.opts.rolloutTimeoutMs);
    const done = Date.now();
    const kubectlThroughLB = await throughLB;
    const gap = this.writeGap(killedAt, done);
    log(
      `# rollout: ${done - start} ms in all, ${done - killedAt} ms after the kill; writes: longest gap ${gap.gapMs} ms, ${gap.failed} failed`,
    );
    return {
      rolloutMs: done - start,
      afterKillMs: done - killedAt,
      atKill,
      takeover,
      heldAtKill,
      leadership: leadershipLines({ A: this.leader, B: this.survivor }),
      nodesRenewedMs,
      informerFollowedMs,
      writeGapMs: gap.gapMs,
      failedWrites: gap.failed,
      failedWriteErrors: gap.errors,
      kubectl,
      kubectlThroughLB,
      lateJoinMs,
    };
  }

  /**
   * The invariants over everything recorded so far; `acknowledged`/`lost` read the store
   * through B (the writer is paused for the read, so every acknowledgement is in the list).
   */
  async checks(): Promise<DrillChecks> {
    const reboundPods = [...this.bindings.values()]
      .filter((b) => b.nodes.size > 1)
      .map((b) => `${b.name}: ${[...b.nodes].join(',')}`);
    const events = (await listAll<CoreEvent>(this.survivorClient, resources.events, DRILL_NAMESPACE)).filter(
      (e) => e.reason === 'Scheduled',
    );
    const perPod = new Map<string, number>();
    for (const e of events) {
      const key = e.involvedObject.uid ?? e.involvedObject.name!;
      perPod.set(key, (perPod.get(key) ?? 0) + (e.count ?? 1));
    }
    const twiceScheduled = [...perPod].filter(([, n]) => n > 1).map(([k, n]) => `${k}: ${n}`);
    const pods = await listAll<Pod>(this.survivorClient, resources.pods, DRILL_NAMESPACE);
    const perNode = new Map<string, number>();
    for (const p of pods)
      if (p.spec.nodeName && !['Succeeded', 'Failed'].includes(p.status?.phase ?? ''))
        perNode.set(p.spec.nodeName, (perNode.get(p.spec.nodeName) ?? 0) + 1);
    const overcommittedNodes = [...perNode].filter(([, n]) => n > 110).map(([k, n]) => `${k}: ${n}`);
    const acked = this.written.filter((w) => w.ok).map((w) => w.name);
    const present = new Set(
      (await listAll<ConfigMap>(this.survivorClient, resources.configmaps, WRITES_NAMESPACE)).map(
        (cm) => cm.metadata!.name!,
      ),
    );
    const overCreated: string[] = [];
    for (const s of this.rsSuspects) {
      const h = this.rsHistory.get(s.rs);
      const known = (h?.specs ?? []).filter(([rv]) => rv <= s.rv).map(([, n]) => n);
      const most = Math.max(0, ...known);
      if (s.pods > most) overCreated.push(`${h?.name ?? s.rs}: ${s.pods} pods > spec ${most} (rv ${s.rv})`);
    }
    return {
      reboundPods,
      twiceScheduled,
      boundPods: this.bindings.size,
      surgeLimit: this.surgeLimit,
      maxActivePods: this.maxActive,
      maxActiveAfterKillMs: this.killedAt === 0 ? Number.NaN : this.maxActiveAt - this.killedAt,
      overCreated,
      maxActiveBreakdown: this.maxActiveBreakdown,
      maxReplicaSum: this.maxReplicaSum,
      overcommittedNodes,
      acknowledged: acked.length,
      lost: acked.filter((n) => !present.has(n)),
    };
  }

  /** `n` creates through B, one after the other; each failure's message. */
  private async probeWrites(prefix: string, n: number): Promise<string[]> {
    const failures: string[] = [];
    for (let i = 0; i < n; i++) {
      try {
        await this.survivorClient.create(resources.configmaps, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `${prefix}-${i}`, namespace: WRITES_NAMESPACE },
        });
        this.written.push({ name: `${prefix}-${i}`, at: Date.now(), ok: true });
      } catch (err) {
        failures.push(err instanceof ApiStatusError ? `${err.code}: ${err.message}` : String(err));
      }
    }
    return failures;
  }

  /**
   * Kills one etcd member, a follower (killing the raft leader is an election, during which
   * a write in flight is answered 503 'request timed out, possibly due to previous leader
   * failure' after etcd's 7 s request timeout: its outcome is unknown, as in etcd, so it is
   * not retried), then `writes` creates through B; the writer keeps going.
   */
  async etcdOneMemberDown(writes = 20): Promise<EtcdPhaseResult & { member: string }> {
    const from = Date.now();
    const leaders = await Promise.all(this.etcd.members.map((m) => m.isLeader()));
    this.killed = this.etcd.members.filter((_, i) => !leaders[i]);
    const member = this.killed[0]!;
    await member.kill();
    this.opts.log?.(`# etcd member ${member.name} (a follower) killed`);
    const failures = await this.probeWrites('one-down', writes);
    // The writer's writes too, for a few seconds more.
    const until = Date.now() + 3000;
    while (Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    const gap = this.writeGap(from, Date.now());
    this.opts.log?.(
      `# one member down: ${writes - failures.length}/${writes} writes through B succeeded; the writer's longest gap ${gap.gapMs} ms`,
    );
    return { writes, failures, writeGapMs: gap.gapMs, member: member.name };
  }

  /** Kills a second member (no quorum), and sends one create through B: its answer. */
  async etcdQuorumLost(): Promise<QuorumLostResult> {
    const second = this.etcd.members.find((m) => m !== this.killed[0])!;
    await second.kill();
    this.opts.log?.(`# etcd member ${second.name} killed: 1 of 3 left`);
    const t = Date.now();
    try {
      await this.survivorClient.create(
        resources.configmaps,
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'no-quorum', namespace: WRITES_NAMESPACE } },
        {},
      );
      return { answeredInMs: Date.now() - t, code: 201, status: undefined };
    } catch (err) {
      const answeredInMs = Date.now() - t;
      if (err instanceof ApiStatusError) {
        this.opts.log?.(
          `# without quorum a write is answered in ${answeredInMs} ms: ${err.code} ${err.status.reason}: ${err.message}`,
        );
        return { answeredInMs, code: err.code, status: err.status };
      }
      return { answeredInMs, code: 0, status: undefined, otherError: String(err) };
    }
  }

  /**
   * Restarts the first killed member (quorum again) and polls creates through B until one
   * succeeds; then `writes` more must. Returns the time from the restart to the first
   * success and the failures after it.
   */
  async etcdRecovered(
    writes = 10,
  ): Promise<{ recoveredMs: number; failuresAfter: string[]; informerCaughtUpMs: number }> {
    const t = Date.now();
    const member = this.killed[0]!;
    await member.restart();
    let i = 0;
    await until(
      'a write succeeds once a member is back',
      async () => ((await this.probeWrites(`recovered-${++i}`, 1)).length === 0 ? true : undefined),
      120_000,
      200,
    );
    const recoveredMs = Date.now() - t;
    const failuresAfter = await this.probeWrites('after-recovery', writes);
    // Watches through the survivor resume too: the A-first informer gets the last write.
    const last = `after-recovery-${writes - 1}`;
    await until(
      `${last} in the A-first informer`,
      () => (this.followers.lister().namespace(WRITES_NAMESPACE).get(last) ? true : undefined),
      120_000,
      50,
    );
    const informerCaughtUpMs = Date.now() - t;
    this.opts.log?.(
      `# member ${member.name} restarted: writes succeed again after ${recoveredMs} ms; ${writes - failuresAfter.length}/${writes} after that`,
    );
    return { recoveredMs, failuresAfter, informerCaughtUpMs };
  }

  /** Stops the writer, every process (by PID) and removes their dirs; idempotent. */
  async stop(): Promise<void> {
    await cleanUp([
      () => this.stopWriter(),
      () => this.followers.stop(),
      () => this.recorder.shutdown(),
      () => this.lateNodes?.stop(),
      () => this.lb?.stop(),
      () => this.hollow.stop(),
      () => this.failoverClient.close(),
      () => this.survivorClient.close(),
      () => this.survivor.stop(),
      () => this.leader.stop(),
      () => this.etcd.stop(),
    ]);
  }
}

/** The Deployment: `pods` replicas of spring-server:1.0, default RollingUpdate (25 % / 25 %). */
function deployment(pods: number): Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: DEPLOYMENT, namespace: DRILL_NAMESPACE },
    spec: {
      replicas: pods,
      selector: { matchLabels: { app: DEPLOYMENT } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: {
        metadata: { labels: { app: DEPLOYMENT } },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'web', image: 'spring-server:1.0' }],
        },
      },
    },
  };
}

function identityOf(s: K8tsServer): string {
  const m = /"identity":"([^"]+)"/.exec(s.logs());
  if (!m) throw new Error(`server ${s.url} did not log its identity:\n${s.logs().slice(-2000)}`);
  return m[1]!;
}

async function holder(c: RestClient, name: string): Promise<string | undefined> {
  const lease = await c.get<Lease>(resources.leases, 'kube-system', name).catch(() => undefined);
  return lease?.spec?.holderIdentity || undefined;
}

/** Every object of `ref` in `namespace`, page by page. */
async function listAll<T extends KubeObject>(
  c: RestClient,
  ref: (typeof resources)[keyof typeof resources],
  namespace: string,
): Promise<T[]> {
  const out: T[] = [];
  let cont: string | undefined;
  do {
    const page = await c.list<T>(ref, { namespace, limit: 1000, ...(cont ? { continue: cont } : {}) });
    out.push(...page.items);
    cont = page.metadata?.continue || undefined;
  } while (cont);
  return out;
}

/**
 * Debian's HAProxy in TCP mode on a free loopback port in front of `servers` (https URLs),
 * `balance first` (the first server while its health check passes), checked every 500 ms,
 * sessions to a server marked down cut; undefined when `haproxy` is not installed. stop()
 * signals exactly its PID and removes its config dir.
 */
async function startLoadBalancer(
  servers: string[],
): Promise<{ url: string; stop(): Promise<void> } | undefined> {
  const dir = mkdtempSync(join(tmpdir(), 'k8ts-ha-lb-'));
  const [port] = await freePorts(1);
  const cfg = join(dir, 'haproxy.cfg');
  writeFileSync(
    cfg,
    [
      'global',
      '  maxconn 2000',
      'defaults',
      '  mode tcp',
      '  timeout connect 2s',
      '  timeout client 1h',
      '  timeout server 1h',
      'frontend api',
      `  bind 127.0.0.1:${port}`,
      '  default_backend servers',
      'backend servers',
      '  balance first',
      ...servers.map((s, i) => {
        const u = new URL(s);
        return `  server s${i} ${u.hostname}:${u.port} check inter 500ms fall 2 rise 2 on-marked-down shutdown-sessions`;
      }),
      '',
    ].join('\n'),
  );
  let child: ChildProcess;
  try {
    child = spawn('haproxy', ['-db', '-f', cfg], { stdio: ['ignore', 'ignore', 'ignore'] });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  const exited = new Promise((r) => child.once('exit', r));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.removeListener('exit', killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  await until(
    'haproxy listening',
    () =>
      new Promise<true | undefined>((resolve) => {
        const sock = connect(port!, '127.0.0.1', () => {
          sock.destroy();
          resolve(true);
        });
        sock.on('error', () => resolve(undefined));
      }),
    10_000,
    50,
  ).catch(async (err: unknown) => {
    await stop();
    throw err;
  });
  return { url: `https://127.0.0.1:${port}`, stop };
}

/** The leader-election lines of the servers' logs, `<who> <time> <message>`, in time order. */
function leadershipLines(servers: Record<string, K8tsServer>): string[] {
  const out: [string, string][] = [];
  for (const [who, server] of Object.entries(servers))
    for (const line of server.logs().split('\n')) {
      if (!/became leader|stopped leading|failed to renew|lost the lease/i.test(line)) continue;
      try {
        const l = JSON.parse(line) as { timestamp?: string; message?: string };
        out.push([l.timestamp ?? '', `${who} ${l.timestamp ?? ''} ${l.message ?? line}`]);
      } catch {
        out.push(['', `${who} ${line}`]);
      }
    }
  return out.sort((x, y) => x[0].localeCompare(y[0])).map(([, l]) => l);
}
