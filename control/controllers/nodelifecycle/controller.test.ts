/**
 * The node lifecycle and taint eviction controllers against the real API server, with two
 * fake nodes whose kubelet can be paused (its Lease stops being renewed).
 */
import assert from 'node:assert/strict';
import { after, afterEach, describe, it } from 'node:test';
import { resources } from '../../../api/client/resource.js';
import type { CoreEvent, Node, Pod, Toleration } from '../../../api/types.js';
import type { TestApi, TestApiOptions } from '../../../test/support/api.js';
import { makeNode, type FakeKubelet } from '../../../test/support/fake-nodes.js';
import { startControllers, until as poll } from '../testing.js';
import type { ControllerTest } from '../testing.js';
import { taintEvictionController } from '../tainteviction/controller.js';
import { nodeLifecycleController } from './controller.js';

const UNREACHABLE = 'node.kubernetes.io/unreachable';

/** Polls `f`; a node goes Unknown and its pods are evicted within 20 s. */
const until = <T>(what: string, f: () => Promise<T | undefined | false>, ms = 20_000) => poll(what, f, ms);

type Cluster = ControllerTest & { kubelet: FakeKubelet };

async function startCluster(apiOpts: TestApiOptions = {}): Promise<Cluster> {
  const cluster = await startControllers({
    api: apiOpts,
    nodes: [makeNode('n1'), makeNode('n2')],
    leaseRenewMs: 200,
    controllers: {
      nodelifecycle: nodeLifecycleController,
      'taint-eviction-controller': taintEvictionController,
    },
    config: {
      nodeMonitorPeriodSeconds: 0.25,
      nodeMonitorGracePeriodSeconds: 1.5,
      nodeStartupGracePeriodSeconds: 5,
    },
  });
  return { ...cluster, kubelet: cluster.kubelet! };
}

function pod(name: string, node: string, tolerations?: Toleration[]): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: {
      nodeName: node,
      containers: [{ name: 'c', image: 'spring-server:1.0' }],
      ...(tolerations ? { tolerations } : {}),
    },
  };
}

const tolerateUnreachable = (seconds?: number): Toleration => ({
  key: UNREACHABLE,
  operator: 'Exists',
  effect: 'NoExecute',
  tolerationSeconds: seconds,
});

const getPod = (api: TestApi, name: string) => api.client.get<Pod>(resources.pods, 'default', name);
const getNode = (api: TestApi, name: string) => api.client.get<Node>(resources.nodes, undefined, name);
const ready = (p: Pod | Node) => p.status?.conditions?.find((c) => c.type === 'Ready');

async function podGoneOrTerminating(api: TestApi, name: string): Promise<Pod | 'gone' | undefined> {
  try {
    const p = await getPod(api, name);
    return p.metadata.deletionTimestamp ? p : undefined;
  } catch {
    return 'gone';
  }
}

async function events(api: TestApi, reason: string, namespace = 'default'): Promise<CoreEvent[]> {
  const list = await api.client.list<CoreEvent>(resources.events, { namespace });
  return list.items.filter((e) => e.reason === reason);
}

async function allReady(api: TestApi, names: string[]): Promise<boolean> {
  for (const n of names) if (ready(await getPod(api, n))?.status !== 'True') return false;
  return true;
}

describe('node lifecycle and taint eviction', () => {
  let cluster: Cluster | undefined;
  afterEach(async () => {
    await cluster?.stop();
    cluster = undefined;
  });
  after(async () => cluster?.stop());

  it("reads the Leases from the factory's cluster-wide informer, the one the garbage collector watches", async () => {
    // kube-controller-manager hands the node lifecycle controller the shared factory's Lease
    // informer: one watch of Leases, not one more per node Lease renewal's event.
    let shared: boolean | undefined;
    cluster = {
      ...(await startControllers({
        nodes: [makeNode('n1')],
        controllers: {
          nodelifecycle: nodeLifecycleController,
          probe: (ctx) => ({
            name: 'probe',
            // Run after the factory started and synced the informers the controllers asked for.
            run: async () => {
              shared = ctx.informers.informerFor(resources.leases).hasSynced();
            },
          }),
        },
      })),
      kubelet: undefined as unknown as FakeKubelet,
    };
    await until('the probe', async () => shared !== undefined);
    assert.equal(shared, true);
  });

  it('a node whose Lease stops is marked Unknown and tainted, its pods NotReady and evicted by their tolerations; it recovers when the kubelet returns', async () => {
    cluster = await startCluster();
    const { api, kubelet } = cluster;
    await api.client.create(resources.pods, pod('short', 'n1', [tolerateUnreachable(1)]));
    await api.client.create(resources.pods, pod('forever', 'n1', [tolerateUnreachable()]));
    await api.client.create(resources.pods, pod('defaulted', 'n1'));
    await api.client.create(resources.pods, pod('elsewhere', 'n2', [tolerateUnreachable(1)]));
    await until('pods Ready', () => allReady(api, ['short', 'forever', 'defaulted', 'elsewhere']));

    kubelet.pauseLease('n1');

    const n1 = await until('n1 Ready Unknown and tainted', async () => {
      const n = await getNode(api, 'n1');
      const effects = (n.spec?.taints ?? []).filter((t) => t.key === UNREACHABLE).map((t) => t.effect);
      return (
        ready(n)?.status === 'Unknown' && effects.includes('NoExecute') && effects.includes('NoSchedule') && n
      );
    });
    assert.equal(ready(n1)?.reason, 'NodeStatusUnknown');
    assert.equal(ready(n1)?.message, 'Kubelet stopped posting node status.');
    assert.ok(
      n1.spec?.taints?.every((t) => t.timeAdded),
      'taints carry timeAdded',
    );

    for (const name of ['short', 'forever', 'defaulted']) {
      await until(`${name} Ready=False`, async () => ready(await getPod(api, name))?.status === 'False');
    }
    const evicted = await until('short evicted', () => podGoneOrTerminating(api, 'short'));
    if (evicted !== 'gone') {
      const target = evicted.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
      assert.equal(target?.status, 'True');
      assert.equal(target?.reason, 'DeletionByTaintManager');
    }
    await until('TaintManagerEviction event', async () =>
      (await events(api, 'TaintManagerEviction')).some(
        (e) => e.message === 'Marking for deletion Pod default/short',
      ),
    );
    await until('NodeNotReady node event', async () =>
      (await events(api, 'NodeNotReady')).some(
        (e) => e.involvedObject.kind === 'Node' && e.message === 'Node n1 status is now: NodeNotReady',
      ),
    );

    // The healthy node and its pod are untouched.
    const n2 = await getNode(api, 'n2');
    assert.equal(ready(n2)?.status, 'True');
    assert.deepEqual(n2.spec?.taints ?? [], []);
    const elsewhere = await getPod(api, 'elsewhere');
    assert.equal(ready(elsewhere)?.status, 'True');
    assert.equal(elsewhere.metadata.deletionTimestamp, undefined);

    kubelet.resumeLease('n1');

    await until('n1 Ready and untainted', async () => {
      const n = await getNode(api, 'n1');
      return ready(n)?.status === 'True' && (n.spec?.taints ?? []).length === 0;
    });
    await until(
      'short deletion confirmed by the returning kubelet',
      async () => (await podGoneOrTerminating(api, 'short')) === 'gone',
    );
    await until('pods Ready again', () => allReady(api, ['forever', 'defaulted']));
    for (const name of ['forever', 'defaulted']) {
      assert.equal((await getPod(api, name)).metadata.deletionTimestamp, undefined, `${name} is not evicted`);
    }
  });

  it('pods without tolerations of their own are evicted after the configured default toleration; a scheduled eviction is cancelled when the node returns', async () => {
    cluster = await startCluster({ defaultUnreachableTolerationSeconds: 1 });
    const { api, kubelet } = cluster;
    const created = await api.client.create<Pod>(resources.pods, pod('plain', 'n1'));
    assert.deepEqual(
      created.spec.tolerations?.find((t) => t.key === UNREACHABLE),
      { key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 1 },
    );
    await api.client.create(resources.pods, pod('patient', 'n2', [tolerateUnreachable(3600)]));
    await until('pods Ready', () => allReady(api, ['plain', 'patient']));

    kubelet.pauseLease('n1');
    await until('plain evicted', () => podGoneOrTerminating(api, 'plain'));

    kubelet.pauseLease('n2');
    kubelet.resumeLease('n1');
    await until('n2 tainted unreachable:NoExecute', async () =>
      (await getNode(api, 'n2')).spec?.taints?.some((t) => t.key === UNREACHABLE && t.effect === 'NoExecute'),
    );
    await until('patient Ready=False', async () => ready(await getPod(api, 'patient'))?.status === 'False');
    kubelet.resumeLease('n2');
    await until('n2 untainted', async () => ((await getNode(api, 'n2')).spec?.taints ?? []).length === 0);
    await until('cancel event', async () =>
      (await events(api, 'TaintManagerEviction')).some(
        (e) => e.message === 'Cancelling deletion of Pod default/patient',
      ),
    );
    await until('patient Ready again', () => allReady(api, ['patient']));
    assert.equal((await getPod(api, 'patient')).metadata.deletionTimestamp, undefined);
  });

  it('when every node stops reporting, no NoExecute taints are kept (master disruption mode) and no pod is evicted', async () => {
    cluster = await startCluster();
    const { api, kubelet } = cluster;
    await api.client.create(resources.pods, pod('p', 'n1', [tolerateUnreachable(30)]));
    await until('pod Ready', () => allReady(api, ['p']));
    kubelet.pauseLease('n1');
    kubelet.pauseLease('n2');
    await until('both nodes Unknown with unreachable:NoSchedule', async () => {
      for (const name of ['n1', 'n2']) {
        const n = await getNode(api, name);
        if (ready(n)?.status !== 'Unknown') return false;
        if (!n.spec?.taints?.some((t) => t.key === UNREACHABLE && t.effect === 'NoSchedule')) return false;
      }
      return true;
    });
    await until('no NoExecute taints', async () => {
      for (const name of ['n1', 'n2']) {
        if ((await getNode(api, name)).spec?.taints?.some((t) => t.effect === 'NoExecute')) return false;
      }
      return true;
    });
    // n1 may carry a NoExecute taint for a moment before n2 goes Unknown too; the pod's 30 s
    // toleration outlasts that moment, so it must survive.
    kubelet.resumeLease('n1');
    kubelet.resumeLease('n2');
    await until('nodes Ready and untainted', async () => {
      for (const name of ['n1', 'n2']) {
        const n = await getNode(api, name);
        if (ready(n)?.status !== 'True' || (n.spec?.taints ?? []).length > 0) return false;
      }
      return true;
    });
    await until('pod Ready again', () => allReady(api, ['p']));
    assert.equal((await getPod(api, 'p')).metadata.deletionTimestamp, undefined);
  });
});
