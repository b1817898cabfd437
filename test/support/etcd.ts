/**
 * A throwaway, real, single-member etcd on loopback for tests and benchmarks: Debian's
 * `etcd` binary, a fresh temp dir, free ports, and a guarantee that the member does not
 * outlive the process that started it.
 *
 *   const etcd = await startEtcd();
 *   after(() => etcd.stop());
 *   const store = await EtcdStore.open({ endpoints: etcd.endpoints });
 *
 * Nothing here sleeps to wait: readiness is polled on etcd's /health endpoint with a
 * deadline, and an early exit of the member (a port taken between our probe and etcd's
 * bind) is detected and retried with new ports.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface EtcdOptions {
  /**
   * etcd's `--max-request-bytes` (bytes). Default 4 MiB. etcd's own default is 1.5 MiB,
   * which is why Kubernetes caps an object at 1.5 MiB; the member must accept a 1.5 MiB
   * value plus its key and the txn framing, so tests run it with headroom.
   */
  maxRequestBytes?: number;
  /** etcd's `--quota-backend-bytes` (bytes): the db size at which writes are refused. Default 1 GiB. */
  quotaBackendBytes?: number;
  /** How long to wait for the member to report healthy (ms). Default 20 000. */
  readyTimeoutMs?: number;
}

export interface EtcdMember {
  /** Client URLs, e.g. `['http://127.0.0.1:40123']`. */
  endpoints: string[];
  /** The member's `--data-dir` (inside a temp dir that also holds `etcd.log`). */
  dataDir: string;
  /** The etcd process. stop() signals exactly this PID. */
  pid: number;
  /** SIGTERM, wait for exit (SIGKILL after 10 s), then remove the temp dir. Idempotent. */
  stop(): Promise<void>;
}

const MIB = 1024 * 1024;
const PORT_ATTEMPTS = 5;
const STOP_GRACE_MS = 10_000;

/**
 * Starts one etcd member with a fresh data dir, client and peer URLs on 127.0.0.1.
 * @throws Error when `etcd` is missing, exits during start-up five times in a row, or
 *   is not healthy within `readyTimeoutMs` (the message carries the tail of its log).
 */
export async function startEtcd(opts: EtcdOptions = {}): Promise<EtcdMember> {
  const root = mkdtempSync(join(tmpdir(), 'k8ts-etcd-'));
  let lastError: Error | undefined;
  try {
    for (let attempt = 1; attempt <= PORT_ATTEMPTS; attempt++) {
      const [clientPort, peerPort] = await freePorts(2);
      const started = await startOnce(root, attempt, clientPort!, peerPort!, opts);
      if (started.ok) return started.member;
      lastError = started.error;
      // Another process took a port between our probe and etcd's bind: try new ports.
      if (!started.portTaken) break;
    }
  } catch (err) {
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
  rmSync(root, { recursive: true, force: true });
  throw lastError ?? new Error('etcd did not start');
}

type StartResult = { ok: true; member: EtcdMember } | { ok: false; error: Error; portTaken: boolean };

async function startOnce(
  root: string,
  attempt: number,
  clientPort: number,
  peerPort: number,
  opts: EtcdOptions,
): Promise<StartResult> {
  const dataDir = join(root, `data-${attempt}`);
  const logPath = join(root, `etcd-${attempt}.log`);
  const clientUrl = `http://127.0.0.1:${clientPort}`;
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  const name = 'k8ts-test';
  const args = [
    `--name=${name}`,
    // One argument, so that the watchdog can recognise this very process by its cmdline.
    `--data-dir=${dataDir}`,
    `--listen-client-urls=${clientUrl}`,
    `--advertise-client-urls=${clientUrl}`,
    `--listen-peer-urls=${peerUrl}`,
    `--initial-advertise-peer-urls=${peerUrl}`,
    `--initial-cluster=${name}=${peerUrl}`,
    '--initial-cluster-state=new',
    `--initial-cluster-token=k8ts-${process.pid}-${clientPort}`,
    `--max-request-bytes=${opts.maxRequestBytes ?? 4 * MIB}`,
    `--quota-backend-bytes=${opts.quotaBackendBytes ?? 1024 * MIB}`,
    '--logger=zap',
    '--log-level=warn',
    '--log-outputs=stderr',
  ];
  const logFd = openSync(logPath, 'a');
  let child: ChildProcess;
  try {
    child = spawn('etcd', args, { stdio: ['ignore', logFd, logFd] });
  } finally {
    closeSync(logFd);
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
  const pid = child.pid;
  if (pid === undefined) {
    const err = await spawnError;
    return { ok: false, error: new Error(`cannot run etcd: ${err.message}`), portTaken: false };
  }

  // Whatever happens to this process, the member goes with it: 'exit' covers normal ends
  // and uncaught exceptions; the watchdog covers SIGKILL and signals without handlers.
  const onExit = (): void => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
    rmSync(root, { recursive: true, force: true });
  };
  process.on('exit', onExit);
  const watchdog = startWatchdog(pid, dataDir, root);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      process.off('exit', onExit);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }
      watchdog.kill('SIGKILL');
      rmSync(root, { recursive: true, force: true });
    })();
    return stopping;
  };

  const ready = await waitHealthy(clientUrl, exited, opts.readyTimeoutMs ?? 20_000);
  if (ready === 'healthy') {
    return { ok: true, member: { endpoints: [clientUrl], dataDir, pid, stop } };
  }
  const log = tail(logPath);
  await stopEarly(child, exited, watchdog, onExit);
  rmSync(dataDir, { recursive: true, force: true });
  if (ready === 'exited') {
    return {
      ok: false,
      error: new Error(`etcd exited during start-up:\n${log}`),
      portTaken: /address already in use/.test(log),
    };
  }
  return { ok: false, error: new Error(`etcd was not healthy in time:\n${log}`), portTaken: false };
}

async function stopEarly(
  child: ChildProcess,
  exited: Promise<unknown>,
  watchdog: ChildProcess,
  onExit: () => void,
): Promise<void> {
  process.off('exit', onExit);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await exited;
  watchdog.kill('SIGKILL');
}

/**
 * A `sh` that waits for this process to die (its stdin, a pipe from us, reaches EOF: no
 * polling, no PID reuse) and then stops the member and removes its temp dir. It signals
 * `pid` only if that PID still runs etcd with our data dir.
 */
function startWatchdog(pid: number, dataDir: string, root: string): ChildProcess {
  const script = [
    'cat >/dev/null',
    'alive() { grep -qaF -- "--data-dir=$2" "/proc/$1/cmdline" 2>/dev/null; }',
    'if alive "$1" "$2"; then kill -TERM "$1"; i=0',
    '  while alive "$1" "$2" && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done',
    '  alive "$1" "$2" && kill -KILL "$1"',
    'fi',
    'rm -rf -- "$3"',
  ].join('\n');
  const dog = spawn('sh', ['-c', script, 'k8ts-etcd-watchdog', String(pid), dataDir, root], {
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  // Neither the watchdog nor the pipe to it may keep this process alive.
  dog.unref();
  (dog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  dog.on('error', () => {});
  return dog;
}

/** Polls `<url>/health` until etcd reports healthy, the process exits, or the deadline. */
async function waitHealthy(
  url: string,
  exited: Promise<unknown>,
  timeoutMs: number,
): Promise<'healthy' | 'exited' | 'timeout'> {
  let hasExited = false;
  void exited.then(() => (hasExited = true));
  const deadline = Date.now() + timeoutMs;
  let delay = 10;
  while (Date.now() < deadline && !hasExited) {
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) });
      const body = (await res.json()) as { health?: unknown };
      if (res.ok && body.health === 'true') return 'healthy';
    } catch {
      // not listening yet
    }
    await Promise.race([new Promise((r) => setTimeout(r, delay)), exited]);
    delay = Math.min(delay * 2, 200);
  }
  return hasExited ? 'exited' : 'timeout';
}

/** Free TCP ports on 127.0.0.1 (bound to port 0, then released). */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const srv = createServer();
          srv.once('error', reject);
          srv.listen(0, '127.0.0.1', () => resolve(srv));
        }),
    ),
  );
  // All bound at once, so the n ports are distinct.
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

function tail(path: string, lines = 20): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** One member of a cluster started by startEtcdCluster. */
export interface EtcdClusterMember {
  name: string;
  /** Its client URL, e.g. `http://127.0.0.1:40123`. */
  endpoint: string;
  /** Its `--data-dir` (the bbolt db under member/snap, the WAL under member/wal). */
  dataDir: string;
  /** The running process's PID; undefined while it is killed. */
  pid: number | undefined;
  /** SIGKILL of exactly this member's process; resolves once it has exited. No-op when not running. */
  kill(): Promise<void>;
  /** Starts it again on its data dir and ports; resolves once it reports healthy (the cluster must have quorum with it). */
  restart(): Promise<void>;
  /**
   * Whether this member is the raft leader now (its Maintenance.Status through etcd's gRPC
   * gateway: `leader` equals its own member ID); false when it does not answer in 2 s.
   */
  isLeader(): Promise<boolean>;
}

/** A real etcd cluster of several members on loopback. */
export interface EtcdCluster {
  /** The client URLs of every member, in member order (what `--etcd-endpoints` takes). */
  endpoints: string[];
  members: EtcdClusterMember[];
  /** Kills every member still running and removes the temp dir. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts a cluster of `size` (default 3) etcd members on 127.0.0.1, each with its own data
 * dir under one temp dir, free client and peer ports, `--initial-cluster` naming them all;
 * resolves once every member reports healthy. As startEtcd, a watchdog per member process
 * ends it and removes the dir if this process dies. Members can be killed (SIGKILL) and
 * restarted to drill quorum loss.
 * @throws Error when a member exits during start-up or is not healthy within
 *   `readyTimeoutMs` (default 30 000; the message carries the tail of its log); all are
 *   stopped then.
 */
export async function startEtcdCluster(opts: EtcdOptions & { size?: number } = {}): Promise<EtcdCluster> {
  const size = opts.size ?? 3;
  const root = mkdtempSync(join(tmpdir(), 'k8ts-etcd-cluster-'));
  const ports = await freePorts(2 * size);
  const specs = Array.from({ length: size }, (_, i) => ({
    name: `m${i}`,
    clientUrl: `http://127.0.0.1:${ports[2 * i]}`,
    peerUrl: `http://127.0.0.1:${ports[2 * i + 1]}`,
    dataDir: join(root, `m${i}`),
    logPath: join(root, `m${i}.log`),
  }));
  const initialCluster = specs.map((s) => `${s.name}=${s.peerUrl}`).join(',');
  const token = `k8ts-${process.pid}-${ports[0]}`;
  type Running = { child: ChildProcess; exited: Promise<unknown>; watchdog: ChildProcess };
  const running = new Map<string, Running>();
  const onExit = (): void => {
    for (const r of running.values()) {
      try {
        process.kill(r.child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(root, { recursive: true, force: true });
  };
  process.on('exit', onExit);

  const spawnMember = (s: (typeof specs)[number]): Running => {
    const logFd = openSync(s.logPath, 'a');
    let child: ChildProcess;
    try {
      child = spawn(
        'etcd',
        [
          `--name=${s.name}`,
          `--data-dir=${s.dataDir}`,
          `--listen-client-urls=${s.clientUrl}`,
          `--advertise-client-urls=${s.clientUrl}`,
          `--listen-peer-urls=${s.peerUrl}`,
          `--initial-advertise-peer-urls=${s.peerUrl}`,
          `--initial-cluster=${initialCluster}`,
          '--initial-cluster-state=new',
          `--initial-cluster-token=${token}`,
          `--max-request-bytes=${opts.maxRequestBytes ?? 4 * MIB}`,
          `--quota-backend-bytes=${opts.quotaBackendBytes ?? 1024 * MIB}`,
          '--logger=zap',
          '--log-level=warn',
          '--log-outputs=stderr',
        ],
        { stdio: ['ignore', logFd, logFd] },
      );
    } finally {
      closeSync(logFd);
    }
    child.on('error', () => {});
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const r = { child, exited, watchdog: startWatchdog(child.pid!, s.dataDir, root) };
    running.set(s.name, r);
    void exited.then(() => {
      r.watchdog.kill('SIGKILL');
      if (running.get(s.name) === r) running.delete(s.name);
    });
    return r;
  };
  const healthy = async (s: (typeof specs)[number], r: Running) => {
    const ready = await waitHealthy(s.clientUrl, r.exited, opts.readyTimeoutMs ?? 30_000);
    if (ready !== 'healthy')
      throw new Error(
        `etcd member ${s.name} ${ready === 'exited' ? 'exited' : 'was not healthy in time'}:\n${tail(s.logPath)}`,
      );
  };
  const killMember = async (name: string) => {
    const r = running.get(name);
    if (!r) return;
    r.child.kill('SIGKILL');
    await r.exited;
  };
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      for (const s of specs) await killMember(s.name);
      process.off('exit', onExit);
      rmSync(root, { recursive: true, force: true });
    })());
  try {
    const started = specs.map((s) => spawnMember(s));
    // Members become healthy only once a quorum of them is up: all were spawned first.
    await Promise.all(specs.map((s, i) => healthy(s, started[i]!)));
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    endpoints: specs.map((s) => s.clientUrl),
    members: specs.map((s) => ({
      name: s.name,
      endpoint: s.clientUrl,
      dataDir: s.dataDir,
      get pid() {
        return running.get(s.name)?.child.pid;
      },
      kill: () => killMember(s.name),
      isLeader: async () => {
        try {
          const res = await fetch(`${s.clientUrl}/v3/maintenance/status`, {
            method: 'POST',
            body: '{}',
            signal: AbortSignal.timeout(2000),
          });
          const st = (await res.json()) as { header?: { member_id?: string }; leader?: string };
          return st.leader !== undefined && st.leader === st.header?.member_id;
        } catch {
          return false;
        }
      },
      restart: async () => {
        if (running.has(s.name)) return;
        await healthy(s, spawnMember(s));
      },
    })),
    stop,
  };
}
