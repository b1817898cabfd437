/**
 * The Docker adapter's StreamingService: logs, exec, attach and port-forward, on Docker's
 * hijacked connections (cri-dockerd's streaming runtime, without its own HTTP server:
 * the kubelet API serves the streams, agent/kubelet/server/). Output is demultiplexed
 * with back-pressure (streams.ts). Port-forward enters the sandbox's network namespace
 * with nsenter and relays from there, as dockershim did with nsenter + socat; without
 * nsenter it dials the pod's address on the node's bridge network from the host.
 */
import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { Duplex, PassThrough, pipeline, Writable } from 'node:stream';
import type { ContainerLogOptions, StreamOptions, StreamSession } from '../api.js';
import { CriError } from '../errors.js';
import { TYPE_CONTAINER, TYPE_SANDBOX } from './labels.js';
import { sandboxStatusOf, streamDone, type DockerObjects } from './objects.js';
import { DockerDemux } from './streams.js';

/** StreamingService on one node's Docker objects. */
export class DockerStreaming {
  constructor(
    private readonly o: DockerObjects,
    /** How long an exec session waits for docker to report the exit code after its output ends, ms. */
    private readonly execExitWaitMs: number,
  ) {}

  /**
   * The container's log as one stream of its output (stdout and stderr interleaved, as
   * written), from Docker's json-file log: `follow`, `timestamps`, `tailLines`, `sinceTime` (ns).
   */
  async logs(containerId: string, opts: ContainerLogOptions): Promise<NodeJS.ReadableStream> {
    const info = await this.o.inspectOwned(containerId, TYPE_CONTAINER);
    const what = `logs of ${containerId}`;
    const options: Record<string, unknown> = {
      follow: opts.follow ?? false,
      stdout: true,
      stderr: true,
      timestamps: opts.timestamps ?? false,
      tail: opts.tailLines !== undefined ? String(opts.tailLines) : 'all',
    };
    if (opts.sinceTime !== undefined && opts.sinceTime > 0n) {
      const s = opts.sinceTime / 1_000_000_000n;
      const ns = opts.sinceTime % 1_000_000_000n;
      options.since = `${s}.${ns.toString().padStart(9, '0')}`;
    }
    const raw = await this.o.call(what, (e) => e.containerLogs(info.Id, options));
    if (info.Config.Tty) return raw;
    const out = new PassThrough();
    pipeline(raw, new DockerDemux(out, out), () => out.end());
    out.on('close', () => raw.destroy());
    return out;
  }

  /**
   * Runs `cmd` in the running container with the streams `opts` asks for.
   * @throws CriError FailedPrecondition when the container is not running.
   */
  async exec(containerId: string, cmd: string[], opts: StreamOptions): Promise<StreamSession> {
    const info = await this.o.inspectOwned(containerId, TYPE_CONTAINER);
    if (!info.State.Running)
      throw new CriError('FailedPrecondition', `container ${containerId} is not running`);
    const what = `exec ${JSON.stringify(cmd)} in ${containerId}`;
    const execId = await this.o.call(what, (e) =>
      e.createExec(info.Id, {
        Cmd: cmd,
        AttachStdin: opts.stdin,
        AttachStdout: opts.stdout,
        AttachStderr: opts.stderr,
        Tty: opts.tty,
      }),
    );
    const stream = await this.o.call(what, (e) => e.startExec(execId, { stdin: opts.stdin, Tty: opts.tty }));
    const exitCode = (async (): Promise<number> => {
      await streamDone(stream).catch(() => undefined);
      const end = Date.now() + this.execExitWaitMs;
      for (;;) {
        const st = await this.o.call(what, (e) => e.inspectExec(execId));
        if (!st.Running && st.ExitCode !== null) return st.ExitCode;
        if (Date.now() > end) throw new CriError('Internal', `${what}: docker reported no exit code`);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    exitCode.catch(() => undefined);
    return this.session(stream, opts, exitCode, async (size) => {
      await this.o.call(`resize ${what}`, (e) => e.resizeExec(execId, { h: size.height, w: size.width }));
    });
  }

  /**
   * Attaches to the running container's main process.
   * @throws CriError FailedPrecondition when the container is not running.
   */
  async attach(containerId: string, opts: StreamOptions): Promise<StreamSession> {
    const info = await this.o.inspectOwned(containerId, TYPE_CONTAINER);
    if (!info.State.Running)
      throw new CriError('FailedPrecondition', `container ${containerId} is not running`);
    const what = `attach to ${containerId}`;
    const stream = await this.o.call(what, (e) =>
      e.attachContainer(info.Id, { stdin: opts.stdin, stdout: opts.stdout, stderr: opts.stderr }),
    );
    const exitCode = (async (): Promise<number> => {
      await streamDone(stream).catch(() => undefined);
      const st = await this.o.call(what, (e) => e.inspectContainer(info.Id));
      // The session ended (stdin closed, detached) while the container runs on: a clean
      // end, as the kubelet reports an attach that returns without error.
      return st.State.Running ? 0 : st.State.ExitCode;
    })();
    exitCode.catch(() => undefined);
    // A container without a TTY frames its output; with one it is raw (as Docker decides
    // by the container's own Tty setting, not the session's).
    return this.session(stream, { ...opts, tty: info.Config.Tty }, exitCode, async (size) => {
      await this.o.call(`resize ${what}`, (e) =>
        e.resizeContainer(info.Id, { h: size.height, w: size.width }),
      );
    });
  }

  /**
   * A connection to `port` on localhost inside the pod's network namespace, as the
   * kubelet's port-forward does (so ports a container binds to 127.0.0.1 are reachable
   * too): `nsenter --net` into the sandbox's namespace runs a small relay (this Node.js
   * binary, PORT_FORWARD_RELAY) that connects there and pipes its stdin/stdout. Where
   * nsenter cannot run (not root, no util-linux) the pod IP is dialled from the host.
   * @throws CriError FailedPrecondition (sandbox not ready), Unavailable (nothing accepts).
   */
  async portForward(podSandboxId: string, port: number): Promise<Duplex> {
    const info = await this.o.inspectOwned(podSandboxId, TYPE_SANDBOX);
    const status = sandboxStatusOf(info);
    if (status.state !== 'SANDBOX_READY' || !status.network.ip || !info.State.Pid)
      throw new CriError('FailedPrecondition', `pod sandbox ${podSandboxId} is not ready`);
    const where = `port-forward to port ${port} of sandbox ${podSandboxId}`;
    try {
      return await relayInNetns(info.State.Pid, port, where);
    } catch (err) {
      if (!(err instanceof NsenterUnavailable)) throw err;
    }
    return new Promise<Socket>((resolve, reject) => {
      const socket = connect({ host: status.network.ip, port });
      socket.once('connect', () => {
        socket.removeAllListeners('error');
        resolve(socket);
      });
      socket.once('error', (err) =>
        reject(
          new CriError('Unavailable', `${where} (${status.network.ip}): ${err.message}`, { cause: err }),
        ),
      );
    });
  }

  /** The StreamSession over a hijacked docker connection. */
  private session(
    stream: Duplex,
    opts: StreamOptions,
    exitCode: Promise<number>,
    resize: (size: { width: number; height: number }) => Promise<void>,
  ): StreamSession {
    const stdout = opts.stdout || opts.tty ? new PassThrough() : undefined;
    const stderr = opts.stderr && !opts.tty ? new PassThrough() : undefined;
    const sink = opts.tty ? stdout : new DockerDemux(stdout, stderr);
    if (sink) pipeline(stream, sink, () => undefined);
    else stream.resume();
    if (opts.tty) stream.on('end', () => stdout?.end());
    let stdin: Writable | undefined;
    if (opts.stdin) {
      stdin = new Writable({
        write: (chunk: Buffer, _enc, done) => {
          if (stream.write(chunk)) done();
          else stream.once('drain', () => done());
        },
        // Half-closes the hijacked connection: docker then closes the process's stdin.
        final: (done) => {
          stream.end();
          done();
        },
      });
      stdin.on('error', () => undefined);
    }
    return {
      ...(stdin ? { stdin } : {}),
      ...(stdout ? { stdout } : {}),
      ...(stderr ? { stderr } : {}),
      resize: (size) => (opts.tty ? resize(size) : Promise.resolve()),
      exitCode,
      close: () => stream.destroy(),
    };
  }
}

/**
 * The relay run inside a pod's network namespace: connects to 127.0.0.1:<argv port>, says
 * "connected" (or the error) on stderr, then pipes stdin to the connection and the
 * connection to stdout, half-closes included.
 */
const PORT_FORWARD_RELAY = `
const net = require('node:net');
const s = net.connect({ host: '127.0.0.1', port: Number(process.argv[1]) });
let up = false;
s.on('connect', () => {
  up = true;
  process.stderr.write('connected\\n');
  process.stdin.pipe(s);
  s.pipe(process.stdout);
});
s.on('error', (e) => {
  if (!up) {
    process.stderr.write(e.message + '\\n');
    process.exit(1);
  }
});
s.on('close', () => process.stdout.end());
process.stdout.on('finish', () => process.exit(0));
`;

/** nsenter could not be started (missing, or not permitted): dial from the host instead. */
class NsenterUnavailable extends Error {}

/** Runs PORT_FORWARD_RELAY in the network namespace of process `pid`; resolves once it is connected. */
function relayInNetns(pid: number, port: number, where: string): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'nsenter',
      ['-t', String(pid), '-n', '--', process.execPath, '-e', PORT_FORWARD_RELAY, String(port)],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let said = '';
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      child.kill();
      reject(err);
    };
    child.once('error', (err: NodeJS.ErrnoException) => fail(new NsenterUnavailable(err.message)));
    child.once('exit', (code) => {
      const message = said.trim();
      if (/^nsenter:/m.test(message)) fail(new NsenterUnavailable(message));
      else fail(new CriError('Unavailable', `${where}: ${message || `relay exited with ${code}`}`));
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      said += chunk;
      if (settled || !said.startsWith('connected\n')) return;
      settled = true;
      const duplex = Duplex.from({ readable: child.stdout, writable: child.stdin });
      duplex.once('close', () => child.kill());
      resolve(duplex);
    });
  });
}
