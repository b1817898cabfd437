/**
 * The Docker Engine as the adapter sees it: exactly the engine calls the adapter makes,
 * by object id, as cri-dockerd's libdocker.Interface narrows the Docker client. The
 * adapter's own logic (CRI ↔ Docker conversion, label recovery, ownership, error
 * mapping) runs on this interface, so its unit tests (adapter.test.ts) run it on a fake
 * engine without dockerd; `dockerodeEngine()` is the real one, held to the same
 * behaviour by the conformance run against the engine (docker.test.ts).
 *
 * Errors are the engine's as dockerode throws them (an HTTP status in `statusCode`,
 * Docker's message in `json.message`, or a socket error's `code`); the adapter maps them
 * to CriErrors in one place (errors.ts). A fake engine throws the same shapes.
 */
import type { Duplex, Readable, Writable } from 'node:stream';
import type Docker from 'dockerode';
import type { DockerStats } from './convert.js';

/** `docker version`'s fields the adapter reads. */
export interface EngineVersion {
  Version: string;
  ApiVersion: string;
}

/** `docker exec inspect`'s fields the adapter reads. */
export interface ExecState {
  Running: boolean;
  /** null until docker has recorded the exit code. */
  ExitCode: number | null;
}

/** A terminal size in Docker's spelling: rows `h`, columns `w`. */
export interface EngineTerminalSize {
  h: number;
  w: number;
}

/** The engine calls of the Docker adapter (see the file comment). */
export interface DockerEngine {
  /** `GET /_ping`. */
  ping(): Promise<void>;
  /** `GET /version`. */
  version(): Promise<EngineVersion>;

  /** `POST /containers/create` with `body` (its `name` included); the new container's id. */
  createContainer(body: Record<string, unknown>): Promise<string>;
  startContainer(id: string): Promise<void>;
  /** `POST /containers/{id}/stop?t=` (seconds); 304 when already stopped. */
  stopContainer(id: string, timeoutSeconds: number): Promise<void>;
  /** `DELETE /containers/{id}?force=&v=`. */
  removeContainer(id: string, opts: { force: boolean; v?: boolean }): Promise<void>;
  inspectContainer(id: string): Promise<Docker.ContainerInspectInfo>;
  /** `GET /containers/json?all=1&filters=` (filters as Docker's `{label: ['k=v'], id: [...]}`). */
  listContainers(filters: Record<string, string[]>): Promise<Docker.ContainerInfo[]>;
  /** One-shot `GET /containers/{id}/stats?stream=0&one-shot=1`. */
  containerStats(id: string): Promise<DockerStats>;
  /** `GET /containers/{id}/logs` with Docker's query `options`, always as a stream. */
  containerLogs(id: string, options: Record<string, unknown>): Promise<Readable>;
  /** `POST /containers/{id}/attach?stream=1` on a hijacked connection. */
  attachContainer(id: string, opts: { stdin: boolean; stdout: boolean; stderr: boolean }): Promise<Duplex>;
  resizeContainer(id: string, size: EngineTerminalSize): Promise<void>;

  /** `POST /containers/{id}/exec`; the exec's id. */
  createExec(
    containerId: string,
    opts: {
      Cmd: string[];
      AttachStdin: boolean;
      AttachStdout: boolean;
      AttachStderr: boolean;
      Tty?: boolean;
    },
  ): Promise<string>;
  /** `POST /exec/{id}/start` on a hijacked connection. */
  startExec(execId: string, opts: { stdin: boolean; Tty?: boolean }): Promise<Duplex>;
  inspectExec(execId: string): Promise<ExecState>;
  resizeExec(execId: string, size: EngineTerminalSize): Promise<void>;
  /** Splits Docker's multiplexed stdout/stderr framing of `stream` onto `stdout` and `stderr`. */
  demuxStream(stream: Readable, stdout: Writable, stderr: Writable): void;

  listImages(): Promise<Docker.ImageInfo[]>;
  inspectImage(ref: string): Promise<Docker.ImageInspectInfo>;
  /**
   * `POST /images/create?fromImage=&tag=`: the pull's JSON progress stream; `authconfig`
   * goes as the `X-Registry-Auth` header (Docker's AuthConfig).
   */
  pullImage(opts: {
    fromImage: string;
    tag: string;
    authconfig?: Docker.AuthConfigObject;
  }): Promise<Readable>;
  removeImage(ref: string): Promise<void>;

  inspectNetwork(name: string): Promise<Docker.NetworkInspectInfo>;
  createNetwork(body: Docker.NetworkCreateOptions): Promise<void>;
  removeNetwork(name: string): Promise<void>;
}

/**
 * Docker's socket for `socketPath`: itself when given, else DOCKER_HOST when it is
 * `unix://...`, else /var/run/docker.sock (the Docker CLI's order).
 */
export function dockerSocketPath(socketPath?: string): string {
  const fromEnv = process.env.DOCKER_HOST?.startsWith('unix://')
    ? process.env.DOCKER_HOST.slice(7)
    : undefined;
  return socketPath ?? fromEnv ?? '/var/run/docker.sock';
}

/** The real engine: each call one dockerode request on `docker`'s socket. */
export function dockerodeEngine(docker: Docker): DockerEngine {
  return {
    ping: async () => {
      await docker.ping();
    },
    version: () => docker.version(),
    createContainer: async (body) => (await docker.createContainer(body as Docker.ContainerCreateOptions)).id,
    startContainer: async (id) => {
      await docker.getContainer(id).start();
    },
    stopContainer: async (id, t) => {
      await docker.getContainer(id).stop({ t });
    },
    removeContainer: async (id, opts) => {
      await docker.getContainer(id).remove(opts);
    },
    inspectContainer: (id) => docker.getContainer(id).inspect(),
    listContainers: (filters) => docker.listContainers({ all: true, filters }),
    containerStats: async (id) =>
      (await docker.getContainer(id).stats({ stream: false, 'one-shot': true })) as DockerStats,
    // dockerode's container.logs() buffers the whole log unless following: dial directly
    // so that the body is always a stream.
    containerLogs: (id, options) =>
      new Promise<Readable>((resolve, reject) => {
        docker.modem.dial(
          {
            path: `/containers/${id}/logs?`,
            method: 'GET',
            isStream: true,
            statusCodes: { 200: true, 404: 'no such container', 500: 'server error' },
            options,
          },
          (err: unknown, stream: unknown) => (err ? reject(err) : resolve(stream as Readable)),
        );
      }),
    attachContainer: async (id, opts) =>
      (await docker.getContainer(id).attach({ stream: true, hijack: true, ...opts })) as Duplex,
    resizeContainer: async (id, size) => {
      await docker.getContainer(id).resize(size);
    },
    createExec: async (containerId, opts) => (await docker.getContainer(containerId).exec(opts)).id,
    startExec: async (execId, opts) =>
      (await docker.getExec(execId).start({ hijack: true, ...opts })) as Duplex,
    inspectExec: (execId) => docker.getExec(execId).inspect(),
    resizeExec: async (execId, size) => {
      await docker.getExec(execId).resize(size);
    },
    demuxStream: (stream, stdout, stderr) => docker.modem.demuxStream(stream, stdout, stderr),
    listImages: () => docker.listImages(),
    inspectImage: (ref) => docker.getImage(ref).inspect(),
    pullImage: async ({ authconfig, ...opts }) =>
      (await (authconfig ? docker.createImage(authconfig, opts) : docker.createImage(opts))) as Readable,
    removeImage: async (ref) => {
      await docker.getImage(ref).remove();
    },
    inspectNetwork: async (name) => (await docker.getNetwork(name).inspect()) as Docker.NetworkInspectInfo,
    createNetwork: async (body) => {
      await docker.createNetwork(body);
    },
    removeNetwork: async (name) => {
      await docker.getNetwork(name).remove();
    },
  };
}
