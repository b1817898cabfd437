// kube-proxy's nftables mode (issue 19) on two simulated hosts (test/support/simulated-hosts.ts)
// with the vxlan backend: the agents serve Services with rules in the kernel's table
// `ip k8ts-<node>` (`ip k8ts` for a node named after its host), with no socket of their own
// but on 127.0.0.1. Each case fails with the rules removed:
// - ClusterIP and NodePort reach pods on both hosts, spread at random; route_localnet stays
//   off; deleting the table stops the traffic, and the agent writes it again within its
//   sync period;
// - a Service without endpoints refuses connections (ICMP port unreachable) at once;
// - ClientIP session affinity keeps a client on one pod;
// - externalTrafficPolicy Cluster masquerades the client; a deleted Service's chains go;
// - a UDP flow follows its Service to a new endpoint at once (stale conntrack entries deleted).
// Kernel state changes only inside the test's own namespaces; everything is removed at the end.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { K8tsAgent } from './support/k8ts-agent.js';
import type { K8tsServer } from './support/k8ts-server.js';
import {
  get,
  normalize,
  sleeperPod,
  startAgentOnHost,
  startServerOnSegment,
  whoamiPod,
} from './support/simulated-cluster.js';
import { startSimulatedHosts, type SimulatedHost, type SimulatedHosts } from './support/simulated-hosts.js';
import { until, untilTruthy } from './support/wait.js';

const WEB_PORT = 30091;
const STICKY_PORT = 30092;
const EMPTY_PORT = 30093;
const UDP_PORT = 30094;

/**
 * A UDP echo server on host `h` at `port` that answers each datagram with `<name> <text>`
 * (a Service endpoint outside the pods: a Service without a selector, as for an external
 * database). The caller kills it.
 */
function udpEcho(h: SimulatedHost, port: number, name: string): ChildProcess {
  const script = `const s = require('dgram').createSocket('udp4'); s.on('message', (m, r) => s.send('${name} ' + m, r.port, r.address)); s.bind(${port}, () => console.log('up'));`;
  return spawn(h.nsenter[0]!, [...h.nsenter.slice(1), process.execPath, '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/** Sends `text` from one UDP socket (kept, so every send has the same source port) and resolves the first answer, or undefined after `timeoutMs`. */
function udpAsk(
  sock: ReturnType<typeof createSocket>,
  host: string,
  port: number,
  text: string,
  timeoutMs = 1000,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    const onMessage = (m: Buffer) => done(m.toString());
    const done = (v: string | undefined) => {
      clearTimeout(timer);
      sock.off('message', onMessage);
      resolve(v);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    sock.on('message', onMessage);
    sock.send(text, port, host);
  });
}

/** How a TCP connect to `host:port` ends within `timeoutMs`: 'connected', or the error code ('ECONNREFUSED', 'timeout', …). */
function tryConnect(host: string, port: number, timeoutMs = 3000): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    const done = (what: string) => {
      clearTimeout(timer);
      s.destroy();
      resolve(what);
    };
    const timer = setTimeout(() => done('timeout'), timeoutMs);
    s.on('connect', () => done('connected'));
    s.on('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
  });
}

const service = (name: string, nodePort: number, selector: Record<string, string>, extra = {}) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name },
  spec: {
    type: 'NodePort',
    selector,
    ports: [{ name: 'http', port: 80, targetPort: 8080, nodePort }],
    ...extra,
  },
});

describe('kube-proxy nftables mode on two hosts', { timeout: 600_000 }, () => {
  let lan: SimulatedHosts;
  let k: K8tsServer;
  const agents: K8tsAgent[] = [];
  let h1: SimulatedHost;
  let h2: SimulatedHost;
  const nodeOf = (h: SimulatedHost) => `nft-e2e-${process.pid}-${h.name}`;
  const kubectl = async (...args: string[]) => {
    const r = await k.kubectl(...args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const apply = async (obj: unknown) => {
    const r = await k.kubectlIn(JSON.stringify(obj), 'apply', '-f', '-');
    assert.equal(r.code, 0, r.stderr);
  };
  const who = (host: string, port: number) => get(`http://${host}:${port}/cgi-bin/who`).then(normalize);
  const clusterIP = async (name: string) =>
    (await kubectl('get', 'service', name, '-o', 'jsonpath={.spec.clusterIP}')).trim();
  // The agents' nodes are not named after the host, so each has its own table (nftTableFor).
  const tableOf = (h: SimulatedHost) => `k8ts-${nodeOf(h)}`;
  const table = async (h: SimulatedHost) => (await h.exec(['nft', 'list', 'table', 'ip', tableOf(h)])).stdout;

  before(async () => {
    lan = await startSimulatedHosts({ count: 2 });
    [h1, h2] = lan.hosts as [SimulatedHost, SimulatedHost];
    k = await startServerOnSegment(lan, 'vxlan');
    for (const h of lan.hosts) agents.push(await startAgentOnHost(k, h, nodeOf(h)));
    for (const h of lan.hosts) await apply(whoamiPod(`who-${h.name}`, nodeOf(h)));
    await apply(sleeperPod('client', nodeOf(h2), 'nft-client'));
    await apply(service('web', WEB_PORT, { app: 'whoami' }));
    await apply(
      service(
        'sticky',
        STICKY_PORT,
        { app: 'whoami' },
        {
          sessionAffinity: 'ClientIP',
          sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } },
        },
      ),
    );
    await apply(service('empty', EMPTY_PORT, { app: 'nobody' }));
    await untilTruthy(
      'both whoami pods and the client ready',
      async () => {
        const r = await k.kubectl(
          'get',
          'pods',
          '-o',
          'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}',
        );
        return r.stdout.split('\n').filter((s) => s === 'True').length === 3;
      },
      180_000,
      500,
    );
  });

  after(async () => {
    for (const a of agents) await a.stop();
    await k?.stop();
    await lan?.stop();
  });

  it('serves ClusterIP and NodePort from kernel rules, with no proxy socket but on loopback, spread over pods on both hosts', async () => {
    const pods = new Set([`who-${h1.name}`, `who-${h2.name}`]);
    for (const h of lan.hosts) {
      const seen = new Set<string>();
      await untilTruthy(
        `both pods through ${h.name}'s NodePort`,
        async () => {
          for (let i = 0; i < 10; i++) seen.add((await who(h.ip, WEB_PORT).catch(() => '?')).split(' ')[0]!);
          return [...pods].every((p) => seen.has(p));
        },
        60_000,
        200,
      );
      // The proxy's only socket on the NodePort is on loopback (for the node's own clients).
      const listening = (await h.exec(['ss', '-Hltn'])).stdout
        .split('\n')
        .filter((l) => new RegExp(`:${WEB_PORT}\\b`).test(l));
      assert.deepEqual(
        listening.map((l) => l.trim().split(/\s+/)[3]),
        [`127.0.0.1:${WEB_PORT}`],
        `sockets on the NodePort of ${h.name}: ${listening.join('; ')}`,
      );
      assert.match(await table(h), new RegExp(`tcp \\. ${WEB_PORT} : goto ext-default/web/tcp/http`));
    }
    // The NodePort on the host's own loopback, from a process on the host (relayed by the
    // proxy: the kernel's DNAT of 127.0.0.1 would need route_localnet).
    const local = await h1.exec([
      process.execPath,
      '-e',
      `require('http').get('http://127.0.0.1:${WEB_PORT}/cgi-bin/who', { insecureHTTPParser: true }, (r) => { let b = ''; r.on('data', (d) => (b += d)); r.on('end', () => { console.log(b.trim()); process.exit(0); }); }).on('error', (e) => { console.error(e.message); process.exit(1); });`,
    ]);
    assert.equal(local.code, 0, local.stderr);
    assert.match(local.stdout, /^who-h\d /);
    const localnet = await h1.exec(['sysctl', '-n', 'net.ipv4.conf.all.route_localnet']);
    assert.equal(localnet.stdout.trim(), '0', "the node's loopback stays unreachable from other hosts");
    // The ClusterIP from a pod.
    const ip = await clusterIP('web');
    const r = await k.kubectl(
      'exec',
      'client',
      '--',
      'sh',
      '-c',
      `printf 'GET /cgi-bin/who HTTP/1.0\\r\\n\\r\\n' | nc -w 5 ${ip} 80 | tail -n 1`,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^who-h\d /);
  });

  it('stops serving without its rules, and writes them again within the sync period', async () => {
    await who(h1.ip, WEB_PORT);
    const del = await h1.exec(['nft', 'delete', 'table', 'ip', tableOf(h1)]);
    assert.equal(del.code, 0, del.stderr);
    assert.notEqual(await tryConnect(h1.ip, WEB_PORT), 'connected');
    // The agent's proxy checks its table every sync period (30 s) and rewrites it whole.
    await untilTruthy(
      'the NodePort served again',
      () =>
        who(h1.ip, WEB_PORT).then(
          () => true,
          () => false,
        ),
      45_000,
      500,
    );
  });

  it('refuses connections to a Service without endpoints at once (ICMP port unreachable)', async () => {
    const ip = await clusterIP('empty');
    const r = await k.kubectl(
      'exec',
      'client',
      '--',
      'sh',
      '-c',
      `nc -w 3 ${ip} 80 </dev/null; echo "exit $?"`,
    );
    assert.match(
      r.stdout + r.stderr,
      /refused/i,
      `nc to the ClusterIP of a Service without endpoints: ${r.stdout}${r.stderr}`,
    );
    assert.match(
      await table(h2),
      new RegExp(`${ip.replace(/\./g, '\\.')} \\. tcp \\. 80 : goto reject-chain`),
    );
  });

  it('keeps a client on one pod with ClientIP session affinity', async () => {
    await untilTruthy(
      'the sticky NodePort',
      () =>
        who(h1.ip, STICKY_PORT).then(
          () => true,
          () => false,
        ),
      30_000,
      200,
    );
    const answers = new Set<string>();
    for (let i = 0; i < 12; i++) answers.add((await who(h1.ip, STICKY_PORT)).split(' ')[0]!);
    assert.equal(answers.size, 1, `one pod for one client: ${[...answers].join(', ')}`);
    assert.match(await table(h1), /set affinity-default\/sticky\/tcp\/http__/);
  });

  it('masquerades NodePort clients for externalTrafficPolicy Cluster', async () => {
    for (let i = 0; i < 6; i++) {
      const [, client] = (await who(h1.ip, WEB_PORT)).split(' ');
      assert.ok(
        client && client !== lan.gatewayIP,
        `the pod sees the node's address, not the client's: ${client}`,
      );
      assert.match(client, /^10\.42\./);
    }
  });

  it('moves a UDP flow to the new endpoint at once when its endpoint changes (stale conntrack entries deleted)', async () => {
    // On the node that receives the traffic: a forwarded endpoint outside the cluster CIDR
    // would meet Docker's FORWARD policy (DROP) in the host's namespace.
    const servers = [udpEcho(h1, 5353, 'first'), udpEcho(h1, 5354, 'second')];
    const sock = createSocket('udp4');
    try {
      await apply({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'echo' },
        spec: { type: 'NodePort', ports: [{ name: 'echo', protocol: 'UDP', port: 53, nodePort: UDP_PORT }] },
      });
      const slice = (port: number) => ({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'echo-manual', labels: { 'kubernetes.io/service-name': 'echo' } },
        addressType: 'IPv4',
        ports: [{ name: 'echo', protocol: 'UDP', port }],
        endpoints: [{ addresses: [h1.ip], conditions: { ready: true } }],
      });
      await apply(slice(5353));
      await new Promise<void>((r) => sock.bind(0, r));
      await untilTruthy(
        'the first echo server through the UDP NodePort',
        async () => (await udpAsk(sock, h1.ip, UDP_PORT, 'hi')) === 'first hi',
        30_000,
        200,
      );
      await apply(slice(5354));
      // Same socket, same 5-tuple: without the conntrack deletion the flow would stay on the
      // old endpoint for conntrack's UDP timeout.
      await untilTruthy(
        'the same flow on the second echo server',
        async () => (await udpAsk(sock, h1.ip, UDP_PORT, 'again')) === 'second again',
        10_000,
        200,
      ).catch(async (err: Error) => {
        const flows = (await h1.exec(['conntrack', '-L', '-p', 'udp'])).stdout;
        const said = agents[0]!
          .logs()
          .split('\n')
          .filter((l) => /proxy|conntrack/.test(l));
        throw new Error(
          `${err.message}\nconntrack on ${h1.name}:\n${flows}\nproxy log:\n${said.slice(-20).join('\n')}`,
        );
      });
    } finally {
      sock.close();
      for (const s of servers) s.kill('SIGKILL');
    }
  });

  it("removes a deleted Service's rules from every host", async () => {
    await kubectl('delete', 'service', 'sticky');
    for (const h of lan.hosts)
      await until(
        `sticky's chains gone from ${h.name}`,
        async () => ((await table(h)).includes('default/sticky/') ? undefined : true),
        20_000,
        200,
      );
    assert.notEqual(await tryConnect(h1.ip, STICKY_PORT, 1500), 'connected');
  });
});
