/**
 * The Docker fast path (cri/docker/pod-interfaces.ts) on the real engine and the real
 * kernel: the Docker adapter with the network module's VethPodInterfaces, as the agent
 * wires them. Kernel state only in a network namespace this test makes: the plugin's
 * host-side commands run inside it (nsenter), its bridge stands in for the Docker
 * network's (which lives in the machine's namespace, made as today's path makes it), so
 * the veth's host end is there and its pod end in the sandbox's own namespace; both go
 * with the sandbox. Shows: NetworkMode none, eth0 with the reserved address, Docker's MAC
 * and the MTU, the default route reaching the bridge, the hostname and its /etc/hosts
 * line in the app container, its resolv.conf from the config's dnsConfig, the IP from the label for a new adapter (an agent restart),
 * the address freed on removal, an app container created while its sandbox starts
 * (RunPodSandboxOptions.onCreated) joining all of it, and a hostPort pod kept on Docker's network.
 * Everything is labelled with the test's node name and removed afterwards.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Docker from 'dockerode';
import { runHostCommand, type HostCommand } from '../agent/network/host-command.js';
import { VethPodInterfaces } from '../agent/network/pod-interfaces.js';
import { openRuntime, type DockerPodInterfaces, type PodSandboxConfig, type Runtime } from '../cri/index.js';
import { untilTruthy } from './support/wait.js';

const RUN = randomBytes(3).toString('hex');
const NODE = `pod-interfaces-${RUN}`;
const NETWORK = `k8ts-${NODE}`;
const NETNS = `k8ts-pi-${RUN}`;
const BRIDGE = `br-pi${RUN}`;
const SUBNET = `10.${randomInt(200, 250)}.${randomInt(0, 256)}.0/24`;
const PREFIX = SUBNET.split('.').slice(0, 3).join('.');
const docker = new Docker();
const dataDir = mkdtempSync(join(tmpdir(), 'k8ts-pod-interfaces-'));

const inNetns: HostCommand = (file, args, stdin) =>
  runHostCommand('nsenter', [`--net=/var/run/netns/${NETNS}`, file, ...args], stdin);
const must = async (file: string, args: string[]) => {
  const r = await inNetns(file, args);
  assert.equal(r.code, 0, `${file} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

/** The real plugin, its host side in the test's namespace and on the test's bridge. */
function plugin(): DockerPodInterfaces {
  const real = new VethPodInterfaces({ host: inNetns, ipamDir: join(dataDir, 'ipam'), enabled: () => true });
  return {
    enabled: () => real.enabled(),
    allocate: (net, owner) => real.allocate(net, owner),
    attach: (req) => real.attach({ ...req, net: { ...req.net, bridge: BRIDGE } }),
    release: (network, ip, owner) => real.release(network, ip, owner),
    sweep: (network, owners) => real.sweep(network, owners),
  };
}

async function adapter(): Promise<Runtime> {
  return openRuntime('docker', { nodeName: NODE, podInterfaces: plugin() });
}

const sandboxConfig = (name: string, extra: Partial<PodSandboxConfig> = {}): PodSandboxConfig => ({
  metadata: { name, namespace: 'pod-interfaces', uid: `uid-${RUN}-${name}`, attempt: 0 },
  hostname: name,
  portMappings: [],
  labels: {},
  annotations: {},
  network: NETWORK,
  ...extra,
});

let rt: Runtime;

before(async () => {
  execFileSync('bash', ['scripts/start-dockerd.sh'], { stdio: 'inherit' });
  execFileSync('bash', ['scripts/build-images.sh', 'pause', 'busybox'], { stdio: 'inherit' });
  execFileSync('ip', ['netns', 'add', NETNS]);
  await must('ip', ['link', 'add', BRIDGE, 'type', 'bridge']);
  await must('ip', ['addr', 'add', `${PREFIX}.1/24`, 'dev', BRIDGE]);
  await must('ip', ['link', 'set', BRIDGE, 'up']);
  rt = await adapter();
  await rt.ensurePodNetwork({ name: NETWORK, subnet: SUBNET, labels: { 'io.k8ts.node': NODE }, mtu: 1400 });
});

after(async () => {
  const items = await docker.listContainers({ all: true, filters: { label: [`io.k8ts.node=${NODE}`] } });
  items.sort(
    (a, b) =>
      Number(a.Labels['io.k8ts.type'] === 'podsandbox') - Number(b.Labels['io.k8ts.type'] === 'podsandbox'),
  );
  for (const c of items)
    await docker
      .getContainer(c.Id)
      .remove({ force: true })
      .catch(() => undefined);
  await docker
    .getNetwork(NETWORK)
    .remove()
    .catch(() => undefined);
  await rt?.close();
  execFileSync('ip', ['netns', 'del', NETNS]);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('Docker sandboxes whose interface the network module makes', () => {
  it('eth0 on the bridge with the reserved address, hostname and hosts line; adopted by a new adapter; freed on removal', async () => {
    const dnsConfig = { servers: ['10.43.0.10'], searches: ['ns.svc.cluster.local'], options: ['ndots:5'] };
    const id = await rt.runPodSandbox(sandboxConfig('web', { dnsConfig }));
    const info = await docker.getContainer(id).inspect();
    assert.equal(info.HostConfig.NetworkMode, 'none');
    const ip = (await rt.podSandboxStatus(id)).network.ip;
    assert.equal(ip, `${PREFIX}.128`, 'the first address of the upper half');
    assert.equal(info.Config.Labels['io.k8ts.pod-ip'], ip);
    const mac = `02:42:${ip
      .split('.')
      .map((o) => Number(o).toString(16).padStart(2, '0'))
      .join(':')}`;

    const c = await rt.createContainer(
      id,
      {
        metadata: { name: 'main', attempt: 0 },
        image: { image: 'k8ts/busybox:1.0' },
        command: ['sleep', '300'],
        labels: {},
        annotations: {},
      },
      sandboxConfig('web'),
    );
    await rt.startContainer(c);
    const sh = async (script: string) => {
      const r = await rt.execSync(c, ['sh', '-c', script], 20);
      assert.equal(r.exitCode, 0, `${script}: ${r.stderr.toString()}`);
      return r.stdout.toString();
    };
    const link = await sh('ip -o link show eth0; ip -o -4 addr show eth0; ip route');
    assert.match(link, new RegExp(`eth0.* mtu 1400 .*link/ether ${mac}`));
    assert.match(link, new RegExp(`inet ${ip.replaceAll('.', '\\.')}/24`));
    assert.match(link, new RegExp(`default via ${PREFIX.replaceAll('.', '\\.')}\\.1 dev eth0`));
    // The bridge answers: the veth's host end is on it.
    await sh(`ping -c 1 -W 2 ${PREFIX}.1`);
    assert.equal((await sh('hostname')).trim(), 'web');
    // The pod's resolv.conf (CRI dnsConfig), not the host's that Docker copies for `none`.
    assert.equal(
      await sh('cat /etc/resolv.conf'),
      'nameserver 10.43.0.10\nsearch ns.svc.cluster.local\noptions ndots:5\n',
    );
    assert.match(await sh('cat /etc/hosts'), new RegExp(`^${ip.replaceAll('.', '\\.')}\\tweb$`, 'm'));
    assert.match(await must('ip', ['-o', 'link', 'show', 'master', BRIDGE]), /veth[0-9a-f]{11}@/);

    // An agent restart: a new adapter reads the pod IP from Docker alone.
    const again = await adapter();
    assert.equal((await again.podSandboxStatus(id)).network.ip, ip);
    await again.close();

    const ipamFile = join(dataDir, 'ipam', NETWORK, ip);
    assert.ok(existsSync(ipamFile));
    await rt.stopPodSandbox(id);
    await rt.removePodSandbox(id);
    assert.equal(existsSync(ipamFile), false, 'the address is freed');
    // The kernel removes a netns's veth in its cleanup work after the last reference goes,
    // so the host end lingers a moment (longer on a loaded machine).
    await untilTruthy(
      'the veth to go with the netns',
      async () => (await must('ip', ['-o', 'link', 'show', 'master', BRIDGE])).trim() === '',
      10_000,
    );
  });

  it('a container created while its sandbox starts (onCreated) gets its eth0, hostname, hosts line and resolv.conf', async () => {
    const dnsConfig = { servers: ['10.43.0.11'], searches: [], options: [] };
    const config = sandboxConfig('early', { dnsConfig });
    let made: Promise<string> | undefined;
    let told: { id: string; ip?: string } | undefined;
    const id = await rt.runPodSandbox(config, {
      onCreated: (sandbox) => {
        told = sandbox;
        made = rt.createContainer(
          sandbox.id,
          {
            metadata: { name: 'main', attempt: 0 },
            image: { image: 'k8ts/busybox:1.0' },
            command: ['sleep', '300'],
            labels: {},
            annotations: {},
          },
          config,
        );
      },
    });
    const ip = (await rt.podSandboxStatus(id)).network.ip;
    assert.deepEqual(told, { id, ip });
    const c = await made!;
    await rt.startContainer(c);
    const sh = async (script: string) => {
      const r = await rt.execSync(c, ['sh', '-c', script], 20);
      assert.equal(r.exitCode, 0, `${script}: ${r.stderr.toString()}`);
      return r.stdout.toString();
    };
    assert.match(await sh('ip -o -4 addr show eth0'), new RegExp(`inet ${ip.replaceAll('.', '\\.')}/24`));
    assert.equal((await sh('hostname')).trim(), 'early');
    assert.equal(await sh('cat /etc/resolv.conf'), 'nameserver 10.43.0.11\n');
    assert.match(await sh('cat /etc/hosts'), new RegExp(`^${ip.replaceAll('.', '\\.')}\\tearly$`, 'm'));
    await rt.removePodSandbox(id);
  });

  it("keeps a hostPort pod on Docker's network (Docker publishes its ports)", async () => {
    const id = await rt.runPodSandbox(
      sandboxConfig('hostport', {
        portMappings: [{ protocol: 'TCP', containerPort: 80, hostPort: 0, hostIp: '' }],
      }),
    );
    assert.equal(
      (await docker.getContainer(id).inspect()).HostConfig.NetworkMode,
      'none',
      'no hostPort: fast',
    );
    const withPort = await rt.runPodSandbox(
      sandboxConfig('hostport2', {
        portMappings: [
          { protocol: 'TCP', containerPort: 80, hostPort: randomInt(20000, 30000), hostIp: '127.0.0.1' },
        ],
      }),
    );
    const info = await docker.getContainer(withPort).inspect();
    assert.equal(info.HostConfig.NetworkMode, NETWORK);
    const ip = (await rt.podSandboxStatus(withPort)).network.ip;
    assert.equal(ip, info.NetworkSettings.Networks[NETWORK]?.IPAddress);
    assert.ok(Number(ip.split('.')[3]) < 128, `Docker's IPAM keeps to the lower half: ${ip}`);
    await rt.removePodSandbox(id);
    await rt.removePodSandbox(withPort);
  });
});
