/**
 * The Docker adapter's pod sandboxes (CRI's RunPodSandbox … ListPodSandbox), as
 * dockershim's docker_sandbox.go: a sandbox is a container of the pause image on the
 * node's bridge network (the agent creates the network; the sandbox only names it), with
 * the pod's hostname and its hostPorts published on their hostIp. Stopping or removing a
 * sandbox stops or removes its app containers first; both are idempotent.
 */
import type { PodSandbox, PodSandboxConfig, PodSandboxFilter, PodSandboxStatus } from '../api.js';
import { sandboxCreateOptions } from './convert.js';
import type { DockerImages } from './image.js';
import { TYPE_CONTAINER, TYPE_SANDBOX, sandboxFromLabels, sandboxLabels, sandboxName } from './labels.js';
import { matches, nsNow, sandboxStatusOf, type DockerObjects } from './objects.js';

/** The sandbox half of RuntimeService on one node's Docker objects. */
export class DockerSandboxes {
  constructor(
    private readonly o: DockerObjects,
    private readonly images: DockerImages,
    /** The image sandboxes run, pulled when missing. */
    readonly pauseImage: string,
  ) {}

  /**
   * Creates and starts the sandbox container; a container that does not start is removed.
   * @returns the sandbox's id (Docker's container id).
   */
  async run(config: PodSandboxConfig): Promise<string> {
    if (!(await this.images.status(this.pauseImage))) await this.images.pull(this.pauseImage);
    const labels = sandboxLabels(this.o.nodeName, config, nsNow());
    const body = sandboxCreateOptions(config, this.pauseImage, sandboxName(config.metadata), labels);
    const what = `run pod sandbox ${config.metadata.namespace}/${config.metadata.name}`;
    const id = await this.o.call(what, (e) => e.createContainer(body));
    try {
      await this.o.call(what, (e) => e.startContainer(id));
    } catch (err) {
      await this.o.engine.removeContainer(id, { force: true }).catch(() => undefined);
      throw err;
    }
    return id;
  }

  /** Stops the sandbox's running app containers at once, then the sandbox. */
  async stop(podSandboxId: string): Promise<void> {
    for (const c of await this.o.listOwned(TYPE_CONTAINER, { sandboxId: podSandboxId })) {
      if (c.State === 'running' || c.State === 'paused' || c.State === 'restarting') {
        await this.o.stopById(c.Id, 0);
      }
    }
    if (await this.o.inspectOwned(podSandboxId, TYPE_SANDBOX, true)) await this.o.stopById(podSandboxId, 0);
  }

  /** Removes the sandbox's app containers, then the sandbox. */
  async remove(podSandboxId: string): Promise<void> {
    for (const c of await this.o.listOwned(TYPE_CONTAINER, { sandboxId: podSandboxId }))
      await this.o.removeById(c.Id);
    if (await this.o.inspectOwned(podSandboxId, TYPE_SANDBOX, true)) await this.o.removeById(podSandboxId);
  }

  /** @throws CriError NotFound for anything not this node's sandbox. */
  async status(podSandboxId: string): Promise<PodSandboxStatus> {
    return sandboxStatusOf(await this.o.inspectOwned(podSandboxId, TYPE_SANDBOX));
  }

  /** This node's sandboxes matching `filter`, rebuilt from their labels. */
  async list(filter: PodSandboxFilter = {}): Promise<PodSandbox[]> {
    const items = await this.o.listOwned(TYPE_SANDBOX, { id: filter.id });
    const out: PodSandbox[] = [];
    for (const item of items) {
      const view = sandboxFromLabels(item.Labels);
      const sandbox: PodSandbox = {
        id: item.Id,
        metadata: view.metadata,
        state: item.State === 'running' ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY',
        createdAt: view.createdAt,
        labels: view.labels,
        annotations: view.annotations,
      };
      if (filter.id !== undefined && sandbox.id !== filter.id) continue;
      if (filter.state !== undefined && sandbox.state !== filter.state) continue;
      if (!matches(sandbox.labels, filter.labelSelector)) continue;
      out.push(sandbox);
    }
    return out;
  }
}
