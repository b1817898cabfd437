// The backup drill of issue 20 (item 6), with the real `k8ts server` (sqlite), a real
// `k8ts agent` on Docker and the real kubectl: a Deployment is rolling out when `k8ts
// snapshot save` takes an online snapshot through the server; an in-place restore is
// refused while the server runs; then the server is stopped, its data dir wiped and
// restored from the copied-off snapshot, and started again on the same port. The
// objects the snapshot held are back with their resourceVersions (Secrets and ConfigMaps
// compared with what the snapshot file holds), a Secret deleted after the snapshot is back
// and a ConfigMap created after it is gone, the agent (which ran on throughout) reconnects
// with its node credential, the rollout completes, the agent ends up running containers
// for exactly the pods the restored API has, and the containers of pods that were in the
// snapshot and are still wanted were never restarted.
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { freePorts } from './support/etcd.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { RestClient } from '../api/client/rest.js';
import { resources } from '../api/client/resource.js';
import type { Deployment, Pod } from '../api/types.js';
import { openStore, type KeyValue } from '../control/storage/index.js';
import { restoreSnapshot } from '../control/snapshot/restore.js';
import { listSnapshots, metadataPath } from '../control/snapshot/metadata.js';
import { freeClusterCIDR } from './support/cluster-cidr.js';
import { removeNodeFromDocker, startK8tsAgent, type K8tsAgent } from './support/k8ts-agent.js';
import { cleanUp, cliCommand, run, startK8tsServer, type K8tsServer } from './support/k8ts-server.js';
import { until as waitUntil } from './support/wait.js';

const NODE = 'snapshot-drill';
const until = <T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms = 120_000) =>
  waitUntil(what, check, ms, 250);

const deployment = (version: string) => `
apiVersion: apps/v1
kind: Deployment
metadata: { name: drill, namespace: default }
spec:
  replicas: 3
  minReadySeconds: 6
  strategy: { type: RollingUpdate, rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } }
  selector: { matchLabels: { app: drill } }
  template:
    metadata: { labels: { app: drill } }
    spec:
      terminationGracePeriodSeconds: 1
      containers:
        - name: main
          image: k8ts/busybox:1.0
          imagePullPolicy: IfNotPresent
          command: [sleep, '3600']
          env: [{ name: VERSION, value: '${version}' }]
`;

const freePort = async (): Promise<number> => (await freePorts(1))[0]!;

/** `k8ts snapshot ...` from the source tree (what a user runs, with this checkout's code). */
function snapshotCli(...args: string[]) {
  const cli = cliCommand(true);
  return run(cli.cmd, [...cli.args, 'snapshot', ...args], { timeoutMs: 120_000 });
}

/** The app containers of this node's pods: pod UID → container ID → Docker's StartedAt. */
async function containersByPod(): Promise<Map<string, Map<string, string>>> {
  const ids = (
    await run('docker', [
      'ps',
      '-q',
      '--filter',
      `label=io.k8ts.node=${NODE}`,
      '--filter',
      'label=io.k8ts.type=container',
    ])
  ).stdout
    .split('\n')
    .filter(Boolean);
  const out = new Map<string, Map<string, string>>();
  if (ids.length === 0) return out;
  const inspect = await run('docker', [
    'inspect',
    '--format',
    '{{index .Config.Labels "io.kubernetes.pod.uid"}} {{.Id}} {{.State.StartedAt}}',
    ...ids,
  ]);
  for (const line of inspect.stdout.split('\n').filter(Boolean)) {
    const [uid, id, started] = line.split(' ') as [string, string, string];
    if (!out.has(uid)) out.set(uid, new Map());
    out.get(uid)!.set(id, started);
  }
  return out;
}

const drillPods = async (client: RestClient) =>
  (await client.list<Pod>(resources.pods, { namespace: 'default', labelSelector: 'app=drill' })).items.filter(
    (p) => !p.metadata.deletionTimestamp,
  );
const version = (p: Pod) =>
  (p.spec.containers[0] as { env?: { name: string; value?: string }[] }).env?.find(
    (e) => e.name === 'VERSION',
  )?.value;

/** Waits until the Deployment's status says what `kubectl rollout status` waits for. */
async function rolledOut(client: RestClient, ms = 120_000): Promise<void> {
  await until(
    'deployment/drill rolled out',
    async () => {
      const d = await client.get<Deployment>(resources.deployments, 'default', 'drill');
      const s = d.status ?? {};
      const want = d.spec.replicas ?? 1;
      return (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 0) &&
        s.updatedReplicas === want &&
        s.replicas === want &&
        s.availableReplicas === want
        ? d
        : undefined;
    },
    ms,
  );
}

describe('backup drill: snapshot during a rollout, wipe the data dir, restore', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'k8ts-drill-'));
  const backupDir = mkdtempSync(join(tmpdir(), 'k8ts-drill-backup-'));
  const scratch = mkdtempSync(join(tmpdir(), 'k8ts-drill-scratch-'));
  let port: number;
  let cidr: string;
  let k: K8tsServer | undefined;
  let agent: K8tsAgent | undefined;
  let client: RestClient | undefined;
  const serverArgs = () => ['--port', String(port), '--cluster-cidr', cidr];

  before(async () => {
    port = await freePort();
    cidr = await freeClusterCIDR();
    k = await startK8tsServer({ dataDir, fromSource: true, readyTimeoutMs: 90_000, args: serverArgs() });
    agent = await startK8tsAgent({
      server: k.url,
      token: k.nodeToken(),
      nodeName: NODE,
      nodeIP: '127.0.0.1',
      fromSource: true,
      readyTimeoutMs: 90_000,
    });
    client = RestClient.fromKubeconfig(k.kubeconfig);
  });
  after(async () => {
    await cleanUp([
      () => client?.close(),
      () => agent?.stop(),
      () => k?.stop(),
      () => removeNodeFromDocker(NODE),
      () => rmSync(dataDir, { recursive: true, force: true }),
      () => rmSync(backupDir, { recursive: true, force: true }),
      () => rmSync(scratch, { recursive: true, force: true }),
    ]);
  });

  it('brings back the same objects, resourceVersions and Secrets; the agent reconnects; no wanted container restarts', async () => {
    assert.ok(k && client && agent);
    await k.kubectlOk('create', 'secret', 'generic', 'drill-secret', '--from-literal=password=s3cret');
    assert.equal((await k.kubectlIn(deployment('1'), 'apply', '-f', '-')).code, 0);
    await rolledOut(client);

    // Start a rollout and take the snapshot once one new pod runs: mid-rollout.
    assert.equal((await k.kubectlIn(deployment('2'), 'apply', '-f', '-')).code, 0);
    await until('a pod of the new template running', async () =>
      (await drillPods(client!)).find((p) => version(p) === '2' && p.status?.phase === 'Running'),
    );
    const saved = await snapshotCli('save', '--data-dir', dataDir, '--name', 'drill');
    assert.equal(saved.code, 0, saved.stderr);
    const name = /snapshot (drill-\S+) saved/.exec(saved.stdout)?.[1];
    assert.ok(name, saved.stdout);
    const listed = await snapshotCli('list', '--data-dir', dataDir);
    assert.match(listed.stdout, new RegExp(`^${name}\\s+sqlite\\s+\\d+\\s+\\d{4}-`, 'm'));
    const containersAtSnapshot = await containersByPod();

    // What the snapshot holds, read from the file itself (a private restore, no server).
    const snapshotFile = join(dataDir, 'snapshots', name);
    await restoreSnapshot({ snapshot: snapshotFile, dataDir: scratch, bumpRevision: 0 });
    const held = await openStore({ datastore: 'sqlite', dataDir: scratch });
    const inSnapshot = new Map<string, KeyValue>();
    for (const kv of (await held.list('/registry/')).items) inSnapshot.set(kv.key, kv);
    await held.close();
    const snapshotPods = [...inSnapshot.keys()].filter((key) =>
      key.startsWith('/registry/pods/default/drill-'),
    );
    assert.ok(snapshotPods.length >= 3, 'the rollout is in the snapshot');

    // While it runs, the server's data dir is not restored over.
    const refused = await snapshotCli('restore', name, '--data-dir', dataDir);
    assert.equal(refused.code, 1, refused.stdout);
    assert.match(refused.stderr, /a k8ts server is running on .*stop it before restoring in place/);

    // After the snapshot: a Secret deleted, a ConfigMap created.
    await k.kubectlOk('delete', 'secret', 'drill-secret');
    await k.kubectlOk('create', 'configmap', 'after-snapshot', '--from-literal=a=b');

    // Disaster: the server goes, and its data dir with it; the snapshot was copied off.
    copyFileSync(snapshotFile, join(backupDir, name));
    copyFileSync(metadataPath(snapshotFile), metadataPath(join(backupDir, name)));
    client.close();
    client = undefined;
    await k.stop();
    k = undefined;
    rmSync(dataDir, { recursive: true, force: true });

    const restored = await snapshotCli('restore', join(backupDir, name), '--data-dir', dataDir);
    assert.equal(restored.code, 0, restored.stderr);
    assert.match(restored.stdout, /wrote .*tls\/server-ca\.key.*node-token/);
    assert.deepEqual(readdirSync(join(dataDir, 'db')), ['state.db']);

    k = await startK8tsServer({ dataDir, fromSource: true, readyTimeoutMs: 90_000, args: serverArgs() });
    client = RestClient.fromKubeconfig(k.kubeconfig);

    // Secrets and ConfigMaps are the snapshot's, resourceVersions included.
    for (const [kind, prefix] of [
      ['secrets', '/registry/secrets/'],
      ['configmaps', '/registry/configmaps/'],
    ] as const) {
      const items = JSON.parse(await k.kubectlOk('get', kind, '-A', '-o', 'json')) as {
        items: { metadata: { namespace: string; name: string; resourceVersion: string } }[];
      };
      const served = new Map(
        items.items.map((o) => [
          `${prefix}${o.metadata.namespace}/${o.metadata.name}`,
          o.metadata.resourceVersion,
        ]),
      );
      const expected = new Map(
        [...inSnapshot.values()]
          .filter((kv) => kv.key.startsWith(prefix))
          .map((kv) => [kv.key, String(kv.modRevision)]),
      );
      assert.deepEqual(served, expected, `${kind} as in the snapshot`);
    }
    const secret = JSON.parse(await k.kubectlOk('get', 'secret', 'drill-secret', '-o', 'json')) as {
      data: { password: string };
    };
    assert.equal(Buffer.from(secret.data.password, 'base64').toString(), 's3cret');
    assert.equal(
      (await k.kubectl('get', 'configmap', 'after-snapshot')).code,
      1,
      'made after the snapshot: gone',
    );

    // The agent, never restarted, is back with its node credential (same CA) and renews its Lease.
    const leaseBefore = JSON.parse(
      await k.kubectlOk('-n', 'kube-node-lease', 'get', 'lease', NODE, '-o', 'json'),
    ) as {
      spec: { renewTime: string };
    };
    await until('the agent renewing its Lease on the restored server', async () => {
      const lease = JSON.parse(
        await k!.kubectlOk('-n', 'kube-node-lease', 'get', 'lease', NODE, '-o', 'json'),
      ) as {
        spec: { renewTime: string };
      };
      return lease.spec.renewTime !== leaseBefore.spec.renewTime ? lease : undefined;
    });

    // The controllers converge: the rollout the snapshot caught completes.
    try {
      await rolledOut(client, 180_000);
    } catch (err) {
      const state = await k.kubectl('get', 'deploy,rs,pods,nodes', '-o', 'wide');
      throw new Error(`${(err as Error).message}\n${state.stdout}\nagent:\n${agent.logs().slice(-4000)}`);
    }
    const final = await until('three pods of the new template, and no other', async () => {
      const ps = await drillPods(client!);
      return ps.length === 3 && ps.every((p) => version(p) === '2' && p.status?.phase === 'Running')
        ? ps
        : undefined;
    });

    // The agent runs containers for exactly the pods the restored API has, and those that
    // were in the snapshot and are still wanted kept theirs.
    const wanted = new Set(final.map((p) => p.metadata.uid!));
    const now = await until('containers for the wanted pods only', async () => {
      const c = await containersByPod();
      return [...c.keys()].every((uid) => wanted.has(uid)) && c.size === wanted.size ? c : undefined;
    });
    const kept = final.filter((p) => inSnapshot.has(`/registry/pods/default/${p.metadata.name}`));
    assert.ok(kept.length >= 1, 'a pod of the new template from before the snapshot is still there');
    for (const p of kept) {
      const uid = p.metadata.uid!;
      assert.deepEqual(
        now.get(uid),
        containersAtSnapshot.get(uid),
        `pod ${p.metadata.name}'s container was not restarted`,
      );
      assert.equal(p.status?.containerStatuses?.[0]?.restartCount ?? 0, 0);
    }
    assert.equal(agent.logs().includes('exited'), false);
  });
});

describe('scheduled snapshots in k8ts server', () => {
  let k: K8tsServer | undefined;
  after(() => k?.stop());

  it('saves scheduled-<node>-<unix seconds> on --snapshot-schedule and keeps --snapshot-retention of them', async () => {
    k = await startK8tsServer({
      fromSource: true,
      readyTimeoutMs: 90_000,
      args: ['--snapshot-schedule', '@every 1s', '--snapshot-retention', '2', '--node-name', 'sched'],
    });
    const dir = join(k.dataDir, 'snapshots');
    const seen = new Set<string>();
    const scheduled = () => listSnapshots(dir).filter((s) => /^scheduled-sched-\d+$/.test(s.name));
    await until('three scheduled snapshots taken', () => {
      for (const s of scheduled()) seen.add(s.name);
      return seen.size >= 3 ? seen : undefined;
    });
    const kept = await until('the retention of two kept', () => {
      const now = scheduled();
      return now.length === 2 ? now : undefined;
    });
    assert.ok(kept.every((s) => s.datastore === 'sqlite' && s.metadata?.revision !== undefined));
  });
});
