// The cluster DNS end to end (issue 16, items 3 and 6): the real CLI (`k8ts server
// --disable-agent` and one `k8ts agent` whose --resolv-conf names a test resolver on
// 127.0.0.1), real Docker, the real kubectl, and busybox's nslookup inside a pod. The agent
// serves the kube-dns Service's address (the tenth of the test's own Service CIDR) itself,
// on a dummy interface of its own; the pod reaches it through its gateway (this host).
// Asked: a ClusterIP Service by its FQDN and, through the pod's search path, by its short
// name; an SRV name; a headless Service and its per-pod names (hostname + subdomain); an
// ExternalName (CNAME, chased upstream); a name outside the cluster, which the agent
// forwards to the test resolver; an unknown in-cluster name (NXDOMAIN); a Service created
// and deleted during the test. Every container is
// labelled with the test's node name and removed at the end; the agent removes its
// interface when it stops.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { dnsInterfaceFor } from '../agent/dns/cluster-dns.js';
import { clusterIPInterfaceFor } from '../agent/proxy/cluster-ip.js';
import { startTestResolver, type TestResolver } from '../agent/dns/testing.js';
import { removeNodeFromDocker, startServerAndAgent, type K8tsAgent } from './support/k8ts-agent.js';
import { buildImages, cleanUp, run, type K8tsServer } from './support/k8ts-server.js';
import { until as waitUntil } from './support/wait.js';

const NODE = `dns-e2e-${process.pid}`;
const NODE_IP = '127.0.0.1';
const SERVICE_NET = `10.197.${process.pid % 256}`;
const SERVICE_CIDR = `${SERVICE_NET}.0/24`;
/** The kube-dns Service's clusterIP: the tenth address of the range. */
const DNS_IP = `${SERVICE_NET}.10`;
const NS = 'dns-e2e';

const manifests = `
apiVersion: v1
kind: Namespace
metadata: { name: ${NS} }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: spring, namespace: ${NS} }
spec:
  replicas: 1
  selector: { matchLabels: { app: spring } }
  template:
    metadata: { labels: { app: spring } }
    spec:
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 0
      containers:
        - name: web
          image: spring-server:1.0
          imagePullPolicy: IfNotPresent
          ports: [{ name: http, containerPort: 8080 }]
---
apiVersion: v1
kind: Service
metadata: { name: spring-service, namespace: ${NS} }
spec:
  selector: { app: spring }
  ports: [{ name: http, port: 80, targetPort: http }]
---
apiVersion: v1
kind: Service
metadata: { name: peers, namespace: ${NS} }
spec:
  clusterIP: None
  selector: { app: peer }
  ports: [{ name: gossip, port: 7000 }]
---
apiVersion: v1
kind: Pod
metadata: { name: peer-0, namespace: ${NS}, labels: { app: peer } }
spec:
  hostname: peer-0
  subdomain: peers
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  containers:
    - { name: main, image: k8ts/busybox:1.0, imagePullPolicy: IfNotPresent, command: [sleep, '3600'] }
---
apiVersion: v1
kind: Pod
metadata: { name: peer-1, namespace: ${NS}, labels: { app: peer } }
spec:
  hostname: peer-1
  subdomain: peers
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  containers:
    - { name: main, image: k8ts/busybox:1.0, imagePullPolicy: IfNotPresent, command: [sleep, '3600'] }
---
apiVersion: v1
kind: Service
metadata: { name: upstream-alias, namespace: ${NS} }
spec:
  type: ExternalName
  externalName: app.outside.test
---
apiVersion: v1
kind: Pod
metadata: { name: client, namespace: ${NS} }
spec:
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  containers:
    - { name: client, image: k8ts/busybox:1.0, imagePullPolicy: IfNotPresent, command: [sleep, '3600'] }
`;

/** Polls `check` (support/wait.ts) with this file's deadline (90 s) and pace (250 ms). */
const until = <T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms = 90_000) =>
  waitUntil(what, check, ms, 250);

describe('cluster DNS from a pod, with real Docker and kubectl', { timeout: 900_000 }, () => {
  let k: K8tsServer | undefined;
  let agent: K8tsAgent | undefined;
  let resolver: TestResolver | undefined;
  let dir: string | undefined;

  const kubectl = (...args: string[]) => k!.kubectlOk(...args);
  /** nslookup inside the client pod; resolves with its output and exit code. */
  const nslookup = async (...args: string[]) => {
    const r = await k!.kubectl('exec', '-n', NS, 'client', '--', 'nslookup', ...args);
    return { code: r.code, out: r.stdout + r.stderr };
  };
  const podIP = async (name: string) =>
    (await kubectl('get', 'pod', '-n', NS, name, '-o', 'jsonpath={.status.podIP}')).trim();

  before(async () => {
    await buildImages(['spring-server', 'busybox', 'pause']);
    resolver = await startTestResolver({
      'www.outside.test': [{ name: 'www.outside.test', type: 'A', ttl: 60, class: 'IN', data: '198.18.7.7' }],
      'app.outside.test': [{ name: 'app.outside.test', type: 'A', ttl: 60, class: 'IN', data: '198.18.7.8' }],
    });
    dir = mkdtempSync(join(tmpdir(), 'k8ts-dns-e2e-'));
    const resolvConf = join(dir, 'resolv.conf');
    // The agent's upstream (a port other than 53: the agent's parser takes ip:port).
    writeFileSync(resolvConf, `nameserver ${resolver.host}:${resolver.port}\n`);
    ({ k, agent } = await startServerAndAgent({
      nodeName: NODE,
      nodeIP: NODE_IP,
      serverArgs: ['--service-cluster-ip-range', SERVICE_CIDR],
      agentArgs: ['--resolv-conf', resolvConf],
    }));
    const applied = await k.kubectlIn(manifests, 'apply', '-f', '-');
    assert.equal(applied.code, 0, applied.stderr);
    await until('the pods running', async () => {
      const out = await kubectl(
        'get',
        'pods',
        '-n',
        NS,
        '-o',
        'jsonpath={range .items[*]}{.status.phase}{"\\n"}{end}',
      );
      const phases = out.split('\n').filter(Boolean);
      return phases.length === 4 && phases.every((p) => p === 'Running') ? true : undefined;
    });
  });

  after(async () => {
    // Each step even when an earlier one failed; the first failure is reported.
    await cleanUp([
      () => agent?.stop(),
      () => k?.stop(),
      () => removeNodeFromDocker(NODE),
      () => resolver?.close(),
      () => dir && rmSync(dir, { recursive: true, force: true }),
    ]);
    const left = await run('ip', ['link', 'show', dnsInterfaceFor(NODE)]);
    assert.notEqual(left.code, 0, `the agent removed its DNS interface: ${left.stdout}`);
  });

  it('the kube-dns Service is at the tenth address and the agent serves it', async () => {
    const ip = (
      await kubectl('get', 'svc', '-n', 'kube-system', 'kube-dns', '-o', 'jsonpath={.spec.clusterIP}')
    ).trim();
    assert.equal(ip, DNS_IP);
    await until('the agent serves the DNS address', () =>
      agent!.logs().includes(`"address":"${DNS_IP}:53"`) ? true : undefined,
    );
    // The address is the DNS's own (its interface, or lo labelled with its name), and kube-proxy,
    // which skips the labelled kube-dns Service, holds it on none of its own.
    const held = await run('ip', ['-o', '-4', 'addr', 'show', 'to', `${DNS_IP}/32`]);
    assert.match(held.stdout, new RegExp(dnsInterfaceFor(NODE)), held.stdout);
    assert.doesNotMatch(held.stdout, new RegExp(clusterIPInterfaceFor(NODE)), held.stdout);
  });

  it('a ClusterIP Service by its FQDN, its SRV name, and an unknown name', async () => {
    const svcIP = (
      await kubectl('get', 'svc', '-n', NS, 'spring-service', '-o', 'jsonpath={.spec.clusterIP}')
    ).trim();
    const fqdn = await nslookup(`spring-service.${NS}.svc.cluster.local`, DNS_IP);
    assert.equal(fqdn.code, 0, fqdn.out);
    assert.match(fqdn.out, new RegExp(`Address:\\s+${svcIP.replace(/\./g, '\\.')}`), fqdn.out);
    const srv = await nslookup('-type=srv', `_http._tcp.spring-service.${NS}.svc.cluster.local`, DNS_IP);
    assert.match(srv.out, new RegExp(`80 spring-service\\.${NS}\\.svc\\.cluster\\.local`), srv.out);
    const missing = await nslookup(`nothing.${NS}.svc.cluster.local`, DNS_IP);
    assert.notEqual(missing.code, 0);
    assert.match(missing.out, /NXDOMAIN/, missing.out);
  });

  it('the short name through the pod’s own resolv.conf (written by the kubelet)', async (t) => {
    const conf = await kubectl('exec', '-n', NS, 'client', '--', 'cat', '/etc/resolv.conf');
    if (!conf.includes(`nameserver ${DNS_IP}`)) {
      t.skip(`the kubelet does not write the pod's resolv.conf yet: ${conf.trim()}`);
      return;
    }
    const svcIP = (
      await kubectl('get', 'svc', '-n', NS, 'spring-service', '-o', 'jsonpath={.spec.clusterIP}')
    ).trim();
    const short = await nslookup('spring-service');
    assert.match(short.out, new RegExp(`Address:\\s+${svcIP.replace(/\./g, '\\.')}`), short.out);
  });

  it('a headless Service: one address per pod, and each pod by its hostname', async () => {
    const [ip0, ip1] = [await podIP('peer-0'), await podIP('peer-1')];
    const all = await until('both peers in the headless Service', async () => {
      const r = await nslookup(`peers.${NS}.svc.cluster.local`, DNS_IP);
      return r.out.includes(ip0) && r.out.includes(ip1) ? r.out : undefined;
    });
    assert.ok(all);
    const one = await nslookup(`peer-1.peers.${NS}.svc.cluster.local`, DNS_IP);
    assert.match(one.out, new RegExp(`Address:\\s+${ip1.replace(/\./g, '\\.')}`), one.out);
    assert.ok(!one.out.includes(ip0), one.out);
  });

  it('a Service created now resolves, and stops resolving once deleted', async () => {
    await kubectl('create', 'service', 'clusterip', 'late', '-n', NS, '--tcp', '80:8080');
    const ip = (await kubectl('get', 'svc', '-n', NS, 'late', '-o', 'jsonpath={.spec.clusterIP}')).trim();
    await until('late resolves', async () => {
      const r = await nslookup(`late.${NS}.svc.cluster.local`, DNS_IP);
      return r.out.includes(ip) ? true : undefined;
    });
    await kubectl('delete', 'service', 'late', '-n', NS);
    await until('late is NXDOMAIN', async () => {
      const r = await nslookup(`late.${NS}.svc.cluster.local`, DNS_IP);
      return /NXDOMAIN/.test(r.out) ? true : undefined;
    });
  });

  it('an ExternalName as a CNAME, and a name outside the cluster, both from the test resolver', async () => {
    const alias = await nslookup(`upstream-alias.${NS}.svc.cluster.local`, DNS_IP);
    assert.match(alias.out, /app\.outside\.test/, alias.out);
    assert.match(alias.out, /198\.18\.7\.8/, alias.out);
    const outside = await nslookup('www.outside.test', DNS_IP);
    assert.match(outside.out, /198\.18\.7\.7/, outside.out);
    assert.ok(resolver!.asked.includes('www.outside.test/A'), 'the agent asked the test resolver');
  });
});
