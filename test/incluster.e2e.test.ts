// In-cluster clients end to end (issue 16 item 6), as a new user runs them: a simulated
// host (test/support/simulated-hosts.ts) with its own engine and `k8ts agent` (once on its
// dockerd, once on its containerd with the CRI plugin, as containerd.e2e), the control
// process on the segment's gateway address (so that is its advertise address, the
// endpoint of the `kubernetes` Service), and the real kubectl.
// - kubectl inside a busybox pod of a namespace of the run's (the host's static kubectl
//   binary, mounted with a hostPath volume), configured by nothing but the pod's mounted
//   ServiceAccount files and KUBERNETES_SERVICE_HOST/PORT (kubectl's in-cluster config),
//   reaches the API through
//   the ClusterIP 10.43.0.1:443 (the agent's kube-proxy DNATs it to the advertise
//   address), its namespace from the mounted file: 403 before a RoleBinding to its
//   ServiceAccount, the namespace's pods after;
// - @kubernetes/client-node's KubeConfig.loadFromCluster() in another process, given
//   copies of the same files (its pathPrefix) and the same variables: from the machine's
//   namespace at the advertise address, and from the host's namespace at the ClusterIP;
//   403 with a ServiceAccount no RoleBinding names;
// - `wget -qO- http://spring-service` from a busybox pod: the examples/ Service by its
//   name, through the cluster DNS and kube-proxy;
// - the copied token is refused (401) once its pod is deleted.
// Before issue 16 each of these fails: a pod had no token, no ca.crt, no
// KUBERNETES_SERVICE_* variables, there was no `kubernetes` Service at 10.43.0.1 and
// no cluster DNS (Docker's resolv.conf), and no token was bound to a pod.
// Everything (host namespace, its engine's containers, the processes, the temp dir) is
// removed at the end, also after a failure.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CNI_BIN_DIR as CNI_BIN, HostContainerd } from './support/host-containerd.js';
import { startK8tsAgent, type K8tsAgent } from './support/k8ts-agent.js';
import { run, type CommandResult, type K8tsServer } from './support/k8ts-server.js';
import { startAgentOnHost, startServerOnSegment } from './support/simulated-cluster.js';
import {
  SAMPLE_IMAGES,
  startSimulatedHosts,
  type SimulatedHost,
  type SimulatedHosts,
} from './support/simulated-hosts.js';
import { until, untilTruthy } from './support/wait.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';
/**
 * The host's kubectl, the file its PATH entry links to (here /usr/bin/kubectl →
 * /usr/lib/google-cloud-sdk/bin/kubectl): kubectl releases are static Go binaries, so it
 * runs in busybox with nothing else mounted (checked in before()).
 */
const KUBECTL = (() => {
  const which = spawnSync('which', ['kubectl'], { encoding: 'utf8' }).stdout.trim();
  return which ? realpathSync(which) : '/usr/bin/kubectl';
})();
/** The first address of the default service range (10.43.0.0/16): the `kubernetes` Service. */
const KUBERNETES_CLUSTER_IP = '10.43.0.1';

/** A busybox pod on `nodeName` in `namespace` with ServiceAccount `sa`, the host's kubectl at /kubectl. */
const podWithKubectl = (name: string, nodeName: string, namespace: string, sa: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace },
  spec: {
    nodeName,
    serviceAccountName: sa,
    terminationGracePeriodSeconds: 0,
    volumes: [{ name: 'kubectl', hostPath: { path: KUBECTL, type: 'File' } }],
    containers: [
      {
        name: 'c',
        image: 'k8ts/busybox:1.0',
        command: ['sleep', '3600'],
        volumeMounts: [{ name: 'kubectl', mountPath: '/kubectl', readOnly: true }],
      },
    ],
  },
});

/**
 * Lists the pods of the copied files' namespace with @kubernetes/client-node's
 * loadFromCluster(pathPrefix) in a process of its own; prints `{"pods":[names]}` or
 * `{"code":<HTTP status>}`.
 */
const CLIENT_NODE_SCRIPT = `
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
const prefix = process.argv[1];
const kc = new KubeConfig();
kc.loadFromCluster(prefix);
const namespace = readFileSync(prefix + '${MOUNT}/namespace', 'utf8');
try {
  const list = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace });
  console.log(JSON.stringify({ server: kc.getCurrentCluster().server, pods: list.items.map((p) => p.metadata.name) }));
} catch (err) {
  console.log(JSON.stringify({ server: kc.getCurrentCluster().server, code: err.code ?? String(err) }));
}
`;

interface ClientNodeResult {
  server: string;
  pods?: string[];
  code?: number | string;
}

const missing = (tools: string[]) => tools.filter((t) => spawnSync('which', [t]).status !== 0);
const missingTools = missing(['nsenter', 'kubectl', 'docker']);
const missingCni = ['bridge', 'host-local', 'loopback', 'portmap'].filter(
  (p) => !existsSync(join(CNI_BIN, p)),
);
const SKIP =
  process.getuid?.() !== 0
    ? 'simulated hosts need root'
    : missingTools.length > 0
      ? `needs ${missingTools.join(', ')}`
      : undefined;

// Once per runtime: the kubelet writes the ServiceAccount files and mounts the hostPath
// through Docker's binds on one, through the CRI's mounts on the other.
for (const runtime of ['docker', 'containerd'] as const) {
  const NODE = `incluster-e2e-${process.pid}-${runtime}`;
  /**
   * The kubectl pod's namespace: not `default`, so that kubectl's namespace can only come from
   * the mounted `namespace` file (kubectl and client-node fall back to `default` without it).
   */
  const NS = `incluster-${process.pid}-${runtime}`;
  /** Each pod's namespace: `reader` (ServiceAccount reader) in NS, `plain` (default SA) in default, next to examples/. */
  const NAMESPACE_OF: Record<string, string> = { reader: NS, plain: 'default' };

  const skip =
    SKIP ??
    (runtime !== 'containerd'
      ? undefined
      : missing(['containerd', 'runc']).length > 0
        ? `needs ${missing(['containerd', 'runc']).join(', ')}`
        : missingCni.length > 0
          ? `needs the CNI plugins ${missingCni.join(', ')} in ${CNI_BIN} (Debian package containernetworking-plugins)`
          : undefined);
  describe(
    `in-cluster clients on ${runtime}: kubectl in a pod, loadFromCluster(), Service names`,
    { skip: skip ?? false, timeout: 900_000 },
    () => {
      let lan: SimulatedHosts;
      let host: SimulatedHost;
      let k: K8tsServer;
      let agent: K8tsAgent | undefined;
      let containerd: HostContainerd | undefined;
      let tmp = '';

      const kubectl = async (...args: string[]) => {
        const r = await k.kubectl(...args);
        assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
        return r.stdout;
      };
      const apply = async (obj: unknown) => {
        const r = await k.kubectlIn(JSON.stringify(obj), 'apply', '-f', '-');
        assert.equal(r.code, 0, r.stderr);
      };
      const exec = (pod: string, ...cmd: string[]) =>
        k.kubectl('exec', '-n', NAMESPACE_OF[pod]!, pod, '--', ...cmd);
      const running = (pod: string) =>
        untilTruthy(
          `${pod} Running`,
          async () =>
            (await k.kubectl('get', 'pod', '-n', NAMESPACE_OF[pod]!, pod, '-o', 'jsonpath={.status.phase}'))
              .stdout === 'Running',
          120_000,
          250,
        );

      /** Copies pod's token, ca.crt and namespace into `<tmp>/<pod>` + MOUNT; returns the prefix. */
      const copyCredentials = async (pod: string) => {
        const prefix = join(tmp, pod);
        mkdirSync(prefix + MOUNT, { recursive: true });
        for (const f of ['token', 'ca.crt', 'namespace']) {
          const r = await exec(pod, 'cat', `${MOUNT}/${f}`);
          assert.equal(r.code, 0, `cat ${MOUNT}/${f} in ${pod}: ${r.stderr}`);
          assert.notEqual(r.stdout, '', `${f} in ${pod} is empty`);
          writeFileSync(`${prefix}${MOUNT}/${f}`, r.stdout);
        }
        return prefix;
      };

      /** CLIENT_NODE_SCRIPT with the files at `prefix` and the API at host:port, in the machine's namespace or (`wrapper`) another. */
      const clientNode = async (
        prefix: string,
        serviceHost: string,
        servicePort: string,
        wrapper: string[] = [],
      ): Promise<ClientNodeResult> => {
        const argv = [...wrapper, process.execPath, '--input-type=module', '-e', CLIENT_NODE_SCRIPT, prefix];
        // Only what an in-cluster process has: no KUBECONFIG, HOME elsewhere.
        const env = {
          PATH: process.env.PATH,
          HOME: tmp,
          KUBERNETES_SERVICE_HOST: serviceHost,
          KUBERNETES_SERVICE_PORT: servicePort,
        };
        const r: CommandResult = await runIn(REPO, argv[0]!, argv.slice(1), env);
        assert.equal(r.code, 0, `client-node script: ${r.stderr}`);
        return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as ClientNodeResult;
      };

      before(async () => {
        tmp = mkdtempSync(join(tmpdir(), 'k8ts-incluster-e2e-'));
        lan = await startSimulatedHosts({ count: 1 });
        host = lan.hosts[0]!;
        k = await startServerOnSegment(lan, 'host-gw');
        if (runtime === 'docker') agent = await startAgentOnHost(k, host, NODE);
        else {
          // As containerd.e2e: the host's own containerd with its CRI plugin, Debian's CNI plugins.
          containerd = new HostContainerd(host, SAMPLE_IMAGES);
          await containerd.start();
          agent = await startK8tsAgent({
            server: k.url,
            token: k.nodeToken(),
            nodeName: NODE,
            nodeIP: host.ip,
            dataDir: `${host.dir}/agent`,
            wrapper: host.nsenter,
            readyTimeoutMs: 60_000,
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
          });
        }
        await kubectl('create', 'namespace', NS);
        await untilTruthy(
          `the node Ready, default's ServiceAccount and ${NS}'s kube-root-ca.crt made`,
          async () => {
            const ready = await k.kubectl(
              'get',
              'node',
              NODE,
              '-o',
              'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
            );
            const sa = await k.kubectl('get', 'serviceaccount', 'default');
            const cm = await k.kubectl('get', 'configmap', '-n', NS, 'kube-root-ca.crt');
            return ready.stdout === 'True' && sa.code === 0 && cm.code === 0;
          },
          120_000,
          500,
        );
        await kubectl('create', 'serviceaccount', '-n', NS, 'reader');
        await apply(podWithKubectl('reader', NODE, NS, 'reader'));
        await apply(podWithKubectl('plain', NODE, 'default', 'default'));
        await running('reader');
        await running('plain');
        const version = await exec('reader', '/kubectl', 'version', '--client');
        assert.equal(
          version.code,
          0,
          `the host's kubectl (${KUBECTL}) does not run in busybox (not a static binary?): ${version.stderr}`,
        );
      });

      after(async () => {
        // Each step even when one before it fails: nothing of the run stays behind.
        try {
          await agent?.stop();
        } finally {
          try {
            await k?.stop();
          } finally {
            try {
              await containerd?.stop();
              await lan?.stop();
            } finally {
              if (tmp) rmSync(tmp, { recursive: true, force: true });
            }
          }
        }
      });

      it('the kubernetes Service points at the advertise address, and pods have its variables', async () => {
        const apiPort = new URL(k.url).port;
        assert.equal(new URL(k.url).hostname, lan.gatewayIP);
        const ip = await kubectl('get', 'service', 'kubernetes', '-o', 'jsonpath={.spec.clusterIP}');
        assert.equal(ip, KUBERNETES_CLUSTER_IP);
        const slice = await kubectl(
          'get',
          'endpointslices',
          '-l',
          'kubernetes.io/service-name=kubernetes',
          '-o',
          'jsonpath={.items[0].endpoints[*].addresses[*]}:{.items[0].ports[0].port}',
        );
        assert.equal(slice, `${lan.gatewayIP}:${apiPort}`);
        const env = await exec('reader', 'env');
        assert.equal(env.code, 0, env.stderr);
        assert.match(
          env.stdout,
          new RegExp(`^KUBERNETES_SERVICE_HOST=${KUBERNETES_CLUSTER_IP.replaceAll('.', '\\.')}$`, 'm'),
        );
        assert.match(env.stdout, /^KUBERNETES_SERVICE_PORT=443$/m);
      });

      it('kubectl in a pod gets 403 without a RoleBinding and lists pods with one, through 10.43.0.1', async () => {
        // The first answer of the API server (not a dial error while the agent's kube-proxy
        // may still be writing the kubernetes Service's rules) is the verdict.
        const denied = await until(
          'an answer of the API server to kubectl in the pod',
          async () => {
            const r = await exec('reader', '/kubectl', 'get', 'pods', '-o', 'name');
            return /Error from server|^pod\//m.test(r.stderr + r.stdout) ? r : undefined;
          },
          60_000,
          500,
        );
        assert.notEqual(denied.code, 0, denied.stdout);
        assert.match(
          denied.stderr,
          new RegExp(
            `Error from server \\(Forbidden\\): pods is forbidden: User "system:serviceaccount:${NS}:reader" cannot list resource "pods" in API group "" in the namespace "${NS}"`,
          ),
        );

        await kubectl('create', 'role', '-n', NS, 'pod-reader', '--verb=get,list', '--resource=pods');
        await kubectl(
          'create',
          'rolebinding',
          '-n',
          NS,
          'reader-pods',
          '--role=pod-reader',
          `--serviceaccount=${NS}:reader`,
        );
        const listed = await until(
          'kubectl in the pod lists pods',
          async () => {
            const r = await exec('reader', '/kubectl', 'get', 'pods', '-o', 'name', '-v=6');
            return r.code === 0 ? r : undefined;
          },
          60_000,
          500,
        );
        assert.deepEqual(listed.stdout.trim().split('\n').sort(), ['pod/reader']);
        // -v=6 logs each request: the in-cluster config's server is the ClusterIP.
        assert.match(
          listed.stderr,
          new RegExp(
            `GET https://${KUBERNETES_CLUSTER_IP.replaceAll('.', '\\.')}:443/api/v1/namespaces/${NS}/pods\\?limit=500 200 OK`,
          ),
        );
      });

      it("client-node's loadFromCluster() lists pods with the copied files, at the advertise address and at the ClusterIP", async () => {
        const prefix = await copyCredentials('reader');
        const apiPort = new URL(k.url).port;
        const fromMachine = await clientNode(prefix, lan.gatewayIP, apiPort);
        assert.deepEqual(
          { ...fromMachine, pods: fromMachine.pods?.sort() },
          { server: `https://${lan.gatewayIP}:${apiPort}`, pods: ['reader'] },
        );
        // Inside the host's namespace the ClusterIP works for any process: kube-proxy's rules.
        const fromHost = await clientNode(prefix, KUBERNETES_CLUSTER_IP, '443', host.nsenter);
        assert.deepEqual(
          { ...fromHost, pods: fromHost.pods?.sort() },
          { server: `https://${KUBERNETES_CLUSTER_IP}:443`, pods: ['reader'] },
        );

        // The default ServiceAccount has no RoleBinding: the same call is forbidden.
        const plain = await clientNode(await copyCredentials('plain'), lan.gatewayIP, apiPort);
        assert.deepEqual(plain, { server: `https://${lan.gatewayIP}:${apiPort}`, code: 403 });
      });

      it('a busybox pod reaches the examples/ Service by name: wget -qO- http://spring-service', async () => {
        await kubectl('apply', '-f', `${REPO}examples/`);
        await untilTruthy(
          'a ready spring-service endpoint',
          async () =>
            (
              await k.kubectl(
                'get',
                'endpointslices',
                '-l',
                'kubernetes.io/service-name=spring-service',
                '-o',
                'jsonpath={.items[*].endpoints[?(@.conditions.ready==true)].addresses[0]}',
              )
            ).stdout.trim() !== '',
          180_000,
          500,
        );
        const body = await until(
          'an answer from http://spring-service',
          async () => {
            const r = await exec('plain', 'timeout', '10', 'wget', '-qO-', 'http://spring-service');
            return r.code === 0 ? r.stdout : undefined;
          },
          60_000,
          500,
        );
        assert.match(body, /^spring-server 1\.0 on spring-deployment-\S+/);
      });

      it('the copied token is refused (401) once its pod is deleted', async () => {
        const prefix = await copyCredentials('reader');
        const apiPort = new URL(k.url).port;
        assert.ok((await clientNode(prefix, lan.gatewayIP, apiPort)).pods?.includes('reader'));
        await kubectl('delete', 'pod', '-n', NS, 'reader', '--wait=true');
        const refused = await until(
          'the deleted pod token refused',
          async () => {
            const r = await clientNode(prefix, lan.gatewayIP, apiPort);
            return r.code === 401 ? r : undefined;
          },
          30_000,
          500,
        );
        assert.equal(refused.code, 401);
      });
    },
  );
}

/** run() in `cwd` (so the script's bare import finds the repository's node_modules). */
function runIn(cwd: string, cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<CommandResult> {
  return run('sh', ['-c', 'cd "$0" && exec "$@"', cwd, cmd, ...args], { env, timeoutMs: 60_000 });
}
