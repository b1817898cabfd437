/**
 * Starts `k8ts hollow-nodes` (agent/hollow/) as a child process for tests and benchmarks:
 * `count` simulated nodes joined to a server with its node token, from cli.ts through tsx
 * (or the built CLI), with a fresh data dir.
 *
 *   const hollow = await startHollowNodesProcess({ server: k.url, token: k.nodeToken(), count: 20 });
 *   after(() => hollow.stop());
 *
 * Readiness is the `N nodes joined` line the CLI prints once every Node is registered.
 * stop() signals exactly the child's PID (SIGTERM, SIGKILL after 10 s) and removes the data
 * dir it made.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliCommand } from './k8ts-server.js';

export interface HollowNodesProcessOptions {
  server: string;
  token: string;
  count: number;
  /** Extra flags (e.g. `['--job-pod-run-time', '1s']`). */
  args?: string[];
  /** Default: a fresh temporary dir, removed by stop(). */
  dataDir?: string;
  /** Run the built CLI (dist/cli.js) instead of cli.ts through tsx. Default false. */
  built?: boolean;
  /** Default 60 s plus 50 ms per node. */
  readyTimeoutMs?: number;
  /** Extra node flags for the child (e.g. `['--max-old-space-size=4096']`). */
  nodeArgs?: string[];
}

export interface HollowNodesProcess {
  pid: number;
  dataDir: string;
  /** What it printed to stdout so far (progress and memory lines). */
  stdout(): string;
  /** Its stderr so far (JSON log lines). */
  logs(): string;
  /** SIGUSR1 (a memory line), then resolves with that line once printed. */
  reportMemory(timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code (or signal name) once it has exited. */
  exited: Promise<number | string>;
  /** SIGTERM, wait (SIGKILL after 10 s), remove the data dir if made here; resolves with the exit code. Idempotent. */
  stop(): Promise<number | string>;
}

/** The memory lines of hollow-nodes' stdout (`hollow-nodes: 20 nodes, 0 pods: RSS ...`). */
export const MEMORY_LINE = /^hollow-nodes: \d+ nodes, \d+ pods: RSS .*$/gm;

export async function startHollowNodesProcess(opts: HollowNodesProcessOptions): Promise<HollowNodesProcess> {
  const ownDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'k8ts-hollow-'));
  const cli = cliCommand(!opts.built);
  const child = spawn(
    cli.cmd,
    [
      ...(opts.nodeArgs ?? []),
      ...cli.args,
      'hollow-nodes',
      '--server',
      opts.server,
      '--token',
      opts.token,
      '--count',
      String(opts.count),
      '--data-dir',
      dataDir,
      ...(opts.args ?? []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], cwd: cli.cwd },
  );
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let stdout = '';
  let stderr = '';
  // stderr can be long (a log line per warning): only its last 1 MiB is kept.
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-(1 << 20))));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  const timeoutMs = opts.readyTimeoutMs ?? 60_000 + 50 * opts.count;
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new Error(`hollow nodes not registered within ${timeoutMs} ms:\n${stdout}\n${stderr.slice(-5000)}`),
        ),
      timeoutMs,
    );
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (/nodes joined \S+/.test(stdout)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(
        new Error(
          `k8ts hollow-nodes exited with ${code} before its nodes registered:\n${stdout}\n${stderr.slice(-5000)}`,
        ),
      );
    });
  });
  let stopped: Promise<number | string> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      process.removeListener('exit', killOnExit);
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
      return exited;
    })());
  try {
    await ready;
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    pid: child.pid!,
    dataDir,
    stdout: () => stdout,
    logs: () => stderr,
    reportMemory: async (ms = 10_000) => {
      const seen = (stdout.match(MEMORY_LINE) ?? []).length;
      child.kill('SIGUSR1');
      const deadline = Date.now() + ms;
      for (;;) {
        const lines = stdout.match(MEMORY_LINE) ?? [];
        if (lines.length > seen) return lines.at(-1)!;
        if (Date.now() > deadline)
          throw new Error(`no memory line within ${ms} ms after SIGUSR1:\n${stdout}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    exited,
    stop,
  };
}
