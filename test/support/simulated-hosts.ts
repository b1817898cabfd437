/**
 * Simulated hosts for tests and benchmarks of what crosses a network: each host is a
 * network namespace with its own containerd and `dockerd` (own root, state, exec root,
 * pidfile and socket) and, once the test starts one, its own `k8ts agent`. The hosts sit on
 * one L2 segment, a bridge, and the machine's own namespace (where the control process,
 * kubectl and the test run) is attached to that segment too:
 *
 *     root namespace                 k8ts-lan-<id>                  k8ts-h<id>-<i>
 *     198.18.N.1 (k8tsr<id>) ─veth─ up0 ┐                          ┌ eth0 198.18.N.11  dockerd, agent
 *                                       ├─ br0 ─ h<i> ─veth─ ... ──┤
 *                                       ┘                          └ eth0 198.18.N.12  dockerd, agent
 *
 * Why the bridge has a namespace of its own: with br_netfilter loaded (Docker loads it),
 * frames crossing a bridge pass the iptables FORWARD chain of the bridge's namespace, and
 * Docker's FORWARD policy in the machine's namespace is DROP. A bridge in a fresh namespace
 * meets empty tables, so nothing of the machine's own firewall is changed or relied on.
 *
 * Addresses come from 198.18.0.0/15 only (RFC 2544's benchmarking range), one /24 per
 * segment, chosen so that it overlaps no address or route of the machine. The hosts have
 * no default route: nothing they send can leave the machine.
 *
 *   const lan = await startSimulatedHosts({ count: 2 });
 *   after(() => lan.stop());
 *   lan.hosts[0].ip;                 // '198.18.N.11'
 *   await lan.hosts[0].docker(['ps']);
 *   await lan.hosts[0].exec(['ip', 'route']);
 *
 * Namespaces are entered with `nsenter --net=/var/run/netns/NAME`, not `ip netns exec`,
 * which remounts /sys and leaves dockerd without its cgroups ("Devices cgroup isn't
 * mounted"). stop() ends exactly the processes it started (by PID), removes the
 * containers of each host's engine, the namespaces, the interfaces and the temp dirs,
 * also after a failed start; a process exit handler does the same as a last resort.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, type CommandResult } from './k8ts-server.js';
import { untilTruthy } from './wait.js';

/** Images every host's engine gets (from the machine's engine, by `docker save | docker load`). */
export const SAMPLE_IMAGES = ['k8ts/pause:1.0', 'k8ts/busybox:1.0', 'spring-server:1.0'];

export interface SimulatedHostsOptions {
  /** How many hosts (1–20). */
  count: number;
  /** Images to copy into every host's engine; default SAMPLE_IMAGES. */
  images?: string[];
  /** Milliseconds to wait for each dockerd; default 60 000. */
  readyTimeoutMs?: number;
}

/** One simulated host. */
export interface SimulatedHost {
  /** `h1`, `h2`, ... */
  name: string;
  /** The network namespace (`/var/run/netns/<netns>`). */
  netns: string;
  /** The host's address on the segment (changed by reboot(newIP)). */
  ip: string;
  /** `unix://.../docker.sock`: the host's own engine, for DOCKER_HOST. */
  dockerHost: string;
  /** A directory of this host's, removed by stop(). */
  dir: string;
  /** The command prefix that runs a program inside the host's namespace. */
  nsenter: string[];
  /** Runs `argv` inside the host's namespace. Never rejects on a non-zero exit. */
  exec(
    argv: string[],
    opts?: { stdin?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv },
  ): Promise<CommandResult>;
  /** Runs the `docker` CLI against this host's engine. */
  docker(args: string[], opts?: { stdin?: string; timeoutMs?: number }): Promise<CommandResult>;
  /** Kills this host's dockerd and containerd (SIGKILL) and waits for them: a crashed engine. */
  killEngine(): Promise<void>;
  /** Starts the engine again with the same dirs (after killEngine()). */
  startEngine(): Promise<void>;
  /**
   * A reboot as the network sees it: the engine is killed, the namespace (with every
   * device, route and firewall rule in it) deleted and made again with the same wiring —
   * at `newIP` when given (an address of the segment; `ip` changes) — and the engine
   * started again on its old data root (its containers stopped, as after a power cycle).
   * The test stops and starts its agent around it.
   */
  reboot(newIP?: string): Promise<void>;
}

/** A segment of simulated hosts. */
export interface SimulatedHosts {
  hosts: SimulatedHost[];
  /** The machine's own address on the segment (where the control process is reached). */
  gatewayIP: string;
  /** The segment, e.g. `198.18.7.0/24`. */
  subnet: string;
  /** Removes everything (see the file comment). Idempotent. */
  stop(): Promise<void>;
}

/** Throws unless `r` succeeded, with the command's stderr. */
async function must(what: string, p: Promise<CommandResult>): Promise<CommandResult> {
  const r = await p;
  if (r.code !== 0) throw new Error(`${what} failed (${r.code}): ${r.stderr.trim() || r.stdout.trim()}`);
  return r;
}

/** A /24 of 198.18.0.0/15 that no address or route of the machine overlaps. */
async function freeSegment(): Promise<number> {
  const routes = (await run('ip', ['-4', 'route', 'show', 'table', 'all'])).stdout;
  const addrs = (await run('ip', ['-4', '-o', 'addr', 'show'])).stdout;
  const used = new Set<number>();
  for (const m of `${routes}\n${addrs}`.matchAll(/\b198\.(18|19)\.(\d+)\./g)) {
    if (m[1] === '18') used.add(Number(m[2]));
  }
  for (let i = 0; i < 50; i++) {
    const n = randomInt(1, 255);
    if (!used.has(n)) return n;
  }
  throw new Error('no free /24 in 198.18.0.0/16 for simulated hosts');
}

/**
 * Starts `opts.count` simulated hosts on one segment (see the file comment).
 * @throws Error naming the step that failed (after removing what was made).
 */
export async function startSimulatedHosts(opts: SimulatedHostsOptions): Promise<SimulatedHosts> {
  if (!(opts.count >= 1 && opts.count <= 20)) throw new Error('startSimulatedHosts: count must be 1-20');
  const id = randomBytes(3).toString('hex');
  const segment = await freeSegment();
  const prefix = `198.18.${segment}`;
  const lanNs = `k8ts-lan-${id}`;
  const rootIf = `k8tsr${id}`;
  // Short paths: unix socket paths are limited to 108 bytes.
  const base = mkdtempSync(join(tmpdir(), 'k8ts-sh-'));
  const children = new Set<ChildProcess>();
  const namespaces: string[] = [];
  const hosts: SimulatedHost[] = [];
  const engines = new Map<string, { dockerd?: ChildProcess; containerd?: ChildProcess }>();

  const spawnIn = (netns: string, argv: string[], log: string, env?: NodeJS.ProcessEnv): ChildProcess => {
    const child = spawn('nsenter', [`--net=/var/run/netns/${netns}`, ...argv], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: env ?? process.env,
      detached: false,
    });
    let text = '';
    child.stderr!.on('data', (d: Buffer) => {
      text += d.toString();
      if (text.length > 200_000) text = text.slice(-100_000);
      writeFileSync(log, text);
    });
    children.add(child);
    child.once('exit', () => children.delete(child));
    return child;
  };
  const killAndWait = async (child: ChildProcess | undefined): Promise<void> => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };

  let stopped: Promise<void> | undefined;
  const lastResort = () => {
    for (const c of children) c.kill('SIGKILL');
  };
  process.once('exit', lastResort);
  const stop = () =>
    (stopped ??= (async () => {
      for (const h of hosts) {
        // The engine's containers first (their shims would outlive dockerd otherwise).
        const ids = (await h.docker(['ps', '-aq'], { timeoutMs: 30_000 }).catch(() => undefined))?.stdout
          .split('\n')
          .filter(Boolean);
        if (ids && ids.length > 0)
          await h.docker(['rm', '-f', ...ids], { timeoutMs: 60_000 }).catch(() => {});
      }
      for (const e of engines.values()) {
        await killAndWait(e.dockerd);
        await killAndWait(e.containerd);
      }
      for (const c of [...children]) await killAndWait(c);
      for (const ns of namespaces) await run('ip', ['netns', 'del', ns]);
      await run('ip', ['link', 'del', rootIf]);
      process.removeListener('exit', lastResort);
      // Docker leaves mounts (overlay, netns files) under its dirs; unmount before removing.
      const mounts = (await run('sh', ['-c', `grep -o ' ${base}[^ ]*' /proc/mounts | sort -r`])).stdout
        .split('\n')
        .map((s) => s.trim())
        .filter(Boolean);
      for (const m of mounts) await run('umount', ['-l', m]);
      rmSync(base, { recursive: true, force: true });
    })());

  try {
    await must('ip netns add', run('ip', ['netns', 'add', lanNs]));
    namespaces.push(lanNs);
    const inLan = (args: string[]) => run('nsenter', [`--net=/var/run/netns/${lanNs}`, ...args]);
    await must('lan lo', inLan(['ip', 'link', 'set', 'lo', 'up']));
    await must('lan bridge', inLan(['ip', 'link', 'add', 'br0', 'type', 'bridge']));
    await must('lan bridge up', inLan(['ip', 'link', 'set', 'br0', 'up']));
    await must(
      'root veth',
      run('ip', ['link', 'add', rootIf, 'type', 'veth', 'peer', 'name', 'up0', 'netns', lanNs]),
    );
    await must('lan uplink', inLan(['ip', 'link', 'set', 'up0', 'master', 'br0', 'up']));
    await must('root address', run('ip', ['addr', 'add', `${prefix}.1/24`, 'dev', rootIf]));
    await must('root veth up', run('ip', ['link', 'set', rootIf, 'up']));

    for (let i = 1; i <= opts.count; i++) {
      const name = `h${i}`;
      const netns = `k8ts-h${id}-${i}`;
      const ip = `${prefix}.${10 + i}`;
      const dir = join(base, name);
      mkdirSync(dir, { recursive: true });
      namespaces.push(netns);
      const nsenter = ['nsenter', `--net=/var/run/netns/${netns}`];
      const inHost = (args: string[]) => run(nsenter[0]!, [...nsenter.slice(1), ...args]);
      const lanEnd = `h${i}`;
      /** Makes the namespace and its wiring (again, after a reboot), with address `addr`. */
      const plumb = async (addr: string) => {
        await must('ip netns add', run('ip', ['netns', 'add', netns]));
        await must(
          'host veth',
          inLan(['ip', 'link', 'add', lanEnd, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns]),
        );
        await must('lan port', inLan(['ip', 'link', 'set', lanEnd, 'master', 'br0', 'up']));
        await must('host lo', inHost(['ip', 'link', 'set', 'lo', 'up']));
        await must('host address', inHost(['ip', 'addr', 'add', `${addr}/24`, 'dev', 'eth0']));
        await must('host eth0 up', inHost(['ip', 'link', 'set', 'eth0', 'up']));
        // A host forwards for its pods, as a real one with Docker does.
        await must('host forwarding', inHost(['sysctl', '-qw', 'net.ipv4.ip_forward=1']));
      };
      await plumb(ip);

      const sock = join(dir, 'docker.sock');
      const containerdSock = join(dir, 'containerd.sock');
      const containerdConfig = join(dir, 'containerd.toml');
      writeFileSync(
        containerdConfig,
        [
          'version = 2',
          `root = "${join(dir, 'containerd')}"`,
          `state = "${join(dir, 'containerd-state')}"`,
          // The CRI plugin is not used by dockerd and would set up CNI of its own.
          'disabled_plugins = ["io.containerd.grpc.v1.cri"]',
          '[grpc]',
          `  address = "${containerdSock}"`,
          '[ttrpc]',
          `  address = "${containerdSock}.ttrpc"`,
          '',
        ].join('\n'),
      );
      const engine: { dockerd?: ChildProcess; containerd?: ChildProcess } = {};
      engines.set(name, engine);
      const startEngine = async () => {
        engine.containerd = spawnIn(
          netns,
          ['containerd', '--config', containerdConfig],
          join(dir, 'containerd.log'),
        );
        await untilTruthy(
          `containerd of ${name} answering`,
          () => run('test', ['-S', containerdSock]).then((r) => r.code === 0),
          opts.readyTimeoutMs ?? 60_000,
        );
        engine.dockerd = spawnIn(
          netns,
          [
            'dockerd',
            '--data-root',
            join(dir, 'docker'),
            '--exec-root',
            join(dir, 'exec'),
            '--pidfile',
            join(dir, 'docker.pid'),
            '-H',
            `unix://${sock}`,
            '--containerd',
            containerdSock,
            '--bridge',
            'none',
          ],
          join(dir, 'dockerd.log'),
        );
        await untilTruthy(
          `dockerd of ${name} answering`,
          () =>
            run('docker', ['-H', `unix://${sock}`, 'info', '--format', '{{.ServerVersion}}'], {
              timeoutMs: 10_000,
            }).then((r) => r.code === 0),
          opts.readyTimeoutMs ?? 60_000,
          200,
        );
      };
      await startEngine();
      const host: SimulatedHost = {
        name,
        netns,
        ip,
        dockerHost: `unix://${sock}`,
        dir,
        nsenter,
        exec: (argv, o = {}) => run(nsenter[0]!, [...nsenter.slice(1), ...argv], o),
        docker: (args, o = {}) => run('docker', ['-H', `unix://${sock}`, ...args], o),
        killEngine: async () => {
          for (const c of [engine.dockerd, engine.containerd]) {
            if (!c || c.exitCode !== null || c.signalCode !== null) continue;
            const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
            c.kill('SIGKILL');
            await exited;
          }
        },
        startEngine,
        reboot: async (newIP) => {
          // Power off: the containers die with the host (killing the engine alone would
          // leave them running under their shims).
          const running = (await host.docker(['ps', '-q'])).stdout.split('\n').filter(Boolean);
          if (running.length > 0) await host.docker(['kill', ...running], { timeoutMs: 60_000 });
          await host.killEngine();
          // What else still runs in the namespace (the containers' shims, which outlive
          // their containerd) was started by this host's engine: it goes down with the host.
          for (const pid of (await run('ip', ['netns', 'pids', netns])).stdout.split('\n').filter(Boolean)) {
            await run('kill', ['-9', pid]);
          }
          // The kernel state of the host goes with its namespace: devices, routes, firewall.
          // The namespace is freed only when nothing holds it any more; its veth goes now.
          await inLan(['ip', 'link', 'del', lanEnd]);
          await must('ip netns del', run('ip', ['netns', 'del', netns]));
          const addr = newIP ?? host.ip;
          if (newIP !== undefined && !newIP.startsWith(`${prefix}.`))
            throw new Error(`reboot: ${newIP} is not on the segment ${prefix}.0/24`);
          await plumb(addr);
          host.ip = addr;
          await startEngine();
        },
      };
      hosts.push(host);
    }
    const images = opts.images ?? SAMPLE_IMAGES;
    if (images.length > 0) {
      const archive = join(base, 'images.tar');
      await must('docker save', run('docker', ['save', '-o', archive, ...images], { timeoutMs: 120_000 }));
      for (const h of hosts) {
        await must(`docker load on ${h.name}`, h.docker(['load', '-i', archive], { timeoutMs: 120_000 }));
      }
      rmSync(archive, { force: true });
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { hosts, gatewayIP: `${prefix}.1`, subnet: `${prefix}.0/24`, stop };
}
