// Storage end to end (issue 18): the real CLI (`k8ts server --disable-agent` and two
// `k8ts agent`s on this machine, 127.0.0.1 and 127.0.0.2, each with its own node name and
// data dir), real Docker, the real kubectl, and the `local-path` StorageClass the server
// creates as the default.
//
// - A StatefulSet with a volumeClaimTemplate (no class named: the default) pinned to node A:
//   its claim is provisioned on A (a PV with node affinity to A, a directory under A's
//   DATA_DIR/storage), a file written in the pod is read by the pod that replaces it after
//   `kubectl delete pod`, and again after agent A restarts.
// - A claim bound on first use: Pending with no PV while no pod uses it
//   (WaitForFirstConsumer); a pod pinned to node B binds it to a volume on B, whose
//   directory is under B's data dir and not A's.
// - Reclaim Delete: deleting that pod and claim removes the PV and its directory.
// - A pod on a node naming a claim that does not exist gets the kubelet's FailedMount.
// Every container is labelled with its node's name and removed at the end.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freeClusterCIDR } from './support/cluster-cidr.js';
import { removeNodeFromDocker, startK8tsAgent, type K8tsAgent } from './support/k8ts-agent.js';
import { buildImages, cleanUp, startK8tsServer, type K8tsServer } from './support/k8ts-server.js';
import { until as waitUntil } from './support/wait.js';
import { registry } from '../control/scheduler/plugins/registry.js';

const A = `storage-e2e-a-${process.pid}`;
const B = `storage-e2e-b-${process.pid}`;
const NS = 'storage-e2e';

const until = <T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms = 120_000) =>
  waitUntil(what, check, ms, 250);

const statefulSet = `
apiVersion: v1
kind: Namespace
metadata: { name: ${NS} }
---
apiVersion: apps/v1
kind: StatefulSet
metadata: { name: db, namespace: ${NS} }
spec:
  serviceName: db
  replicas: 1
  selector: { matchLabels: { app: db } }
  template:
    metadata: { labels: { app: db } }
    spec:
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 1
      nodeSelector: { kubernetes.io/hostname: ${A} }
      containers:
        - name: main
          image: k8ts/busybox:1.0
          imagePullPolicy: IfNotPresent
          command: [sleep, '3600']
          volumeMounts: [{ name: data, mountPath: /data }]
  volumeClaimTemplates:
    - metadata: { name: data }
      spec:
        accessModes: [ReadWriteOnce]
        resources: { requests: { storage: 64Mi } }
`;

const pinnedClaim = `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: pinned, namespace: ${NS} }
spec:
  storageClassName: local-path
  accessModes: [ReadWriteOnce]
  resources: { requests: { storage: 16Mi } }
`;

const pinnedPod = `
apiVersion: v1
kind: Pod
metadata: { name: writer, namespace: ${NS} }
spec:
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  nodeSelector: { kubernetes.io/hostname: ${B} }
  containers:
    - name: main
      image: k8ts/busybox:1.0
      imagePullPolicy: IfNotPresent
      command: [sh, -c, 'echo from-b > /data/b.txt && sleep 3600']
      volumeMounts: [{ name: v, mountPath: /data }]
  volumes: [{ name: v, persistentVolumeClaim: { claimName: pinned } }]
`;

const missingClaimPod = `
apiVersion: v1
kind: Pod
metadata: { name: orphan, namespace: ${NS} }
spec:
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  nodeName: ${A}
  containers:
    - { name: main, image: k8ts/busybox:1.0, imagePullPolicy: IfNotPresent, command: [sleep, '3600'], volumeMounts: [{ name: v, mountPath: /data }] }
  volumes: [{ name: v, persistentVolumeClaim: { claimName: missing } }]
`;

interface PV {
  metadata: { name: string };
  spec: {
    hostPath?: { path: string };
    nodeAffinity?: { required?: { nodeSelectorTerms: { matchExpressions?: { values?: string[] }[] }[] } };
    claimRef?: { name?: string };
    persistentVolumeReclaimPolicy?: string;
  };
}

describe(
  'PersistentVolumes of the local-path provisioner with real Docker and kubectl',
  {
    timeout: 900_000,
    // A WaitForFirstConsumer claim is provisioned once the scheduler's VolumeBinding
    // plugin has chosen its node; without it every claim here stays Pending.
    skip: registry.some((p) => p.name === 'VolumeBinding')
      ? false
      : 'the scheduler has no VolumeBinding plugin yet (issue 18, control side)',
  },
  () => {
    let k: K8tsServer | undefined;
    let a: K8tsAgent | undefined;
    let b: K8tsAgent | undefined;
    let dirA: string | undefined;
    let dirB: string | undefined;
    const kubectl = (...args: string[]) => k!.kubectlOk(...args);
    const startAgent = (node: string, ip: string, dataDir: string, token?: string) =>
      startK8tsAgent({
        server: k!.url,
        ...(token ? { token } : {}),
        nodeName: node,
        nodeIP: ip,
        dataDir,
        fromSource: true,
        args: ['--resolv-conf', ''],
      });
    const json = async <T>(...args: string[]) => JSON.parse(await kubectl(...args, '-o', 'json')) as T;
    const claimOf = (name: string) =>
      json<{ metadata: { uid: string }; spec: { volumeName?: string }; status?: { phase?: string } }>(
        'get',
        'pvc',
        '-n',
        NS,
        name,
      );
    const volumes = async () => (await json<{ items: PV[] }>('get', 'pv')).items;
    const readyPod = async (name: string) => {
      const pod = await json<{
        metadata: { uid: string; deletionTimestamp?: string };
        status?: { conditions?: { type: string; status: string }[] };
      }>('get', 'pod', '-n', NS, name).catch(() => undefined);
      const ready = pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      return ready && !pod!.metadata.deletionTimestamp ? pod!.metadata.uid : undefined;
    };
    const affinityNode = (pv: PV) =>
      pv.spec.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions?.[0]?.values?.[0];

    before(async () => {
      await buildImages(['busybox', 'pause']);
      dirA = mkdtempSync(join(tmpdir(), 'k8ts-storage-e2e-a-'));
      dirB = mkdtempSync(join(tmpdir(), 'k8ts-storage-e2e-b-'));
      k = await startK8tsServer({
        readyTimeoutMs: 60_000,
        fromSource: true,
        args: ['--cluster-cidr', await freeClusterCIDR()],
      });
      a = await startAgent(A, '127.0.0.1', dirA, k.nodeToken());
      b = await startAgent(B, '127.0.0.2', dirB, k.nodeToken());
      await until('the local-path StorageClass', async () =>
        (await k!.kubectl('get', 'storageclass', 'local-path')).code === 0 ? true : undefined,
      );
    });

    after(async () => {
      await cleanUp([
        () => a?.stop(),
        () => b?.stop(),
        () => k?.stop(),
        () => removeNodeFromDocker(A),
        () => removeNodeFromDocker(B),
        () => dirA && rmSync(dirA, { recursive: true, force: true }),
        () => dirB && rmSync(dirB, { recursive: true, force: true }),
      ]);
    });

    it('keeps a StatefulSet pod’s data across the pod’s deletion and an agent restart', async () => {
      const applied = await k!.kubectlIn(statefulSet, 'apply', '-f', '-');
      assert.equal(applied.code, 0, applied.stderr);
      const first = await until('db-0 ready', () => readyPod('db-0'), 180_000);
      const claim = await claimOf('data-db-0');
      assert.equal(claim.status?.phase, 'Bound');
      const pv = (await volumes()).find((v) => v.metadata.name === claim.spec.volumeName);
      assert.ok(pv, `the PV ${claim.spec.volumeName}`);
      assert.equal(pv.metadata.name, `pvc-${claim.metadata.uid}`);
      assert.equal(affinityNode(pv), A);
      assert.equal(pv.spec.persistentVolumeReclaimPolicy, 'Delete');
      assert.equal(pv.spec.hostPath?.path, join(dirA!, 'storage', pv.metadata.name));

      await kubectl('exec', '-n', NS, 'db-0', '--', 'sh', '-c', 'echo persisted > /data/f');
      assert.equal(readFileSync(join(pv.spec.hostPath.path, 'f'), 'utf8'), 'persisted\n');
      await kubectl('delete', 'pod', '-n', NS, 'db-0', '--wait=false');
      const second = await until('a new db-0 ready', async () => {
        const uid = await readyPod('db-0');
        return uid && uid !== first ? uid : undefined;
      });
      assert.equal((await kubectl('exec', '-n', NS, 'db-0', '--', 'cat', '/data/f')).trim(), 'persisted');

      // The agent restarts from its data dir (its node credential); the pod is adopted and
      // its replacement after that restart reads the same data.
      await a!.stop();
      a = await startAgent(A, '127.0.0.1', dirA!);
      await kubectl('delete', 'pod', '-n', NS, 'db-0', '--wait=false');
      await until('db-0 ready after the restart', async () => {
        const uid = await readyPod('db-0');
        return uid && uid !== second ? uid : undefined;
      });
      assert.equal((await kubectl('exec', '-n', NS, 'db-0', '--', 'cat', '/data/f')).trim(), 'persisted');
    });

    it('binds a WaitForFirstConsumer claim on first use, on the node the pod is placed on', async () => {
      const applied = await k!.kubectlIn(pinnedClaim, 'apply', '-f', '-');
      assert.equal(applied.code, 0, applied.stderr);
      const pending = await claimOf('pinned');
      assert.equal(pending.status?.phase, 'Pending');
      assert.ok(
        !(await volumes()).some((v) => v.spec.claimRef?.name === 'pinned'),
        'no PV before a consumer',
      );
      const created = await k!.kubectlIn(pinnedPod, 'apply', '-f', '-');
      assert.equal(created.code, 0, created.stderr);
      await until('writer ready', () => readyPod('writer'), 180_000);
      const claim = await claimOf('pinned');
      assert.equal(claim.status?.phase, 'Bound');
      const pv = (await volumes()).find((v) => v.metadata.name === claim.spec.volumeName)!;
      assert.equal(affinityNode(pv), B);
      const path = join(dirB!, 'storage', pv.metadata.name);
      assert.equal(pv.spec.hostPath?.path, path);
      await until('the pod’s file on node B', () => (existsSync(join(path, 'b.txt')) ? true : undefined));
      assert.equal(readFileSync(join(path, 'b.txt'), 'utf8'), 'from-b\n');
      assert.equal(existsSync(join(dirA!, 'storage', pv.metadata.name)), false, 'nothing on node A');
    });

    it('removes the directory and the PV when a Delete volume’s claim goes', async () => {
      const claim = await claimOf('pinned');
      const path = join(dirB!, 'storage', claim.spec.volumeName!);
      assert.ok(existsSync(path));
      await kubectl('delete', 'pod', '-n', NS, 'writer', '--wait=true', '--timeout=120s');
      await kubectl('delete', 'pvc', '-n', NS, 'pinned', '--wait=true', '--timeout=120s');
      await until('the PV gone', async () =>
        (await volumes()).some((v) => v.metadata.name === claim.spec.volumeName) ? undefined : true,
      );
      await until('the directory gone', () => (existsSync(path) ? undefined : true));
    });

    it('says FailedMount for a pod whose claim does not exist', async () => {
      const applied = await k!.kubectlIn(missingClaimPod, 'apply', '-f', '-');
      assert.equal(applied.code, 0, applied.stderr);
      const message = await until('a FailedMount event', async () => {
        const events = await json<{
          items: { reason: string; message: string; involvedObject: { name: string } }[];
        }>('get', 'events', '-n', NS);
        return events.items.find((e) => e.reason === 'FailedMount' && e.involvedObject.name === 'orphan')
          ?.message;
      });
      assert.match(
        message,
        new RegExp(`error processing PVC ${NS}/missing: persistentvolumeclaim "missing" not found`),
      );
    });
  },
);
