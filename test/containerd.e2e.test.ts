// `k8ts agent --runtime containerd` end to end (issue 15): a mixed cluster on two simulated
// hosts (test/support/simulated-hosts.ts), the control process in the machine's namespace,
// the real kubectl.
// - h1 runs an agent on its own Docker engine (as multihost.e2e does);
// - h2 runs an agent on a containerd with its CRI plugin that this file starts inside h2's
//   namespace (test/support/host-containerd.ts: own root, state, socket and config under the
//   host's dir), with Debian's CNI plugins and the conf dir the agent writes its conflist into.
// Checked: the node Ready with `containerd://`, the conflist from the podCIDR; examples/ with
// pods on both nodes, each answering through both hosts' NodePorts (kube-proxy and the
// vxlan network between hosts, on a CNI bridge and a Docker bridge alike), containerd pods'
// IPs from their podCIDR; kubectl logs, exec, port-forward and top on containerd pods;
// ErrImageNeverPull for an image missing from k8s.io; a hostPort through portmap; a restarted
// agent adopting the running containers; a containerd restart with the pods running on.
// Kernel state changes only inside the simulated hosts' namespaces (the CNI bridge, its
// veths, portmap's and the agent's rules); at the end, passed or failed, every sandbox is
// removed through the CRI, containerd and its shims are stopped by PID, and the hosts go.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CNI_BIN_DIR as CNI_BIN, HostContainerd } from './support/host-containerd.js';
import { startK8tsAgent, type K8tsAgent } from './support/k8ts-agent.js';
import { startK8tsServer, type K8tsServer } from './support/k8ts-server.js';
import { startRegistry } from './support/registry.js';
import { get, podOf, untilEveryPodAnswers } from './support/simulated-cluster.js';
import { startSimulatedHosts, type SimulatedHost, type SimulatedHosts } from './support/simulated-hosts.js';
import { until, untilTruthy } from './support/wait.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const NODE_PORT = 30080;
const HOST_PORT = 30888;

const missingTools = ['containerd', 'ctr', 'runc', 'nsenter', 'kubectl', 'docker', 'iptables'].filter(
  (t) => spawnSync('which', [t]).status !== 0,
);
const missingCni = ['bridge', 'host-local', 'loopback', 'portmap'].filter(
  (p) => !existsSync(join(CNI_BIN, p)),
);
const SKIP =
  process.getuid?.() !== 0
    ? 'simulated hosts and containerd need root'
    : missingTools.length > 0
      ? `needs ${missingTools.join(', ')}`
      : missingCni.length > 0
        ? `needs the CNI plugins ${missingCni.join(', ')} in ${CNI_BIN} (Debian package containernetworking-plugins)`
        : undefined;

/** True when `ip` is inside the IPv4 `cidr`. */
function inCidr(ip: string, cidr: string): boolean {
  const [net, bits] = cidr.split('/') as [string, string];
  const n = (a: string) => a.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
  const size = 2 ** (32 - Number(bits));
  return Math.floor(n(ip) / size) === Math.floor(n(net) / size);
}

describe(
  'k8ts agent --runtime containerd: a mixed cluster',
  { skip: SKIP ?? false, timeout: 900_000 },
  () => {
    let lan: SimulatedHosts;
    let k: K8tsServer;
    let containerd: HostContainerd;
    const agents = new Map<string, K8tsAgent>();
    const run = `${process.pid}`;
    const dockerNode = `ctd-e2e-${run}-docker`;
    const containerdNode = `ctd-e2e-${run}-containerd`;

    const kubectl = async (...args: string[]) => {
      const r = await k.kubectl(...args);
      assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    };
    interface PodView {
      name: string;
      node: string;
      ip: string;
      ready: boolean;
      containerIDs: string[];
      restarts: number;
    }
    const pods = async (selector: string): Promise<PodView[]> =>
      (
        JSON.parse(await kubectl('get', 'pods', '-l', selector, '-o', 'json')) as {
          items: {
            metadata: { name: string };
            spec: { nodeName?: string };
            status: {
              podIP?: string;
              conditions?: { type: string; status: string }[];
              containerStatuses?: { containerID?: string; restartCount: number }[];
            };
          }[];
        }
      ).items.map((p) => ({
        name: p.metadata.name,
        node: p.spec.nodeName ?? '',
        ip: p.status.podIP ?? '',
        ready: (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
        containerIDs: (p.status.containerStatuses ?? []).map((c) => c.containerID ?? ''),
        restarts: (p.status.containerStatuses ?? []).reduce((n, c) => n + c.restartCount, 0),
      }));

    const startDockerAgent = async (h: SimulatedHost) =>
      startK8tsAgent({
        server: k.url,
        token: k.nodeToken(),
        nodeName: dockerNode,
        nodeIP: h.ip,
        dataDir: `${h.dir}/agent`,
        wrapper: h.nsenter,
        env: { DOCKER_HOST: h.dockerHost },
        fromSource: true,
        readyTimeoutMs: 60_000,
      });
    const startContainerdAgent = async (h: SimulatedHost) =>
      startK8tsAgent({
        server: k.url,
        token: k.nodeToken(),
        nodeName: containerdNode,
        nodeIP: h.ip,
        dataDir: `${h.dir}/agent`,
        wrapper: h.nsenter,
        fromSource: true,
        args: [
          '--runtime',
          'containerd',
          '--container-runtime-endpoint',
          containerd.endpoint,
          '--cni-conf-dir',
          containerd.confDir,
          '--cni-bin-dir',
          CNI_BIN,
        ],
        readyTimeoutMs: 60_000,
      });
    const nodeReady = async (node: string) =>
      (await k.kubectl('get', 'node', node, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'))
        .stdout === 'True';

    before(async () => {
      execFileSync('bash', [join(REPO, 'scripts/build-images.sh'), 'spring-server', 'pause', 'busybox'], {
        stdio: 'inherit',
      });
      lan = await startSimulatedHosts({ count: 2 });
      containerd = new HostContainerd(lan.hosts[1]!, [
        'k8ts/pause:1.0',
        'k8ts/busybox:1.0',
        'spring-server:1.0',
      ]);
      await containerd.start();
      k = await startK8tsServer({
        args: ['--flannel-backend', 'vxlan', '--bind-address', lan.gatewayIP, '--datastore', 'memory'],
        fromSource: true,
        readyTimeoutMs: 60_000,
      });
      agents.set('docker', await startDockerAgent(lan.hosts[0]!));
      agents.set('containerd', await startContainerdAgent(lan.hosts[1]!));
      await untilTruthy(
        'both nodes Ready',
        async () => (await nodeReady(dockerNode)) && (await nodeReady(containerdNode)),
        120_000,
        500,
      );
    });

    after(async () => {
      for (const a of agents.values()) await a.stop();
      await k?.stop();
      await containerd?.stop();
      await lan?.stop();
    });

    it('the containerd node reports containerd:// and its conflist is the podCIDR’s', async () => {
      const node = JSON.parse(await kubectl('get', 'node', containerdNode, '-o', 'json')) as {
        spec: { podCIDR: string };
        status: { nodeInfo: { containerRuntimeVersion: string } };
      };
      assert.match(node.status.nodeInfo.containerRuntimeVersion, /^containerd:\/\/1\./);
      const conflist = JSON.parse(readFileSync(join(containerd.confDir, '00-k8ts.conflist'), 'utf8')) as {
        name: string;
        plugins: { type: string; mtu?: number; ipam?: { ranges: { subnet: string }[][] } }[];
      };
      assert.equal(conflist.name, `k8ts-${containerdNode}`);
      assert.deepEqual(
        conflist.plugins.map((p) => p.type),
        ['bridge', 'portmap'],
      );
      assert.equal(conflist.plugins[0]!.ipam!.ranges[0]![0]!.subnet, node.spec.podCIDR);
      // vxlan: the uplink's 1500 less the 50 of VXLAN, as on the Docker node.
      assert.equal(conflist.plugins[0]!.mtu, 1450);
    });

    it("examples/: pods on both nodes, each answering through both hosts' NodePorts", async () => {
      await kubectl('apply', '-f', `${REPO}examples/`);
      const running = await until(
        'five ready spring pods',
        async () => {
          const ps = await pods('app=backend-app');
          return ps.length === 5 && ps.every((p) => p.ready) ? ps : undefined;
        },
        240_000,
        500,
      );
      const onContainerd = running.filter((p) => p.node === containerdNode);
      assert.ok(
        onContainerd.length > 0 && onContainerd.length < 5,
        `pods on both nodes: ${JSON.stringify(running)}`,
      );
      const podCIDR = await kubectl('get', 'node', containerdNode, '-o', 'jsonpath={.spec.podCIDR}');
      for (const p of onContainerd) {
        assert.ok(inCidr(p.ip, podCIDR), `${p.name}'s IP ${p.ip} is not in ${containerdNode}'s ${podCIDR}`);
        assert.match(p.containerIDs[0] ?? '', /^containerd:\/\/[0-9a-f]{64}$/);
      }
      const all = new Set(running.map((p) => p.name));
      for (const h of lan.hosts) {
        await untilEveryPodAnswers(h, NODE_PORT, all, 90_000);
      }
    });

    it('kubectl logs, exec and port-forward on a containerd pod', async () => {
      const pod = (await pods('app=backend-app')).find((p) => p.node === containerdNode);
      assert.ok(pod);
      const logs = await kubectl('logs', pod.name);
      assert.match(logs, /Started spring-server 1\.0 on port 8080/);
      const stamped = await kubectl('logs', pod.name, '--timestamps', '--tail', '1');
      assert.match(stamped, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z Started spring-server/);
      const r = await k.kubectl(
        'exec',
        pod.name,
        '--',
        'sh',
        '-c',
        'echo "in $(hostname)"; echo oops >&2; exit 3',
      );
      assert.equal(r.stdout, `in ${pod.name}\n`);
      assert.match(r.stderr, /oops/);
      assert.equal(r.code, 3);
      // The end of kubectl's stdin reaches the container (`echo hi | kubectl exec -i … -- cat`
      // returns; kubectlIn kills kubectl after 30 s, code null).
      const cat = await k.kubectlIn('hi\n', 'exec', '-i', pod.name, '--', 'cat');
      assert.equal(cat.code, 0, cat.stderr);
      assert.equal(cat.stdout, 'hi\n');
      // The kubelet's resolv.conf (CRI dns_config, written by containerd) and Service variables.
      const dnsIP = await kubectl(
        'get',
        'svc',
        '-n',
        'kube-system',
        'kube-dns',
        '-o',
        'jsonpath={.spec.clusterIP}',
      );
      const springIP = await kubectl('get', 'svc', 'spring-service', '-o', 'jsonpath={.spec.clusterIP}');
      const apiIP = await kubectl('get', 'svc', 'kubernetes', '-o', 'jsonpath={.spec.clusterIP}');
      // containerd writes the search line first (its parseDNSOptions), Docker the nameserver.
      const resolv = await kubectl('exec', pod.name, '--', 'cat', '/etc/resolv.conf');
      assert.deepEqual(
        resolv.split('\n').sort(),
        [
          '',
          `nameserver ${dnsIP}`,
          'options ndots:5',
          ...resolv.split('\n').filter((l) => l.startsWith('search ')),
        ].sort(),
      );
      assert.match(resolv, /^search default\.svc\.cluster\.local svc\.cluster\.local cluster\.local\b/m);
      assert.equal(
        await kubectl(
          'exec',
          pod.name,
          '--',
          'sh',
          '-c',
          'echo $SPRING_SERVICE_SERVICE_HOST $KUBERNETES_SERVICE_HOST',
        ),
        `${springIP} ${apiIP}\n`,
      );
      // port-forward: kubectl → API server → the agent's tunnel → the CRI streaming server.
      const pf = spawn('kubectl', ['port-forward', pod.name, ':8080', '--address', '127.0.0.1'], {
        env: { ...process.env, KUBECONFIG: k.kubeconfig },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      try {
        let out = '';
        pf.stdout.on('data', (d: Buffer) => (out += d.toString()));
        const port = await until(
          'kubectl port-forward listening',
          () => /Forwarding from 127\.0\.0\.1:(\d+)/.exec(out)?.[1],
          30_000,
          100,
        );
        assert.equal(
          (await get(`http://127.0.0.1:${port}/`, 10_000)).trim(),
          `spring-server 1.0 on ${pod.name}`,
        );
      } finally {
        pf.kill('SIGTERM');
      }
    });

    it('kubectl logs --previous on containerd: the exited instance’s CRI log file', async () => {
      // Each instance counts itself in an emptyDir; the first exits 1, the second stays.
      const script =
        'n=$(cat /d/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > /d/n; echo "instance $n"; ' +
        '[ $n -ge 2 ] && exec sleep 3600; exit 1';
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'ctd-previous', labels: { app: 'ctd-previous' } },
        spec: {
          nodeName: containerdNode,
          terminationGracePeriodSeconds: 0,
          volumes: [{ name: 'd', emptyDir: {} }],
          containers: [
            {
              name: 'c',
              image: 'k8ts/busybox:1.0',
              imagePullPolicy: 'Never',
              command: ['sh', '-c', script],
              volumeMounts: [{ name: 'd', mountPath: '/d' }],
            },
          ],
        },
      };
      const r = await k.kubectlIn(JSON.stringify(pod), 'apply', '-f', '-');
      assert.equal(r.code, 0, r.stderr);
      try {
        await until(
          'the second instance running after one restart',
          async () => {
            const st = JSON.parse(await kubectl('get', 'pod', 'ctd-previous', '-o', 'json')) as {
              status: { containerStatuses?: { restartCount: number; state: { running?: unknown } }[] };
            };
            const c = st.status.containerStatuses?.[0];
            return c?.restartCount === 1 && c.state.running ? true : undefined;
          },
          90_000,
          500,
        );
        assert.equal(await kubectl('logs', 'ctd-previous'), 'instance 2\n');
        assert.equal(await kubectl('logs', 'ctd-previous', '--previous'), 'instance 1\n');
        const stamped = await kubectl('logs', 'ctd-previous', '--previous', '--timestamps');
        assert.match(stamped, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z instance 1\n$/);
      } finally {
        await k.kubectl('delete', 'pod', 'ctd-previous', '--wait=false');
      }
    });

    it('kubectl top pods: the containerd pods’ CPU and memory (the CRI ContainerStats)', async () => {
      const names = (await pods('app=backend-app'))
        .filter((p) => p.node === containerdNode)
        .map((p) => p.name);
      const top = await until(
        'kubectl top pods with the containerd pods',
        async () => {
          const r = await k.kubectl('top', 'pods', '--no-headers');
          return r.code === 0 && names.every((n) => r.stdout.includes(n)) ? r.stdout : undefined;
        },
        90_000,
        1000,
      );
      for (const n of names) {
        const m = new RegExp(`^${n}\\s+(\\d+)m\\s+(\\d+)Mi`, 'm').exec(top);
        assert.ok(m, top);
        assert.ok(Number(m[2]) >= 5, `a JVM uses megabytes: ${m[0]}`);
      }
    });

    it('an image missing from k8s.io with imagePullPolicy Never: ErrImageNeverPull', async () => {
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'never-pull', labels: { app: 'ctd-never' } },
        spec: {
          nodeName: containerdNode,
          terminationGracePeriodSeconds: 0,
          containers: [{ name: 'c', image: 'k8ts/not-here:1.0', imagePullPolicy: 'Never' }],
        },
      };
      const r = await k.kubectlIn(JSON.stringify(pod), 'apply', '-f', '-');
      assert.equal(r.code, 0, r.stderr);
      const waiting = await until(
        'the container waiting with ErrImageNeverPull',
        async () => {
          const st = JSON.parse(await kubectl('get', 'pod', 'never-pull', '-o', 'json')) as {
            status: { containerStatuses?: { state: { waiting?: { reason: string; message?: string } } }[] };
          };
          const w = st.status.containerStatuses?.[0]?.state.waiting;
          return w?.reason === 'ErrImageNeverPull' ? w : undefined;
        },
        60_000,
        500,
      );
      assert.match(waiting.message ?? '', /k8ts\/not-here:1\.0/);
      await kubectl('delete', 'pod', 'never-pull', '--wait=false');
    });

    it('a pull through an imagePullSecret from a registry with basic auth (PullImageRequest.auth)', async () => {
      // The registry runs in h2's namespace on its 127.0.0.1, where containerd pulls; the image
      // gets there by ctr's push from k8s.io. containerd reaches it over plain HTTP through
      // its hosts.toml (registry.config_path).
      const h2 = lan.hosts[1]!;
      const password = `pw-${run}`;
      const reg = await startRegistry({ users: { ann: password }, wrapper: h2.nsenter });
      try {
        containerd.plainHttpRegistry(reg.host);
        const image = `${reg.host}/spring-server:1.0`;
        const ctr = async (...args: string[]) => {
          const r = await h2.exec(['ctr', '-a', containerd.sock, '-n', 'k8s.io', ...args], {
            timeoutMs: 120_000,
          });
          assert.equal(r.code, 0, `ctr ${args.join(' ')}: ${r.stderr}`);
        };
        await ctr('images', 'tag', '--force', 'docker.io/library/spring-server:1.0', image);
        await ctr('images', 'push', '--plain-http', '--user', `ann:${password}`, image);
        await ctr('images', 'rm', image);
        const podWith = (name: string, secrets: string[]) => ({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, labels: { app: 'ctd-pull-secret' } },
          spec: {
            nodeName: containerdNode,
            terminationGracePeriodSeconds: 0,
            imagePullSecrets: secrets.map((n) => ({ name: n })),
            containers: [{ name: 'c', image, imagePullPolicy: 'Always' }],
          },
        });
        const waitingOf = async (name: string) => {
          const st = JSON.parse(await kubectl('get', 'pod', name, '-o', 'json')) as {
            status: {
              phase?: string;
              containerStatuses?: { state: { waiting?: { reason: string; message?: string } } }[];
            };
          };
          return { phase: st.status.phase, waiting: st.status.containerStatuses?.[0]?.state.waiting };
        };
        let r = await k.kubectlIn(JSON.stringify(podWith('pull-nosecret', [])), 'apply', '-f', '-');
        assert.equal(r.code, 0, r.stderr);
        const refused = await until(
          'the pull without a secret refused',
          async () => {
            const w = (await waitingOf('pull-nosecret')).waiting;
            return w?.reason === 'ErrImagePull' || w?.reason === 'ImagePullBackOff' ? w : undefined;
          },
          60_000,
          500,
        );
        if (refused.reason === 'ErrImagePull')
          assert.match(refused.message ?? '', /401 Unauthorized|unauthorized/i);
        const auth = Buffer.from(`ann:${password}`).toString('base64');
        await kubectl(
          'create',
          'secret',
          'docker-registry',
          'ctd-regcred',
          `--docker-server=${reg.host}`,
          '--docker-username=ann',
          `--docker-password=${password}`,
        );
        const cfg = JSON.parse(
          Buffer.from(
            await kubectl('get', 'secret', 'ctd-regcred', '-o', 'jsonpath={.data.\\.dockerconfigjson}'),
            'base64',
          ).toString(),
        ) as { auths: Record<string, { auth: string }> };
        assert.equal(cfg.auths[reg.host]?.auth, auth, 'kubectl wrote the dockerconfigjson');
        r = await k.kubectlIn(JSON.stringify(podWith('pull-secret', ['ctd-regcred'])), 'apply', '-f', '-');
        assert.equal(r.code, 0, r.stderr);
        await until(
          'the pod with the secret Running',
          async () => ((await waitingOf('pull-secret')).phase === 'Running' ? true : undefined),
          90_000,
          500,
        ).catch(async (err: unknown) => {
          throw new Error(`${(err as Error).message}: ${JSON.stringify(await waitingOf('pull-secret'))}`);
        });
        assert.match(reg.log(), /\/v2\/spring-server\/manifests\/1\.0/, 'the registry was asked');
      } finally {
        await k.kubectl('delete', 'pod', '-l', 'app=ctd-pull-secret', '--wait=false');
        await k.kubectl('delete', 'secret', 'ctd-regcred');
        await reg.stop();
      }
    });

    it('a hostPort on the containerd node through the portmap plugin', async () => {
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'hostport', labels: { app: 'ctd-hostport' } },
        spec: {
          nodeName: containerdNode,
          terminationGracePeriodSeconds: 0,
          containers: [
            {
              name: 'httpd',
              image: 'k8ts/busybox:1.0',
              command: [
                'sh',
                '-c',
                'mkdir -p /w && echo "hostport $(hostname)" > /w/index.html && exec httpd -f -p 8080 -h /w',
              ],
              ports: [{ containerPort: 8080, hostPort: HOST_PORT }],
            },
          ],
        },
      };
      const r = await k.kubectlIn(JSON.stringify(pod), 'apply', '-f', '-');
      assert.equal(r.code, 0, r.stderr);
      await untilTruthy(
        'the hostPort pod ready',
        async () => (await pods('app=ctd-hostport'))[0]?.ready,
        120_000,
        500,
      );
      const body = await until(
        'an answer on the hostPort',
        () => get(`http://${lan.hosts[1]!.ip}:${HOST_PORT}/`).catch(() => undefined),
        30_000,
        200,
      );
      assert.equal(body, 'hostport hostport\n');
    });

    it('a restarted agent adopts the running containers', async () => {
      const before = (await pods('app=backend-app')).filter((p) => p.node === containerdNode);
      await agents.get('containerd')!.stop();
      agents.set('containerd', await startContainerdAgent(lan.hosts[1]!));
      await untilTruthy('the containerd node Ready again', () => nodeReady(containerdNode), 120_000, 500);
      // A few status passes of the new agent: nothing is restarted or made again. Readiness
      // starts over with the new prober (as after a kubelet restart): wait for it.
      await new Promise((r) => setTimeout(r, 5000));
      const afterRestart = await until(
        'the adopted pods ready again',
        async () => {
          const ps = (await pods('app=backend-app')).filter((p) => p.node === containerdNode);
          return ps.every((p) => p.ready) ? ps : undefined;
        },
        60_000,
        500,
      );
      assert.deepEqual(
        afterRestart.map((p) => [p.name, p.containerIDs, p.restarts]),
        before.map((p) => [p.name, p.containerIDs, 0]),
      );
      const names = new Set(afterRestart.map((p) => p.name));
      const seen = new Set<string>();
      await untilTruthy(
        "the adopted pods through the containerd host's NodePort",
        async () => {
          for (let i = 0; i < 10; i++) seen.add(podOf(await get(`http://${lan.hosts[1]!.ip}:${NODE_PORT}/`)));
          return [...names].every((n) => seen.has(n));
        },
        60_000,
        200,
      );
    });

    it('a containerd restart with pods running: the same containers, serving', async () => {
      const before = (await pods('app=backend-app')).filter((p) => p.node === containerdNode);
      await containerd.restart();
      await untilTruthy('the containerd node Ready', () => nodeReady(containerdNode), 120_000, 500);
      // A few relists of the agent against the restarted runtime: nothing is made again.
      await new Promise((r) => setTimeout(r, 5000));
      const afterRestart = (await pods('app=backend-app')).filter((p) => p.node === containerdNode);
      assert.deepEqual(
        afterRestart.map((p) => [p.name, p.containerIDs, p.restarts]),
        before.map((p) => [p.name, p.containerIDs, 0]),
      );
      const names = new Set(afterRestart.map((p) => p.name));
      const seen = new Set<string>();
      await untilTruthy(
        "the pods through the containerd host's NodePort after the restart",
        async () => {
          for (let i = 0; i < 10; i++) seen.add(podOf(await get(`http://${lan.hosts[1]!.ip}:${NODE_PORT}/`)));
          return [...names].every((n) => seen.has(n));
        },
        60_000,
        200,
      );
      // exec goes through the restarted runtime's new streaming server.
      const r = await k.kubectl('exec', afterRestart[0]!.name, '--', 'echo', 'still here');
      assert.equal(r.stdout, 'still here\n', r.stderr);
    });
  },
);
