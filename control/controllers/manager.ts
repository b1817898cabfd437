/**
 * The controller manager: builds every controller of the registry from one shared
 * context (one InformerFactory, so each resource is listed and watched once), starts the
 * informers, waits for their caches, and runs the controllers until stopped
 * (kube-controller-manager's StartControllers). Leader election is the caller's concern
 * (control/leader.ts): run() is what runs while leading.
 */
import { setMaxListeners } from 'node:events';
import type { Clock } from '../../api/clock.js';
import { realClock } from '../../api/clock.js';
import { EventRecorder, SHUTDOWN_FLUSH_MS } from '../../api/client/events.js';
import { InformerFactory } from '../../api/client/factory.js';
import { stripManagedFields } from '../../api/client/transform.js';
import type { ResourceRef } from '../../api/client/resource.js';
import type { RestClient } from '../../api/client/rest.js';
import type { KubeObject } from '../../api/object.js';
import type {
  Controller,
  ControllerContext,
  ControllerFactory,
  ControllersConfig,
  Logger,
} from './context.js';
import { DEFAULT_CONTROLLERS_CONFIG } from './context.js';

/** Settings of a ControllerManager. */
export interface ControllerManagerOptions {
  client: RestClient;
  /** The controllers to run, by name (registry.ts `CONTROLLERS`, or a subset in tests). */
  controllers: Readonly<Record<string, ControllerFactory>>;
  config?: Partial<ControllersConfig>;
  clock?: Clock;
  logger: Logger;
  /** How long to wait for the informers' first lists, ms (default 60 000). */
  cacheSyncTimeoutMs?: number;
  /**
   * What the shared informers do to each object before caching it (InformerFactoryOptions
   * .transform). Default stripManagedFields: no controller reads managedFields, and
   * kube-controller-manager drops them from every informer too (kubernetes#118455); they
   * are a third or more of a pod.
   */
  informerTransform?: <T extends KubeObject>(obj: T, ref: ResourceRef) => T;
}

/** Runs a set of controllers over shared informers. */
export class ControllerManager {
  private readonly opts: ControllerManagerOptions;
  private readonly config: ControllersConfig;

  /** @throws Error when a numeric config value is not positive. */
  constructor(opts: ControllerManagerOptions) {
    this.opts = opts;
    this.config = { ...DEFAULT_CONTROLLERS_CONFIG, ...opts.config };
    for (const [k, v] of Object.entries(this.config)) {
      if (typeof v === 'number' && !(v > 0))
        throw new Error(`controller manager: ${k} must be > 0, got ${v}`);
    }
  }

  /**
   * Builds and runs the controllers until `signal` aborts; resolves when all have stopped
   * and the informers are shut down.
   * @throws Error when the informers do not sync within cacheSyncTimeoutMs.
   */
  async run(signal: AbortSignal): Promise<void> {
    const { client, logger } = this.opts;
    // Every controller (and its queue) listens on the one signal: more than Node's default 10.
    setMaxListeners(100, signal);
    const clock = this.opts.clock ?? realClock;
    const informers = new InformerFactory({
      client,
      transform: this.opts.informerTransform ?? stripManagedFields,
      onError: (err, during, informer) =>
        logger.warn('informer error', { informer, during, error: err.message }),
    });
    const recorders: EventRecorder[] = [];
    const ctx: ControllerContext = {
      client,
      informers,
      clock,
      logger,
      config: this.config,
      recorder: (component) => {
        const r = new EventRecorder({
          client,
          component,
          clock,
          onError: (err, ev) =>
            logger.warn('event not recorded', { component, reason: ev.reason, error: String(err) }),
        });
        recorders.push(r);
        return r;
      },
    };
    const controllers: Controller[] = Object.entries(this.opts.controllers).map(([name, make]) => {
      const c = make(ctx);
      if (c.name !== name) throw new Error(`controller registered as ${name} calls itself ${c.name}`);
      return c;
    });
    try {
      informers.start();
      const synced = await informers.waitForCacheSync(this.opts.cacheSyncTimeoutMs ?? 60_000, signal);
      if (signal.aborted) return;
      if (!synced) throw new Error('controller manager: informer caches did not sync in time');
      logger.info('controllers starting', { controllers: controllers.map((c) => c.name) });
      await Promise.all(
        controllers.map((c) =>
          c
            .run(signal)
            .catch((err: unknown) => logger.error(`${c.name} controller failed`, { error: String(err) })),
        ),
      );
    } finally {
      await informers.shutdown();
      await Promise.all(recorders.map((r) => r.flush(SHUTDOWN_FLUSH_MS)));
    }
  }
}
