/**
 * The containerd adapter's StreamingService. Logs are read from the CRI log file the
 * runtime writes (logs.ts), as the kubelet serves them (pkg/kubelet/kuberuntime,
 * ReadLogs), not through the runtime. Exec, attach and port-forward are the CRI remote
 * client's Exec/Attach/PortForward (k8s.io/cri-client, pkg/remote_runtime.go): each RPC
 * returns a URL of the runtime's streaming server, which streams.ts dials (WebSocket).
 * A refused port-forward shows as an error of the returned stream (the server reports it
 * after the connection is made), not as a rejection.
 */
import { PassThrough, type Duplex } from 'node:stream';
import type { ContainerLogOptions, StreamOptions, StreamSession } from '../api.js';
import { CriError } from '../errors.js';
import type { ContainerdContainers } from './container.js';
import { pumpLog } from './logs.js';
import type { ContainerdObjects } from './objects.js';
import type { ContainerdSandboxes } from './sandbox.js';
import { openPortForward, openStreamSession } from './streams.js';

/** StreamingService on one runtime connection. */
export class ContainerdStreaming {
  constructor(
    private readonly o: ContainerdObjects,
    private readonly sandboxes: ContainerdSandboxes,
    private readonly containers: ContainerdContainers,
  ) {}

  /**
   * The container's log as one stream of its output (stdout and stderr interleaved, as
   * written): `follow`, `timestamps`, `tailLines`, `sinceTime` (ns).
   * @throws CriError NotFound when the container is not this node's or has no log file.
   */
  async logs(containerId: string, opts: ContainerLogOptions): Promise<NodeJS.ReadableStream> {
    const st = await this.containers.status(containerId);
    if (st.logPath === '') {
      throw new CriError(
        'NotFound',
        `logs of container ${containerId}: it has no log file (no logDirectory)`,
      );
    }
    const out = new PassThrough();
    const running = async (): Promise<boolean> => {
      const now = await this.containers.status(containerId).catch(() => undefined);
      return now !== undefined && now.state === 'CONTAINER_RUNNING';
    };
    void pumpLog(st.logPath, opts, out, running).catch((err: unknown) => out.destroy(err as Error));
    return out;
  }

  /**
   * Exec of `cmd` in a running container, through the runtime's streaming server.
   * @throws CriError FailedPrecondition when the container is not running.
   */
  async exec(containerId: string, cmd: string[], opts: StreamOptions): Promise<StreamSession> {
    const what = `exec ${JSON.stringify(cmd)} in container ${containerId}`;
    await this.requireRunning(containerId);
    const r = await this.o.runtimeCall(
      'Exec',
      {
        containerId,
        cmd,
        tty: opts.tty,
        stdin: opts.stdin,
        stdout: opts.stdout,
        stderr: opts.stderr && !opts.tty,
      },
      what,
    );
    return openStreamSession(String(r.url), opts, what);
  }

  /**
   * Attach to a running container; the session's exitCode is the container's, or 0 when
   * the session ends while it runs on.
   * @throws CriError FailedPrecondition when the container is not running.
   */
  async attach(containerId: string, opts: StreamOptions): Promise<StreamSession> {
    const what = `attach to container ${containerId}`;
    await this.requireRunning(containerId);
    const r = await this.o.runtimeCall(
      'Attach',
      {
        containerId,
        tty: opts.tty,
        stdin: opts.stdin,
        stdout: opts.stdout,
        stderr: opts.stderr && !opts.tty,
      },
      what,
    );
    const session = await openStreamSession(String(r.url), opts, what);
    // The session ended (stdin closed, detached) while the container runs on: 0, as the
    // kubelet reports an attach that returns without error; else the container's exit code.
    const exitCode = session.exitCode
      .catch(() => 0)
      .then(async () => {
        // The runtime records the exit a moment after the output ends.
        for (let i = 0; ; i++) {
          const st = await this.containers.status(containerId);
          if (st.state !== 'CONTAINER_RUNNING') return st.exitCode;
          if (i >= 20) return 0;
          await new Promise((r) => setTimeout(r, 50));
        }
      });
    exitCode.catch(() => undefined);
    return { ...session, exitCode };
  }

  /**
   * A stream to `port` inside a ready sandbox's network namespace.
   * @throws CriError FailedPrecondition when the sandbox is not ready.
   */
  async portForward(podSandboxId: string, port: number): Promise<Duplex> {
    const what = `port-forward to port ${port} of sandbox ${podSandboxId}`;
    const st = await this.sandboxes.status(podSandboxId);
    if (st.state !== 'SANDBOX_READY')
      throw new CriError('FailedPrecondition', `pod sandbox ${podSandboxId} is not ready`);
    const r = await this.o.runtimeCall('PortForward', { podSandboxId, port: [port] }, what);
    return openPortForward(String(r.url), port, what);
  }

  private async requireRunning(containerId: string): Promise<void> {
    const st = await this.containers.status(containerId);
    if (st.state !== 'CONTAINER_RUNNING')
      throw new CriError('FailedPrecondition', `container ${containerId} is not running (${st.state})`);
  }
}
