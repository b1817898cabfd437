/**
 * A k8ts cluster on simulated hosts (simulated-hosts.ts), as the multi-host tests and
 * `bench:network` start it: the control process in the machine's namespace on the
 * segment's gateway address, and one `k8ts agent` per host, run inside the host's
 * namespace against the host's own engine.
 *
 *   const lan = await startSimulatedHosts({ count: 2 });
 *   const k = await startServerOnSegment(lan, 'vxlan');
 *   const agent = await startAgentOnHost(k, lan.hosts[0], 'node-1');
 *   await k.kubectlIn(JSON.stringify(sleeperPod('client', 'node-1', 'demo')), 'apply', '-f', '-');
 */
import { request } from 'node:http';
import type { Backend } from '../../api/netconf.js';
import { startK8tsAgent, type K8tsAgent } from './k8ts-agent.js';
import { startK8tsServer, type K8tsServer } from './k8ts-server.js';
import type { SimulatedHost, SimulatedHosts } from './simulated-hosts.js';
import { untilTruthy } from './wait.js';

/** `k8ts server` with the cross-host `backend`, bound to the segment's gateway address, memory store. */
export function startServerOnSegment(lan: SimulatedHosts, backend: Backend): Promise<K8tsServer> {
  return startK8tsServer({
    args: ['--flannel-backend', backend, '--bind-address', lan.gatewayIP, '--datastore', 'memory'],
    readyTimeoutMs: 60_000,
  });
}

/**
 * `k8ts agent` on host `h` as node `nodeName`, joined with the server's node token, its
 * data dir in the host's dir (so a restart finds its node credential), with extra flags
 * `args` (e.g. `['--proxy-mode', 'iptables']`). The caller stops it.
 */
export function startAgentOnHost(
  k: K8tsServer,
  h: SimulatedHost,
  nodeName: string,
  args: string[] = [],
): Promise<K8tsAgent> {
  return startK8tsAgent({
    args,
    server: k.url,
    token: k.nodeToken(),
    nodeName,
    nodeIP: h.ip,
    dataDir: `${h.dir}/agent`,
    wrapper: h.nsenter,
    env: { DOCKER_HOST: h.dockerHost },
    readyTimeoutMs: 60_000,
  });
}

/** A busybox pod pinned to `nodeName` (spec.nodeName) that only sleeps: a network namespace to exec in or measure from. */
export function sleeperPod(name: string, nodeName: string, app: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app } },
    spec: {
      nodeName,
      terminationGracePeriodSeconds: 0,
      containers: [{ name: 'c', image: 'k8ts/busybox:1.0', command: ['sleep', '3600'] }],
    },
  };
}

/** One HTTP GET on a fresh connection (lenient parser: busybox httpd CGI headers end in bare LF); the body, or rejects on an error, non-200 or timeout. */
export function get(url: string, timeoutMs = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, timeout: timeoutMs, insecureHTTPParser: true }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () =>
        res.statusCode === 200 ? resolve(body) : reject(new Error(`HTTP ${res.statusCode}`)),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/** A whoami line with busybox httpd's IPv4-mapped client address (`[::ffff:10.42.0.5]`) made plain. */
export const normalize = (line: string): string => line.trim().replace(/\[::ffff:([\d.]+)\]/, '$1');

/**
 * A `whoami` pod pinned to `node`: busybox httpd whose CGI answers `<pod> <client address>`,
 * to see which pod answered and from which address the connection came.
 */
export const whoamiPod = (name: string, node: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app: 'whoami' } },
  spec: {
    nodeName: node,
    terminationGracePeriodSeconds: 0,
    containers: [
      {
        name: 'httpd',
        image: 'k8ts/busybox:1.0',
        command: [
          'sh',
          '-c',
          'mkdir -p /www/cgi-bin && printf \'#!/bin/sh\\necho "Content-Type: text/plain"\\necho\\necho "$(hostname) $REMOTE_ADDR"\\n\' > /www/cgi-bin/who && chmod +x /www/cgi-bin/who && exec httpd -f -p 8080 -h /www',
        ],
        ports: [{ containerPort: 8080 }],
        readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
      },
    ],
  },
});

/** `spring-server 1.0 on <pod>` → `<pod>` (the examples' answer names the pod). */
export const podOf = (body: string): string => /on (\S+)/.exec(body)?.[1] ?? `?${body}`;

/**
 * Waits until every pod of `pods` (names) has answered a GET of `http://<host.ip>:<port>/`
 * (podOf() of the body), ten GETs per try, each on a fresh connection.
 * @throws Error after `timeoutMs`, naming the pods seen and the last errors.
 */
export async function untilEveryPodAnswers(
  host: SimulatedHost,
  port: number,
  pods: ReadonlySet<string>,
  timeoutMs: number,
): Promise<void> {
  const seen = new Set<string>();
  const errors: string[] = [];
  await untilTruthy(
    `every pod through ${host.name}'s NodePort`,
    async () => {
      for (let i = 0; i < 10; i++) {
        try {
          seen.add(podOf(await get(`http://${host.ip}:${port}/`)));
        } catch (err) {
          errors.push(String(err));
        }
      }
      return [...pods].every((p) => seen.has(p));
    },
    timeoutMs,
    200,
  ).catch((err: Error) => {
    throw new Error(
      `${err.message}: saw ${[...seen].join(', ')} of ${[...pods].join(', ')}; errors: ${errors.slice(-5).join('; ')}`,
    );
  });
}
