/**
 * What every part of the containerd adapter shares: the CRI client, the node whose objects
 * it owns, and the calls that keep to them, as the kubelet's CRI remote client
 * (k8s.io/cri-client, pkg/remote_runtime.go and remote_image.go) wraps its two gRPC
 * services. With a `nodeName`, an object is this adapter's only when its label
 * `io.k8ts.node` names the node; lists are asked with that label in their selector and
 * anything else reads as NotFound. Every call goes through runtimeCall/imageCall, which
 * refuse after close() (Unavailable); the client maps gRPC statuses to CriErrors (client.ts).
 */
import { join } from 'node:path';
import { CriError } from '../errors.js';
import type { CriClient, Message } from './client.js';
import { LABEL_NODE, strMap } from './convert.js';

/** One connection's CRI calls, ownership by node and pod log directories. */
export class ContainerdObjects {
  private closed = false;

  constructor(
    private readonly client: CriClient,
    /** The node whose objects this adapter owns; undefined: all of the runtime's. */
    readonly nodeName: string | undefined,
    /** The kubelet's podLogsDir (absolute path). */
    readonly podLogsDir: string,
  ) {}

  /**
   * One RuntimeService RPC with deadline `timeoutMs` (the client's default when unset).
   * @throws CriError Unavailable after close(); the RPC's error as a CriError (client.ts).
   */
  runtimeCall(rpc: string, req: Message, what: string, timeoutMs?: number): Promise<Message> {
    this.checkOpen(what);
    return this.client.callRuntime(rpc, req, what, timeoutMs);
  }

  /** One ImageService RPC, as runtimeCall. */
  imageCall(rpc: string, req: Message, what: string, timeoutMs?: number): Promise<Message> {
    this.checkOpen(what);
    return this.client.callImage(rpc, req, what, timeoutMs);
  }

  /** Awaits `p`; a NotFound is success (stop and remove of what is gone). */
  async ignoreNotFound(p: Promise<unknown>): Promise<void> {
    try {
      await p;
    } catch (err) {
      if (err instanceof CriError && err.code === 'NotFound') return;
      throw err;
    }
  }

  /** `<podLogsDir>/<namespace>_<name>_<uid>`, the kubelet's pod log directory (BuildPodLogsDirectory). */
  defaultLogDirectory(m: { namespace: string; name: string; uid: string }): string {
    return join(this.podLogsDir, `${m.namespace}_${m.name}_${m.uid}`);
  }

  /** True when an object with `labels` is this adapter's. */
  owns(labels: unknown): boolean {
    return this.nodeName === undefined || strMap(labels)[LABEL_NODE] === this.nodeName;
  }

  /** A list's label selector `sel`, with this node's label added. */
  selector(sel: Record<string, string> | undefined): Record<string, string> {
    return this.nodeName === undefined ? { ...sel } : { ...sel, [LABEL_NODE]: this.nodeName };
  }

  /** `labels` with this node's label added, for an object the adapter creates. */
  ownLabels(labels: Record<string, string>): Record<string, string> {
    return this.nodeName === undefined ? { ...labels } : { ...labels, [LABEL_NODE]: this.nodeName };
  }

  /** Refuses every later call and closes the client; idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.client.close();
  }

  private checkOpen(what: string): void {
    if (this.closed) throw new CriError('Unavailable', `${what}: the runtime connection is closed`);
  }
}
