// Several real hosts (issue 14): two simulated hosts (test/support/simulated-hosts.ts),
// each a network namespace with its own dockerd and its own `k8ts agent`, the control
// process in the machine's namespace on the segment's gateway address, and the real
// kubectl. Once per cross-host backend (vxlan, host-gw):
// - the user's manifests from examples/, every pod answering through every host's NodePort;
// - pod to pod by IP across hosts, and ClusterIP from pods on each host;
// - externalTrafficPolicy / internalTrafficPolicy Local;
// - an established connection across hosts that outlives both agents' restarts;
// - a deleted Node's routes, neighbours and FDB entries gone from the other host.
// Kernel state changes only inside the test's own namespaces; everything is removed at the end.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { K8tsAgent } from './support/k8ts-agent.js';
import { cliCommand, type K8tsServer } from './support/k8ts-server.js';
import {
  get,
  normalize,
  podOf,
  sleeperPod,
  startAgentOnHost,
  startServerOnSegment,
  untilEveryPodAnswers,
  whoamiPod,
} from './support/simulated-cluster.js';
import { startSimulatedHosts, type SimulatedHost, type SimulatedHosts } from './support/simulated-hosts.js';
import { until, untilTruthy } from './support/wait.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const NODE_PORT = 30080;

for (const backend of ['vxlan', 'host-gw'] as const) {
  describe(`several hosts, backend ${backend}`, { timeout: 900_000 }, () => {
    let lan: SimulatedHosts;
    let k: K8tsServer;
    const agents = new Map<string, K8tsAgent>();
    const nodeOf = (h: SimulatedHost) => `mh-e2e-${process.pid}-${backend}-${h.name}`;

    const startAgent = async (h: SimulatedHost) => {
      const agent = await startAgentOnHost(k, h, nodeOf(h));
      agents.set(h.name, agent);
      return agent;
    };

    const kubectl = async (...args: string[]) => {
      const r = await k.kubectl(...args);
      assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    };
    const apply = (obj: unknown) => k.kubectlIn(JSON.stringify(obj), 'apply', '-f', '-');
    const pods = async (selector: string) =>
      (
        JSON.parse(await kubectl('get', 'pods', '-l', selector, '-o', 'json')) as {
          items: {
            metadata: { name: string };
            spec: { nodeName?: string };
            status: { podIP?: string; conditions?: { type: string; status: string }[] };
          }[];
        }
      ).items.map((p) => ({
        name: p.metadata.name,
        node: p.spec.nodeName ?? '',
        ip: p.status.podIP ?? '',
        ready: (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
      }));
    const exec = (pod: string, ...cmd: string[]) => k.kubectl('exec', pod, '--', ...cmd);
    // busybox's static wget crashes (glibc's resolver in a static binary); nc does plain HTTP/1.0.
    const httpRequest = (host: string, port: number | string, path = '/') =>
      `printf 'GET ${path} HTTP/1.0\\r\\n\\r\\n' | nc -w 5 ${host} ${port} | tail -n 1`;
    /** The bodies of `times` GETs from `pod` (each body is one line: its last). */
    const fetchFrom = async (pod: string, host: string, port: number | string, path = '/', times = 1) => {
      const r = await exec(
        pod,
        'sh',
        '-c',
        `for i in $(seq ${times}); do ${httpRequest(host, port, path)}; done`,
      );
      assert.equal(r.code, 0, `GET http://${host}:${port}${path} from ${pod}: ${r.stderr}`);
      return r.stdout.split('\n').map(normalize).filter(Boolean);
    };

    before(async () => {
      lan = await startSimulatedHosts({ count: 2 });
      k = await startServerOnSegment(lan, backend);
      for (const h of lan.hosts) await startAgent(h);
      await untilTruthy(
        'both nodes Ready',
        async () => {
          const r = await k.kubectl(
            'get',
            'nodes',
            '-o',
            'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}',
          );
          return r.stdout.split('\n').filter((s) => s === 'True').length === 2;
        },
        120_000,
        500,
      );
    });

    after(async () => {
      for (const a of agents.values()) await a.stop();
      await k?.stop();
      await lan?.stop();
    });

    it("publishes each node's public IP and backend on its Node, as flannel does", async () => {
      for (const h of lan.hosts) {
        const ann = JSON.parse(
          await kubectl('get', 'node', nodeOf(h), '-o', 'jsonpath={.metadata.annotations}'),
        ) as Record<string, string>;
        assert.equal(ann['flannel.alpha.coreos.com/public-ip'], h.ip);
        assert.equal(ann['flannel.alpha.coreos.com/backend-type'], backend);
        if (backend === 'vxlan') {
          const mac = (JSON.parse(ann['flannel.alpha.coreos.com/backend-data']!) as { VtepMAC: string })
            .VtepMAC;
          const link = JSON.parse((await h.exec(['ip', '-j', '-d', 'link', 'show', 'k8ts.1'])).stdout) as {
            address: string;
            mtu: number;
            linkinfo: { info_data: { id: number; port: number; learning: boolean; local: string } };
          }[];
          assert.equal(link[0]!.address, mac);
          assert.deepEqual(
            { ...link[0]!.linkinfo.info_data, mtu: link[0]!.mtu },
            { ...link[0]!.linkinfo.info_data, id: 1, port: 8472, learning: false, local: h.ip, mtu: 1450 },
          );
        }
      }
    });

    it("serves the examples/ Deployment on every host's NodePort from pods on both hosts", async () => {
      await kubectl('apply', '-f', `${REPO}examples/`);
      const running = await until(
        'five ready spring pods',
        async () => {
          const ps = await pods('app=backend-app');
          return ps.length === 5 && ps.every((p) => p.ready) ? ps : undefined;
        },
        180_000,
        500,
      );
      const nodes = new Set(running.map((p) => p.node));
      assert.equal(nodes.size, 2, `pods spread over both hosts: ${JSON.stringify(running)}`);
      const all = new Set(running.map((p) => p.name));
      for (const h of lan.hosts) {
        await untilEveryPodAnswers(h, NODE_PORT, all, 60_000);
        // Once the routes are in place nothing times out any more.
        for (let i = 0; i < 20; i++) await get(`http://${h.ip}:${NODE_PORT}/`);
      }
    });

    it('reaches pods on the other host by pod IP, and the ClusterIP from pods on each host', async () => {
      for (const h of lan.hosts) {
        const r = await apply(sleeperPod(`client-${h.name}`, nodeOf(h), 'mh-client'));
        assert.equal(r.code, 0, r.stderr);
      }
      await untilTruthy(
        'client pods ready',
        async () => (await pods('app=mh-client')).filter((p) => p.ready).length === 2,
        120_000,
        500,
      );
      const spring = await pods('app=backend-app');
      const clusterIP = (
        await kubectl('get', 'service', 'spring-service', '-o', 'jsonpath={.spec.clusterIP}')
      ).trim();
      for (const h of lan.hosts) {
        const remote = spring.filter((p) => p.node !== nodeOf(h));
        assert.ok(remote.length > 0);
        for (const p of remote) {
          const bodies = await fetchFrom(`client-${h.name}`, p.ip, 8080);
          assert.deepEqual(bodies.map(podOf), [p.name], `from ${h.name} to ${p.name} (${p.ip}) on ${p.node}`);
        }
        const seen = new Set<string>();
        await untilTruthy(
          `every pod through the ClusterIP from ${h.name}`,
          async () => {
            for (const line of await fetchFrom(`client-${h.name}`, clusterIP, 80, '/', 10))
              seen.add(podOf(line));
            return spring.every((p) => seen.has(p.name));
          },
          60_000,
          200,
        );
      }
    });

    it('keeps pod-to-pod traffic unmasqueraded, and honours externalTrafficPolicy and internalTrafficPolicy Local', async () => {
      const [h1, h2] = lan.hosts as [SimulatedHost, SimulatedHost];
      for (const h of lan.hosts)
        assert.equal((await apply(whoamiPod(`whoami-${h.name}`, nodeOf(h)))).code, 0);
      for (const [name, policy] of [
        ['whoami-etp', { externalTrafficPolicy: 'Local' }],
        ['whoami-itp', { internalTrafficPolicy: 'Local' }],
      ] as const) {
        const r = await apply({
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name },
          spec: {
            type: 'NodePort',
            selector: { app: 'whoami' },
            ports: [{ port: 80, targetPort: 8080 }],
            ...policy,
          },
        });
        assert.equal(r.code, 0, r.stderr);
      }
      await untilTruthy(
        'whoami pods ready',
        async () => (await pods('app=whoami')).filter((p) => p.ready).length === 2,
        120_000,
        500,
      );
      const clients = await pods('app=mh-client');
      const clientOn = (h: SimulatedHost) => clients.find((c) => c.node === nodeOf(h))!;
      const whoami = await pods('app=whoami');
      const whoamiOn = (h: SimulatedHost) => whoami.find((c) => c.node === nodeOf(h))!;

      // Pod to pod across hosts: the server sees the client pod's own address.
      const direct = await fetchFrom(`client-${h1.name}`, whoamiOn(h2).ip, 8080, '/cgi-bin/who');
      assert.deepEqual(direct, [`whoami-${h2.name} ${clientOn(h1).ip}`]);

      // externalTrafficPolicy Local: each host's NodePort answers from its own pod only,
      // and the pod sees the client's address (the machine's address on the segment).
      const etpPort = (
        await kubectl('get', 'service', 'whoami-etp', '-o', 'jsonpath={.spec.ports[0].nodePort}')
      ).trim();
      for (const h of lan.hosts) {
        const want = `whoami-${h.name} ${lan.gatewayIP}`;
        const who = () =>
          get(`http://${h.ip}:${etpPort}/cgi-bin/who`).then(normalize, (e: Error) => e.message);
        const seen: string[] = [];
        await untilTruthy(
          `externalTrafficPolicy Local on ${h.name}: ${want}`,
          async () => {
            seen.push(await who());
            return seen.at(-1) === want;
          },
          60_000,
          300,
        ).catch(async (err: Error) => {
          const nft = await h.exec(['nft', 'list', 'ruleset']);
          throw new Error(`${err.message}; answers ${seen.slice(-5).join(' | ')}; nft: ${nft.stdout}`);
        });
        // From then on, every answer: this host's pod, seeing the client's address.
        const answers: string[] = [];
        for (let i = 0; i < 10; i++) answers.push(await who());
        assert.deepEqual(new Set(answers), new Set([want]));
      }

      // internalTrafficPolicy Local: the ClusterIP from a pod reaches its own host's pod only.
      const itpIP = (
        await kubectl('get', 'service', 'whoami-itp', '-o', 'jsonpath={.spec.clusterIP}')
      ).trim();
      for (const h of lan.hosts) {
        const lines = await fetchFrom(`client-${h.name}`, itpIP, 80, '/cgi-bin/who', 6);
        assert.equal(lines.length, 6, lines.join('\n'));
        assert.deepEqual(
          [...new Set(lines.map((l) => l.split(' ')[0]))],
          [`whoami-${h.name}`],
          `from ${h.name}: ${lines.join('\n')}`,
        );
      }
    });

    it('keeps an established connection across hosts open while both agents restart', async () => {
      const [h1, h2] = lan.hosts as [SimulatedHost, SimulatedHost];
      const target = (await pods('app=backend-app')).find((p) => p.node === nodeOf(h2))!;
      // A keep-alive HTTP connection from h1 (the host itself) to a pod on h2, kept by a
      // small program inside h1's namespace: each line on its stdin sends one request.
      const script = `
        const s = require('net').connect(8080, ${JSON.stringify(target.ip)});
        s.on('data', (d) => process.stdout.write(d.toString().includes('200 OK') ? 'ok\\n' : 'bad\\n'));
        s.on('close', () => { process.stdout.write('closed\\n'); process.exit(0); });
        require('readline').createInterface({ input: process.stdin }).on('line', () =>
          s.write('GET / HTTP/1.1\\r\\nHost: x\\r\\nConnection: keep-alive\\r\\n\\r\\n'));`;
      const child = spawn(h1.nsenter[0]!, [...h1.nsenter.slice(1), process.execPath, '-e', script], {
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      try {
        const answers = () => out.split('\n').filter((l) => l === 'ok').length;
        child.stdin.write('go\n');
        await untilTruthy('first answer on the connection', () => answers() === 1, 20_000, 100);
        for (const h of lan.hosts) {
          await agents.get(h.name)!.stop();
          await startAgent(h);
        }
        // The restarted agents have re-synced their network (the node is Ready again).
        await untilTruthy(
          'nodes Ready after the restarts',
          async () =>
            (
              await k.kubectl(
                'get',
                'nodes',
                '-o',
                'jsonpath={.items[*].status.conditions[?(@.type=="Ready")].status}',
              )
            ).stdout.trim() === 'True True',
          60_000,
          500,
        );
        child.stdin.write('again\n');
        await untilTruthy('second answer on the same connection', () => answers() === 2, 20_000, 100);
        assert.ok(!out.includes('closed'), out);
      } finally {
        child.kill('SIGKILL');
      }
    });

    it('restores the network of a host that rebooted with a new address', async () => {
      const [h1, h2] = lan.hosts as [SimulatedHost, SimulatedHost];
      const newIP = `${lan.subnet.split('.').slice(0, 3).join('.')}.${40 + Number(h2.name.slice(1))}`;
      await agents.get(h2.name)!.stop();
      await h2.reboot(newIP);
      assert.equal(h2.ip, newIP);
      await startAgent(h2);
      await untilTruthy(
        `${h2.name} published its new address`,
        async () =>
          (
            await k.kubectl(
              'get',
              'node',
              nodeOf(h2),
              '-o',
              'jsonpath={.metadata.annotations.flannel\\.alpha\\.coreos\\.com/public-ip}',
            )
          ).stdout.trim() === newIP,
        60_000,
        500,
      );
      // The kubelet brings the pods back (new sandboxes); then every pod answers through
      // the rebooted host's NodePort, and h1's pod reaches h2's pods by IP again.
      const back = await until(
        `the spring pods on ${h2.name} ready again`,
        async () => {
          const ps = (await pods('app=backend-app')).filter((p) => p.node === nodeOf(h2));
          return ps.length > 0 && ps.every((p) => p.ready && p.ip) ? ps : undefined;
        },
        180_000,
        1000,
      );
      const all = new Set((await pods('app=backend-app')).map((p) => p.name));
      const seen = new Set<string>();
      await untilTruthy(
        `every pod through the rebooted host's NodePort (${newIP})`,
        async () => {
          for (let i = 0; i < 10; i++) {
            const body = await get(`http://${newIP}:${NODE_PORT}/`).catch(() => undefined);
            if (body) seen.add(podOf(body));
          }
          return [...all].every((p) => seen.has(p));
        },
        180_000,
        300,
      ).catch(async (err: Error) => {
        const diag = await Promise.all([
          k.kubectl('get', 'pods', '-o', 'wide'),
          k.kubectl('get', 'endpointslices', '-o', 'yaml'),
          h2.docker(['ps', '-a', '--format', '{{.Names}} {{.Status}}']),
          h1.exec(['bridge', 'fdb', 'show', 'dev', 'k8ts.1']),
          h2.exec(['ip', 'route']),
          h2.exec(['bridge', 'fdb', 'show', 'dev', 'k8ts.1']),
          h2.exec(['iptables', '-S']),
        ]);
        throw new Error(
          `${err.message}: saw ${[...seen].join(', ')} of ${[...all].join(', ')}\n${diag.map((d) => d.stdout + d.stderr).join('\n---\n')}`,
        );
      });
      for (const p of back) {
        const bodies = await untilTruthy(
          `${p.name} on the rebooted host from ${h1.name}`,
          async () => {
            const r = await exec(`client-${h1.name}`, 'sh', '-c', httpRequest(p.ip, 8080));
            return r.code === 0 && r.stdout.trim() !== '' ? r.stdout.trim() : undefined;
          },
          60_000,
          500,
        );
        assert.equal(podOf(bodies), p.name);
      }
    });

    it("removes a deleted Node's routes (and vxlan neighbour and FDB entries) from the other host", async () => {
      const [h1, h2] = lan.hosts as [SimulatedHost, SimulatedHost];
      const cidr2 = (await kubectl('get', 'node', nodeOf(h2), '-o', 'jsonpath={.spec.podCIDR}')).trim();
      const routes = async () => (await h1.exec(['ip', '-4', 'route', 'show', 'proto', '107'])).stdout;
      const neigh = async () => (await h1.exec(['ip', '-4', 'neigh', 'show', 'dev', 'k8ts.1'])).stdout;
      const fdb = async () => (await h1.exec(['bridge', 'fdb', 'show', 'dev', 'k8ts.1'])).stdout;
      assert.match(await routes(), new RegExp(`^${cidr2.replace(/\./g, '\\.')} via `, 'm'));
      if (backend === 'vxlan') {
        assert.match(await neigh(), /PERMANENT/);
        assert.match(await fdb(), new RegExp(`dst ${h2.ip.replace(/\./g, '\\.')}`));
      }
      await agents.get(h2.name)!.stop();
      await kubectl('delete', 'node', nodeOf(h2), '--wait=false');
      await untilTruthy(
        'the route to the deleted node gone',
        async () => !(await routes()).includes(cidr2),
        60_000,
        300,
      );
      if (backend === 'vxlan') {
        assert.doesNotMatch(await neigh(), /PERMANENT/);
        assert.doesNotMatch(await fdb(), new RegExp(`dst ${h2.ip.replace(/\./g, '\\.')}`));
      }
    });

    it('leaves its kernel state on stop, and `k8ts agent --cleanup` removes it all', async () => {
      const h1 = lan.hosts[0]!;
      await agents.get(h1.name)!.stop();
      const state = async () => ({
        vxlan: (await h1.exec(['ip', 'link', 'show', 'k8ts.1'])).code === 0,
        routes: (await h1.exec(['ip', '-4', 'route', 'show', 'proto', '107'])).stdout.trim(),
        chains:
          (await h1.exec(['iptables', '-S'])).stdout.includes('K8TS-FORWARD') ||
          (await h1.exec(['iptables', '-t', 'nat', '-S'])).stdout.includes('K8TS-POSTROUTING'),
        nft: (await h1.exec(['nft', 'list', 'table', 'ip', `k8ts-${nodeOf(h1)}`])).code === 0,
      });
      // A stopped agent leaves everything in place, so traffic keeps flowing across a restart.
      const before = await state();
      assert.equal(before.vxlan, backend === 'vxlan');
      assert.equal(before.chains, true);
      assert.equal(before.nft, true, "kube-proxy's nftables table");
      const cli = cliCommand();
      const r = await h1.exec([cli.cmd, ...cli.args, 'agent', '--cleanup', '--node-name', nodeOf(h1)]);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(await state(), { vxlan: false, routes: '', chains: false, nft: false });
    });
  });
}
