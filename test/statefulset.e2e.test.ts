// StatefulSet end to end (issue 17): the real CLI (`k8ts server --disable-agent` and one
// `k8ts agent`), real Docker, the real kubectl. A StatefulSet of 3 busybox pods with a
// headless Service: the pods are web-0, web-1, web-2, each created only once the one before
// is Ready; `kubectl scale` to 5 adds web-3 then web-4, and back to 3 removes web-4 then
// web-3 (a snapshot of the pods never shows a higher ordinal without the lower ones while
// scaling up, nor web-3 gone while web-4 is still there while scaling down); a busybox
// client resolves web-0.nginx.<ns>.svc.cluster.local (nslookup) and `web-0.nginx` (ping,
// through its resolv.conf's search path) to web-0's address from the agent's cluster DNS; `kubectl rollout status|history|undo
// statefulset/web` after `kubectl set env`. The set has no volumeClaimTemplates; a second
// set with one shows its claim created (Pending until the local-path provisioner's volume is
// bound: storage.e2e tests that part), mounted by name, owned by the set (whenDeleted: Delete)
// and gone with it. A serviceName change is refused with upstream's words. Every container
// is labelled with the test's node name and removed at the end.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestResolver, type TestResolver } from '../agent/dns/testing.js';
import { removeNodeFromDocker, startServerAndAgent, type K8tsAgent } from './support/k8ts-agent.js';
import { buildImages, cleanUp, type K8tsServer } from './support/k8ts-server.js';
import { until as waitUntil } from './support/wait.js';

const NODE = `sts-e2e-${process.pid}`;
const NODE_IP = '127.0.0.1';
const SERVICE_NET = `10.198.${process.pid % 256}`;
const SERVICE_CIDR = `${SERVICE_NET}.0/24`;
const DNS_IP = `${SERVICE_NET}.10`;
const NS = 'sts-e2e';

const manifests = `
apiVersion: v1
kind: Namespace
metadata: { name: ${NS} }
---
apiVersion: v1
kind: Service
metadata: { name: nginx, namespace: ${NS} }
spec:
  clusterIP: None
  selector: { app: web }
  ports: [{ name: web, port: 80 }]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: { name: web, namespace: ${NS} }
spec:
  serviceName: nginx
  replicas: 3
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 1
      containers:
        - { name: main, image: k8ts/busybox:1.0, imagePullPolicy: IfNotPresent, command: [sleep, '3600'] }
---
apiVersion: v1
kind: Pod
metadata: { name: client, namespace: ${NS} }
spec:
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  containers:
    - { name: client, image: k8ts/busybox:1.0, imagePullPolicy: IfNotPresent, command: [sleep, '3600'] }
`;

/** Polls `check` (support/wait.ts) with this file's deadline (120 s) and pace (200 ms). */
const until = <T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms = 120_000) =>
  waitUntil(what, check, ms, 200);

interface PodView {
  name: string;
  created: number;
  readySince: number | undefined;
  ready: boolean;
  terminating: boolean;
  ip: string;
  hostname: string;
  subdomain: string;
}

describe('StatefulSet with real Docker and kubectl', { timeout: 900_000 }, () => {
  let k: K8tsServer | undefined;
  let agent: K8tsAgent | undefined;
  let resolver: TestResolver | undefined;
  let dir: string | undefined;

  const kubectl = (...args: string[]) => k!.kubectlOk(...args);

  /** The set's pods as kubectl shows them, by ordinal. */
  const setPods = async (): Promise<PodView[]> => {
    const out = JSON.parse(await kubectl('get', 'pods', '-n', NS, '-l', 'app=web', '-o', 'json')) as {
      items: {
        metadata: { name: string; creationTimestamp: string; deletionTimestamp?: string };
        spec: { hostname?: string; subdomain?: string };
        status?: {
          podIP?: string;
          conditions?: { type: string; status: string; lastTransitionTime?: string }[];
        };
      }[];
    };
    return out.items
      .map((p) => {
        const ready = p.status?.conditions?.find((c) => c.type === 'Ready');
        return {
          name: p.metadata.name,
          created: Date.parse(p.metadata.creationTimestamp),
          readySince:
            ready?.status === 'True' && ready.lastTransitionTime
              ? Date.parse(ready.lastTransitionTime)
              : undefined,
          ready: ready?.status === 'True',
          terminating: !!p.metadata.deletionTimestamp,
          ip: p.status?.podIP ?? '',
          hostname: p.spec.hostname ?? '',
          subdomain: p.spec.subdomain ?? '',
        };
      })
      .sort((a, b) => ordinal(a.name) - ordinal(b.name));
  };
  const ordinal = (name: string) => Number(/-(\d+)$/.exec(name)?.[1] ?? -1);

  /**
   * Polls the pods until `done`; resolves with every distinct snapshot (the ordinals present)
   * seen on the way.
   */
  const watchUntil = async (what: string, done: (pods: PodView[]) => boolean): Promise<number[][]> => {
    const snapshots: number[][] = [];
    await until(what, async () => {
      const pods = await setPods();
      const ords = pods.map((p) => ordinal(p.name));
      if (snapshots.at(-1)?.join() !== ords.join()) snapshots.push(ords);
      return done(pods) ? true : undefined;
    });
    return snapshots;
  };
  const allReady = (n: number) => (pods: PodView[]) =>
    pods.length === n && pods.every((p) => p.ready && !p.terminating);

  before(async () => {
    await buildImages(['busybox', 'pause']);
    resolver = await startTestResolver({});
    dir = mkdtempSync(join(tmpdir(), 'k8ts-sts-e2e-'));
    const resolvConf = join(dir, 'resolv.conf');
    writeFileSync(resolvConf, `nameserver ${resolver.host}:${resolver.port}\n`);
    ({ k, agent } = await startServerAndAgent({
      nodeName: NODE,
      nodeIP: NODE_IP,
      serverArgs: ['--service-cluster-ip-range', SERVICE_CIDR],
      agentArgs: ['--resolv-conf', resolvConf],
    }));
    const applied = await k.kubectlIn(manifests, 'apply', '-f', '-');
    assert.equal(applied.code, 0, applied.stderr);
  });

  after(async () => {
    await cleanUp([
      () => agent?.stop(),
      () => k?.stop(),
      () => removeNodeFromDocker(NODE),
      () => resolver?.close(),
      () => dir && rmSync(dir, { recursive: true, force: true }),
    ]);
  });

  it('creates web-0, web-1, web-2 in order, each once the one before is Ready', async () => {
    const snapshots = await watchUntil('3 ready pods', allReady(3));
    const pods = await setPods();
    assert.deepEqual(
      pods.map((p) => p.name),
      ['web-0', 'web-1', 'web-2'],
    );
    for (const s of snapshots) assert.deepEqual(s, [0, 1, 2].slice(0, s.length), `snapshot ${s.join()}`);
    for (let i = 1; i < pods.length; i++) {
      // Creation timestamps have seconds precision: created no earlier than the second its predecessor became Ready.
      assert.ok(
        pods[i]!.created >= Math.floor(pods[i - 1]!.readySince! / 1000) * 1000,
        `${pods[i]!.name} after ${pods[i - 1]!.name} was Ready`,
      );
    }
    assert.deepEqual(
      pods.map((p) => `${p.hostname}.${p.subdomain}`),
      ['web-0.nginx', 'web-1.nginx', 'web-2.nginx'],
    );
    const table = await kubectl('get', 'statefulset', 'web', '-n', NS);
    assert.match(table, /^NAME\s+READY\s+AGE\n/);
    assert.match(table, /\nweb\s+3\/3\s+/);
  });

  it('kubectl scale to 5 adds web-3 then web-4; back to 3 removes web-4 then web-3', async () => {
    await kubectl('scale', 'statefulset', 'web', '-n', NS, '--replicas=5');
    const up = await watchUntil('5 ready pods', allReady(5));
    for (const s of up) assert.deepEqual(s, [0, 1, 2, 3, 4].slice(0, s.length), `snapshot ${s.join()}`);
    const five = await setPods();
    assert.deepEqual(
      five.map((p) => p.name),
      ['web-0', 'web-1', 'web-2', 'web-3', 'web-4'],
    );
    assert.ok(
      five[4]!.created >= Math.floor(five[3]!.readySince! / 1000) * 1000,
      'web-4 after web-3 was Ready',
    );

    await kubectl('scale', 'statefulset', 'web', '-n', NS, '--replicas=3');
    const down = await watchUntil('3 pods left', (pods) => pods.length === 3);
    for (const s of down) assert.deepEqual(s, [0, 1, 2, 3, 4].slice(0, s.length), `snapshot ${s.join()}`);
    assert.ok(
      down.some((s) => s.join() === '0,1,2,3'),
      `web-4 went before web-3: ${down.map((s) => s.join()).join(' | ')}`,
    );
    const status = await kubectl('rollout', 'status', 'statefulset/web', '-n', NS, '--timeout=60s');
    assert.match(status, /partitioned roll out complete: 3 new pods have been updated/);
    const described = await kubectl('describe', 'statefulset', 'web', '-n', NS);
    assert.match(described, /Pods Status:\s+3 Running \/ 0 Waiting/, described);
    assert.match(described, /SuccessfulCreate\s+.*create Pod web-4 in StatefulSet web successful/, described);
    assert.match(described, /SuccessfulDelete\s+.*delete Pod web-4 in StatefulSet web successful/, described);
  });

  it('web-0.nginx resolves from a busybox pod to web-0', async () => {
    await until('the client running', async () =>
      (await kubectl('get', 'pod', 'client', '-n', NS, '-o', 'jsonpath={.status.phase}')) === 'Running'
        ? true
        : undefined,
    );
    const web0 = (await setPods()).find((p) => p.name === 'web-0')!;
    const fqdn = `web-0.nginx.${NS}.svc.cluster.local`;
    const out = await until(`${fqdn} resolves`, async () => {
      const r = await k!.kubectl('exec', '-n', NS, 'client', '--', 'nslookup', fqdn, DNS_IP);
      return r.code === 0 && r.stdout.includes(web0.ip) ? r.stdout : undefined;
    });
    assert.match(out, new RegExp(`Address:\\s+${web0.ip.replace(/\./g, '\\.')}`), out);
    // busybox's nslookup applies no search path to a name with dots; ping resolves through the
    // C library, which does (ndots:5 in the pod's resolv.conf).
    const short = await k!.kubectl(
      'exec',
      '-n',
      NS,
      'client',
      '--',
      'ping',
      '-c',
      '1',
      '-W',
      '1',
      'web-0.nginx',
    );
    assert.match(
      short.stdout + short.stderr,
      new RegExp(`PING web-0\\.nginx \\(${web0.ip.replace(/\./g, '\\.')}\\)`),
      short.stdout + short.stderr,
    );
  });

  it('kubectl rollout status, history and undo', async () => {
    await kubectl('set', 'env', 'statefulset/web', '-n', NS, 'COLOUR=blue');
    const status = await kubectl('rollout', 'status', 'statefulset/web', '-n', NS, '--timeout=120s');
    assert.match(status, /partitioned roll out complete: 3 new pods have been updated/);
    const env = await kubectl(
      'get',
      'pod',
      'web-0',
      '-n',
      NS,
      '-o',
      'jsonpath={.spec.containers[0].env[0].value}',
    );
    assert.equal(env, 'blue');
    const history = await kubectl('rollout', 'history', 'statefulset/web', '-n', NS);
    assert.match(history, /REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);
    await kubectl('rollout', 'undo', 'statefulset/web', '-n', NS);
    await kubectl('rollout', 'status', 'statefulset/web', '-n', NS, '--timeout=120s');
    await until('web-0 without COLOUR', async () =>
      (await kubectl('get', 'pod', 'web-0', '-n', NS, '-o', 'jsonpath={.spec.containers[0].env}')) === ''
        ? true
        : undefined,
    );
    const after = await kubectl('rollout', 'history', 'statefulset/web', '-n', NS);
    assert.match(after, /REVISION\s+CHANGE-CAUSE\n2\s+<none>\n3\s+<none>/);
  });
  it('claims from volumeClaimTemplates, a refused serviceName change, and a cascading delete', async () => {
    const data = `
apiVersion: apps/v1
kind: StatefulSet
metadata: { name: data, namespace: ${NS} }
spec:
  serviceName: nginx
  replicas: 1
  persistentVolumeClaimRetentionPolicy: { whenDeleted: Delete }
  selector: { matchLabels: { app: data } }
  template:
    metadata: { labels: { app: data } }
    spec:
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 0
      containers:
        - name: main
          image: k8ts/busybox:1.0
          imagePullPolicy: IfNotPresent
          command: [sleep, '3600']
          volumeMounts: [{ name: www, mountPath: /data }]
  volumeClaimTemplates:
    - metadata: { name: www }
      spec: { accessModes: [ReadWriteOnce], resources: { requests: { storage: 1Gi } } }
`;
    const applied = await k!.kubectlIn(data, 'apply', '-f', '-');
    assert.equal(applied.code, 0, applied.stderr);
    const table = await until('the claim www-data-0', async () => {
      const r = await k!.kubectl('get', 'pvc', 'www-data-0', '-n', NS);
      return r.code === 0 ? r.stdout : undefined;
    });
    assert.match(
      table,
      /^NAME\s+STATUS\s+VOLUME\s+CAPACITY\s+ACCESS MODES\s+STORAGECLASS\s+VOLUMEATTRIBUTESCLASS\s+AGE\n/,
    );
    // Pending at first; provisioned and Bound within a second or so (its pod was scheduled).
    assert.match(table, /\nwww-data-0\s+(Pending|Bound)\s+/);
    const claim = await until('data-0 mounting its claim', async () => {
      const r = await k!.kubectl(
        'get',
        'pod',
        'data-0',
        '-n',
        NS,
        '-o',
        'jsonpath={.spec.volumes[?(@.name=="www")].persistentVolumeClaim.claimName}',
      );
      return r.code === 0 && r.stdout !== '' ? r.stdout : undefined;
    });
    assert.equal(claim, 'www-data-0');
    const owners = await until('the claim owned by the set', async () => {
      const out = await kubectl(
        'get',
        'pvc',
        'www-data-0',
        '-n',
        NS,
        '-o',
        'jsonpath={.metadata.ownerReferences[*].kind}',
      );
      return out === 'StatefulSet' ? out : undefined;
    });
    assert.equal(owners, 'StatefulSet');

    const refused = await k!.kubectl(
      'patch',
      'statefulset',
      'web',
      '-n',
      NS,
      '--type=merge',
      '-p',
      '{"spec":{"serviceName":"other"}}',
    );
    assert.notEqual(refused.code, 0);
    assert.match(
      refused.stderr,
      /spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden/,
    );
    assert.equal(await kubectl('get', 'sts', 'web', '-n', NS, '-o', 'jsonpath={.spec.serviceName}'), 'nginx');

    await kubectl('delete', 'statefulset', 'data', '-n', NS);
    await until('data-0 and www-data-0 gone', async () => {
      const pod = await k!.kubectl('get', 'pod', 'data-0', '-n', NS);
      const pvc = await k!.kubectl('get', 'pvc', 'www-data-0', '-n', NS);
      return pod.code !== 0 && pvc.code !== 0 ? true : undefined;
    });
  });
});
