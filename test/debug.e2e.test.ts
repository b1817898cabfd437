// kubectl logs, exec, port-forward and top through the agent's tunnel (issue 9, "Done
// when"): a real `k8ts server` (control process only) and a real `k8ts agent` process, real
// Docker, the real kubectl. A spring-server pod (logs, --previous, port-forward, top) and a
// busybox pod printing a line a second (logs -f, --tail, exec). Then the control process is
// stopped and started again on the same port and data dir: the agent's tunnel comes back by
// itself and logs/exec work again. The pod network's subnet and the node name are the
// test's own; every container and network the node made is removed at the end.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { freePorts } from './support/etcd.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freeClusterCIDR } from './support/cluster-cidr.js';
import { removeNodeFromDocker, startK8tsAgent, type K8tsAgent } from './support/k8ts-agent.js';
import { run, startK8tsServer, type K8tsServer } from './support/k8ts-server.js';
import { until as waitUntil } from './support/wait.js';

const NODE = `debug-e2e-${process.pid}`;

const manifests = `
apiVersion: v1
kind: Pod
metadata:
  name: spring
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: spring
      image: spring-server:1.0
      imagePullPolicy: IfNotPresent
      ports:
        - { containerPort: 8080 }
---
apiVersion: v1
kind: Pod
metadata:
  name: ticker
spec:
  terminationGracePeriodSeconds: 0
  containers:
    - name: ticker
      image: k8ts/busybox:1.0
      imagePullPolicy: IfNotPresent
      command: [sh, -c, 'i=0; while true; do echo "tick $i"; i=$((i+1)); sleep 1; done']
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: sleeper
spec:
  replicas: 1
  selector:
    matchLabels: { app: sleeper }
  template:
    metadata:
      labels: { app: sleeper }
    spec:
      terminationGracePeriodSeconds: 0
      containers:
        - name: sleeper
          image: k8ts/busybox:1.0
          imagePullPolicy: IfNotPresent
          command: [sleep, '3600']
---
apiVersion: v1
kind: Service
metadata:
  name: sleeper
spec:
  selector: { app: sleeper }
  ports:
    - { port: 80, targetPort: 8080 }
`;

/** Polls `check` (support/wait.ts) with this file's deadline (60_000 ms) and pace (250 ms). */
const until = <T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms = 60_000) =>
  waitUntil(what, check, ms, 250);

const freePort = async (): Promise<number> => (await freePorts(1))[0]!;

/** A long-running kubectl (logs -f, port-forward) that the test ends itself. */
interface Running {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  stop(): Promise<void>;
}

function startKubectl(kubeconfig: string, ...args: string[]): Running {
  return startKubectlEnv({}, kubeconfig, ...args);
}

function startKubectlEnv(env: NodeJS.ProcessEnv, kubeconfig: string, ...args: string[]): Running {
  const child = spawn('kubectl', args, {
    env: { ...process.env, ...env, KUBECONFIG: kubeconfig },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Sends `head` on a socket and resolves with everything it answers until it closes. */
/** Writes `head` to `socket` and resolves with all it reads until the end (rejects after 30 s, with what came). */
function exchange(socket: Socket, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no end of the answer in 30 s; read so far: ${JSON.stringify(data)}`));
    }, 30_000);
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (data += d));
    socket.once('end', () => {
      clearTimeout(timer);
      resolve(data);
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.write(head);
  });
}

function connected(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port }, () => resolve(s));
    s.once('error', reject);
  });
}

describe('kubectl logs, exec, port-forward and top through the agent tunnel', { timeout: 600_000 }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'k8ts-debug-e2e-'));
  let k: K8tsServer;
  let clusterCIDR: string;
  let agent: K8tsAgent | undefined;
  let port = 0;
  const background: Running[] = [];

  const kubectl = (...args: string[]) => k.kubectl(...args);
  const podJson = async (name: string) =>
    JSON.parse((await kubectl('get', 'pod', name, '-o', 'json')).stdout) as {
      status?: {
        phase?: string;
        containerStatuses?: {
          restartCount: number;
          ready: boolean;
          state?: { running?: { startedAt: string } };
        }[];
      };
    };
  const running = async (name: string, restarts = 0) => {
    const s = (await podJson(name)).status?.containerStatuses?.[0];
    return s?.state?.running && s.restartCount >= restarts ? s : undefined;
  };

  before(async () => {
    await removeNodeFromDocker(NODE);
    clusterCIDR = await freeClusterCIDR();
    k = await startK8tsServer({ dataDir, args: ['--cluster-cidr', clusterCIDR] });
    port = Number(new URL(k.url).port);
    agent = await startK8tsAgent({
      server: k.url,
      token: readFileSync(join(dataDir, 'node-token'), 'utf8').trim(),
      nodeName: NODE,
      nodeIP: '127.0.0.1',
    });
    const applied = await k.kubectlIn(manifests, 'apply', '-f', '-');
    assert.equal(applied.code, 0, applied.stderr);
    await until(
      'both pods running',
      async () => ((await running('spring')) && (await running('ticker')) ? true : undefined),
      120_000,
    );
  });

  after(async () => {
    for (const b of background) await b.stop();
    await agent?.stop();
    await k?.stop();
    await removeNodeFromDocker(NODE);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('kubectl logs shows the start-up line of spring-server', async () => {
    await until('the start-up line', async () => {
      const r = await kubectl('logs', 'spring');
      assert.equal(r.code, 0, r.stderr);
      return r.stdout.includes('Started spring-server 1.0 on port 8080') ? true : undefined;
    });
  });

  it('kubectl logs --tail=1 shows only the last line', async () => {
    const all = await until('three ticks', async () => {
      const r = await kubectl('logs', 'ticker');
      return r.stdout.split('\n').filter(Boolean).length >= 3 ? r.stdout : undefined;
    });
    const lastSeen = Number(/tick (\d+)\n$/.exec(all)![1]);
    const r = await kubectl('logs', 'ticker', '--tail=1');
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n').filter(Boolean);
    assert.equal(lines.length, 1, r.stdout);
    const m = /^tick (\d+)$/.exec(lines[0]!);
    assert.ok(m, r.stdout);
    assert.ok(Number(m[1]) >= lastSeen, `${lines[0]} is older than tick ${lastSeen}`);
  });

  it('kubectl logs -f streams lines as they are written', async () => {
    const before = (await kubectl('logs', 'ticker')).stdout;
    const last = Number(/tick (\d+)\n$/.exec(before)![1]);
    const follow = startKubectl(k.kubeconfig, 'logs', '-f', 'ticker');
    background.push(follow);
    // Three lines written after kubectl started, seen while it still runs.
    await until(`tick ${last + 3} through logs -f`, async () =>
      follow.stdout().includes(`tick ${last + 3}\n`) ? true : undefined,
    );
    assert.equal(follow.child.exitCode, null, 'kubectl logs -f is still following');
    assert.ok(follow.stdout().includes(`tick ${last}\n`), 'it started with what was there');
    await follow.stop();
  });

  it('kubectl logs --previous shows the last instance after a restart', async () => {
    const before = await running('spring');
    assert.ok(before);
    const ids = await run('docker', [
      'ps',
      '-q',
      '--filter',
      `label=io.k8ts.node=${NODE}`,
      '--filter',
      'label=io.kubernetes.pod.name=spring',
      '--filter',
      'label=io.kubernetes.container.name=spring',
    ]);
    const id = ids.stdout.trim();
    assert.ok(id && !id.includes('\n'), `one running spring container: ${ids.stdout}`);
    assert.equal((await run('docker', ['kill', id])).code, 0);
    const now = await until('spring restarted', () => running('spring', 1), 120_000);
    const startedAt = Date.parse(now.state!.running!.startedAt);
    await until('the new instance logged its start-up line', async () =>
      (await kubectl('logs', 'spring')).stdout.includes('Started spring-server') ? true : undefined,
    );
    const prev = await kubectl('logs', 'spring', '--previous', '--timestamps');
    assert.equal(prev.code, 0, prev.stderr);
    const m = /^(\S+) Started spring-server 1\.0 on port 8080$/m.exec(prev.stdout);
    assert.ok(m, prev.stdout);
    assert.ok(
      Date.parse(m[1]!) < startedAt,
      `previous instance logged at ${m[1]}, before ${now.state!.running!.startedAt}`,
    );
    const cur = await kubectl('logs', 'spring', '--timestamps');
    const c = /^(\S+) Started spring-server/m.exec(cur.stdout);
    assert.ok(c, cur.stdout);
    assert.ok(Date.parse(c[1]!) >= startedAt - 1000, 'the current log is the new instance');
    // A pod whose container never restarted has no previous instance: 400 from the kubelet.
    const none = await kubectl('logs', 'ticker', '--previous');
    assert.notEqual(none.code, 0);
    assert.match(none.stderr, /previous terminated container "ticker" in pod "ticker" not found/);
  });

  it('kubectl exec returns the output and exit code of the command', async () => {
    const ok = await kubectl('exec', 'ticker', '--', 'echo', 'hello from exec');
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout, 'hello from exec\n');
    const failed = await kubectl('exec', 'ticker', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3');
    assert.equal(failed.code, 3, failed.stderr);
    assert.equal(failed.stdout, 'out\n');
    assert.match(failed.stderr, /^err$/m);
  });

  it('kubectl exec -i passes stdin', async () => {
    const input = Array.from({ length: 2000 }, (_, i) => `line ${i} of stdin`).join('\n') + '\n';
    const r = await k.kubectlIn(input, 'exec', '-i', 'ticker', '--', 'cat');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, input);
    const wc = await k.kubectlIn('a\nb\nc\n', 'exec', '-i', 'ticker', '--', 'wc', '-l');
    assert.equal(wc.stdout.trim(), '3');
  });

  it('kubectl exec -it runs the command on a terminal', async () => {
    // script(1) gives kubectl a pseudo-terminal. The container's terminal turns "\n" into
    // "\r\n" (a plain pipe would not). (This host's Docker cannot report a terminal's size
    // to the process — `docker run -t ... stty size` fails too — so the resize channel is
    // covered by the unit tests only.)
    const r = await run('script', ['-qec', 'kubectl exec -it ticker -- echo on-a-tty', '/dev/null'], {
      env: { ...process.env, KUBECONFIG: k.kubeconfig },
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /on-a-tty\r+\n/);
  });

  it('kubectl exec over plain SPDY (websockets off, as kubectl before 1.30 speaks): output, exit code, stdin, tty', async () => {
    const env = { ...process.env, KUBECONFIG: k.kubeconfig, KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false' };
    const failed = await run(
      'kubectl',
      ['exec', 'ticker', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3'],
      {
        env,
      },
    );
    assert.equal(failed.code, 3, failed.stderr);
    assert.equal(failed.stdout, 'out\n');
    assert.match(failed.stderr, /^err$/m);
    const input = Array.from({ length: 2000 }, (_, i) => `line ${i} over spdy`).join('\n') + '\n';
    const cat = await run('kubectl', ['exec', '-i', 'ticker', '--', 'cat'], { env, stdin: input });
    assert.equal(cat.code, 0, cat.stderr);
    assert.equal(cat.stdout, input);
    const tty = await run('script', ['-qec', 'kubectl exec -it ticker -- echo on-a-tty', '/dev/null'], {
      env,
    });
    assert.equal(tty.code, 0, tty.stdout + tty.stderr);
    assert.match(tty.stdout, /on-a-tty\r+\n/);
  });

  it('kubectl attach streams the output of the running container', async () => {
    const before = (await kubectl('logs', 'ticker', '--tail=1')).stdout;
    const last = Number(/tick (\d+)/.exec(before)![1]);
    const attach = startKubectl(k.kubeconfig, 'attach', 'ticker');
    background.push(attach);
    await until(`tick ${last + 2} through attach`, async () =>
      attach.stdout().includes(`tick ${last + 2}\n`) ? true : undefined,
    );
    assert.equal(attach.child.exitCode, null, attach.stderr());
    await attach.stop();
  });

  /** Starts `kubectl port-forward <target> <free local port>:<remote>` (with `env`) and waits until it listens. */
  const forward = async (target: string, remote: number, env: NodeJS.ProcessEnv = {}) => {
    const local = await freePort();
    const pf = startKubectlEnv(
      env,
      k.kubeconfig,
      'port-forward',
      target,
      `${local}:${remote}`,
      '--address',
      '127.0.0.1',
    );
    background.push(pf);
    await until('port-forward listening', async () =>
      pf.stdout().includes('Forwarding from') ? true : undefined,
    );
    return { local, pf };
  };

  it('kubectl port-forward reaches the pod, two connections at once', async () => {
    const { local, pf } = await forward('pod/spring', 8080);
    const curl = await run('curl', ['-sS', '-m', '10', `http://127.0.0.1:${local}/`]);
    assert.equal(curl.code, 0, curl.stderr);
    assert.equal(curl.stdout.trim(), 'spring-server 1.0 on spring');
    // Connection A sends half a request and waits; B is served meanwhile; then A completes.
    const a = await connected(local);
    a.write('GET / HTTP/1.1\r\nHost: spring\r\n');
    const b = await connected(local);
    const answerB = await exchange(b, 'GET / HTTP/1.1\r\nHost: spring\r\nConnection: close\r\n\r\n').catch(
      (err: Error) => {
        throw new Error(`connection B: ${err.message}; kubectl port-forward said: ${pf.stderr()}`);
      },
    );
    assert.match(answerB, /^HTTP\/1\.1 200/, `kubectl port-forward said: ${pf.stderr()}`);
    assert.match(answerB, /spring-server 1\.0 on spring/);
    const answerA = await exchange(a, 'Connection: close\r\n\r\n').catch((err: Error) => {
      // Seen once on a loaded machine (EPIPE: kubectl had closed A); what kubectl said of it.
      throw new Error(`connection A: ${err.message}; kubectl port-forward said: ${pf.stderr()}`);
    });
    assert.match(answerA, /^HTTP\/1\.1 200/);
    assert.match(answerA, /spring-server 1\.0 on spring/);
    assert.equal(pf.child.exitCode, null, pf.stderr());
    await pf.stop();
  });

  it('kubectl port-forward reaches a port the container binds to 127.0.0.1 only', async () => {
    // As the kubelet, the connection is made inside the pod's network namespace: a port
    // bound to the pod's localhost (an admin or debug port) is reachable too.
    const serve = await kubectl(
      'exec',
      'ticker',
      '--',
      'sh',
      '-c',
      'mkdir -p /tmp/www && echo local-only > /tmp/www/index.html && httpd -p 127.0.0.1:7777 -h /tmp/www',
    );
    assert.equal(serve.code, 0, serve.stderr);
    const { local, pf } = await forward('pod/ticker', 7777);
    const curl = await run('curl', ['-sS', '-m', '10', `http://127.0.0.1:${local}/`]);
    assert.equal(curl.code, 0, curl.stderr + pf.stderr());
    assert.equal(curl.stdout.trim(), 'local-only');
    await pf.stop();
  });

  it('kubectl port-forward over plain SPDY (websockets off) reaches the pod too', async () => {
    const { local, pf } = await forward('pod/spring', 8080, { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' });
    const answers = await Promise.all(
      [1, 2].map(() => run('curl', ['-sS', '-m', '10', `http://127.0.0.1:${local}/`])),
    );
    for (const a of answers) assert.equal(a.stdout.trim(), 'spring-server 1.0 on spring', a.stderr);
    await pf.stop();
  });

  it('kubectl top nodes and top pods show plausible figures', async () => {
    const top = await until('kubectl top nodes', async () => {
      const r = await kubectl('top', 'nodes', '--no-headers');
      return r.code === 0 && r.stdout.includes(NODE) ? r.stdout : undefined;
    });
    assert.match(top, new RegExp(`^${NODE}\\s+\\d+m\\s+\\d+%\\s+\\d+Mi\\s+\\d+%`, 'm'));
    // Node memory against free(1)'s "used", both sampled now.
    const raw = await kubectl('get', '--raw', `/apis/metrics.k8s.io/v1beta1/nodes/${NODE}`);
    assert.equal(raw.code, 0, raw.stderr);
    const metrics = JSON.parse(raw.stdout) as { usage: { cpu: string; memory: string }; window: string };
    const free = await run('free', ['-b']);
    const used = Number(/^Mem:\s+\d+\s+(\d+)/m.exec(free.stdout)![1]);
    const memory = Number(/^(\d+)Ki$/.exec(metrics.usage.memory)![1]) * 1024;
    assert.ok(Math.abs(memory - used) <= used * 0.1, `node memory ${memory} vs free's used ${used}`);
    const nanocores = Number(/^(\d+)n$/.exec(metrics.usage.cpu)![1]);
    const cores = Number((await run('nproc', [])).stdout.trim());
    assert.ok(nanocores > 0 && nanocores <= cores * 1e9 * 1.05, `node cpu ${nanocores}n of ${cores} cores`);
    assert.match(metrics.window, /^\d+(\.\d+)?s$/);

    const pods = await until('kubectl top pods', async () => {
      const r = await kubectl('top', 'pods', '--no-headers');
      return r.code === 0 && r.stdout.includes('spring') && r.stdout.includes('ticker')
        ? r.stdout
        : undefined;
    });
    const spring = new RegExp(`^spring\\s+(\\d+)m\\s+(\\d+)Mi`, 'm').exec(pods);
    assert.ok(spring, pods);
    assert.ok(Number(spring[2]) >= 5, `a JVM uses megabytes: ${spring[0]}`);
    assert.match(pods, /^ticker\s+\d+m\s+\d+Mi/m);
    const podMetrics = JSON.parse(
      (await kubectl('get', '--raw', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/ticker')).stdout,
    ) as { containers: { name: string; usage: { cpu: string; memory: string } }[] };
    assert.deepEqual(
      podMetrics.containers.map((c) => c.name),
      ['ticker'],
    );
    // Unknown objects are 404 NotFound.
    const missing = await kubectl(
      'get',
      '--raw',
      '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/nope',
    );
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /NotFound|not found/);
  });

  it('kubectl describe shows conditions and events of pods, nodes, deployments and services', async () => {
    const pod = await kubectl('describe', 'pod', 'spring');
    assert.equal(pod.code, 0, pod.stderr);
    assert.match(pod.stdout, /^Conditions:\n(.*\n)*?\s+Ready\s+True/m);
    assert.match(
      pod.stdout,
      /^Events:\n(.*\n)*?.*Scheduled.*default-scheduler.*Successfully assigned default\/spring/m,
    );
    assert.match(pod.stdout, /Normal\s+Started\s+.*kubelet/);
    const node = await kubectl('describe', 'node', NODE);
    assert.equal(node.code, 0, node.stderr);
    assert.match(node.stdout, /^Conditions:\n(.*\n)*?\s+Ready\s+True\s/m);
    assert.match(node.stdout, /^Events:\n(.*\n)*?.*Starting.*kubelet/m);
    const deploy = await until('the deployment available', async () => {
      const r = await kubectl('describe', 'deployment', 'sleeper');
      return /Available\s+True/.test(r.stdout) ? r.stdout : undefined;
    });
    assert.match(deploy, /^Conditions:\n(.*\n)*?\s+Progressing\s+True/m);
    assert.match(deploy, /ScalingReplicaSet\s+.*deployment-controller\s+Scaled up replica set sleeper-/);
    const svc = await kubectl('describe', 'service', 'sleeper');
    assert.equal(svc.code, 0, svc.stderr);
    assert.match(svc.stdout, /^Selector:\s+app=sleeper$/m);
    assert.match(svc.stdout, /^Events:/m);
  });

  it('after the control process restarts, the tunnel comes back and logs/exec work again', async () => {
    await k.stop();
    await until('the agent noticed', async () =>
      /"agent tunnel closed"/.test(agent!.logs()) ? true : undefined,
    );
    k = await startK8tsServer({ dataDir, args: ['--cluster-cidr', clusterCIDR, '--port', String(port)] });
    assert.equal(Number(new URL(k.url).port), port);
    const logs = await until(
      'kubectl logs through the new tunnel',
      async () => {
        const r = await kubectl('logs', 'spring');
        return r.code === 0 ? r.stdout : undefined;
      },
      90_000,
    );
    assert.match(logs, /Started spring-server 1\.0 on port 8080/);
    const exec = await kubectl('exec', 'ticker', '--', 'echo', 'back');
    assert.equal(exec.code, 0, exec.stderr);
    assert.equal(exec.stdout, 'back\n');
    assert.equal((agent!.logs().match(/"agent tunnel connected"/g) ?? []).length >= 2, true);
  });
});
