/**
 * A containerd with its CRI plugin inside a simulated host (simulated-hosts.ts), for
 * `k8ts agent --runtime containerd` in tests and benchmarks: its own root, state, socket,
 * config and CNI conf dir under `<host dir>/cri` (the host's own containerd, which serves its
 * dockerd with the CRI plugin off, is left alone), Debian's CNI plugins from /usr/lib/cni,
 * `sandbox_image` k8ts/pause:1.0 and the streaming server on 127.0.0.1 of the host's
 * namespace (where the agent that proxies it runs), the images imported from the
 * machine's Docker engine into `k8s.io`, and registry hosts from `certsDir` (CRI's
 * `registry.config_path`: `<host>/hosts.toml`, see plainHttpRegistry()).
 *
 *   const ctd = new HostContainerd(lan.hosts[1]);
 *   await ctd.start();
 *   // k8ts agent --runtime containerd --container-runtime-endpoint ctd.endpoint --cni-conf-dir ctd.confDir
 *   await ctd.stop();   // every sandbox removed through the CRI, containerd and its shims stopped by PID
 *
 * What this VM needs (as cri/containerd/containerd.test.ts's): `restrict_oom_score_adj`,
 * runc's state under the state dir, sandboxes' network namespaces mounted under it too.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ContainerdRuntime } from '../../cri/containerd/runtime.js';
import { isCriError } from '../../cri/index.js';
import { SAMPLE_IMAGES, type SimulatedHost } from './simulated-hosts.js';
import { untilTruthy } from './wait.js';

/** Debian's containernetworking-plugins. */
export const CNI_BIN_DIR = '/usr/lib/cni';

/** A containerd with its CRI plugin, run inside simulated host `h` (see the file comment). */
export class HostContainerd {
  readonly dir: string;
  readonly sock: string;
  readonly confDir: string;
  /** The CRI's `registry.config_path`: one `<host[:port]>/hosts.toml` per registry. */
  readonly certsDir: string;
  private child: ChildProcess | undefined;

  /**
   * @param h the simulated host whose namespace it runs in; its dirs go under `h.dir/cri`.
   * @param images what start() imports from the machine's Docker engine into `k8s.io`.
   */
  constructor(
    private readonly h: SimulatedHost,
    private readonly images: string[] = SAMPLE_IMAGES,
  ) {
    this.dir = join(h.dir, 'cri');
    this.sock = join(this.dir, 'c.sock');
    this.confDir = join(this.dir, 'net.d');
    this.certsDir = join(this.dir, 'certs.d');
  }

  /**
   * Lets the CRI pull from `host` (`127.0.0.1:<port>`) over plain HTTP: its hosts.toml under
   * certsDir (read by containerd at each pull, no restart).
   */
  plainHttpRegistry(host: string): void {
    mkdirSync(join(this.certsDir, host), { recursive: true });
    writeFileSync(
      join(this.certsDir, host, 'hosts.toml'),
      [
        `server = "http://${host}"`,
        `[host."http://${host}"]`,
        '  capabilities = ["pull", "resolve", "push"]',
        '',
      ].join('\n'),
    );
  }

  /** `unix://<dir>/c.sock`, for `--container-runtime-endpoint`. */
  get endpoint(): string {
    return `unix://${this.sock}`;
  }

  /**
   * Writes the config, starts containerd in the host's namespace, waits (30 s) for its CRI
   * and imports the images.
   * @throws Error when containerd exits or does not answer; execFileSync's when an image
   *   cannot be saved or imported.
   */
  async start(): Promise<void> {
    for (const d of ['root', 'state', 'net.d', 'certs.d']) mkdirSync(join(this.dir, d), { recursive: true });
    const config = join(this.dir, 'config.toml');
    writeFileSync(
      config,
      [
        'version = 2',
        `root = "${this.dir}/root"`,
        `state = "${this.dir}/state"`,
        '[grpc]',
        `  address = "${this.sock}"`,
        '[ttrpc]',
        `  address = "${this.sock}.ttrpc"`,
        '[debug]',
        '  address = ""',
        '[metrics]',
        '  address = ""',
        '[plugins."io.containerd.grpc.v1.cri"]',
        '  sandbox_image = "k8ts/pause:1.0"',
        // The streaming server listens in h2's namespace, where the agent that proxies it runs.
        '  stream_server_address = "127.0.0.1"',
        '  stream_server_port = "0"',
        '  restrict_oom_score_adj = true',
        '  netns_mounts_under_state_dir = true',
        '  [plugins."io.containerd.grpc.v1.cri".registry]',
        `    config_path = "${this.certsDir}"`,
        '  [plugins."io.containerd.grpc.v1.cri".cni]',
        `    bin_dir = "${CNI_BIN_DIR}"`,
        `    conf_dir = "${this.confDir}"`,
        '  [plugins."io.containerd.grpc.v1.cri".containerd]',
        '    snapshotter = "overlayfs"',
        '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
        '      runtime_type = "io.containerd.runc.v2"',
        '      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]',
        `        Root = "${this.dir}/state/runc"`,
        '',
      ].join('\n'),
    );
    await this.launch();
    const tar = join(this.dir, 'images.tar');
    execFileSync('docker', ['save', '-o', tar, ...this.images]);
    execFileSync('ctr', ['-a', this.sock, '-n', 'k8s.io', 'images', 'import', tar], { stdio: 'ignore' });
  }

  /**
   * A containerd restart with pods running: the daemon gets SIGTERM and is started again on
   * the same root and state; the containers keep running under their shims.
   */
  async restart(): Promise<void> {
    await this.stopDaemon();
    await this.launch();
  }

  /** Starts the daemon (config written) and waits 30 s for its CRI. */
  private async launch(): Promise<void> {
    const config = join(this.dir, 'config.toml');
    const log = openSync(join(this.dir, 'containerd.log'), 'a');
    this.child = spawn(this.h.nsenter[0]!, [...this.h.nsenter.slice(1), 'containerd', '--config', config], {
      stdio: ['ignore', log, log],
    });
    await untilTruthy(
      `the CRI of ${this.h.name}'s containerd answering`,
      async () => {
        const rt = await ContainerdRuntime.connect({ endpoint: this.endpoint, timeoutMs: 2000 }).catch(
          (err: unknown) => {
            if (this.child?.exitCode !== null)
              throw new Error(`containerd exited; see ${this.dir}/containerd.log`);
            if (!isCriError(err, 'Unavailable')) throw err;
            return undefined;
          },
        );
        await rt?.close();
        return rt !== undefined;
      },
      30_000,
      200,
    );
  }

  /** SIGTERM to the daemon (SIGKILL after 10 s), and its exit. */
  private async stopDaemon(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }

  /** Removes every sandbox (and so container), then stops containerd and its shims by PID. */
  async stop(): Promise<void> {
    if (this.child && this.child.exitCode === null) {
      const rt = await ContainerdRuntime.connect({ endpoint: this.endpoint, timeoutMs: 5000 }).catch(
        () => undefined,
      );
      if (rt) {
        for (const c of await rt.listContainers().catch(() => []))
          await rt.removeContainer(c.id).catch(() => {});
        for (const s of await rt.listPodSandbox().catch(() => [])) {
          await rt.stopPodSandbox(s.id).catch(() => {});
          await rt.removePodSandbox(s.id).catch(() => {});
        }
        await rt.close();
      }
    }
    await this.stopDaemon();
    // Shims of this containerd (they name its socket) outlive it.
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
        if (cmd.includes('containerd-shim') && cmd.includes(this.sock)) process.kill(Number(name), 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
}
