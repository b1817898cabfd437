/**
 * What a pod sees of the cluster's names against real Docker (issue 16 item 4): its
 * /etc/resolv.conf for each dnsPolicy, its hostname and FQDN, the kubelet-managed
 * /etc/hosts, and the Service environment variables (`SPRING_SERVICE_SERVICE_HOST`, and
 * `KUBERNETES_SERVICE_HOST` even with enableServiceLinks false), read from inside the
 * running containers. The in-process API server, the docker adapter and a PodManager with a
 * Services informer, on a node name and pod network of this run only (kubelet.e2e's set-up);
 * the host resolv.conf is a file of the test's (simulated 192.0.2.53), and the cluster DNS
 * is the clusterIP the API gave kube-system/kube-dns (no --cluster-dns).
 *
 * Everything this file makes in Docker carries `io.k8ts.node=<node>` and is removed at the
 * end, passed or failed.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isAlreadyExists } from '../api/client/errors.js';
import { SharedInformer } from '../api/client/informer.js';
import { resources } from '../api/client/resource.js';
import { silentLogger } from '../api/log.js';
import type { KubeObject } from '../api/object.js';
import type { Pod, Service } from '../api/types.js';
import { PodManager } from '../agent/kubelet/pods/manager.js';
import { openRuntime, type Runtime } from '../cri/index.js';
import { startTestApi, type TestApi } from './support/api.js';
import { removeNodeFromDocker } from './support/k8ts-agent.js';
import { untilTruthy as until } from './support/wait.js';

const RUN = randomBytes(3).toString('hex');
const NODE = `pod-dns-e2e-${RUN}`;
const NETWORK = `k8ts-${NODE}`;
const SUBNET = `10.251.${randomInt(0, 256)}.0/24`;
const HOST_RESOLV_CONF = 'nameserver 192.0.2.53\nsearch corp.example\noptions edns0\n';

let api: TestApi;
let runtime: Runtime;
let manager: PodManager;
let services: SharedInformer<Service>;
let dataDir: string;
const ip: Record<string, string> = {};

async function createIgnoringExisting(ref: Parameters<TestApi['client']['create']>[0], obj: KubeObject) {
  try {
    return await api.client.create(ref, obj);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    return api.client.get(ref, obj.metadata?.namespace, obj.metadata?.name ?? '');
  }
}

async function service(namespace: string, name: string, spec: Service['spec']): Promise<string> {
  const svc = (await createIgnoringExisting(resources.services, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace, name },
    spec,
  } as KubeObject)) as Service;
  return svc.spec.clusterIP ?? '';
}

before(async () => {
  execFileSync('bash', ['scripts/start-dockerd.sh'], { stdio: 'ignore' });
  execFileSync('bash', ['scripts/build-images.sh'], { stdio: 'ignore' });
  api = await startTestApi();
  dataDir = mkdtempSync(join(tmpdir(), 'k8ts-pod-dns-e2e-'));
  writeFileSync(join(dataDir, 'resolv.conf'), HOST_RESOLV_CONF);
  await api.client.create(resources.nodes, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: NODE },
    status: { allocatable: { cpu: '2', memory: '4Gi', pods: '110' } },
  } as KubeObject);
  await createIgnoringExisting(resources.namespaces, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'kube-system' },
  } as KubeObject);
  ip.kubernetes = await service('default', 'kubernetes', { ports: [{ name: 'https', port: 443 }] });
  ip.dns = await service('kube-system', 'kube-dns', {
    ports: [
      { name: 'dns', port: 53, protocol: 'UDP' },
      { name: 'dns-tcp', port: 53, protocol: 'TCP' },
    ],
  });
  ip.spring = await service('default', 'spring-service', {
    selector: { app: 'spring' },
    ports: [{ name: 'http', port: 80, targetPort: 8080 }],
  });
  await service('default', 'headless', { clusterIP: 'None', selector: { app: 'x' }, ports: [{ port: 80 }] });
  runtime = await openRuntime('docker', { nodeName: NODE });
  await runtime.ensurePodNetwork({ name: NETWORK, subnet: SUBNET, labels: { 'io.k8ts.node': NODE } });
  services = SharedInformer.fromClient<Service>(api.client, resources.services);
  manager = new PodManager({
    client: api.client,
    runtime,
    nodeName: NODE,
    nodeIP: '127.0.0.1',
    podNetwork: NETWORK,
    recorder: { event: () => undefined },
    logger: silentLogger(),
    dataDir,
    services,
    dns: { resolvConf: join(dataDir, 'resolv.conf') },
  });
  services.start();
  await manager.start();
});

after(async () => {
  await manager?.stop();
  await services?.stop();
  await removeNodeFromDocker(NODE);
  await runtime?.close();
  await api?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** Creates the pod (one busybox container `app` sleeping), waits for it Running, returns it. */
async function runPod(name: string, spec: Partial<Pod['spec']>, env: { name: string; value: string }[] = []) {
  await api.client.create<Pod>(resources.pods, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: {
      nodeName: NODE,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'app', image: 'k8ts/busybox:1.0', command: ['sleep', '3600'], env }],
      ...spec,
    },
  });
  return until(`${name} Running`, async () => {
    const p = await api.client.get<Pod>(resources.pods, 'default', name);
    const id = p.status?.containerStatuses?.[0]?.containerID;
    return p.status?.phase === 'Running' && id ? { pod: p, id: id.replace(/^docker:\/\//, '') } : undefined;
  });
}

async function inPod(id: string, ...cmd: string[]): Promise<string> {
  const r = await runtime.execSync(id, cmd, 10);
  assert.equal(r.exitCode, 0, `${cmd.join(' ')}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

function envOf(text: string): Map<string, string> {
  return new Map(
    text
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}

describe('a pod on Docker sees the cluster as Kubernetes gives it', () => {
  it('ClusterFirst: cluster DNS, search list, ndots:5; hostname, /etc/hosts with the FQDN; Service variables', async () => {
    assert.ok(ip.dns && ip.spring && ip.kubernetes, JSON.stringify(ip));
    const { pod, id } = await runPod('web-0', { hostname: 'web', subdomain: 'sub' }, [
      { name: 'SPRING_URL', value: 'http://$(SPRING_SERVICE_SERVICE_HOST):$(SPRING_SERVICE_SERVICE_PORT)' },
      { name: 'KUBERNETES_SERVICE_PORT', value: '6443' },
    ]);
    assert.equal(
      await inPod(id, 'cat', '/etc/resolv.conf'),
      `nameserver ${ip.dns}\nsearch default.svc.cluster.local svc.cluster.local cluster.local corp.example\noptions ndots:5\n`,
    );
    assert.equal((await inPod(id, 'hostname')).trim(), 'web');
    const hosts = await inPod(id, 'cat', '/etc/hosts');
    assert.match(hosts, /^# Kubernetes-managed hosts file\.\n127\.0\.0\.1\tlocalhost\n/);
    assert.ok(
      hosts.includes(`\n${pod.status?.podIP}\tweb.sub.default.svc.cluster.local\tweb\n`),
      `${pod.status?.podIP} in ${hosts}`,
    );
    const env = envOf(await inPod(id, 'env'));
    assert.equal(env.get('SPRING_SERVICE_SERVICE_HOST'), ip.spring);
    assert.equal(env.get('SPRING_SERVICE_SERVICE_PORT'), '80');
    assert.equal(env.get('SPRING_SERVICE_SERVICE_PORT_HTTP'), '80');
    assert.equal(env.get('SPRING_SERVICE_PORT'), `tcp://${ip.spring}:80`);
    assert.equal(env.get('SPRING_SERVICE_PORT_80_TCP_ADDR'), ip.spring);
    assert.equal(env.get('SPRING_URL'), `http://${ip.spring}:80`);
    assert.equal(env.get('KUBERNETES_SERVICE_HOST'), ip.kubernetes);
    assert.equal(env.get('KUBERNETES_SERVICE_PORT'), '6443', 'the container env wins');
    assert.equal(env.get('KUBERNETES_PORT_443_TCP'), `tcp://${ip.kubernetes}:443`);
    assert.equal(env.get('HEADLESS_SERVICE_HOST'), undefined, 'a headless Service has no variables');
  });

  it('None with dnsConfig, setHostnameAsFQDN, enableServiceLinks false: still KUBERNETES_SERVICE_HOST', async () => {
    const { id } = await runPod('fqdn-0', {
      hostname: 'db',
      subdomain: 'dbs',
      setHostnameAsFQDN: true,
      enableServiceLinks: false,
      dnsPolicy: 'None',
      dnsConfig: {
        nameservers: ['192.0.2.1'],
        searches: ['x.example'],
        options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }],
      },
    });
    assert.equal(
      await inPod(id, 'cat', '/etc/resolv.conf'),
      'nameserver 192.0.2.1\nsearch x.example\noptions ndots:2 edns0\n',
    );
    assert.equal((await inPod(id, 'hostname')).trim(), 'db.dbs.default.svc.cluster.local');
    const env = envOf(await inPod(id, 'env'));
    assert.equal(env.get('KUBERNETES_SERVICE_HOST'), ip.kubernetes);
    assert.equal(env.get('SPRING_SERVICE_SERVICE_HOST'), undefined);
  });

  it("Default: the host's resolv.conf", async () => {
    const { id } = await runPod('host-dns-0', { dnsPolicy: 'Default' });
    assert.equal(await inPod(id, 'cat', '/etc/resolv.conf'), HOST_RESOLV_CONF);
    assert.equal((await inPod(id, 'hostname')).trim(), 'host-dns-0');
  });

  it('kubectl apply of a bad dnsConfig is 422 naming the field, and nothing is written', async () => {
    const manifest = (name: string, dnsConfig: string) =>
      `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default}
spec:
  dnsPolicy: None
  dnsConfig: ${dnsConfig}
  containers: [{name: app, image: k8ts/busybox:1.0}]
`;
    const none = await api.kubectlIn(manifest('bad-dns-0', '{searches: [a.example]}'), 'apply', '-f', '-');
    assert.notEqual(none.code, 0);
    assert.match(
      none.stderr,
      /The Pod "bad-dns-0" is invalid: spec\.dnsConfig\.nameservers: Required value: must provide at least one DNS nameserver when `dnsPolicy` is None/,
    );
    const badIP = await api.kubectlIn(
      manifest('bad-dns-1', '{nameservers: [dns.example]}'),
      'apply',
      '-f',
      '-',
    );
    assert.notEqual(badIP.code, 0);
    assert.match(
      badIP.stderr,
      /spec\.dnsConfig\.nameservers\[0\]: Invalid value: "dns\.example": must be a valid IP address/,
    );
    const got = await api.kubectl(
      'get',
      'pods',
      'bad-dns-0',
      'bad-dns-1',
      '--ignore-not-found',
      '-o',
      'name',
    );
    assert.equal(got.stdout.trim(), '');
  });
});
