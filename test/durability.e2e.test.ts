// The durability drill of issue 20 (item 5): the real `k8ts server` on its default
// datastore (sqlite, in its data dir) with 10 hollow nodes (`k8ts hollow-nodes`, the fake
// runtime) runs a Deployment of 100 pods; a rolling update to a new image is under way and
// writers are creating, updating and deleting ConfigMaps through the API when the control
// process gets SIGKILL. It is started again on the same data dir and port, and then:
// - every write it acknowledged (a 2xx answer) is there: each created ConfigMap with its
//   data and at least its acknowledged resourceVersion, each counter at least at its
//   acknowledged value, each deleted one gone; every ConfigMap is whole (its payload's
//   sha256 matches), and the store's revision did not go back (a new write gets a
//   resourceVersion above every acknowledged one);
// - no pod is duplicated: pod names and UIDs are unique, in the store and in the watch
//   cache, no pod seen before the kill moved to another node, neither the ReplicaSets'
//   replicas summed nor any ReplicaSet's pods ever came to more than replicas + maxSurge
//   (sampled from before the update to the end, across the restart), and at the end
//   the new ReplicaSet has exactly 100 pods, the old one none, and the hollow nodes' pod
//   cache holds exactly the API's pods;
// - the rollout finishes (observedGeneration current, updated = available = 100) and the
//   hollow nodes, never restarted, are Ready on the restarted server.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { freePorts } from './support/etcd.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ApiStatusError } from '../api/client/errors.js';
import { resources } from '../api/client/resource.js';
import { RestClient } from '../api/client/rest.js';
import type { ConfigMap, Deployment, Node, Pod, ReplicaSet } from '../api/types.js';
import { MEMORY_LINE, startHollowNodesProcess, type HollowNodesProcess } from './support/hollow-nodes.js';
import { cleanUp, startK8tsServer, type K8tsServer } from './support/k8ts-server.js';
import { until } from './support/wait.js';

const NS = 'durability';
const NODES = 10;
const PREFIX = 'durable-';
const REPLICAS = 100;
/** The Deployment's maxSurge (25 %, upstream's default, of 100). */
const MAX_SURGE = 25;
const WRITERS = 4;

const deployment = (image: string): Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'drill', namespace: NS },
  spec: {
    replicas: REPLICAS,
    // Each step of the rollout waits 2 s for its new pods to count as available, so the
    // kill falls inside it rather than after its last step.
    minReadySeconds: 2,
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
    selector: { matchLabels: { app: 'drill' } },
    template: {
      metadata: { labels: { app: 'drill' } },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'main', image }],
      },
    },
  },
});

const freePort = async (): Promise<number> => (await freePorts(1))[0]!;

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const rv = (o: { metadata?: { resourceVersion?: string } }) => BigInt(o.metadata?.resourceVersion ?? '0');

/** A ConfigMap of a writer: its counter value, a random payload and the payload's sha256. */
function configMap(name: string, value: number, writer: number): ConfigMap {
  const payload = randomBytes(1536).toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: NS, labels: { drill: 'writes', writer: String(writer) } },
    data: { value: String(value), payload, sha256: sha256(payload) },
  };
}

/** What the writers had acknowledged: a 2xx answer, with the object it returned. */
interface Acknowledged {
  /** name → the created ConfigMap's value and resourceVersion. */
  created: Map<string, { value: string; rv: bigint }>;
  /** Names whose delete was sent (acknowledged or not): they may be gone. */
  deleteSent: Set<string>;
  /** Names whose delete was acknowledged: they must be gone. */
  deleted: Set<string>;
  /** counter name → the last acknowledged value and resourceVersion. */
  counters: Map<string, { value: number; rv: bigint }>;
  /** Acknowledged writes in all (creates, updates, deletes). */
  count: number;
  /** Writes that failed (refused, reset, timed out): their outcome is unknown. */
  failed: number;
}

/**
 * WRITERS loops, each creating `w<N>-<i>`, setting its counter `counter-w<N>` to i
 * (compare-and-swap on the last resourceVersion it read) and deleting every fifth
 * ConfigMap it made, until stop() — through the server's outage too, where every write
 * fails (its outcome unknown) and the loop carries on with the next.
 */
function startWriters(client: RestClient) {
  const ack: Acknowledged = {
    created: new Map(),
    deleteSent: new Set(),
    deleted: new Set(),
    counters: new Map(),
    count: 0,
    failed: 0,
  };
  let stopping = false;
  /** Acknowledged writes since the last call of sinceMark(). */
  let sinceMark = 0;
  const attempt = async <T>(write: () => Promise<T>): Promise<T | undefined> => {
    try {
      const out = await write();
      ack.count++;
      sinceMark++;
      return out;
    } catch (err) {
      ack.failed++;
      // While the server is down every request fails at once: do not spin.
      if (!(err instanceof ApiStatusError)) await new Promise((r) => setTimeout(r, 50));
      return undefined;
    }
  };
  const writer = async (w: number) => {
    const counterName = `counter-w${w}`;
    let counter: ConfigMap | undefined;
    for (let i = 0; !stopping; i++) {
      const name = `w${w}-${i}`;
      const made = await attempt(() => client.create<ConfigMap>(resources.configmaps, configMap(name, i, w)));
      if (made) ack.created.set(name, { value: made.data!.value!, rv: rv(made) });

      if (!counter) {
        counter = await attempt(async () => {
          try {
            return await client.get<ConfigMap>(resources.configmaps, NS, counterName);
          } catch (err) {
            if (!(err instanceof ApiStatusError && err.code === 404)) throw err;
            return await client.create<ConfigMap>(resources.configmaps, configMap(counterName, -1, w));
          }
        });
      }
      if (counter) {
        const next = configMap(counterName, i, w);
        next.metadata!.resourceVersion = counter.metadata!.resourceVersion!;
        const updated = await attempt(() => client.update<ConfigMap>(resources.configmaps, next));
        // On a conflict or an unknown outcome the next round reads it again.
        counter = updated;
        if (updated) ack.counters.set(counterName, { value: i, rv: rv(updated) });
      }

      if (i % 5 === 4) {
        const victim = `w${w}-${i - 2}`;
        if (ack.created.has(victim)) {
          ack.deleteSent.add(victim);
          if (await attempt(() => client.delete(resources.configmaps, NS, victim))) ack.deleted.add(victim);
        }
      }
    }
  };
  const loops = Array.from({ length: WRITERS }, (_, w) => writer(w));
  return {
    ack,
    /** Resets and returns the number of writes acknowledged since the last call. */
    mark(): number {
      const n = sinceMark;
      sinceMark = 0;
      return n;
    },
    async stop(): Promise<void> {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

const drillPods = async (client: RestClient, resourceVersion?: string) =>
  (
    await client.list<Pod>(resources.pods, {
      namespace: NS,
      labelSelector: 'app=drill',
      ...(resourceVersion !== undefined ? { resourceVersion } : {}),
    })
  ).items;
const replicaSets = async (client: RestClient) =>
  (await client.list<ReplicaSet>(resources.replicasets, { namespace: NS })).items;
const hashOf = (o: { metadata: { labels?: Record<string, string> } }) =>
  o.metadata.labels?.['pod-template-hash'];
const live = (p: Pod) => !p.metadata.deletionTimestamp;
const ready = (n: Node) => n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

/** The Deployment's status says it is rolled out, as `kubectl rollout status` waits for. */
const rolledOut = (d: Deployment) => {
  const s = d.status ?? {};
  return (
    (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 0) &&
    s.updatedReplicas === REPLICAS &&
    s.replicas === REPLICAS &&
    s.availableReplicas === REPLICAS
  );
};

describe('durability drill: kill -9 of the control process (sqlite) during a 100-pod rollout', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'k8ts-durability-'));
  let port: number;
  let k: K8tsServer | undefined;
  let hollow: HollowNodesProcess | undefined;
  let client: RestClient | undefined;
  let writers: ReturnType<typeof startWriters> | undefined;
  let sampler: { stop(): Promise<void> } | undefined;
  const serverArgs = () => ['--port', String(port)];

  before(async () => {
    port = await freePort();
    k = await startK8tsServer({ dataDir, readyTimeoutMs: 90_000, args: serverArgs() });
    hollow = await startHollowNodesProcess({
      server: k.url,
      token: k.nodeToken(),
      count: NODES,
      built: true,
      args: ['--prefix', PREFIX, '--max-pods', '50', '--cpu', '16'],
    });
    client = RestClient.fromKubeconfig(k.kubeconfig, { userAgent: 'durability-drill' });
  });
  after(async () => {
    await cleanUp([
      () => writers?.stop(),
      () => sampler?.stop(),
      () => client?.close(),
      () => hollow?.stop(),
      () => k?.stop(),
      () => rmSync(dataDir, { recursive: true, force: true }),
    ]);
  });

  it('keeps every acknowledged write, duplicates no pod, and finishes the rollout', async (t) => {
    assert.ok(k && client && hollow);
    const c = client;
    await c.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await until(
      `${NODES} hollow nodes Ready`,
      async () => {
        const ns = (await c.list<Node>(resources.nodes)).items.filter((n) =>
          n.metadata.name!.startsWith(PREFIX),
        );
        return ns.length === NODES && ns.every(ready) ? ns : undefined;
      },
      120_000,
      500,
    );
    await c.create(resources.deployments, deployment('spring-server:1.0'));
    await until(
      'deployment/drill available with 100 pods',
      async () => {
        const d = await c.get<Deployment>(resources.deployments, NS, 'drill');
        return rolledOut(d) ? d : undefined;
      },
      240_000,
      500,
    );

    // Sampled every 200 ms from now to the end (through the outage, where the reads
    // fail): the ReplicaSets' replicas summed, and each ReplicaSet's pods not being deleted.
    let worst = { sum: 0, at: '' };
    let mostPods = { count: 0, rs: '' };
    let sampling = true;
    const sampleLoop = (async () => {
      while (sampling) {
        try {
          const rss = await replicaSets(c);
          const sum = rss.reduce((n, rs) => n + (rs.spec?.replicas ?? 0), 0);
          if (sum > worst.sum)
            worst = { sum, at: rss.map((rs) => `${rs.metadata.name}=${rs.spec?.replicas}`).join(' ') };
          const pods = (await drillPods(c)).filter(live);
          for (const rs of rss) {
            const count = pods.filter((p) => p.metadata.ownerReferences?.[0]?.uid === rs.metadata.uid).length;
            if (count > mostPods.count) mostPods = { count, rs: rs.metadata.name! };
          }
        } catch {
          // the server is down
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    sampler = {
      stop: async () => {
        sampling = false;
        await sampleLoop;
      },
    };

    writers = startWriters(c);
    await until('the writers have 50 acknowledged writes', () =>
      writers!.ack.count >= 50 ? true : undefined,
    );

    // The rolling update, and its pods (uid → name and node) as last seen before the kill.
    const seenBefore = new Map<string, { name: string; node: string | undefined }>();
    const oldHash = hashOf((await replicaSets(c))[0]!);
    await c.patch(resources.deployments, NS, 'drill', 'strategic', {
      spec: { template: { spec: { containers: [{ name: 'main', image: 'spring-server:1.1' }] } } },
    });
    const atKill = await until(
      'the rollout under way: 40 or more new pods, the rollout not complete',
      async () => {
        const pods = await drillPods(c);
        for (const p of pods)
          seenBefore.set(p.metadata.uid!, { name: p.metadata.name!, node: p.spec.nodeName });
        const fresh = pods.filter((p) => live(p) && hashOf(p) !== oldHash);
        const d = await c.get<Deployment>(resources.deployments, NS, 'drill');
        return fresh.length >= 40 && !rolledOut(d)
          ? { fresh: fresh.length, old: pods.filter((p) => live(p) && hashOf(p) === oldHash).length, d }
          : undefined;
      },
      120_000,
      100,
    );
    assert.ok(writers.mark() > 0, 'writes are being acknowledged when the server is killed');

    const killedAt = Date.now();
    process.kill(k.pid, 'SIGKILL');
    await k.stop(); // waits for the exit; the data dir is ours and stays
    const ackAtKill = writers.ack.count;
    writers.mark(); // what was acknowledged up to the kill is not a sign the new server writes
    t.diagnostic(
      `killed with ${atKill.fresh} new and ${atKill.old} old pods (updated ${atKill.d.status?.updatedReplicas}, ` +
        `available ${atKill.d.status?.availableReplicas}); ${ackAtKill} writes acknowledged before the kill`,
    );

    const restartAt = Date.now();
    k = await startK8tsServer({ dataDir, readyTimeoutMs: 90_000, args: serverArgs() });
    const listening = Date.now();
    assert.equal(Number(new URL(k.url).port), port);
    const c2 = RestClient.fromKubeconfig(k.kubeconfig, { userAgent: 'durability-check' });
    try {
      // The writers carry on until the restarted server acknowledges one of their writes
      // (asserted after the check of the writes before, which says more when it fails).
      const back = await until(
        'the writers write again',
        () => (writers!.mark() > 0 ? Date.now() : undefined),
        60_000,
      ).catch((err: unknown) => err as Error);
      await writers.stop();
      const ack = writers.ack;

      // Every acknowledged write is there; nothing is half written.
      const cms = new Map(
        (
          await c2.list<ConfigMap>(resources.configmaps, { namespace: NS, labelSelector: 'drill=writes' })
        ).items.map((cm) => [cm.metadata!.name!, cm]),
      );
      let maxAcked = 0n;
      const missing: string[] = [];
      for (const [name, w] of ack.created) {
        maxAcked = w.rv > maxAcked ? w.rv : maxAcked;
        const cm = cms.get(name);
        if (ack.deleted.has(name)) {
          if (cm)
            missing.push(`${name} was deleted (acknowledged) but is back at ${cm.metadata!.resourceVersion}`);
          continue;
        }
        if (ack.deleteSent.has(name)) continue;
        if (!cm) missing.push(`${name} (created at ${w.rv}) is missing`);
        else if (cm.data?.value !== w.value || rv(cm) < w.rv)
          missing.push(
            `${name}: value ${cm.data?.value} at ${cm.metadata!.resourceVersion}, acknowledged ${w.value} at ${w.rv}`,
          );
      }
      for (const [name, w] of ack.counters) {
        maxAcked = w.rv > maxAcked ? w.rv : maxAcked;
        const cm = cms.get(name);
        if (!cm) missing.push(`${name} is missing`);
        else if (Number(cm.data?.value) < w.value || rv(cm) < w.rv)
          missing.push(
            `${name}: value ${cm.data?.value} at ${cm.metadata!.resourceVersion}, acknowledged ${w.value} at ${w.rv}`,
          );
      }
      assert.equal(
        missing.length,
        0,
        `of ${ack.count} acknowledged writes, ${missing.length} are lost: ${missing.slice(0, 10).join('; ')}`,
      );
      for (const cm of cms.values())
        assert.equal(sha256(cm.data?.payload ?? ''), cm.data?.sha256, `${cm.metadata!.name} is whole`);
      assert.ok(typeof back === 'number', String(back));
      const probe = await c2.create<ConfigMap>(resources.configmaps, configMap('after-restart', 0, WRITERS));
      assert.ok(
        rv(probe) > maxAcked,
        `a new write's resourceVersion ${rv(probe)} is above every acknowledged one (${maxAcked})`,
      );

      // The rollout finishes.
      const done = await until(
        'deployment/drill rolled out after the restart',
        async () => {
          const d = await c2.get<Deployment>(resources.deployments, NS, 'drill');
          return rolledOut(d) ? d : undefined;
        },
        240_000,
        500,
      );
      const rolled = Date.now();
      assert.equal(done.spec.template.spec.containers[0]!.image, 'spring-server:1.1');

      // No pod duplicated: once the old pods are gone, exactly 100 of the new template.
      const settled = await until(
        'the old pods gone',
        async () => {
          const pods = await drillPods(c2);
          return pods.length === REPLICAS && pods.every(live) ? pods : undefined;
        },
        120_000,
        500,
      );
      const cached = await drillPods(c2, '0');
      for (const [what, pods] of [
        ['store', settled],
        ['watch cache', cached],
      ] as const) {
        const names = pods.map((p) => p.metadata.name!);
        assert.equal(new Set(names).size, names.length, `pod names in the ${what} are unique`);
        assert.equal(
          new Set(pods.map((p) => p.metadata.uid)).size,
          pods.length,
          `pod UIDs in the ${what} are unique`,
        );
      }
      const rss = await replicaSets(c2);
      for (const rs of rss) {
        const owned = settled.filter((p) => p.metadata.ownerReferences?.[0]?.uid === rs.metadata.uid);
        const want = hashOf(rs) === oldHash ? 0 : REPLICAS;
        assert.equal(rs.spec?.replicas, want, `${rs.metadata.name} replicas`);
        assert.equal(owned.length, want, `${rs.metadata.name} has ${want} pods`);
      }
      assert.equal(
        settled.filter((p) => hashOf(p) !== oldHash).length,
        REPLICAS,
        'every pod is of the new template',
      );
      for (const p of settled) {
        const before = seenBefore.get(p.metadata.uid!);
        assert.ok(p.spec.nodeName?.startsWith(PREFIX), `${p.metadata.name} is bound to a hollow node`);
        if (before) {
          assert.equal(p.metadata.name, before.name);
          if (before.node)
            assert.equal(p.spec.nodeName, before.node, `${p.metadata.name} stayed on its node`);
        }
      }
      await sampler.stop();
      assert.ok(
        worst.sum <= REPLICAS + MAX_SURGE,
        `the ReplicaSets' replicas summed to ${worst.sum} (${worst.at}), above ${REPLICAS} + ${MAX_SURGE}`,
      );
      assert.ok(
        mostPods.count <= REPLICAS + MAX_SURGE,
        `ReplicaSet ${mostPods.rs} had ${mostPods.count} pods, above ${REPLICAS} + ${MAX_SURGE}`,
      );
      assert.ok(
        worst.sum <= REPLICAS + MAX_SURGE,
        `the ReplicaSets' replicas summed to ${worst.sum} (${worst.at}), above ${REPLICAS} + ${MAX_SURGE}`,
      );

      // The hollow nodes, never restarted, are Ready and hold exactly the API's pods.
      await until(
        `${NODES} hollow nodes Ready`,
        async () => {
          const ns = (await c2.list<Node>(resources.nodes)).items.filter((n) =>
            n.metadata.name!.startsWith(PREFIX),
          );
          return ns.length === NODES && ns.every(ready) ? ns : undefined;
        },
        120_000,
        500,
      );
      const memory = await until(
        'the hollow nodes holding the 100 pods',
        async () => {
          const line = await hollow!.reportMemory();
          return line.includes(`${NODES} nodes, ${REPLICAS} pods:`) ? line : undefined;
        },
        60_000,
        1_000,
      );
      assert.match(memory, new RegExp(MEMORY_LINE.source, 'm'));

      t.diagnostic(
        `${ack.count} writes acknowledged (${ackAtKill} before the kill), ${ack.failed} failed; ` +
          `restart: ${listening - restartAt} ms to listening, ${back - killedAt} ms from the kill to the next acknowledged write, ` +
          `${rolled - killedAt} ms from the kill to the rollout's end; replicas summed to ${worst.sum} at most, a ReplicaSet had ${mostPods.count} pods at most`,
      );
    } finally {
      c2.close();
    }
  });
});
