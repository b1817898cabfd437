/**
 * The end-to-end suite of kube-proxy's kernel modes (issue 19), run once per mode by
 * test/proxy-nftables.e2e.test.ts and test/proxy-iptables.e2e.test.ts: two simulated hosts
 * (simulated-hosts.ts) with the vxlan backend, one `k8ts agent --proxy-mode <mode>` on each,
 * serving Services with rules in the kernel and no socket of their own but on 127.0.0.1.
 *
 * Every behaviour is checked with the rules and again without them (withoutRules(): the
 * agent paused with SIGSTOP so that it cannot write them back meanwhile, this node's rules
 * saved and removed, the traffic checked, the saved rules put back, the agent resumed), so
 * each case fails where the kernel rules are not what serves it:
 * - ClusterIP (from a pod) and NodePort reach pods on both hosts, spread at random;
 *   route_localnet stays off; a removed rule set is written again within the sync period;
 * - a Service without endpoints refuses connections at once (ICMP port unreachable), even
 *   where a process listens on the node's address and port;
 * - ClientIP session affinity keeps a client on one pod;
 * - externalTrafficPolicy Cluster masquerades the client; Local keeps its address and only
 *   this node's pods; internalTrafficPolicy Local keeps a pod's traffic on its node;
 * - a pod reaches itself through its Service (hairpin: masqueraded);
 * - a UDP flow follows its Service to a new endpoint at once (stale conntrack entries deleted);
 * - an agent restart (stop, start) drops no established connection, through a NodePort and
 *   through a ClusterIP from a pod;
 * - a second agent's kube-proxy on the same host (another node name and node IP, same
 *   namespace: second-proxy.ts) writes rules of its own and leaves the first's as they were,
 *   also when its rules are removed;
 * - the agents serve kube-proxy's metrics on 127.0.0.1:10249, the programming-latency
 *   histogram counting a Service change;
 * - an agent restarted from userspace mode removes that mode's `ip k8ts-local-nodeports`
 *   table, and the Local NodePort goes on reaching this node's pod;
 * - a deleted Service's rules go from every host.
 *
 * Pods are reached with `docker exec` on the host's own engine, not `kubectl exec` (which
 * goes through the agent, paused or restarting in some cases). Kernel state changes only
 * inside the test's own namespaces; everything is removed at the end.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { connect, type Socket } from 'node:net';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { HostCommand } from '../../agent/network/host-command.js';
import { iptablesPrefixFor } from '../../agent/proxy/iptables-rules.js';
import { removeIptablesRules } from '../../agent/proxy/iptables.js';
import type { KernelProxyMode } from '../../agent/proxy/mode.js';
import { LOCAL_NODEPORTS_TABLE } from '../../agent/proxy/local-nodeports.js';
import { canaryTableFor, nftTableFor } from '../../agent/proxy/nftables-rules.js';
import type { K8tsAgent } from './k8ts-agent.js';
import type { K8tsServer } from './k8ts-server.js';
import { SECOND_PROXY_READY } from './second-proxy.js';
import {
  get,
  normalize,
  sleeperPod,
  startAgentOnHost,
  startServerOnSegment,
  whoamiPod,
} from './simulated-cluster.js';
import { startSimulatedHosts, type SimulatedHost, type SimulatedHosts } from './simulated-hosts.js';
import { until, untilTruthy } from './wait.js';

const WEB_PORT = 30091;
const STICKY_PORT = 30092;
const EMPTY_PORT = 30093;
const UDP_PORT = 30094;
const LOCAL_PORT = 30095;
const ECHO_PORT = 30096;
const AFTER_PORT = 30097;
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const SECOND_PROXY = fileURLToPath(new URL('./second-proxy.ts', import.meta.url));

/** A HostCommand that runs inside simulated host `h`. */
const inHost =
  (h: SimulatedHost): HostCommand =>
  async (file, args, stdin) => {
    const r = await h.exec([file, ...args], stdin !== undefined ? { stdin } : {});
    return { ...r, code: r.code ?? 1 };
  };

/** How one kernel mode's rules of a node are read, removed and put back. */
interface NodeRules {
  /** This node's rules as text, without what changes by itself (counters, affinity expiry). */
  list(h: SimulatedHost, node: string): Promise<string>;
  /** Removes this node's rules; resolves with a function that puts exactly them back. */
  remove(h: SimulatedHost, node: string): Promise<() => Promise<void>>;
  /** What the listing holds for Service `svc`'s NodePort `port` (port name http). */
  nodePort(svc: string, port: number): RegExp;
  /** … for the reject of port 80 of `ip`, a Service without endpoints. */
  reject(ip: string): RegExp;
  /** … for ClientIP affinity of Service `svc`. */
  affinity(svc: string): RegExp;
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Throws unless `r` exited 0. */
function must(what: string, r: { code: number | null; stderr: string }): void {
  assert.equal(r.code, 0, `${what}: ${r.stderr}`);
}

const nftRules: NodeRules = {
  async list(h, node) {
    const r = await h.exec(['nft', 'list', 'table', 'ip', nftTableFor(node, hostname())]);
    must('nft list table', r);
    return r.stdout
      .split('\n')
      .filter((l) => !/expires|packets \d+/.test(l))
      .join('\n');
  },
  async remove(h, node) {
    const table = nftTableFor(node, hostname());
    const saved = await h.exec(['nft', 'list', 'table', 'ip', table]);
    must('nft list table', saved);
    must('nft delete table', await h.exec(['nft', 'delete', 'table', 'ip', table]));
    return async () =>
      must('nft -f (the saved table)', await h.exec(['nft', '-f', '-'], { stdin: saved.stdout }));
  },
  nodePort: (svc, port) => new RegExp(`tcp \\. ${port} : goto ext-default/${svc}/tcp/http`),
  reject: (ip) => new RegExp(`${esc(ip)} \\. tcp \\. 80 : goto reject-chain`),
  affinity: (svc) => new RegExp(`set affinity-default/${svc}/tcp/http__`),
};

const iptablesRules: NodeRules = {
  async list(h, node) {
    const prefix = iptablesPrefixFor(node, hostname());
    let out = '';
    for (const table of ['nat', 'filter']) {
      const r = await h.exec(['iptables-save', '-t', table]);
      must('iptables-save', r);
      out += r.stdout
        .split('\n')
        .filter((l) => l.includes(`${prefix}-`))
        .join('\n');
    }
    return out;
  },
  async remove(h, node) {
    const saved = await h.exec(['iptables-save']);
    must('iptables-save', saved);
    assert.ok(
      (await removeIptablesRules(inHost(h), iptablesPrefixFor(node, hostname()))) > 0,
      'no chain removed',
    );
    // The tables as they were, whole (only this test's namespace has them).
    return async () =>
      must(
        'iptables-restore (the saved tables)',
        await h.exec(['iptables-restore'], { stdin: saved.stdout }),
      );
  },
  nodePort: (svc, port) =>
    new RegExp(`--dport ${port} -m comment --comment "default/${svc}/tcp/http" -j K8TSP\\w*-EXT-`),
  reject: (ip) =>
    new RegExp(
      `-d ${esc(ip)}/32 -p tcp -m tcp --dport 80 -m comment --comment "default/empty/tcp/http has no endpoints" -j REJECT`,
    ),
  affinity: (svc) => new RegExp(`default/${svc}/tcp/http -> [^"]+" -m recent --rcheck --seconds 600`),
};

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

/**
 * A line-echo conversation over a stream pair (a TCP socket, a `docker exec -i nc`):
 * ask(text) writes `text\n` and resolves with the next line read back, or rejects after
 * `timeoutMs`; closed tells whether the stream ended.
 */
function lineEcho(
  input: NodeJS.WritableStream,
  output: NodeJS.ReadableStream,
): { ask(text: string, timeoutMs?: number): Promise<string>; closed(): boolean } {
  let buffered = '';
  let ended = false;
  const waiters: ((line: string) => void)[] = [];
  output.on('data', (d: Buffer) => {
    buffered += d.toString();
    for (let i = buffered.indexOf('\n'); i >= 0 && waiters.length > 0; i = buffered.indexOf('\n')) {
      const line = buffered.slice(0, i);
      buffered = buffered.slice(i + 1);
      waiters.shift()!(line);
    }
  });
  output.on('end', () => (ended = true));
  output.on('close', () => (ended = true));
  return {
    closed: () => ended,
    ask: (text, timeoutMs = 5000) =>
      new Promise<string>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no echo of ${text} within ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push((line) => {
          clearTimeout(timer);
          resolve(line);
        });
        input.write(`${text}\n`);
      }),
  };
}

const service = (
  name: string,
  nodePort: number | undefined,
  selector: Record<string, string>,
  extra = {},
) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name },
  spec: {
    type: nodePort !== undefined ? 'NodePort' : 'ClusterIP',
    selector,
    ports: [{ name: 'http', port: 80, targetPort: 8080, ...(nodePort !== undefined ? { nodePort } : {}) }],
    ...extra,
  },
});

/** A busybox pod pinned to `node` that echoes every line back on port 7000, to as many connections as come. */
const echoPod = (name: string, node: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app: 'echo' } },
  spec: {
    nodeName: node,
    terminationGracePeriodSeconds: 0,
    containers: [
      {
        name: 'echo',
        image: 'k8ts/busybox:1.0',
        command: ['nc', '-ll', '-p', '7000', '-e', 'cat'],
        readinessProbe: { tcpSocket: { port: 7000 }, periodSeconds: 1 },
      },
    ],
  },
});

/** Defines the suite for `mode` (see the file comment). */
export function kernelProxySuite(mode: KernelProxyMode): void {
  const rules = mode === 'nftables' ? nftRules : iptablesRules;
  describe(`kube-proxy ${mode} mode on two hosts`, { timeout: 900_000 }, () => {
    let lan: SimulatedHosts;
    let k: K8tsServer;
    const agents: K8tsAgent[] = [];
    let h1: SimulatedHost;
    let h2: SimulatedHost;
    const nodeOf = (h: SimulatedHost) => `${mode.slice(0, 3)}-e2e-${process.pid}-${h.name}`;
    const agentOf = (h: SimulatedHost) => agents[lan.hosts.indexOf(h)]!;
    const startAgent = (h: SimulatedHost) => startAgentOnHost(k, h, nodeOf(h), ['--proxy-mode', mode]);
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
    const answers = (host: string, port: number) =>
      who(host, port).then(
        () => true,
        () => false,
      );
    const clusterIP = async (name: string) =>
      (await kubectl('get', 'service', name, '-o', 'jsonpath={.spec.clusterIP}')).trim();
    const container = async (h: SimulatedHost, pod: string, name = 'c') => {
      const r = await h.docker([
        'ps',
        '-q',
        '--filter',
        `label=io.kubernetes.pod.name=${pod}`,
        '--filter',
        `label=io.kubernetes.container.name=${name}`,
      ]);
      const id = r.stdout.trim().split('\n')[0];
      assert.ok(id, `no container of ${pod} on ${h.name}: ${r.stderr}`);
      return id;
    };
    /** Runs `script` with `sh -c` in container `name` of `pod` on `h`; stdout and stderr together. */
    const inPod = async (h: SimulatedHost, pod: string, name: string, script: string) => {
      const r = await h.docker(['exec', await container(h, pod, name), 'sh', '-c', script], {
        timeoutMs: 30_000,
      });
      return r.stdout + r.stderr;
    };
    /** Runs `script` in the client pod (on h2). */
    const inClient = (script: string) => inPod(h2, 'client', 'c', script);
    /** The last line of an HTTP/1.0 GET of /cgi-bin/who of `ip`:80 from a pod ('' when it failed). */
    const whoFrom = async (h: SimulatedHost, pod: string, name: string, ip: string) =>
      (
        await inPod(
          h,
          pod,
          name,
          `printf 'GET /cgi-bin/who HTTP/1.0\\r\\n\\r\\n' | nc -w 3 ${ip} 80 2>/dev/null | tail -n 1`,
        )
      ).trim();
    const whoFromClient = (ip: string) => whoFrom(h2, 'client', 'c', ip);

    /** Runs `check` while host `h` has none of its agent's rules (see the file comment). */
    const withoutRules = async (h: SimulatedHost, check: () => Promise<void>) => {
      const pid = agentOf(h).pid;
      process.kill(pid, 'SIGSTOP');
      let restore: (() => Promise<void>) | undefined;
      try {
        restore = await rules.remove(h, nodeOf(h));
        await check();
      } finally {
        try {
          await restore?.();
        } finally {
          process.kill(pid, 'SIGCONT');
        }
      }
    };

    before(async () => {
      lan = await startSimulatedHosts({ count: 2 });
      [h1, h2] = lan.hosts as [SimulatedHost, SimulatedHost];
      k = await startServerOnSegment(lan, 'vxlan');
      for (const h of lan.hosts) agents.push(await startAgent(h));
      for (const h of lan.hosts) await apply(whoamiPod(`who-${h.name}`, nodeOf(h)));
      await apply(sleeperPod('client', nodeOf(h2), 'client'));
      await apply(echoPod('echo', nodeOf(h1)));
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
      await apply(service('local', LOCAL_PORT, { app: 'whoami' }, { externalTrafficPolicy: 'Local' }));
      await apply(service('inlocal', undefined, { app: 'whoami' }, { internalTrafficPolicy: 'Local' }));
      await apply({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'echo' },
        spec: {
          type: 'NodePort',
          selector: { app: 'echo' },
          ports: [{ name: 'echo', port: 7000, nodePort: ECHO_PORT }],
        },
      });
      await untilTruthy(
        'the whoami pods, the echo pod and the client ready',
        async () => {
          const r = await k.kubectl(
            'get',
            'pods',
            '-o',
            'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}',
          );
          return r.stdout.split('\n').filter((s) => s === 'True').length === 4;
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

    it('serves ClusterIP and NodePort from kernel rules, with no proxy socket but on loopback, spread over pods on both hosts; not without the rules', async () => {
      const pods = new Set([`who-${h1.name}`, `who-${h2.name}`]);
      for (const h of lan.hosts) {
        const seen = new Set<string>();
        await untilTruthy(
          `both pods through ${h.name}'s NodePort`,
          async () => {
            for (let i = 0; i < 10; i++)
              seen.add((await who(h.ip, WEB_PORT).catch(() => '?')).split(' ')[0]!);
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
        assert.match(await rules.list(h, nodeOf(h)), rules.nodePort('web', WEB_PORT));
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
      assert.match(await whoFromClient(ip), /^who-h\d /);

      await withoutRules(h1, async () => {
        assert.notEqual(await tryConnect(h1.ip, WEB_PORT), 'connected', 'the NodePort without rules');
      });
      await withoutRules(h2, async () => {
        assert.equal(await whoFromClient(ip), '', 'the ClusterIP without rules');
      });
      assert.ok(await answers(h1.ip, WEB_PORT), 'served again with the rules back');
    });

    it('writes its rules again within the sync period when they are removed', async () => {
      await who(h1.ip, WEB_PORT);
      process.kill(agentOf(h1).pid, 'SIGSTOP');
      try {
        // Removed for good this time: the agent is to notice.
        await rules.remove(h1, nodeOf(h1));
        assert.notEqual(await tryConnect(h1.ip, WEB_PORT), 'connected');
      } finally {
        process.kill(agentOf(h1).pid, 'SIGCONT');
      }
      // The agent's proxy checks its rules every sync period (30 s) and writes them whole.
      await untilTruthy('the NodePort served again', () => answers(h1.ip, WEB_PORT), 45_000, 500);
    });

    it("serves kube-proxy's metrics on 127.0.0.1:10249: the programming-latency histogram of the Service changes, the mode, healthz", async () => {
      /** GET of http://127.0.0.1:10249<path> from a process on host `h` (its own loopback). */
      const scrape = async (h: SimulatedHost, path: string) => {
        const r = await h.exec(
          [
            process.execPath,
            '-e',
            `fetch('http://127.0.0.1:10249${path}').then(async (r) => { process.stdout.write(r.status + '\\n' + (await r.text())); }, (e) => { console.error(String(e.cause ?? e)); process.exit(1); });`,
          ],
          { timeoutMs: 10_000 },
        );
        assert.equal(r.code, 0, `GET ${path} on ${h.name}: ${r.stderr}`);
        const [status, ...body] = r.stdout.split('\n');
        assert.equal(status, '200', `GET ${path} on ${h.name}: ${r.stdout}`);
        return body.join('\n');
      };
      const programmed = (text: string) =>
        Number(/^k8ts_proxy_network_programming_duration_seconds_count (\d+)$/m.exec(text)?.[1] ?? NaN);
      for (const h of lan.hosts) {
        // The pods' readiness changed every Service's slices since the agents started.
        const text = await scrape(h, '/metrics');
        assert.match(text, /^# TYPE k8ts_proxy_network_programming_duration_seconds histogram$/m);
        assert.ok(programmed(text) > 0, `programming latencies observed on ${h.name}:\n${text}`);
        assert.equal(await scrape(h, '/proxyMode'), mode);
        assert.equal(await scrape(h, '/healthz'), 'ok');
      }
      // A new Service over the whoami pods: its slice's trigger time (the Service's creation)
      // is counted on every host once its rules are live.
      const before = await Promise.all(lan.hosts.map(async (h) => programmed(await scrape(h, '/metrics'))));
      await apply(service('extra', undefined, { app: 'whoami' }));
      try {
        for (const [i, h] of lan.hosts.entries())
          await untilTruthy(
            `the new Service's programming counted on ${h.name}`,
            async () => programmed(await scrape(h, '/metrics')) > before[i]!,
            30_000,
            300,
          );
      } finally {
        await kubectl('delete', 'service', 'extra');
      }
    });

    it('refuses connections to a Service without endpoints at once (ICMP port unreachable), even where a process listens', async () => {
      const ip = await clusterIP('empty');
      const out = await inClient(`nc -w 3 ${ip} 80 </dev/null; echo "exit $?"`);
      assert.match(out, /refused/i, `nc to the ClusterIP of a Service without endpoints: ${out}`);
      assert.match(await rules.list(h2, nodeOf(h2)), rules.reject(ip));
      // A process on the node's address and the NodePort: the rule refuses before it is reached.
      const decoy = spawn(
        h1.nsenter[0]!,
        [
          ...h1.nsenter.slice(1),
          process.execPath,
          '-e',
          `require('net').createServer((s) => s.end('decoy\\n')).listen(${EMPTY_PORT}, '${h1.ip}', () => console.log('up'));`,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      try {
        await new Promise<void>((resolve, reject) => {
          decoy.stdout!.once('data', () => resolve());
          decoy.once('exit', (code) => reject(new Error(`the decoy listener exited with ${code}`)));
        });
        assert.equal(await tryConnect(h1.ip, EMPTY_PORT), 'ECONNREFUSED');
        await withoutRules(h1, async () => {
          assert.equal(
            await tryConnect(h1.ip, EMPTY_PORT),
            'connected',
            'without the rules the listener answers',
          );
        });
        assert.equal(await tryConnect(h1.ip, EMPTY_PORT), 'ECONNREFUSED');
      } finally {
        decoy.kill('SIGKILL');
      }
    });

    it('keeps a client on one pod with ClientIP session affinity; not without the rules', async () => {
      await untilTruthy('the sticky NodePort', () => answers(h1.ip, STICKY_PORT), 30_000, 200);
      const seen = new Set<string>();
      for (let i = 0; i < 12; i++) seen.add((await who(h1.ip, STICKY_PORT)).split(' ')[0]!);
      assert.equal(seen.size, 1, `one pod for one client: ${[...seen].join(', ')}`);
      assert.match(await rules.list(h1, nodeOf(h1)), rules.affinity('sticky'));
      await withoutRules(h1, async () => {
        assert.equal(await answers(h1.ip, STICKY_PORT), false);
      });
    });

    it('masquerades NodePort clients for externalTrafficPolicy Cluster; not without the rules', async () => {
      for (let i = 0; i < 6; i++) {
        const [, client] = (await who(h1.ip, WEB_PORT)).split(' ');
        assert.ok(
          client && client !== lan.gatewayIP,
          `the pod sees the node's address, not the client's: ${client}`,
        );
        assert.match(client, /^10\.42\./);
      }
      await withoutRules(h1, async () => {
        assert.equal(await answers(h1.ip, WEB_PORT), false);
      });
    });

    it("keeps externalTrafficPolicy Local traffic on the node's pods with the client's address; not without the rules", async () => {
      for (const h of lan.hosts) {
        await untilTruthy(`the Local NodePort of ${h.name}`, () => answers(h.ip, LOCAL_PORT), 30_000, 200);
        for (let i = 0; i < 8; i++)
          assert.equal(await who(h.ip, LOCAL_PORT), `who-${h.name} ${lan.gatewayIP}`, `through ${h.name}`);
      }
      await withoutRules(h1, async () => {
        assert.equal(await answers(h1.ip, LOCAL_PORT), false);
      });
    });

    it("keeps internalTrafficPolicy Local traffic of a pod on its node's pods; not without the rules", async () => {
      const ip = await clusterIP('inlocal');
      await untilTruthy(
        'the Local ClusterIP from the client',
        async () => (await whoFromClient(ip)) !== '',
        30_000,
        500,
      );
      for (let i = 0; i < 8; i++) assert.match(await whoFromClient(ip), new RegExp(`^who-${h2.name} `));
      await withoutRules(h2, async () => {
        assert.equal(await whoFromClient(ip), '');
      });
    });

    it('lets a pod reach itself through its Service (hairpin, masqueraded); not without the rules', async () => {
      const ip = await clusterIP('echo');
      const hairpin = () => inPod(h1, 'echo', 'echo', `echo hairpin | nc -w 2 ${ip} 7000 2>&1`);
      assert.equal((await hairpin()).trim(), 'hairpin');
      await withoutRules(h1, async () => {
        assert.notEqual((await hairpin()).trim(), 'hairpin');
      });
    });

    it('moves a UDP flow to the new endpoint at once when its endpoint changes (stale conntrack entries deleted); not without the rules', async () => {
      // On the node that receives the traffic: a forwarded endpoint outside the cluster CIDR
      // would meet Docker's FORWARD policy (DROP) in the host's namespace.
      const servers = [udpEcho(h1, 5353, 'first'), udpEcho(h1, 5354, 'second')];
      const sock = createSocket('udp4');
      try {
        await apply({
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'udpecho' },
          spec: {
            type: 'NodePort',
            ports: [{ name: 'echo', protocol: 'UDP', port: 53, nodePort: UDP_PORT }],
          },
        });
        const slice = (port: number) => ({
          apiVersion: 'discovery.k8s.io/v1',
          kind: 'EndpointSlice',
          metadata: { name: 'udpecho-manual', labels: { 'kubernetes.io/service-name': 'udpecho' } },
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
        await withoutRules(h1, async () => {
          const other = createSocket('udp4');
          try {
            await new Promise<void>((r) => other.bind(0, r));
            assert.equal(
              await udpAsk(other, h1.ip, UDP_PORT, 'bare'),
              undefined,
              'a new flow without the rules',
            );
          } finally {
            other.close();
          }
        });
      } finally {
        sock.close();
        for (const s of servers) s.kill('SIGKILL');
      }
    });

    it('keeps established connections through a NodePort and a ClusterIP across an agent restart', async () => {
      const echoIP = await clusterIP('echo');
      await untilTruthy(
        "the echo pod through h2's NodePort",
        async () => {
          const s = connect({ host: h2.ip, port: ECHO_PORT });
          s.on('error', () => {});
          try {
            return (await lineEcho(s, s).ask('hi', 2000)) === 'hi';
          } catch {
            return false;
          } finally {
            s.destroy();
          }
        },
        60_000,
        500,
      );
      // From outside to h2's NodePort (to the pod on h1, through the VXLAN), and from the
      // client pod on h2 to the ClusterIP: both through h2's rules.
      const external: Socket = connect({ host: h2.ip, port: ECHO_PORT });
      external.on('error', () => {});
      const fromPod = spawn(
        'docker',
        ['-H', h2.dockerHost, 'exec', '-i', await container(h2, 'client'), 'nc', echoIP, '7000'],
        { stdio: ['pipe', 'pipe', 'inherit'] },
      );
      try {
        const conns = {
          external: lineEcho(external, external),
          fromPod: lineEcho(fromPod.stdin!, fromPod.stdout!),
        };
        const all = async (text: string) => {
          for (const [name, c] of Object.entries(conns))
            assert.equal(await c.ask(`${name}-${text}`), `${name}-${text}`);
        };
        await all('before');
        await agents[1]!.stop();
        await all('while-stopped');
        // A new connection from h2 itself to the ClusterIP: routed by the address the
        // stopped agent left on its interface, DNATed by the rules it left.
        const fromHost = await h2.exec(
          [
            process.execPath,
            '-e',
            `const s = require('node:net').connect(7000, ${JSON.stringify(echoIP)});
             s.on('error', (e) => { console.log(e.code); process.exit(1); });
             s.setEncoding('utf8'); s.write('from-host\\n');
             s.on('data', (d) => { process.stdout.write(d); s.destroy(); });`,
          ],
          { timeoutMs: 10_000 },
        );
        agents[1] = await startAgent(h2);
        assert.equal(
          fromHost.stdout.trim(),
          'from-host',
          `from h2's host while its agent is stopped: ${fromHost.stdout}${fromHost.stderr}`,
        );
        // A Service made after the restart served through h2: the new agent has written its
        // rules (its first write is the whole rule set).
        await apply(service('after', AFTER_PORT, { app: 'whoami' }));
        await untilTruthy(
          "a new Service through h2's NodePort",
          () => answers(h2.ip, AFTER_PORT),
          60_000,
          300,
        );
        await all('after-restart');
        for (const [name, c] of Object.entries(conns)) assert.ok(!c.closed(), `${name} stayed open`);
      } finally {
        external.destroy();
        fromPod.kill('SIGKILL');
      }
    });

    it("leaves the first agent's rules alone when a second agent's kube-proxy on the host writes and removes its own", async () => {
      const second = `${nodeOf(h1)}-second`;
      const secondIP = h1.ip.replace(/\.\d+$/, '.41');
      must('second address', await h1.exec(['ip', 'addr', 'add', `${secondIP}/24`, 'dev', 'eth0']));
      // The earlier cases' pods all Ready and the first agent's rules settled (the same for
      // 3 s): a pod on h2 turning Ready while the second proxy runs changes the first
      // agent's rules too, rightly (seen in a CI run: its endpoint joined 'local', 'after'
      // and 'sticky'), and is no clobbering.
      await kubectl('wait', '--for=condition=Ready', 'pods', '--all', '--timeout=120s');
      let firstRules = await rules.list(h1, nodeOf(h1));
      await untilTruthy(
        "the first agent's rules settled",
        async () => {
          const now = await rules.list(h1, nodeOf(h1));
          const same = now === firstRules;
          firstRules = now;
          return same;
        },
        60_000,
        3_000,
      );
      let proxy: ChildProcess | undefined;
      try {
        proxy = spawn(
          h1.nsenter[0]!,
          [
            ...h1.nsenter.slice(1),
            process.execPath,
            '--import',
            'tsx',
            SECOND_PROXY,
            k.kubeconfig,
            second,
            secondIP,
            mode,
          ],
          { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let said = '';
        proxy.stderr!.on('data', (d: Buffer) => (said += d.toString()));
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`the second proxy was not ready in 90 s: ${said}`)),
            90_000,
          );
          proxy!.stdout!.on('data', (d: Buffer) => {
            if (d.toString().includes(SECOND_PROXY_READY)) {
              clearTimeout(timer);
              resolve();
            }
          });
          proxy!.once('exit', (code) => reject(new Error(`the second proxy exited with ${code}: ${said}`)));
        });
        // Its own rules, serving the same Services on its own node IP.
        assert.match(await rules.list(h1, second), rules.nodePort('web', WEB_PORT));
        await untilTruthy("the second proxy's NodePort", () => answers(secondIP, WEB_PORT), 30_000, 300);
        assert.equal(await rules.list(h1, nodeOf(h1)), firstRules, "the first agent's rules as they were");
        assert.ok(await answers(h1.ip, WEB_PORT), "the first agent's NodePort");

        // Stopped, and its rules removed as `k8ts agent --cleanup` of its node removes them.
        const exited = new Promise((resolve) => proxy!.once('exit', resolve));
        proxy.kill('SIGTERM');
        assert.equal(await exited, 0, said);
        if (mode === 'nftables') {
          const table = nftTableFor(second, hostname());
          for (const t of [table, canaryTableFor(table)])
            must(`nft delete table ${t}`, await h1.exec(['nft', 'delete', 'table', 'ip', t]));
        } else assert.ok((await removeIptablesRules(inHost(h1), iptablesPrefixFor(second, hostname()))) > 0);
        assert.equal(await answers(secondIP, WEB_PORT), false, "the second proxy's rules are gone");
        assert.equal(await rules.list(h1, nodeOf(h1)), firstRules, "the first agent's rules as they were");
        assert.ok(await answers(h1.ip, WEB_PORT), "the first agent's NodePort");
        // The ClusterIP from a pod on h1, through the first agent's rules.
        const webIP = await clusterIP('web');
        for (let i = 0; i < 5; i++)
          assert.match(await whoFrom(h1, `who-${h1.name}`, 'httpd', webIP), /^who-h\d /);
      } finally {
        if (proxy && proxy.exitCode === null && proxy.signalCode === null) proxy.kill('SIGKILL');
        await h1.exec(['ip', 'addr', 'del', `${secondIP}/24`, 'dev', 'eth0']);
      }
    });

    it("removes userspace mode's local-nodeports table when the agent is restarted in this mode, and the Local NodePort still reaches this node's pod", async () => {
      const localTable = ['nft', 'list', 'table', 'ip', LOCAL_NODEPORTS_TABLE];
      const localOK = async (h: SimulatedHost) => {
        for (let i = 0; i < 6; i++)
          assert.equal(await who(h.ip, LOCAL_PORT), `who-${h.name} ${lan.gatewayIP}`, `through ${h.name}`);
      };
      await agents[0]!.stop();
      agents[0] = await startAgentOnHost(k, h1, nodeOf(h1), ['--proxy-mode', 'userspace']);
      // Userspace mode DNATs the Local NodePort in a table of its own (the client's address kept).
      await untilTruthy(
        "userspace mode's table on h1",
        async () => {
          const r = await h1.exec(localTable);
          return r.code === 0 && r.stdout.includes(`dport ${LOCAL_PORT}`);
        },
        60_000,
        300,
      );
      await localOK(h1);
      await agents[0]!.stop();
      agents[0] = await startAgent(h1);
      // Gone once this mode's rules are written (else its DNAT would go on to the endpoints
      // userspace mode knew, besides this mode's rules).
      await untilTruthy(
        "userspace mode's table gone from h1",
        async () => (await h1.exec(localTable)).code !== 0,
        60_000,
        300,
      );
      assert.match(await rules.list(h1, nodeOf(h1)), rules.nodePort('local', LOCAL_PORT));
      await untilTruthy('the Local NodePort of h1', () => answers(h1.ip, LOCAL_PORT), 30_000, 200);
      await localOK(h1);
      await withoutRules(h1, async () => {
        assert.equal(await answers(h1.ip, LOCAL_PORT), false, 'nothing else serves it');
      });
    });

    it("removes a deleted Service's rules from every host", async () => {
      await kubectl('delete', 'service', 'sticky');
      for (const h of lan.hosts)
        await until(
          `sticky's rules gone from ${h.name}`,
          async () => ((await rules.list(h, nodeOf(h))).includes('default/sticky/') ? undefined : true),
          20_000,
          200,
        );
      assert.notEqual(await tryConnect(h1.ip, STICKY_PORT, 1500), 'connected');
    });
  });
}
