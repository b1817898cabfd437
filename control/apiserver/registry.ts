/**
 * The generic registry: create, get, list, update, delete of one resource over the
 * Store, with what Kubernetes' generic registry (`registry/generic/registry.Store`) does
 * for every kind — names and `generateName`, uid, creationTimestamp, generation,
 * resourceVersion from the store's modRevision, optimistic concurrency, finalizers and
 * graceful deletion — and a `Strategy` for what is specific to the kind.
 *
 * Objects are stored as JSON without `metadata.resourceVersion` (the store's modRevision
 * is the resourceVersion, set on every read), under `storageKey()` of resources.ts.
 *
 * Every method either succeeds or throws an `ApiError` having written nothing (but a
 * strategy's afterCreate, which runs once the object is stored).
 *
 * Why one file of about 740 lines: it is one class, Kubernetes' `registry.Store`, whose
 * verbs share one write path — names and system fields, the strategy's hooks in their
 * order, the compare-and-swap retry, finalizers and graceful deletion — and its private
 * helpers serve all of them. What varies by kind is already outside it (strategies/,
 * RegistryHooks), as are the request handling (handlers/) and the HTTP errors (status.ts).
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { FieldSelector } from '../../api/meta/fields.js';
import type { LabelSelector } from '../../api/meta/labels.js';
import {
  generateName,
  invalid as invalidField,
  isDNS1123Label,
  nameIsDNSSubdomain,
  required,
  toStatusCauses,
  type FieldError,
} from '../../api/meta/validation.js';
import { rfc3339, type KubeList, type KubeObject, type ObjectMeta } from '../../api/object.js';
import { isStorageError } from '../storage/errors.js';
import { jsonValue } from '../storage/validate.js';
import type { KeyValue, Store } from '../storage/store.js';
import { groupVersion, storageKey, storagePrefix, type ResourceInfo } from './resources.js';
import { badRequest, conflict, invalid, notFound, toApiError, ApiError, type ResourceRef } from './status.js';
import type { RelatedWrites, ScaleAccessor, Strategy, WriteAuthority, WriteCheck } from './strategy.js';

export interface RegistryConfig {
  store: Store;
  resource: ResourceInfo;
  strategy: Strategy;
  /** Validates an object name (`prefix` true for a generateName prefix); Kubernetes' ValidateNameFunc. Default: DNS subdomain. */
  validateName?: (name: string, prefix: boolean) => string[];
  /** Wall clock, injectable for tests. */
  now?: () => Date;
  /** uid generator, injectable for tests. */
  uid?: () => string;
  /** Work tied to this kind's writes beyond the strategy (a Service's clusterIP and nodePorts). */
  hooks?: RegistryHooks;
  /** The other resources' writes the strategy's afterCreate makes (the API server's registries); without it, afterCreate is not called. */
  related?: RelatedWrites;
  /**
   * For a resource served in a version other than the one it is stored in (autoscaling/v1
   * HorizontalPodAutoscalers over the stored autoscaling/v2 ones): converts every object
   * on its way to and from the store. Without it, objects are stored as served.
   */
  codec?: StorageCodec;
}

/** Conversion between a served version and the storage version (the apiserver's codec of a resource). */
export interface StorageCodec {
  /** The storage form of a served object (its apiVersion included); must not fail for a valid object. */
  toStorage(obj: KubeObject): KubeObject;
  /** The served form of a stored object. */
  fromStorage(obj: KubeObject): KubeObject;
}

/**
 * Ends what a begin-hook started: `success` true once the object is stored, false when the
 * write failed or was a dry run (the hook then undoes what it reserved). Never throws.
 */
export type FinishFunc = (success: boolean) => Promise<void>;

/**
 * Kubernetes' generic registry `BeginCreate` / `BeginUpdate` / `AfterDelete` hooks, for
 * kinds whose writes reserve something outside the object (the Service REST's clusterIP
 * and nodePort allocation). Begin-hooks run after validation, just before the store write,
 * may fill fields of `obj`, and throw an ApiError to refuse the request (having reserved
 * nothing); their FinishFunc is called with the write's outcome.
 */
export interface RegistryHooks {
  beginCreate?(obj: KubeObject, opts: { dryRun: boolean }): Promise<FinishFunc>;
  beginUpdate?(obj: KubeObject, old: KubeObject, opts: { dryRun: boolean }): Promise<FinishFunc>;
  /** Called with the removed object once a delete took it out of the store. Never throws. */
  afterDelete?(obj: KubeObject): Promise<void>;
}

export interface ListQuery {
  labelSelector?: LabelSelector;
  fieldSelector?: FieldSelector;
  limit?: number;
  continue?: string;
  /** The list's `resourceVersion` parameter: read at that revision ('' / '0' = current). */
  resourceVersion?: string;
}

/** Options of writes. */
export interface WriteOptions {
  dryRun?: boolean;
  /**
   * Called with the final object (defaulted and valid) and the stored one just before the
   * write, e.g. to record managedFields. May mutate `obj`. On create, `sent` is what the
   * client sent with the kind's defaults but before the strategy's prepareForCreate (and
   * admission): the object Kubernetes' create handler records managedFields from
   * (fieldManager.UpdateNoErrors runs before rest.BeforeCreate), so what the server adds
   * (a Job's generated selector and labels) belongs to no manager.
   */
  beforeWrite?: (obj: KubeObject, old: KubeObject | undefined, sent?: KubeObject) => void;
  /**
   * Validating admission (admission/index.ts): called with the object about to be
   * written — defaulted and valid, a create's generated name set — and the stored one it
   * replaces (undefined on create), before `beforeWrite`, and again on each retry of a
   * read-modify-write. Must not change `obj`. Throws (an ApiError) to refuse: nothing is
   * written.
   */
  admit?: (obj: KubeObject, old: KubeObject | undefined) => void | Promise<void>;
  /**
   * The caller hands its body over (a freshly decoded request body it does not look at
   * again; for guaranteedUpdate, `mutate` returns an object nobody else holds) and only
   * serializes what comes back. The registry then does not copy the body, and answers
   * with the object it wrote (resourceVersion set) instead of decoding the stored value
   * again — the same JSON, but fields set to `undefined` may be present. Default false.
   */
  owned?: boolean;
  /**
   * Where the strategy's warnings of this write go (warningsOnCreate / warningsOnUpdate,
   * after validation passed): the request's `Warning` headers. Called again on each retry
   * of a read-modify-write (the recorder drops repeats). Without it, none are computed.
   */
  warn?: (message: string) => void;
}

export interface DeleteOptions {
  /** Do everything but write (`dryRun=All`): the answer shows what would happen. */
  dryRun?: boolean;
  /** Seconds; 0 = immediately. Only pods bound to a node honour a grace period (as Kubernetes). */
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  /** The deprecated `orphanDependents` as sent (undefined when not sent); only its `false` changes the answer's code. */
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
}

/** What a DELETE did: the object is gone, or it is terminating (finalizers or grace period). */
export interface DeleteResult {
  object: KubeObject;
  /** True when the object was removed from the store now. */
  deleted: boolean;
}

/** How often a create with generateName retries on a name collision. */
const GENERATE_NAME_ATTEMPTS = 8;
/** How often a read-modify-write retries on a storage conflict before answering 409. */
const GUARANTEED_UPDATE_ATTEMPTS = 16;

/** The subresources whose writes go through the update rules: `status`, and a Namespace's `finalize`. */
export type UpdateSubresource = 'status' | 'finalize';

/** Kubernetes' finalizers for deletion propagation. */
export const FINALIZER_ORPHAN = 'orphan';
export const FINALIZER_FOREGROUND = 'foregroundDeletion';

export class Registry {
  readonly resource: ResourceInfo;
  private readonly store: Store;
  private readonly strategy: Strategy;
  private readonly validateName: (name: string, prefix: boolean) => string[];
  /** The clock of this registry's timestamps (creationTimestamp, deletionTimestamp, conditions its subresources set). */
  readonly now: () => Date;
  private readonly uid: () => string;
  private readonly hooks: RegistryHooks;
  private readonly related: RelatedWrites | undefined;
  /** The conversion to and from the storage version, if the resource is not stored as served. */
  readonly codec: StorageCodec | undefined;

  constructor(cfg: RegistryConfig) {
    if (!cfg.store || !cfg.resource || !cfg.strategy)
      throw new Error('Registry: store, resource and strategy are required');
    this.store = cfg.store;
    this.resource = cfg.resource;
    this.strategy = cfg.strategy;
    this.validateName = cfg.validateName ?? nameIsDNSSubdomain;
    this.now = cfg.now ?? (() => new Date());
    this.uid = cfg.uid ?? randomUUID;
    this.hooks = cfg.hooks ?? {};
    this.related = cfg.related;
    this.codec = cfg.codec ?? cfg.strategy.storageCodec;
  }

  /** The stored form of an API object (through the codec of a resource served in a version it is not stored in). */
  private encode(obj: KubeObject): string {
    return encode(this.codec ? this.codec.toStorage(obj) : obj);
  }

  /** The API form of a stored value. */
  private decode(kv: KeyValue): KubeObject {
    const obj = decode(kv);
    return this.codec ? this.codec.fromStorage(obj) : obj;
  }

  /** See the module function written(): the owned object itself, else the stored value decoded. */
  private written(obj: KubeObject, kv: KeyValue, owned: boolean | undefined): KubeObject {
    if (!owned) return this.decode(kv);
    (obj.metadata ??= {}).resourceVersion = String(kv.modRevision);
    return obj;
  }

  /**
   * Creates an object (POST). `namespace` is the request's namespace (undefined for
   * cluster-scoped resources); the body's namespace must agree with it.
   * @returns the stored object, with resourceVersion.
   * @throws ApiError 400 (namespace mismatch, wrong kind), 409 AlreadyExists, 422 Invalid.
   */
  async create(
    namespace: string | undefined,
    body: KubeObject,
    opts: WriteOptions = {},
  ): Promise<KubeObject> {
    const obj = opts.owned ? body : structuredClone(body);
    this.checkTypeMeta(obj);
    const meta = (obj.metadata ??= {});
    this.checkNamespace(meta, namespace);
    // As Store.Create: the name is generated first, so validation (and its message) sees it.
    const generated = !meta.name && !!meta.generateName;
    if (generated) meta.name = generateName(meta.generateName!);
    // ValidateObjectMeta's first rules, ahead of the kind's own errors in one Invalid.
    const nameErrors: FieldError[] = [];
    if (meta.generateName) {
      for (const m of this.validateName(meta.generateName, true))
        nameErrors.push(invalidField('metadata.generateName', meta.generateName, m));
    }
    if (!meta.name) nameErrors.push(required('metadata.name', 'name or generateName is required'));
    else
      for (const m of this.validateName(meta.name, false))
        nameErrors.push(invalidField('metadata.name', meta.name, m));

    // System fields: whatever the client sent is replaced, as Kubernetes' FillObjectMetaSystemFields.
    meta.uid = this.uid();
    meta.creationTimestamp = rfc3339(this.now());
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    if (this.strategy.generationFields.length > 0 || this.strategy.generationChanged) meta.generation = 1;
    else delete meta.generation;
    const sent = opts.beforeWrite ? structuredClone(obj) : undefined;
    this.strategy.prepareForCreate(obj);
    this.strategy.defaults(obj);
    if (sent) this.strategy.defaults(sent);
    this.validate(obj, [...nameErrors, ...this.strategy.validate(obj)]);
    // As rest.BeforeCreate: the kind's warnings once validation passed, before admission.
    if (opts.warn) for (const w of this.strategy.warningsOnCreate?.(obj) ?? []) opts.warn(w);
    await opts.admit?.(obj, undefined);
    opts.beforeWrite?.(obj, undefined, sent);
    const finish = await this.hooks.beginCreate?.(obj, { dryRun: opts.dryRun === true });
    if (opts.dryRun) {
      await finish?.(false);
      return obj;
    }

    let stored: KubeObject;
    for (let attempt = 1; ; attempt++) {
      try {
        const kv = await this.store.create(this.key(namespace, meta.name!), this.encode(obj));
        await finish?.(true);
        stored = this.written(obj, kv, opts.owned);
        break;
      } catch (err) {
        if (generated && isStorageError(err, 'KeyExists') && attempt < GENERATE_NAME_ATTEMPTS) {
          meta.name = generateName(meta.generateName ?? '');
          continue;
        }
        await finish?.(false);
        throw toApiError(err, this.ref(meta.name));
      }
    }
    if (this.strategy.afterCreate && this.related) await this.strategy.afterCreate(stored, this.related);
    return stored;
  }

  /**
   * Reads one object.
   * @throws ApiError 404 NotFound.
   */
  async get(namespace: string | undefined, name: string): Promise<KubeObject> {
    const kv = await this.read(namespace, name);
    return this.decode(kv);
  }

  /**
   * Lists objects (of one namespace, or all), filtered by label and field selectors, one
   * page at a time with `limit`/`continue` (every page of one list reads one snapshot).
   * Selectors are applied after paging, so a page may hold fewer than `limit` items while
   * a `continue` token is still returned — as Kubernetes does.
   * @throws ApiError 410 Expired (continue token or resourceVersion compacted), 400 (bad parameters).
   */
  async list(namespace: string | undefined, q: ListQuery = {}): Promise<KubeList> {
    const revision = parseResourceVersion(q.resourceVersion, 'resourceVersion');
    const prefix = storagePrefix(this.resource, this.resource.namespaced ? namespace : undefined);
    try {
      const page = await this.store.list(prefix, {
        ...(q.limit ? { limit: q.limit } : {}),
        ...(q.continue ? { continue: q.continue } : revision ? { revision } : {}),
      });
      const items: KubeObject[] = [];
      for (const kv of page.items) {
        const obj = this.decode(kv);
        if (this.matches(obj, q)) items.push(obj);
      }
      const list: KubeList = {
        apiVersion: groupVersion(this.resource),
        kind: this.resource.listKind,
        metadata: { resourceVersion: String(page.revision) },
        items,
      };
      if (page.continue) list.metadata.continue = page.continue;
      return list;
    } catch (err) {
      if (isStorageError(err, 'Compacted') && q.continue) {
        throw new ApiError(
          410,
          'Expired',
          'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
        );
      }
      throw toApiError(err, this.ref());
    }
  }

  /** True when the object passes the label and field selectors of `q`. */
  matches(obj: KubeObject, q: Pick<ListQuery, 'labelSelector' | 'fieldSelector'>): boolean {
    if (q.labelSelector && !q.labelSelector.matches(obj.metadata?.labels)) return false;
    if (q.fieldSelector && !q.fieldSelector.empty) {
      const fields = this.strategy.selectableFields(obj);
      return q.fieldSelector.matches((f) => fields[f]);
    }
    return true;
  }

  /**
   * The strategy's escalation check of a write by `authority`'s user (Strategy.checkEscalation);
   * undefined when the kind has none or there is nothing to check.
   */
  checkEscalation(
    authority: WriteAuthority,
    source: KubeObject | undefined,
  ): Promise<WriteCheck | undefined> {
    return this.strategy.checkEscalation?.(authority, source) ?? Promise.resolve(undefined);
  }

  /** Whether a PUT to a missing name creates it (the strategy's `allowCreateOnUpdate`). */
  get allowCreateOnUpdate(): boolean {
    return this.strategy.allowCreateOnUpdate === true;
  }

  /** Whether an immediate DELETE answers with the object (the strategy's `returnDeletedObject`). */
  get returnDeletedObject(): boolean {
    return this.strategy.returnDeletedObject === true;
  }

  /** See Strategy.unknownFields; undefined when the kind prunes by its client-node model. */
  unknownFields(obj: KubeObject): string[] | undefined {
    return this.strategy.unknownFields?.(obj);
  }

  /** Whether the kind accepts PATCH bodies of `type` (Strategy.patchTypes). */
  acceptsPatchType(type: string): boolean {
    return this.strategy.patchTypes?.includes(type) ?? true;
  }

  /** See Strategy.scale; undefined for the built-in shape. */
  get scale(): ScaleAccessor | undefined {
    return this.strategy.scale;
  }

  /** The fields a field selector may name for this resource (from the strategy). */
  selectableFieldNames(): string[] {
    return Object.keys(this.strategy.selectableFields({ metadata: { name: '', namespace: '' } }));
  }

  /**
   * Replaces an object (PUT), or its status with `subresource: 'status'`. A
   * `metadata.resourceVersion` in the body must be the current one (409 Conflict
   * otherwise); without one the update is unconditional, as Kubernetes allows.
   * @throws ApiError 404, 409 Conflict, 422 Invalid (immutable or invalid fields), 400.
   */
  async update(
    namespace: string | undefined,
    name: string,
    body: KubeObject,
    opts: WriteOptions & { subresource?: UpdateSubresource } = {},
  ): Promise<KubeObject> {
    const obj = opts.owned ? body : structuredClone(body);
    this.checkTypeMeta(obj);
    const meta = (obj.metadata ??= {});
    this.checkNamespace(meta, namespace);
    if (meta.name !== undefined && meta.name !== name) {
      throw badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
    }
    meta.name = name;
    const expected = parseResourceVersion(meta.resourceVersion, 'metadata.resourceVersion');
    const current = await this.read(namespace, name);
    if (expected && expected !== current.modRevision) throw conflict(this.ref(name));
    const old = this.decode(current);
    const next = this.prepareUpdate(obj, old, opts.subresource, opts.warn);
    await opts.admit?.(next, old);
    if (unchanged(next, old)) return old;
    opts.beforeWrite?.(next, old);
    const finish = await this.beginUpdate(next, old, opts);
    if (opts.dryRun) {
      await finish?.(false);
      return next;
    }
    try {
      const kv = await this.store.update(current.key, this.encode(next), current.modRevision);
      await finish?.(true);
      return this.written(next, kv, opts.owned);
    } catch (err) {
      await finish?.(false);
      throw toApiError(err, this.ref(name));
    }
  }

  /**
   * Read-modify-write (PATCH, scale, binding): reads the current object, applies `mutate`
   * to a copy, runs the update rules, and writes guarded by the read revision; on a
   * storage conflict it reads again and retries (as Kubernetes' GuaranteedUpdate), so
   * concurrent patches of different fields both land.
   * @throws ApiError from `mutate`, 404, 409 (after repeated conflicts), 422.
   */
  async guaranteedUpdate(
    namespace: string | undefined,
    name: string,
    mutate: (current: KubeObject) => KubeObject | Promise<KubeObject>,
    opts: WriteOptions & { subresource?: UpdateSubresource } = {},
  ): Promise<KubeObject> {
    for (let attempt = 1; ; attempt++) {
      const kv = await this.read(namespace, name);
      const current = this.decode(kv);
      // `mutate` gets a copy of its own (decoding again is cheaper than structuredClone).
      const mutated = await mutate(this.decode(kv));
      const changed = opts.owned ? mutated : structuredClone(mutated);
      const meta = (changed.metadata ??= {});
      if (meta.name !== name)
        throw badRequest(
          `the name of the object (${meta.name}) does not match the name on the URL (${name})`,
        );
      this.checkNamespace(meta, namespace);
      this.checkTypeMeta(changed);
      const expected = parseResourceVersion(meta.resourceVersion, 'metadata.resourceVersion');
      if (expected && expected !== kv.modRevision) throw conflict(this.ref(name));
      const next = this.prepareUpdate(changed, current, opts.subresource, opts.warn);
      await opts.admit?.(next, current);
      if (unchanged(next, current)) return current;
      opts.beforeWrite?.(next, current);
      const finish = await this.beginUpdate(next, current, opts);
      if (opts.dryRun) {
        await finish?.(false);
        return next;
      }
      try {
        const stored = await this.store.update(kv.key, this.encode(next), kv.modRevision);
        await finish?.(true);
        return this.written(next, stored, opts.owned);
      } catch (err) {
        await finish?.(false);
        // Retrying re-applies `mutate` to a fresh read: a resourceVersion the client put in
        // its patch then no longer matches and answers 409 above, as Kubernetes does.
        if (isStorageError(err, 'Conflict') && attempt < GUARANTEED_UPDATE_ATTEMPTS) continue;
        throw toApiError(err, this.ref(name));
      }
    }
  }

  /**
   * A read-modify-write below the strategy, as Kubernetes' BindingREST writes through
   * `store.Storage.GuaranteedUpdate`: no defaults, validation, managedFields, generation
   * or hooks. `tryUpdate` gets a freshly decoded object (with resourceVersion) that it
   * owns, changes it in place, and must keep it valid; it may throw (an ApiError) to
   * refuse. On a storage conflict the object is read again and `tryUpdate` runs again.
   * With `dryRun`, nothing is written.
   * @returns the revision written (the object's new resourceVersion); undefined for a dry run.
   * @throws ApiError from `tryUpdate`, 404, 409 (after repeated conflicts).
   */
  async updateInStorage(
    namespace: string | undefined,
    name: string,
    tryUpdate: (obj: KubeObject) => void,
    opts: { dryRun?: boolean } = {},
  ): Promise<number | undefined> {
    for (let attempt = 1; ; attempt++) {
      const kv = await this.read(namespace, name);
      const obj = this.decode(kv);
      tryUpdate(obj);
      if (opts.dryRun) return undefined;
      try {
        return (await this.store.update(kv.key, this.encode(obj), kv.modRevision)).modRevision;
      } catch (err) {
        if (isStorageError(err, 'Conflict') && attempt < GUARANTEED_UPDATE_ATTEMPTS) continue;
        throw toApiError(err, this.ref(name));
      }
    }
  }

  /**
   * Deletes an object (DELETE). Objects with finalizers (metadata's, or the strategy's
   * specFinalizers such as a Namespace's spec.finalizers), or deleted with propagation
   * Orphan/Foreground (which add the `orphan`/`foregroundDeletion` finalizers for the
   * garbage collector), and pods bound to a node with a grace period, are only marked:
   * `deletionTimestamp` and `deletionGracePeriodSeconds` are set and the object stays
   * until its finalizers are removed (or its kubelet confirms). Deleting an object that
   * is already terminating only shortens its grace period.
   * @throws ApiError 404, 409 (precondition failed), 422 (bad options).
   */
  async delete(namespace: string | undefined, name: string, opts: DeleteOptions = {}): Promise<DeleteResult> {
    if (
      opts.gracePeriodSeconds !== undefined &&
      (!Number.isInteger(opts.gracePeriodSeconds) || opts.gracePeriodSeconds < 0)
    ) {
      throw badRequest(`gracePeriodSeconds must be a non-negative integer, got ${opts.gracePeriodSeconds}`);
    }
    for (let attempt = 1; ; attempt++) {
      const kv = await this.read(namespace, name);
      const current = this.decode(kv);
      const meta = current.metadata!;
      if (opts.preconditions?.uid && opts.preconditions.uid !== meta.uid) {
        throw conflict(
          this.ref(name),
          `Precondition failed: UID in precondition: ${opts.preconditions.uid}, UID in object meta: ${meta.uid}`,
        );
      }
      if (
        opts.preconditions?.resourceVersion &&
        opts.preconditions.resourceVersion !== meta.resourceVersion
      ) {
        throw conflict(
          this.ref(name),
          `Precondition failed: ResourceVersion in precondition: ${opts.preconditions.resourceVersion}, ResourceVersion in object meta: ${meta.resourceVersion}`,
        );
      }
      const finalizers = new Set(meta.finalizers ?? []);
      for (const f of this.strategy.deleteFinalizers?.(current) ?? []) finalizers.add(f);
      if (opts.propagationPolicy === 'Orphan') {
        finalizers.add(FINALIZER_ORPHAN);
        finalizers.delete(FINALIZER_FOREGROUND);
      } else if (opts.propagationPolicy === 'Foreground') {
        finalizers.add(FINALIZER_FOREGROUND);
        finalizers.delete(FINALIZER_ORPHAN);
      } else if (opts.propagationPolicy === 'Background') {
        finalizers.delete(FINALIZER_ORPHAN);
        finalizers.delete(FINALIZER_FOREGROUND);
      }
      const grace = this.gracePeriod(current, opts);
      const specFinalizers = this.strategy.specFinalizers?.(current) ?? [];
      try {
        if (finalizers.size === 0 && specFinalizers.length === 0 && grace === 0) {
          if (opts.dryRun) return { object: current, deleted: true };
          const { deleted } = await this.store.delete(kv.key, kv.modRevision);
          const removed = this.decode(deleted);
          await this.hooks.afterDelete?.(removed);
          return { object: removed, deleted: true };
        }
        // Graceful: mark, and leave the removal to the finalizers' owners or the kubelet.
        const next = structuredClone(current);
        const m = next.metadata!;
        if (!m.deletionTimestamp || (m.deletionGracePeriodSeconds ?? 0) > grace) {
          m.deletionTimestamp = rfc3339(new Date(this.now().getTime() + grace * 1000));
          m.deletionGracePeriodSeconds = grace;
        }
        if (finalizers.size > 0) m.finalizers = [...finalizers];
        else delete m.finalizers;
        this.strategy.prepareForDelete?.(next);
        if (opts.dryRun) return { object: next, deleted: false };
        const stored = await this.store.update(kv.key, this.encode(next), kv.modRevision);
        return { object: this.decode(stored), deleted: false };
      } catch (err) {
        if (isStorageError(err, 'Conflict') && attempt < GUARANTEED_UPDATE_ATTEMPTS) continue;
        throw toApiError(err, this.ref(name));
      }
    }
  }

  /**
   * Removes an object whose deletion is complete: called after an update that leaves a
   * terminating object without finalizers (Kubernetes deletes it then, in the same
   * request). Returns true when it was removed.
   */
  async finishDeletionIfDone(obj: KubeObject): Promise<boolean> {
    const m = obj.metadata;
    if (!m?.deletionTimestamp || (m.finalizers?.length ?? 0) > 0 || (m.deletionGracePeriodSeconds ?? 0) > 0)
      return false;
    if ((this.strategy.specFinalizers?.(obj).length ?? 0) > 0) return false;
    try {
      await this.store.delete(this.key(m.namespace, m.name!), Number(m.resourceVersion));
      await this.hooks.afterDelete?.(obj);
      return true;
    } catch (err) {
      if (isStorageError(err, 'Conflict') || isStorageError(err, 'KeyNotFound')) return false;
      throw toApiError(err, this.ref(m.name));
    }
  }

  /** The update hook of a main-resource write (status and finalize writes change no spec). */
  private beginUpdate(
    obj: KubeObject,
    old: KubeObject,
    opts: WriteOptions & { subresource?: UpdateSubresource },
  ): Promise<FinishFunc> | undefined {
    if (opts.subresource !== undefined) return undefined;
    return this.hooks.beginUpdate?.(obj, old, { dryRun: opts.dryRun === true });
  }

  /** The grace period a delete gets: 0 except for pods bound to a node (as Kubernetes' pod strategy). */
  private gracePeriod(obj: KubeObject, opts: DeleteOptions): number {
    if (this.resource.group !== '' || this.resource.resource !== 'pods') return 0;
    const spec = obj.spec as { nodeName?: string; terminationGracePeriodSeconds?: number } | undefined;
    const status = obj.status as { phase?: string } | undefined;
    // A pod never scheduled, or already finished, has no process to stop.
    if (!spec?.nodeName || status?.phase === 'Succeeded' || status?.phase === 'Failed') return 0;
    const grace = opts.gracePeriodSeconds ?? spec.terminationGracePeriodSeconds ?? 30;
    return grace;
  }

  /**
   * The update rules shared by PUT and read-modify-write; `warn` gets the strategy's
   * warnings of a valid main-resource update (as rest.BeforeUpdate).
   */
  private prepareUpdate(
    obj: KubeObject,
    old: KubeObject,
    subresource: UpdateSubresource | undefined,
    warn?: (message: string) => void,
  ): KubeObject {
    const meta = obj.metadata!;
    const oldMeta = old.metadata!;
    const errors: FieldError[] = [];
    // System fields: keep the stored ones; a different value sent by the client is an error.
    // System fields: the stored ones win. A different uid is an error (it names another
    // object); a different creationTimestamp is silently replaced, as Kubernetes does, so
    // manifests exported from elsewhere still apply.
    if (meta.uid !== undefined && meta.uid !== oldMeta.uid) {
      errors.push(invalidField('metadata.uid', meta.uid, 'field is immutable'));
    }
    meta.uid = oldMeta.uid;
    meta.creationTimestamp = oldMeta.creationTimestamp;
    meta.generation = oldMeta.generation;
    meta.deletionTimestamp = oldMeta.deletionTimestamp;
    meta.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
    for (const k of Object.keys(meta) as (keyof ObjectMeta)[]) if (meta[k] === undefined) delete meta[k];
    // Finalizers can be removed but not added once deletion started (as Kubernetes).
    if (oldMeta.deletionTimestamp) {
      const before = new Set(oldMeta.finalizers ?? []);
      for (const f of meta.finalizers ?? []) {
        if (!before.has(f))
          errors.push(
            invalidField(
              'metadata.finalizers',
              f,
              'no new finalizers can be added if the object is being deleted',
            ),
          );
      }
    }
    if (errors.length > 0) throw this.invalid(meta.name ?? '', errors);
    if (subresource === 'status') {
      this.strategy.prepareForStatusUpdate(obj, old);
      this.validate(obj, this.strategy.validateStatusUpdate(obj, old));
    } else if (subresource === 'finalize') {
      if (!this.strategy.prepareForFinalizeUpdate) throw notFound(this.ref(meta.name));
      this.strategy.prepareForFinalizeUpdate(obj, old);
      this.validate(obj, this.strategy.validateFinalizeUpdate?.(obj, old) ?? []);
    } else {
      this.strategy.prepareForUpdate(obj, old);
      this.strategy.defaults(obj);
      this.validate(obj, [...this.strategy.validate(obj), ...this.strategy.validateUpdate(obj, old)]);
      const bump = this.strategy.generationChanged
        ? this.strategy.generationChanged(obj, old)
        : this.strategy.generationFields.some((f) => !isDeepStrictEqual(obj[f], old[f]));
      if (bump) {
        meta.generation = (oldMeta.generation ?? 0) + 1;
      }
      if (warn) for (const w of this.strategy.warningsOnUpdate?.(obj, old) ?? []) warn(w);
    }
    delete meta.resourceVersion;
    return obj;
  }

  private validate(obj: KubeObject, errors: FieldError[]): void {
    if (errors.length > 0) throw this.invalid(obj.metadata?.name ?? '', errors);
  }

  private invalid(name: string, errors: FieldError[]): ApiError {
    // Kubernetes reports each distinct error once.
    const seen = new Set<string>();
    const distinct = errors.filter((e) => {
      const k = `${e.type}|${e.field}|${e.message}|${JSON.stringify(e.badValue)}`;
      return seen.has(k) ? false : (seen.add(k), true);
    });
    return invalid(this.resource.kind, this.ref(name), toStatusCauses(distinct));
  }

  private checkTypeMeta(obj: KubeObject): void {
    const gv = groupVersion(this.resource);
    if (obj.apiVersion !== undefined && obj.apiVersion !== gv) {
      throw badRequest(
        `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${gv})`,
      );
    }
    if (obj.kind !== undefined && obj.kind !== this.resource.kind) {
      throw badRequest(
        `the kind in the data (${String(obj.kind)}) does not match the expected kind (${this.resource.kind})`,
      );
    }
    obj.apiVersion = gv;
    obj.kind = this.resource.kind;
  }

  private checkNamespace(meta: ObjectMeta, namespace: string | undefined): void {
    if (!this.resource.namespaced) {
      delete meta.namespace;
      return;
    }
    if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== namespace) {
      throw badRequest(
        `the namespace of the provided object does not match the namespace sent on the request`,
      );
    }
    if (!namespace) throw badRequest('a namespace is required for namespaced resources');
    const msgs = isDNS1123Label(namespace);
    if (msgs.length > 0) throw notFound({ group: '', resource: 'namespaces', name: namespace });
    meta.namespace = namespace;
  }

  private async read(namespace: string | undefined, name: string): Promise<KeyValue> {
    let kv: KeyValue | undefined;
    try {
      kv = await this.store.get(this.key(namespace, name));
    } catch (err) {
      throw toApiError(err, this.ref(name));
    }
    if (!kv) throw notFound(this.ref(name));
    return kv;
  }

  private key(namespace: string | undefined, name: string): string {
    if (!name || name.includes('/')) throw notFound(this.ref(name));
    return storageKey(this.resource, this.resource.namespaced ? namespace : undefined, name);
  }

  private ref(name?: string): ResourceRef {
    return name === undefined
      ? { group: this.resource.group, resource: this.resource.resource }
      : { group: this.resource.group, resource: this.resource.resource, name };
  }
}

/**
 * True when an update would store exactly what is stored: Kubernetes then skips the
 * write, so the resourceVersion stays and watchers see no MODIFIED event.
 */
function unchanged(next: KubeObject, old: KubeObject): boolean {
  omitEmptyMetaLists(next);
  const { resourceVersion: _a, ...nextMeta } = next.metadata ?? {};
  const { resourceVersion: _b, ...oldMeta } = old.metadata ?? {};
  return isDeepStrictEqual({ ...next, metadata: nextMeta }, { ...old, metadata: oldMeta });
}

/**
 * Drops `metadata.ownerReferences` and `metadata.finalizers` when they are empty lists
 * (mutating `obj`): Kubernetes' ObjectMeta marks them `omitempty`, so an object whose last
 * owner or finalizer was removed shows neither field, and such a write of an object that
 * had none changes nothing.
 */
function omitEmptyMetaLists(obj: KubeObject): void {
  const meta = obj.metadata;
  if (!meta) return;
  if (Array.isArray(meta.ownerReferences) && meta.ownerReferences.length === 0) delete meta.ownerReferences;
  if (Array.isArray(meta.finalizers) && meta.finalizers.length === 0) delete meta.finalizers;
}

/** The stored form: JSON without `metadata.resourceVersion` (and without empty owner/finalizer lists). */
export function encode(obj: KubeObject): string {
  omitEmptyMetaLists(obj);
  if (obj.metadata?.resourceVersion === undefined) return jsonValue(obj);
  const { resourceVersion: _rv, ...metadata } = obj.metadata;
  return jsonValue({ ...obj, metadata });
}

/** The API form of a stored value: its resourceVersion is the key's modRevision. */
export function decode(kv: KeyValue): KubeObject {
  const obj = JSON.parse(kv.value) as KubeObject;
  (obj.metadata ??= {}).resourceVersion = String(kv.modRevision);
  return obj;
}

/**
 * Parses a resourceVersion parameter: undefined/'' /'0' → undefined (current), a
 * positive integer string → that revision.
 * @throws ApiError 400 BadRequest naming `what`.
 */
export function parseResourceVersion(rv: string | undefined, what: string): number | undefined {
  if (rv === undefined || rv === '' || rv === '0') return undefined;
  if (!/^[1-9]\d{0,15}$/.test(rv))
    throw badRequest(`${what}: Invalid value: "${rv}": must be a resourceVersion returned by the server`);
  return Number(rv);
}
