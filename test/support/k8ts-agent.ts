/**
 * Starts a real `k8ts agent` process for end-to-end tests, and removes what a test node
 * leaves in Docker.
 *
 *   const agent = await startK8tsAgent({ server: k.url, token, nodeName: 'e2e-b', nodeIP: '127.0.0.2' });
 *   after(async () => { await agent.stop(); await removeNodeFromDocker('e2e-b'); });
 *
 * Readiness is the "k8ts agent <node> joined <url>" line the CLI prints once the Node is
 * registered. stop() signals exactly the agent's PID (SIGTERM, as a user would) and
 * removes the data dir it made; containers and networks stay, as they do for a real
 * agent: removeNodeFromDocker() removes everything labelled `io.k8ts.node=<node>`.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { hostMounter, mountPointsUnder } from '../../agent/kubelet/pods/mount.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeClusterCIDR } from './cluster-cidr.js';
import { cliCommand, run, startK8tsServer, type K8tsServer } from './k8ts-server.js';

export interface K8tsAgentOptions {
  server: string;
  /** The join token; omit to start from the node credential stored in `dataDir`. */
  token?: string;
  nodeName: string;
  nodeIP: string;
  /** Default: a fresh temporary dir, removed by stop(). */
  dataDir?: string;
  /** Run cli.ts through tsx instead of dist/cli.js. Default false. */
  fromSource?: boolean;
  /** Extra flags (e.g. `['--log-level', 'debug']`). */
  args?: string[];
  readyTimeoutMs?: number;
  /** A command prefix the agent runs under (a simulated host's `nsenter --net=...`). */
  wrapper?: string[];
  /** Extra environment (e.g. `DOCKER_HOST` of a simulated host's engine). */
  env?: Record<string, string>;
}

export interface K8tsAgent {
  pid: number;
  dataDir: string;
  /** The agent's stderr so far (JSON log lines). */
  logs(): string;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  exited: Promise<number | string>;
  /** SIGTERM, wait for exit (SIGKILL after 10 s), remove the data dir if it made it. Idempotent. */
  stop(): Promise<number | string>;
}

export async function startK8tsAgent(opts: K8tsAgentOptions): Promise<K8tsAgent> {
  const ownDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'k8ts-e2e-agent-'));
  const cli = cliCommand(opts.fromSource);
  const wrapper = opts.wrapper ?? [];
  const child = spawn(
    wrapper[0] ?? cli.cmd,
    [
      ...(wrapper.length > 0 ? [...wrapper.slice(1), cli.cmd] : []),
      ...cli.args,
      'agent',
      '--server',
      opts.server,
      ...(opts.token !== undefined ? ['--token', opts.token] : []),
      '--node-name',
      opts.nodeName,
      '--node-ip',
      opts.nodeIP,
      '--data-dir',
      dataDir,
      ...(opts.args ?? []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], cwd: cli.cwd, env: { ...process.env, ...opts.env } },
  );
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  const timeoutMs = opts.readyTimeoutMs ?? 30_000;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`k8ts agent not joined within ${timeoutMs} ms:\n${stdout}\n${stderr}`)),
      timeoutMs,
    );
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (/joined \S+/.test(stdout)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`k8ts agent exited with ${code} before it joined:\n${stdout}\n${stderr}`));
    });
  });
  let stopped: Promise<number | string> | undefined;
  return {
    pid: child.pid!,
    dataDir,
    logs: () => stderr,
    exited,
    stop: () =>
      (stopped ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(timer);
        }
        process.removeListener('exit', killOnExit);
        if (ownDir) {
          // The tmpfs of its pods' Secret and projected volumes stay mounted after the
          // agent (as a kubelet's do, while its containers run): unmounted before the removal.
          const mounts = existsSync(dataDir)
            ? await mountPointsUnder(hostMounter, realpathSync(dataDir)).catch(() => [])
            : [];
          for (const m of mounts) await hostMounter.unmount(m).catch(() => undefined);
          rmSync(dataDir, { recursive: true, force: true });
        }
        return exited;
      })()),
  };
}

/** What startServerAndAgent() starts. */
export interface ServerAndAgentOptions {
  nodeName: string;
  nodeIP: string;
  /** Extra `k8ts server` flags; `--cluster-cidr` (a free one, freeClusterCIDR()) is added. */
  serverArgs?: string[];
  /** Extra `k8ts agent` flags (e.g. `['--resolv-conf', path]`). */
  agentArgs?: string[];
}

/**
 * A `k8ts server` (a free `--cluster-cidr`, 60 s to be ready) and one `k8ts agent` joined
 * to it with the server's node token: the one-node cluster of most end-to-end tests. The
 * caller stops both and removes the node's containers (removeNodeFromDocker); when the
 * agent does not join, the server is stopped here before the error is rethrown.
 */
export async function startServerAndAgent(
  opts: ServerAndAgentOptions,
): Promise<{ k: K8tsServer; agent: K8tsAgent }> {
  const k = await startK8tsServer({
    readyTimeoutMs: 60_000,
    args: [...(opts.serverArgs ?? []), '--cluster-cidr', await freeClusterCIDR()],
  });
  try {
    const agent = await startK8tsAgent({
      server: k.url,
      token: k.nodeToken(),
      nodeName: opts.nodeName,
      nodeIP: opts.nodeIP,
      ...(opts.agentArgs ? { args: opts.agentArgs } : {}),
    });
    return { k, agent };
  } catch (err) {
    await k.stop();
    throw err;
  }
}

/**
 * Removes every container and network labelled `io.k8ts.node=<nodeName>` (what a test node
 * left behind): app containers before the sandboxes whose namespaces they join, then the
 * networks.
 */
export async function removeNodeFromDocker(nodeName: string): Promise<void> {
  const filter = `label=io.k8ts.node=${nodeName}`;
  const listed = (
    await run('docker', ['ps', '-a', '--filter', filter, '--format', '{{.ID}} {{.Label "io.k8ts.type"}}'])
  ).stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' ') as [string, string | undefined]);
  const containers = [
    ...listed.filter(([, type]) => type !== 'podsandbox'),
    ...listed.filter(([, type]) => type === 'podsandbox'),
  ].map(([id]) => id);
  if (containers.length > 0) await run('docker', ['rm', '-f', ...containers]);
  const networks = (await run('docker', ['network', 'ls', '-q', '--filter', filter])).stdout
    .split('\n')
    .filter(Boolean);
  if (networks.length > 0) await run('docker', ['network', 'rm', ...networks]);
}
