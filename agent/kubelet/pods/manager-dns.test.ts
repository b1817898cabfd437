/**
 * PodManager with a Services informer and node DNS settings, on the fake runtime and the
 * in-process API server: what reaches the runtime (the sandbox's DNSConfig and hostname,
 * each container's Service variables and /etc/hosts mount), the kube-dns Service as the
 * cluster DNS when no --cluster-dns is given, MissingClusterDNS without one, and a pod that
 * waits for the Services' first sync.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isAlreadyExists } from '../../../api/client/errors.js';
import { SharedInformer } from '../../../api/client/informer.js';
import { resources } from '../../../api/client/resource.js';
import { silentLogger } from '../../../api/log.js';
import type { KubeObject } from '../../../api/object.js';
import type { Pod, Service } from '../../../api/types.js';
import { FakeRuntime } from '../../../cri/fake/runtime.js';
import { startTestApi, type TestApi } from '../../../test/support/api.js';
import { untilTruthy } from '../../../test/support/wait.js';
import { PodManager, type PodManagerConfig } from './manager.js';

let api: TestApi;
let dir: string;
const stops: (() => Promise<void>)[] = [];
before(async () => {
  api = await startTestApi();
  dir = mkdtempSync(join(tmpdir(), 'k8ts-manager-dns-'));
  writeFileSync(join(dir, 'resolv.conf'), 'nameserver 192.0.2.53\nsearch corp.example\n');
});
after(async () => {
  while (stops.length) await stops.pop()!();
  await api.stop();
  rmSync(dir, { recursive: true, force: true });
});

let nodes = 0;
async function start(over: Partial<PodManagerConfig>, startServices = true) {
  const node = `dns-node-${++nodes}`;
  const runtime = new FakeRuntime({ images: ['k8ts/pause:1.0', 'k8ts/busybox:1.0'] });
  await runtime.ensurePodNetwork({ name: `k8ts-${node}`, subnet: '10.42.0.0/24', labels: {} });
  const services = SharedInformer.fromClient<Service>(api.client, resources.services);
  const events: { reason: string; kind: string }[] = [];
  const manager = new PodManager({
    client: api.client,
    runtime,
    nodeName: node,
    nodeIP: '127.0.0.2',
    podNetwork: `k8ts-${node}`,
    recorder: { event: (target, _t, reason) => events.push({ reason, kind: String(target.kind) }) },
    logger: silentLogger(),
    dataDir: join(dir, node),
    services,
    ...over,
  });
  stops.push(async () => {
    await manager.stop();
    await services.stop();
  });
  if (startServices) services.start();
  await manager.start();
  return { node, runtime, services, events };
}

async function service(namespace: string, name: string, port: number): Promise<string> {
  try {
    await api.client.create(resources.namespaces, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    } as KubeObject);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
  const svc = await api.client.create<Service>(resources.services, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace, name },
    spec: { ports: [{ port }] },
  } as Service);
  return svc.spec.clusterIP ?? '';
}

let seq = 0;
async function runPod(node: string, spec: Partial<Pod['spec']> = {}): Promise<string> {
  const name = `p-${++seq}`;
  await api.client.create<Pod>(resources.pods, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'shop' },
    spec: { nodeName: node, containers: [{ name: 'app', image: 'k8ts/busybox:1.0' }], ...spec },
  });
  return name;
}

async function containerOf(runtime: FakeRuntime, name: string) {
  return untilTruthy(
    `${name}'s container`,
    async () => {
      const [c] = await runtime.listContainers({ labelSelector: { 'io.kubernetes.pod.name': name } });
      return c;
    },
    20_000,
    20,
  );
}

describe('PodManager: DNS, hostname, /etc/hosts and Service variables', () => {
  it("the kube-dns Service's clusterIP, the Service variables and the hosts file reach the runtime", async () => {
    const dnsIP = await service('kube-system', 'kube-dns', 53);
    const springIP = await service('shop', 'spring-service', 80);
    const { node, runtime } = await start({ dns: { resolvConf: join(dir, 'resolv.conf') } });
    const name = await runPod(node, { hostname: 'web', subdomain: 'sub' });
    const c = await containerOf(runtime, name);
    assert.deepEqual(runtime.sandboxConfig(c.podSandboxId)?.dnsConfig, {
      servers: [dnsIP],
      searches: ['shop.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example'],
      options: ['ndots:5'],
    });
    assert.equal(runtime.sandboxConfig(c.podSandboxId)?.hostname, 'web');
    const cfg = runtime.containerConfig(c.id);
    const env = new Map((cfg.envs ?? []).map((e) => [e.key, e.value]));
    assert.equal(env.get('SPRING_SERVICE_SERVICE_HOST'), springIP);
    const hosts = (cfg.mounts ?? []).find((m) => m.containerPath === '/etc/hosts');
    assert.ok(hosts, JSON.stringify(cfg.mounts));
    assert.match(readFileSync(hosts.hostPath, 'utf8'), /\tweb\.sub\.shop\.svc\.cluster\.local\tweb\n$/);
  });

  it('--cluster-dns over kube-dns; without any cluster DNS: Default and MissingClusterDNS on pod and node', async () => {
    const a = await start({ dns: { clusterDNS: ['10.96.0.10'], resolvConf: join(dir, 'resolv.conf') } });
    const c = await containerOf(a.runtime, await runPod(a.node));
    assert.deepEqual(a.runtime.sandboxConfig(c.podSandboxId)?.dnsConfig?.servers, ['10.96.0.10']);
    await api.client.delete(resources.services, 'kube-system', 'kube-dns');
    const b = await start({ dns: { resolvConf: join(dir, 'resolv.conf') } });
    const d = await containerOf(b.runtime, await runPod(b.node));
    assert.deepEqual(b.runtime.sandboxConfig(d.podSandboxId)?.dnsConfig, {
      servers: ['192.0.2.53'],
      searches: ['corp.example'],
      options: [],
    });
    assert.deepEqual(
      b.events.filter((e) => e.reason === 'MissingClusterDNS').map((e) => e.kind),
      ['Node', 'Pod'],
    );
  });

  it('a pod waits for the Services informer to sync before its container is made', async () => {
    const { node, runtime, services } = await start({ dns: { clusterDNS: ['10.96.0.10'] } }, false);
    const name = await runPod(node);
    // The sandbox is made; the container is not, while the Services are unread.
    await untilTruthy('the sandbox', async () => (await runtime.listPodSandbox()).length > 0, 20_000, 20);
    assert.deepEqual(await runtime.listContainers({ labelSelector: { 'io.kubernetes.pod.name': name } }), []);
    services.start();
    const c = await containerOf(runtime, name);
    assert.ok(
      new Map((runtime.containerConfig(c.id).envs ?? []).map((e) => [e.key, e.value])).has(
        'SPRING_SERVICE_SERVICE_HOST',
      ),
    );
  });
});
