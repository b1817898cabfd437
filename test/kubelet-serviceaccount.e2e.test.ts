/**
 * The kubelet's projected ServiceAccount volume against real Docker: the in-process API
 * server, the docker adapter and a PodManager on a node name of this run only. A pod's
 * `kube-api-access-*` volume (as ServiceAccount admission writes it) appears in the
 * container at /var/run/secrets/kubernetes.io/serviceaccount with `token`, `ca.crt` and
 * `namespace`; the token is replaced in place while the pod runs once it is due; a token
 * that cannot be had keeps the pod waiting (FailedMount) until it can.
 *
 * The TokenRequest is the PodManager's `requestToken`, a fake here that issues tokens of
 * 5 s (as a server that shortened the lifetime asked for), so the refresh comes within
 * seconds; test/serviceaccount.e2e.test.ts runs the real one end to end.
 *
 * Everything made in Docker carries the node label `io.k8ts.node=<node>` and is removed
 * at the end, passed or failed.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { resources } from '../api/client/resource.js';
import { silentLogger } from '../api/log.js';
import type { KubeObject } from '../api/object.js';
import type { Pod } from '../api/types.js';
import { PodManager } from '../agent/kubelet/pods/manager.js';
import { hostMounter, mountPointsUnder } from '../agent/kubelet/pods/mount.js';
import type { TokenRequestSpec } from '../agent/kubelet/token/manager.js';
import { openRuntime, type Runtime } from '../cri/index.js';
import { startTestApi, type TestApi } from './support/api.js';
import { removeNodeFromDocker } from './support/k8ts-agent.js';
import { untilTruthy as until } from './support/wait.js';

const RUN = randomBytes(3).toString('hex');
const NODE = `kubelet-sa-e2e-${RUN}`;
const NETWORK = `k8ts-${NODE}`;
const SUBNET = `10.250.${randomInt(0, 256)}.0/24`;
const MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';
const CA = '-----BEGIN CERTIFICATE-----\nMIIBkube-root-ca-of-this-test\n-----END CERTIFICATE-----\n';

let api: TestApi;
let runtime: Runtime;
let manager: PodManager;
let dataDir: string;
const events: { reason: string; message: string; name: string }[] = [];
const requests: { namespace: string; serviceAccount: string; spec: TokenRequestSpec }[] = [];
/** Pods whose token requests fail while listed here. */
const refused = new Set<string>();

before(async () => {
  execFileSync('bash', ['scripts/start-dockerd.sh'], { stdio: 'ignore' });
  execFileSync('bash', ['scripts/build-images.sh', 'busybox', 'pause'], { stdio: 'ignore' });
  api = await startTestApi();
  dataDir = mkdtempSync(join(tmpdir(), 'k8ts-kubelet-sa-e2e-'));
  await api.client.create(resources.nodes, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: NODE },
    status: { allocatable: { cpu: '2', memory: '4Gi', pods: '110' } },
  } as KubeObject);
  // What the root CA publisher writes (no controllers run here).
  await api.client.create(
    resources.configmaps,
    { metadata: { name: 'kube-root-ca.crt' }, data: { 'ca.crt': CA } },
    { namespace: 'default' },
  );
  runtime = await openRuntime('docker', { nodeName: NODE });
  await runtime.ensurePodNetwork({ name: NETWORK, subnet: SUBNET, labels: { 'io.k8ts.node': NODE } });
  manager = new PodManager({
    client: api.client,
    runtime,
    nodeName: NODE,
    nodeIP: '127.0.0.1',
    podNetwork: NETWORK,
    recorder: {
      event: (target, _type, reason, message) =>
        events.push({
          reason,
          message,
          name: String('metadata' in target ? target.metadata?.name : target.name),
        }),
    },
    logger: silentLogger(),
    dataDir,
    requestToken: (namespace, serviceAccount, spec) => {
      requests.push({ namespace, serviceAccount, spec });
      if (refused.has(spec.boundObjectRef?.name ?? ''))
        return Promise.reject(new Error('serviceaccounts "default" is forbidden: try again'));
      return Promise.resolve({
        token: `token-${requests.length}`,
        expirationTimestamp: new Date(Date.now() + 5_000).toISOString(),
        expirationSeconds: 5,
      });
    },
  });
  await manager.start();
});

after(async () => {
  await manager?.stop();
  await removeNodeFromDocker(NODE);
  await runtime?.close();
  await api?.stop();
  if (dataDir) {
    // The projected volumes' tmpfs mounts (the kubelet tears them down with their pods).
    for (const m of await mountPointsUnder(hostMounter, realpathSync(dataDir)).catch(() => []))
      await hostMounter.unmount(m).catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/** A sleeping busybox pod with the volume ServiceAccount admission adds. */
function tokenPod(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: {
      nodeName: NODE,
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'app',
          image: 'k8ts/busybox:1.0',
          command: ['sleep', '3600'],
          volumeMounts: [{ name: 'kube-api-access-test0', readOnly: true, mountPath: MOUNT }],
        },
      ],
      volumes: [
        {
          name: 'kube-api-access-test0',
          projected: {
            defaultMode: 420,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
              {
                downwardAPI: {
                  items: [
                    { path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } },
                  ],
                },
              },
            ],
          },
        },
      ],
    },
  };
}

async function runningContainer(name: string): Promise<{ pod: Pod; id: string }> {
  return until(`${name} Running`, async () => {
    const pod = await api.client.get<Pod>(resources.pods, 'default', name);
    const id = pod.status?.containerStatuses?.[0]?.containerID?.replace(/^docker:\/\//, '');
    return pod.status?.phase === 'Running' && id ? { pod, id } : undefined;
  });
}

async function cat(id: string, file: string): Promise<string> {
  const r = await runtime.execSync(id, ['cat', `${MOUNT}/${file}`], 10);
  assert.equal(r.exitCode, 0, `cat ${file}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

describe('projected ServiceAccount volume with real Docker', () => {
  it('writes token, ca.crt and namespace into the container and refreshes the token in place', async () => {
    await api.client.create(resources.pods, tokenPod('sa-reader'));
    const { pod, id } = await runningContainer('sa-reader');
    const first = await cat(id, 'token');
    assert.match(first, /^token-\d+$/);
    assert.equal(await cat(id, 'ca.crt'), CA);
    assert.equal(await cat(id, 'namespace'), 'default');
    const asked = requests.find((r) => r.spec.boundObjectRef?.name === 'sa-reader')!;
    assert.deepEqual(asked, {
      namespace: 'default',
      serviceAccount: 'default',
      spec: {
        audiences: [],
        expirationSeconds: 3607,
        boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'sa-reader', uid: pod.metadata.uid },
      },
    });
    const mode = await runtime.execSync(id, ['stat', '-L', '-c', '%a', `${MOUNT}/token`], 10);
    assert.equal(mode.stdout.toString().trim(), '644');
    // The token of 5 s is due after 4 s at most: a new one replaces it in the same container.
    const next = await until(
      'the token refreshed in the running container',
      async () => {
        const now = await cat(id, 'token');
        return now !== first ? now : undefined;
      },
      30_000,
    );
    assert.match(next, /^token-\d+$/);
    const still = await runningContainer('sa-reader');
    assert.equal(still.id, id, 'the container was not restarted');
    assert.equal(still.pod.status?.containerStatuses?.[0]?.restartCount, 0);
  });

  it('a token that cannot be had: FailedMount, the pod waits, then runs once it can', async () => {
    refused.add('sa-waiter');
    await api.client.create(resources.pods, tokenPod('sa-waiter'));
    const failed = await until('a FailedMount event', () =>
      events.find((e) => e.name === 'sa-waiter' && e.reason === 'FailedMount'),
    );
    assert.match(
      failed.message,
      /^MountVolume\.SetUp failed for volume "kube-api-access-test0" : failed to fetch token: /,
    );
    const pod = await api.client.get<Pod>(resources.pods, 'default', 'sa-waiter');
    assert.notEqual(pod.status?.phase, 'Running');
    refused.delete('sa-waiter');
    const { id } = await runningContainer('sa-waiter');
    assert.match(await cat(id, 'token'), /^token-\d+$/);
  });
});
