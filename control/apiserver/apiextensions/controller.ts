/**
 * The CRD controllers every API server runs beside its CustomResources table, as the
 * apiextensions-apiserver runs its own in-process (pkg/controller/status/naming_controller.go,
 * establish/establishing_controller.go, finalizer/crd_finalizer.go). One reconcile per CRD
 * name, from a rate-limited workqueue fed by the CRD watch; a missed or repeated event
 * changes nothing but timing, and two API servers over one store agree through the
 * compare-and-swap of the status write (a conflict is retried).
 *
 * reconcile(name):
 *   - gone: nothing to do;
 *   - deleting, with the `customresourcecleanup.apiextensions.k8s.io` finalizer: delete every
 *     object of the CRD (its storage version, all namespaces); while some remain (their own
 *     finalizers), Terminating is True with InstanceDeletionInProgress (InstanceDeletionCheck
 *     once they have remained a minute since the CRD's deletionTimestamp, as upstream's
 *     one-minute wait ends) and the CRD is looked at again every `instancePollMs` (upstream
 *     polls every 5 s), not with the error backoff, so it goes soon after the last object;
 *     then Terminating=False (InstanceDeletionCompleted), the finalizer is dropped by a
 *     status write, and the CRD is removed;
 *   - otherwise, naming: the spec's names are accepted unless another CRD of the group has
 *     accepted one of them (NamesAccepted=False with upstream's reason and `"<name>" is
 *     already in use`); then establishing: Established=True once names were accepted.
 *     The status is written only when it changes.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from '../../../api/log.js';
import { RateLimitingQueue } from '../../../api/workqueue/rateLimited.js';
import { runWorkers } from '../../../api/workqueue/workers.js';
import { errorMessage } from '../../../api/errors.js';
import type { Registry } from '../registry.js';
import { ApiError } from '../status.js';
import { setCRDCondition } from './crd-strategy.js';
import {
  CUSTOM_RESOURCE_CLEANUP_FINALIZER,
  isCRDConditionTrue,
  type CustomResourceDefinition,
  type CustomResourceDefinitionNames,
} from './types.js';

export interface CRDControllerConfig {
  /** The registry of customresourcedefinitions (status writes go through it). */
  crds: Registry;
  /** A registry of the CRD's storage version (for deleting its objects); undefined for a CRD without names. */
  storageRegistry(crd: CustomResourceDefinition): Registry | undefined;
  logger: Logger;
  now?: () => Date;
  /** How often a deleted CRD whose objects are still going is looked at again; default 1000 ms. */
  instancePollMs?: number;
}

/** How long upstream's finalizer waits for the objects before it says it could not confirm them gone. */
const INSTANCE_DELETION_WAIT_MS = 60_000;

/** A name conflict of `names` with names accepted by other CRDs of the group. */
export function nameConflict(
  names: CustomResourceDefinitionNames,
  taken: readonly CustomResourceDefinitionNames[],
): { reason: string; message: string } | undefined {
  const plurals = new Set(taken.map((n) => n.plural));
  const singulars = new Set(taken.map((n) => n.singular));
  const kinds = new Set(taken.flatMap((n) => [n.kind, n.listKind]));
  const shorts = new Set(taken.flatMap((n) => n.shortNames ?? []));
  const inUse = (v: string | undefined) => `"${v}" is already in use`;
  if (plurals.has(names.plural) || singulars.has(names.plural))
    return { reason: 'PluralConflict', message: inUse(names.plural) };
  if (plurals.has(names.singular) || singulars.has(names.singular))
    return { reason: 'SingularConflict', message: inUse(names.singular) };
  for (const s of names.shortNames ?? [])
    if (shorts.has(s) || plurals.has(s) || singulars.has(s))
      return { reason: 'ShortNamesConflict', message: inUse(s) };
  if (kinds.has(names.kind)) return { reason: 'KindConflict', message: inUse(names.kind) };
  if (kinds.has(names.listKind)) return { reason: 'ListKindConflict', message: inUse(names.listKind) };
  return undefined;
}

/** See the file comment. */
export class CRDController {
  private readonly queue = new RateLimitingQueue<string>();
  private running: Promise<void> | undefined;
  private readonly now: () => Date;

  constructor(private readonly cfg: CRDControllerConfig) {
    this.now = cfg.now ?? (() => new Date());
  }

  /** Queues CRD `name` for a reconcile. */
  enqueue(name: string): void {
    this.queue.add(name);
  }

  /** Starts two workers; they run until stop(). */
  start(): void {
    this.running ??= runWorkers(this.queue, 2, (name) => this.reconcile(name), {
      onError: (err, key, requeues) => {
        if (requeues < 3 || requeues % 10 === 0)
          this.cfg.logger.warn('apiextensions: CRD reconcile failed; retrying', {
            crd: key,
            requeues,
            error: errorMessage(err),
          });
      },
    });
  }

  async stop(): Promise<void> {
    this.queue.shutDown();
    await this.running;
  }

  /** One CRD's reconcile (see the file comment). Throws to be retried. */
  async reconcile(name: string): Promise<void> {
    let crd: CustomResourceDefinition;
    try {
      crd = (await this.cfg.crds.get(undefined, name)) as CustomResourceDefinition;
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return;
      throw err;
    }
    if (crd.metadata?.deletionTimestamp) {
      if (crd.metadata.finalizers?.includes(CUSTOM_RESOURCE_CLEANUP_FINALIZER)) await this.finalize(crd);
      return;
    }
    const next = structuredClone(crd);
    const now = this.now();
    const group = crd.spec.group;
    const others = (await this.cfg.crds.list(undefined)).items as CustomResourceDefinition[];
    const taken = others
      .filter((c) => c.metadata?.name !== name && c.spec.group === group && c.status?.acceptedNames)
      .map((c) => c.status!.acceptedNames!);
    const names = crd.spec.names ?? {};
    const conflict = nameConflict(names, taken);
    const status = (next.status ??= {});
    if (conflict) {
      setCRDCondition(next, { type: 'NamesAccepted', status: 'False', ...conflict }, now);
      if (!isCRDConditionTrue(next, 'Established'))
        setCRDCondition(
          next,
          {
            type: 'Established',
            status: 'False',
            reason: 'NotAccepted',
            message: 'not all names are accepted',
          },
          now,
        );
    } else {
      status.acceptedNames = structuredClone(names);
      setCRDCondition(
        next,
        { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' },
        now,
      );
      setCRDCondition(
        next,
        {
          type: 'Established',
          status: 'True',
          reason: 'InitialNamesAccepted',
          message: 'the initial names have been accepted',
        },
        now,
      );
    }
    if (isDeepStrictEqual(next.status, crd.status)) return;
    await this.cfg.crds.update(undefined, name, next, { subresource: 'status' });
  }

  private async finalize(crd: CustomResourceDefinition): Promise<void> {
    const name = crd.metadata!.name!;
    const registry = this.cfg.storageRegistry(crd);
    let remaining = 0;
    if (registry && isCRDConditionTrue(crd, 'Established')) {
      const items = (await registry.list(undefined)).items;
      for (const obj of items) {
        try {
          const { deleted } = await registry.delete(obj.metadata?.namespace, obj.metadata!.name!);
          if (!deleted) remaining++;
        } catch (err) {
          if (!(err instanceof ApiError && err.code === 404)) throw err;
        }
      }
    }
    const next = structuredClone(crd);
    const now = this.now();
    if (remaining > 0) {
      const since = Date.parse(crd.metadata?.deletionTimestamp ?? '');
      const waitedOut = now.getTime() - since >= INSTANCE_DELETION_WAIT_MS;
      setCRDCondition(
        next,
        waitedOut
          ? {
              type: 'Terminating',
              status: 'True',
              reason: 'InstanceDeletionCheck',
              message:
                'could not confirm zero CustomResources remaining: timed out waiting for the condition',
            }
          : {
              type: 'Terminating',
              status: 'True',
              reason: 'InstanceDeletionInProgress',
              message: 'CustomResource deletion is in progress',
            },
        now,
      );
      if (!isDeepStrictEqual(next.status, crd.status))
        await this.cfg.crds.update(undefined, name, next, { subresource: 'status' });
      // Their finalizers are someone else's: look again soon rather than with the error backoff.
      this.queue.addAfter(name, this.cfg.instancePollMs ?? 1000);
      return;
    }
    setCRDCondition(
      next,
      isCRDConditionTrue(crd, 'Established')
        ? {
            type: 'Terminating',
            status: 'False',
            reason: 'InstanceDeletionCompleted',
            message: 'removed all instances',
          }
        : {
            type: 'Terminating',
            status: 'False',
            reason: 'NeverEstablished',
            message: 'resource was never established',
          },
      now,
    );
    next.metadata!.finalizers = (next.metadata!.finalizers ?? []).filter(
      (f) => f !== CUSTOM_RESOURCE_CLEANUP_FINALIZER,
    );
    const updated = await this.cfg.crds.update(undefined, name, next, { subresource: 'status' });
    await this.cfg.crds.finishDeletionIfDone(updated);
  }
}
