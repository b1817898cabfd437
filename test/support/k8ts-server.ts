/**
 * Starts a real `k8ts server` (the built CLI, `dist/cli.js`) for end-to-end tests, on a
 * free port with a fresh data dir, and runs the real `kubectl` against it.
 *
 *   const k = await startK8tsServer();
 *   after(() => k.stop());
 *   const r = await k.kubectl('get', 'ns');
 *
 * Readiness is the "listening on" line the CLI prints once the port is bound and the
 * kubeconfig written — no sleeping. stop() signals exactly the server's PID and removes
 * the data dir.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { hostMounter, mountPointsUnder } from '../../agent/kubelet/pods/mount.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configuredFetch, type FetchInit } from '../../api/client/fetch.js';
import { loadKubeconfig } from '../../api/client/kubeconfig.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const CLI_SOURCE = fileURLToPath(new URL('../../cli.ts', import.meta.url));
const REPO = fileURLToPath(new URL('../..', import.meta.url));

/**
 * How to run the `k8ts` CLI: the built one (`node dist/cli.js`, what users run) or, for
 * tests of parts built since the last `npm run build`, the source through tsx.
 */
export function cliCommand(fromSource = false): { cmd: string; args: string[]; cwd: string } {
  return fromSource
    ? { cmd: process.execPath, args: ['--import', 'tsx', CLI_SOURCE], cwd: REPO }
    : { cmd: process.execPath, args: [CLI], cwd: REPO };
}

export interface K8tsServer {
  /** `https://127.0.0.1:<port>` (`http://` with `--insecure-http`). */
  url: string;
  /**
   * fetch() as the admin of the written kubeconfig (its CA and client certificate), for
   * raw HTTP checks: `await k.fetch('/api/v1/namespaces')` (a path or a whole URL).
   */
  fetch(pathOrUrl: string | URL, init?: FetchInit): Promise<Response>;
  /** The node join token the server wrote (`DATA_DIR/node-token`). */
  nodeToken(): string;
  dataDir: string;
  kubeconfig: string;
  pid: number;
  /** Runs kubectl with this cluster's kubeconfig and a private cache dir; never rejects on a non-zero exit. */
  kubectl(...args: string[]): Promise<CommandResult>;
  /**
   * Runs kubectl like kubectl() and resolves with its stdout; fails the test (an
   * AssertionError naming the command and its stderr) on a non-zero exit.
   */
  kubectlOk(...args: string[]): Promise<string>;
  /** Like kubectl(), writing `stdin` to it. */
  kubectlIn(stdin: string, ...args: string[]): Promise<CommandResult>;
  /**
   * Starts kubectl without waiting for it (for `get -w`): `output()` is what it printed so
   * far, `done` its result.
   */
  kubectlStart(...args: string[]): {
    output(): { stdout: string; stderr: string };
    done: Promise<CommandResult>;
  };
  /** The server's stderr so far (JSON log lines). */
  logs(): string;
  /** SIGTERM, wait for exit (SIGKILL after 10 s), remove the data dir. Idempotent. */
  stop(): Promise<void>;
}

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface K8tsServerOptions {
  /** Extra CLI flags (e.g. `['--datastore', 'memory']`). */
  args?: string[];
  /** Reuse a data dir (e.g. to test restarts); it is then not removed by stop(). */
  dataDir?: string;
  readyTimeoutMs?: number;
  /** Run the local node agent too (no `--disable-agent`); pass `--node-name`/`--node-ip` in `args`. Default false. */
  agent?: boolean;
  /** Run cli.ts through tsx instead of dist/cli.js. Default false. */
  fromSource?: boolean;
  /** Flags for node itself, before the script (e.g. `['--cpu-prof']`). */
  nodeArgs?: string[];
}

/**
 * How long the harness lets one kubectl run (ms): 30 s, or for a command given its own
 * `--timeout=D` (`kubectl wait`, `rollout status`; D as `240s`, `2m`) that deadline plus
 * 30 s, so kubectl reports its own timeout instead of being killed before it.
 */
export function kubectlDeadlineMs(args: string[]): number {
  const given = args.map((a) => /^--timeout=(\d+)(s|m)$/.exec(a)).find((m) => m);
  if (!given) return 30_000;
  return Number(given[1]) * (given[2] === 'm' ? 60_000 : 1000) + 30_000;
}

/** Runs a command with a deadline; resolves with its exit code and output. */
export function run(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; stdin?: string; timeoutMs?: number } = {},
): Promise<CommandResult> {
  return start(cmd, args, opts).done;
}

/** Starts a command with a deadline; its output so far is readable while it runs. */
export function start(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; stdin?: string; timeoutMs?: number } = {},
): { output(): { stdout: string; stderr: string }; done: Promise<CommandResult> } {
  const child = spawn(cmd, args, { env: opts.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CommandResult>((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  // A command that exits without reading its input (`ip`, `docker ps`) closes the pipe
  // first: the EPIPE of that write is no failure of the command, and unhandled it would
  // be thrown out of the test as an uncaught exception.
  child.stdin.on('error', () => {});
  child.stdin.end(opts.stdin ?? '');
  return { output: () => ({ stdout, stderr }), done };
}

/**
 * Builds the test images named (`scripts/build-images.sh busybox pause`; none: all of
 * them) into the machine's Docker. Fails the test with the script's stderr on a non-zero
 * exit or after `timeoutMs` (default 15 min: a cold build pulls base layers).
 */
export async function buildImages(names: string[], timeoutMs = 900_000): Promise<void> {
  const r = await run('bash', [join(REPO, 'scripts/build-images.sh'), ...names], { timeoutMs });
  assert.equal(r.code, 0, r.stderr);
}

/**
 * Runs every cleanup step in order, each even when one before it failed, so nothing of a
 * test stays behind; then rejects with the first failure, if any. A step may be sync or
 * async; `undefined` results (an agent never started: `() => agent?.stop()`) are fine.
 */
export async function cleanUp(steps: readonly (() => unknown)[]): Promise<void> {
  const failures: unknown[] = [];
  for (const step of steps)
    await Promise.resolve()
      .then(step)
      .catch((err: unknown) => failures.push(err));
  if (failures.length > 0) throw failures[0];
}

export async function startK8tsServer(opts: K8tsServerOptions = {}): Promise<K8tsServer> {
  const ownDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'k8ts-e2e-'));
  const cacheDir = mkdtempSync(join(tmpdir(), 'k8ts-kubectl-cache-'));
  const cli = cliCommand(opts.fromSource);
  const child: ChildProcess = spawn(
    cli.cmd,
    [
      ...(opts.nodeArgs ?? []),
      ...cli.args,
      'server',
      '--port',
      '0',
      ...(opts.agent ? [] : ['--disable-agent']),
      '--data-dir',
      dataDir,
      // Agents of a test share the machine's own network namespace unless they run on
      // simulated hosts (simulated-hosts.ts), and tests change no kernel state there: the
      // cross-host backends are for tests that ask for them.
      ...((opts.args ?? []).includes('--flannel-backend') ? [] : ['--flannel-backend', 'none']),
      ...(opts.args ?? []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], cwd: cli.cwd },
  );
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new Error(
            `k8ts server not ready within ${opts.readyTimeoutMs ?? 20_000} ms:\n${stdout}\n${stderr}`,
          ),
        ),
      opts.readyTimeoutMs ?? 20_000,
    );
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = /listening on (\S+)/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`k8ts server exited with ${code} before it was ready:\n${stdout}\n${stderr}`));
    });
  });
  const kubeconfig = join(dataDir, 'kubeconfig.yaml');
  const env = { ...process.env, KUBECONFIG: kubeconfig };
  const adminFetch = configuredFetch(loadKubeconfig(kubeconfig).config);
  let stopped: Promise<void> | undefined;
  return {
    url,
    fetch: (p, init) => adminFetch(String(p).startsWith('/') ? url + String(p) : p, init),
    nodeToken: () => readFileSync(join(dataDir, 'node-token'), 'utf8').trim(),
    dataDir,
    kubeconfig,
    pid: child.pid!,
    kubectl: (...args) =>
      run('kubectl', ['--cache-dir', cacheDir, ...args], { env, timeoutMs: kubectlDeadlineMs(args) }),
    kubectlOk: async (...args) => {
      const r = await run('kubectl', ['--cache-dir', cacheDir, ...args], {
        env,
        timeoutMs: kubectlDeadlineMs(args),
      });
      assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    },
    kubectlIn: (stdin, ...args) => run('kubectl', ['--cache-dir', cacheDir, ...args], { env, stdin }),
    kubectlStart: (...args) => start('kubectl', ['--cache-dir', cacheDir, ...args], { env }),
    logs: () => stderr,
    stop: () =>
      (stopped ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(timer);
        }
        process.removeListener('exit', killOnExit);
        rmSync(cacheDir, { recursive: true, force: true });
        if (ownDir) {
          // The local agent's pods keep their Secret and projected volumes' tmpfs mounted
          // (as a kubelet's stay while containers run): unmounted before the removal.
          const mounts = existsSync(dataDir)
            ? await mountPointsUnder(hostMounter, realpathSync(dataDir)).catch(() => [])
            : [];
          for (const m of mounts) await hostMounter.unmount(m).catch(() => undefined);
          rmSync(dataDir, { recursive: true, force: true });
        }
      })()),
  };
}
