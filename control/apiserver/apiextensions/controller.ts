/**
 * The CRD controllers every API server runs beside its CustomResources table, as the
 * apiextensions-apiserver runs its own in-process (pkg/controller/status/naming_controller.go,
 * establish/establishing_controller.go, finalizer/crd_finalizer.go). One reconcile per CRD
 * name, from a rate-limited workqueue fed by the CRD watch; a missed or repeated event
 * changes nothing but timing, and two API servers over one store agree through the
 * compare-and-swap of the status write (a conflict is retried).
 *
 * reconcile(name):
 *   - gone: the other CRDs of its group are queued (its names are free);
 *   - deleting, with the `customresourcecleanup.apiextensions.k8s.io` finalizer: delete every
 *     object of the CRD (its storage version, all namespaces); while some remain (their own
 *     finalizers), Terminating is True with InstanceDeletionInProgress (InstanceDeletionCheck
 *     once they have remained a minute since the CRD's deletionTimestamp, as upstream's
 *     one-minute wait ends) and the CRD is looked at again every `instancePollMs` (upstream
 *     polls every 5 s), not with the error backoff, so it goes soon after the last object;
 *     then Terminating=False (InstanceDeletionCompleted), the finalizer is dropped by a
 *     status write, and the CRD is removed;
 *   - otherwise, naming (calculateNames): each of the spec's names is accepted unless a
 *     CRD of the group has accepted it (NamesAccepted=False with upstream's reason and
 *     `"<name>" is already in use`, the name keeping its accepted value); then
 *     establishing: Established=True once all names were accepted, and it stays True.
 *     The status is written only when it changes, and then the other CRDs of the group
 *     are queued, as names may have been freed or taken.
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

/**
 * The names a CRD may use now and its NamesAccepted condition, as upstream's naming
 * controller calculateNamesAndConditions: each requested name (plural, singular, the short
 * names together, kind, listKind) is taken when it equals the one already accepted or no
 * CRD of the group (this one included) has accepted it — plural, singular and short names
 * share one set, kind and listKind another; a name that is taken keeps what was accepted
 * before, and the last such conflict is the condition's reason (`"wd" is already in use`).
 * Categories are always taken.
 * @param accepted the CRD's status.acceptedNames (empty when none yet).
 * @param group the acceptedNames of every CRD of the group, this one included.
 */
export function calculateNames(
  requested: CustomResourceDefinitionNames,
  accepted: CustomResourceDefinitionNames,
  group: readonly CustomResourceDefinitionNames[],
): { names: CustomResourceDefinitionNames; conflict?: { reason: string; message: string } } {
  const resources = new Set(group.flatMap((n) => [n.plural, n.singular, ...(n.shortNames ?? [])]));
  const kinds = new Set(group.flatMap((n) => [n.kind, n.listKind]));
  const names: CustomResourceDefinitionNames = { ...accepted };
  let conflict: { reason: string; message: string } | undefined;
  const fresh = (want: string | undefined, had: string | undefined, used: Set<string | undefined>) =>
    want === had || !used.has(want) ? undefined : `"${want}" is already in use`;
  const one = (
    key: 'plural' | 'singular' | 'kind' | 'listKind',
    reason: string,
    used: Set<string | undefined>,
  ) => {
    const err = fresh(requested[key], accepted[key], used);
    if (err) conflict = { reason, message: err };
    else if (requested[key] === undefined) delete names[key];
    else names[key] = requested[key];
  };
  one('plural', 'PluralConflict', resources);
  one('singular', 'SingularConflict', resources);
  if (!isDeepStrictEqual(requested.shortNames, accepted.shortNames)) {
    const mine = new Set(accepted.shortNames ?? []);
    const errs = (requested.shortNames ?? [])
      .filter((s) => !mine.has(s))
      .map((s) => fresh(s, '', resources))
      .filter((e): e is string => e !== undefined);
    if (errs.length > 0)
      conflict = {
        reason: 'ShortNamesConflict',
        message: errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`,
      };
    else if (requested.shortNames === undefined) delete names.shortNames;
    else names.shortNames = [...requested.shortNames];
  }
  one('kind', 'KindConflict', kinds);
  one('listKind', 'ListKindConflict', kinds);
  if (requested.categories === undefined) delete names.categories;
  else names.categories = [...requested.categories];
  return conflict ? { names, conflict } : { names };
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
      if (err instanceof ApiError && err.code === 404) {
        // Its names are free now: the others of its group may take them.
        await this.requeueGroup(name);
        return;
      }
      throw err;
    }
    if (crd.metadata?.deletionTimestamp) {
      if (crd.metadata.finalizers?.includes(CUSTOM_RESOURCE_CLEANUP_FINALIZER)) await this.finalize(crd);
      return;
    }
    const next = structuredClone(crd);
    const now = this.now();
    const all = (await this.cfg.crds.list(undefined)).items as CustomResourceDefinition[];
    const group = all
      .filter((c) => c.spec.group === crd.spec.group && c.status?.acceptedNames)
      .map((c) => (c.metadata?.name === name ? crd : c).status!.acceptedNames!);
    const { names, conflict } = calculateNames(crd.spec.names ?? {}, crd.status?.acceptedNames ?? {}, group);
    const status = (next.status ??= {});
    status.acceptedNames = names;
    setCRDCondition(
      next,
      conflict
        ? { type: 'NamesAccepted', status: 'False', ...conflict }
        : { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' },
      now,
    );
    // Established once the names were accepted, and from then on whatever the names do
    // (the establishing controller's InitialNamesAccepted; upstream passes through
    // Installing in between, which k8ts needs not: its table serves from the CRD watch).
    if (!isCRDConditionTrue(next, 'Established'))
      setCRDCondition(
        next,
        conflict
          ? {
              type: 'Established',
              status: 'False',
              reason: 'NotAccepted',
              message: 'not all names are accepted',
            }
          : {
              type: 'Established',
              status: 'True',
              reason: 'InitialNamesAccepted',
              message: 'the initial names have been accepted',
            },
        now,
      );
    if (isDeepStrictEqual(next.status, crd.status)) return;
    await this.cfg.crds.update(undefined, name, next, { subresource: 'status' });
    // Names it gave up or took change what the others of its group may take.
    await this.requeueGroup(name);
  }

  /** Queues every other CRD of the group of CRD `name` (`<plural>.<group>`), as upstream's requeueAllOtherGroupCRDs. */
  private async requeueGroup(name: string): Promise<void> {
    const group = name.slice(name.indexOf('.') + 1);
    for (const c of (await this.cfg.crds.list(undefined)).items as CustomResourceDefinition[])
      if (c.spec.group === group && c.metadata?.name !== name) this.enqueue(c.metadata!.name!);
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
