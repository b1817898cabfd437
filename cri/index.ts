/**
 * The runtime layer's entry: opens the adapter the agent's `--runtime` names and
 * re-exports the interface (api.ts), its errors (errors.ts) and the image reference
 * grammar (reference.ts). The agent imports only this file (agent/boundaries.test.ts
 * holds it to that; its tests may also use the fake adapter, fake/).
 *
 *   const runtime = await openRuntime('docker', { nodeName: 'node-a' });
 *
 * Adapters: `docker` (dockerode, docker/runtime.ts), `containerd` (CRI v1 over gRPC to
 * the runtime's socket, containerd/runtime.ts: containerd's CRI plugin, or any CRI
 * runtime) and `fake` (memory: unit tests and simulated nodes, fake/runtime.ts).
 */
import type { Runtime } from './api.js';
import type { ContainerdRuntimeOptions } from './containerd/runtime.js';
import type { DockerRuntimeOptions } from './docker/runtime.js';
import type { FakeRuntimeOptions } from './fake/runtime.js';

export type * from './api.js';
export { CriError, CRI_ERROR_CODES, isCriError, type CriErrorCode } from './errors.js';
export {
  DEFAULT_DOMAIN,
  familiarName,
  familiarRepository,
  parseImageReference,
  type ImageReference,
} from './reference.js';
export type { ContainerdRuntimeOptions } from './containerd/runtime.js';
export type { DockerRuntimeOptions } from './docker/runtime.js';
export type { BridgeNetwork, DockerPodInterfaces } from './docker/pod-interfaces.js';
export type { FakeProgramHook, FakeRuntimeOptions } from './fake/runtime.js';
export type { FakeStep } from './fake/process.js';

/** The adapters openRuntime knows, with the options each takes. */
export interface RuntimeOptionsByKind {
  docker: DockerRuntimeOptions;
  containerd: ContainerdRuntimeOptions;
  fake: FakeRuntimeOptions;
}

export type RuntimeKind = keyof RuntimeOptionsByKind;

/** The runtime kinds, as the CLI's `--runtime` accepts them. */
export const RUNTIME_KINDS: readonly RuntimeKind[] = ['docker', 'containerd', 'fake'];

/**
 * Opens the adapter `kind` with `opts`.
 * @throws Error for a kind that is not (yet) an adapter, or options the adapter refuses
 *   (docker without a nodeName); CriError Unavailable when docker, or the CRI runtime at
 *   containerd's endpoint, does not answer (the message names the socket).
 */
export async function openRuntime<K extends RuntimeKind>(
  kind: K,
  opts: RuntimeOptionsByKind[K],
): Promise<Runtime> {
  // Each adapter is loaded only when chosen: dockerode pulls in ssh2 and friends.
  switch (kind) {
    case 'docker': {
      const { DockerRuntime } = await import('./docker/runtime.js');
      return DockerRuntime.connect(opts as DockerRuntimeOptions);
    }
    case 'containerd': {
      const { ContainerdRuntime } = await import('./containerd/runtime.js');
      return ContainerdRuntime.connect(opts as ContainerdRuntimeOptions);
    }
    case 'fake': {
      const { FakeRuntime } = await import('./fake/runtime.js');
      return new FakeRuntime(opts as FakeRuntimeOptions);
    }
    default:
      throw new Error(
        `runtime ${JSON.stringify(kind)} is not available (known: ${RUNTIME_KINDS.join(', ')})`,
      );
  }
}
