/**
 * Test doubles for the ReplicaSet controller's tests (and other workload controllers'):
 * a binder standing in for the scheduler, a client whose pod watch can be held back (a
 * lagging informer), and a client whose pod creates can be made to fail (a quota).
 * Everything else is the real API server.
 */
import { ApiStatusError } from '../../../api/client/errors.js';
import { InformerFactory } from '../../../api/client/factory.js';
import { resources } from '../../../api/client/resource.js';
import type { ResourceRef } from '../../../api/client/resource.js';
import { RestClient } from '../../../api/client/rest.js';
import type { CreateOptions, WatchOptions } from '../../../api/client/rest.js';
import type { WatchEvent, WatchStream } from '../../../api/client/watch.js';
import type { KubeObject } from '../../../api/object.js';
import type { Pod } from '../../../api/types.js';

/**
 * Binds every unscheduled pod it sees (and `shouldBind` accepts) to the given nodes in
 * turn through pods/binding, as a scheduler would. `bindPending()` binds what was held back.
 */
export class FakeBinder {
  private readonly factory: InformerFactory;
  private readonly pods;
  private next = 0;
  private readonly inflight = new Set<Promise<unknown>>();
  shouldBind: (pod: Pod) => boolean = () => true;

  constructor(
    private readonly client: RestClient,
    private readonly nodes: string[],
  ) {
    this.factory = new InformerFactory({ client });
    this.pods = this.factory.informerFor<Pod>(resources.pods);
    this.pods.addEventHandler({ onAdd: (p) => this.maybeBind(p), onUpdate: (_, p) => this.maybeBind(p) });
  }

  async start(): Promise<void> {
    this.factory.start();
    await this.factory.waitForCacheSync(10_000);
  }

  /** Binds the cached unscheduled pods that shouldBind now accepts. */
  bindPending(): void {
    for (const p of this.pods.lister().list()) this.maybeBind(p);
  }

  async stop(): Promise<void> {
    await this.factory.shutdown();
    await Promise.allSettled([...this.inflight]);
  }

  private maybeBind(pod: Pod): void {
    if (pod.spec.nodeName || pod.metadata.deletionTimestamp || !this.shouldBind(pod)) return;
    const node = this.nodes[this.next++ % this.nodes.length]!;
    const p = this.client
      .create(
        resources.pods,
        {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name: pod.metadata.name!, namespace: pod.metadata.namespace! },
          target: { apiVersion: 'v1', kind: 'Node', name: node },
        },
        { subresource: 'binding' },
      )
      .catch(() => {}); // already bound or gone
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }
}

/**
 * A RestClient whose pod watch events can be held back (hold/release) — an informer that
 * lags behind the controller's own writes — and whose pod creates can be made to fail
 * (`failPodCreates`), as a quota would refuse them. `podCreates` counts create attempts.
 */
export class TestClient extends RestClient {
  private held = false;
  private waiters: Array<() => void> = [];
  /** When set, pod creates fail with this 403 message instead of reaching the server... */
  failPodCreates: string | undefined;
  /** ...once this many pod creates have been attempted in all. */
  failPodCreatesAfter = 0;
  /** A StatusCause type the refusal carries (e.g. `NamespaceTerminating`). */
  failPodCreatesCause: string | undefined;
  /** Pod create attempts so far. */
  podCreates = 0;

  /** From now on, pod watch events wait until release(). */
  hold(): void {
    this.held = true;
  }

  /** Lets held and later pod watch events through. */
  release(): void {
    this.held = false;
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  override create<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    obj: T,
    opts: CreateOptions = {},
  ): Promise<T> {
    if (isPods(ref) && opts.subresource === undefined) {
      this.podCreates++;
      if (this.failPodCreates !== undefined && this.podCreates > this.failPodCreatesAfter) {
        const ns = opts.namespace ?? obj.metadata?.namespace;
        return Promise.reject(
          new ApiStatusError({
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            code: 403,
            reason: 'Forbidden',
            message: `pods "${obj.metadata?.generateName ?? ''}" is forbidden: ${this.failPodCreates} (namespace ${ns})`,
            ...(this.failPodCreatesCause !== undefined
              ? { details: { causes: [{ reason: this.failPodCreatesCause }] } }
              : {}),
          }),
        );
      }
    }
    return super.create(ref, obj, opts);
  }

  override async watch<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    opts: WatchOptions = {},
  ): Promise<WatchStream<T>> {
    const stream = await super.watch<T>(ref, opts);
    if (!isPods(ref)) return stream;
    let stopped = false;
    const unblock: Array<() => void> = [];
    const gate = (): Promise<void> | undefined =>
      this.held && !stopped
        ? new Promise<void>((resolve) => {
            this.waiters.push(resolve);
            unblock.push(resolve);
          })
        : undefined;
    return {
      stop: () => {
        stopped = true;
        for (const f of unblock) f();
        stream.stop();
      },
      async *[Symbol.asyncIterator](): AsyncGenerator<WatchEvent<T>, void, undefined> {
        for await (const ev of stream) {
          await gate();
          if (stopped) return;
          yield ev;
        }
      },
    };
  }
}

function isPods(ref: ResourceRef): boolean {
  return ref.group === '' && ref.resource === 'pods';
}
