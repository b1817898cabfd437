// A pod's ServiceAccount credentials end to end (issue 16 item 2): a real `k8ts server`
// (its controllers make the namespace's `default` ServiceAccount and `kube-root-ca.crt`,
// its admission adds the kube-api-access-* volume), a real `k8ts agent` on real Docker
// whose kubelet asks for the pod's token with its own node credential, and the real
// kubectl. Inside the container the pod's files are read with `kubectl exec`: `ca.crt` is
// the cluster CA, `namespace` the pod's, and `token` authenticates at the API server as
// system:serviceaccount:<ns>:default over TLS verified with that `ca.crt`. A pod that
// opts out (automountServiceAccountToken: false) has none of it. The node name and pod
// network are this run's own; every container the node made is removed at the end.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { configuredFetch } from '../api/client/fetch.js';
import { freeClusterCIDR } from './support/cluster-cidr.js';
import { removeNodeFromDocker, startK8tsAgent, type K8tsAgent } from './support/k8ts-agent.js';
import { startK8tsServer, type K8tsServer } from './support/k8ts-server.js';
import { untilTruthy as until } from './support/wait.js';

const NODE = `sa-pod-e2e-${process.pid}`;
const NS = `sa-pod-${process.pid}`;
const MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

const pod = (name: string, automount: boolean) => `
apiVersion: v1
kind: Pod
metadata: { name: ${name}, namespace: ${NS} }
spec:
  terminationGracePeriodSeconds: 0
  automountServiceAccountToken: ${automount}
  containers:
    - name: app
      image: k8ts/busybox:1.0
      imagePullPolicy: IfNotPresent
      command: [sleep, '3600']
`;

describe('a pod reads its ServiceAccount token and ca.crt', { timeout: 300_000 }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'k8ts-sa-pod-e2e-'));
  let k: K8tsServer;
  let agent: K8tsAgent | undefined;

  const running = (name: string) =>
    until(
      `${name} Running`,
      async () => {
        const r = await k.kubectl('get', 'pod', '-n', NS, name, '-o', 'jsonpath={.status.phase}');
        return r.stdout === 'Running';
      },
      120_000,
      250,
    );
  const exec = (name: string, ...cmd: string[]) => k.kubectl('exec', '-n', NS, name, '--', ...cmd);

  before(async () => {
    await removeNodeFromDocker(NODE);
    k = await startK8tsServer({ dataDir, args: ['--cluster-cidr', await freeClusterCIDR()] });
    agent = await startK8tsAgent({
      server: k.url,
      token: k.nodeToken(),
      nodeName: NODE,
      nodeIP: '127.0.0.1',
    });
    const created = await k.kubectl('create', 'namespace', NS);
    assert.equal(created.code, 0, created.stderr);
  });

  after(async () => {
    // Each step even when one before it fails: the node's containers never stay behind.
    try {
      await agent?.stop();
    } finally {
      try {
        await k?.stop();
      } finally {
        await removeNodeFromDocker(NODE);
        rmSync(dataDir, { recursive: true, force: true });
      }
    }
  });

  it('has token, ca.crt and namespace; the token authenticates as the ServiceAccount', async () => {
    // Pods are created once the namespace's ServiceAccount exists (as upstream, admission
    // refuses them before) and run once its kube-root-ca.crt does.
    await until('the namespace default ServiceAccount and kube-root-ca.crt', async () => {
      const sa = await k.kubectl('get', 'serviceaccount', '-n', NS, 'default');
      const cm = await k.kubectl('get', 'configmap', '-n', NS, 'kube-root-ca.crt');
      return sa.code === 0 && cm.code === 0;
    });
    const applied = await k.kubectlIn(pod('reader', true), 'apply', '-f', '-');
    assert.equal(applied.code, 0, applied.stderr);
    await running('reader');
    const spec = JSON.parse((await k.kubectl('get', 'pod', '-n', NS, 'reader', '-o', 'json')).stdout) as {
      spec: { volumes?: { name: string }[] };
    };
    assert.ok(
      spec.spec.volumes?.some((v) => /^kube-api-access-[a-z0-9]{5}$/.test(v.name)),
      JSON.stringify(spec.spec.volumes),
    );

    const ca = await exec('reader', 'cat', `${MOUNT}/ca.crt`);
    assert.equal(ca.code, 0, ca.stderr);
    assert.equal(ca.stdout, readFileSync(join(dataDir, 'tls', 'server-ca.crt'), 'utf8'));
    const ns = await exec('reader', 'cat', `${MOUNT}/namespace`);
    assert.equal(ns.stdout, NS);
    const token = await exec('reader', 'cat', `${MOUNT}/token`);
    assert.equal(token.code, 0, token.stderr);
    assert.match(token.stdout, /^[\w-]+\.[\w-]+\.[\w-]+$/);

    // What an in-cluster client does with these files: TLS verified against ca.crt, the token as bearer.
    const fetchAsPod = configuredFetch({ ca: ca.stdout, token: token.stdout });
    const r = await fetchAsPod(`${k.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
    });
    assert.equal(r.status, 201, await r.clone().text());
    const review = (await r.json()) as { status?: { userInfo?: { username?: string; groups?: string[] } } };
    assert.equal(review.status?.userInfo?.username, `system:serviceaccount:${NS}:default`);
    assert.ok(review.status?.userInfo?.groups?.includes(`system:serviceaccounts:${NS}`));
  });

  it('a pod with automountServiceAccountToken: false has no credentials', async () => {
    const applied = await k.kubectlIn(pod('quiet', false), 'apply', '-f', '-');
    assert.equal(applied.code, 0, applied.stderr);
    await running('quiet');
    const ls = await exec('quiet', 'ls', MOUNT);
    assert.notEqual(ls.code, 0, ls.stdout);
  });
});
