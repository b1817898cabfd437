/**
 * A resource strategy: what is specific to one kind in the generic registry's create,
 * update and status flows (as the apiserver's `rest.RESTCreateStrategy` /
 * `RESTUpdateStrategy` per resource). Everything generic (names, uid, timestamps,
 * resourceVersion, optimistic concurrency, storage) stays in the registry.
 *
 * Order on create:  prepareForCreate → defaults → validate → warningsOnCreate (→ write)
 * Order on update:  prepareForUpdate → defaults → validate + validateUpdate → generation
 *                   → warningsOnUpdate (→ write)
 * Order on status:  prepareForStatusUpdate → validateStatusUpdate (→ write)
 * Order on finalize: prepareForFinalizeUpdate → validateFinalizeUpdate (→ write)
 * Around a write: checkEscalation before it (the API server, for the writer), afterCreate
 * after a create (the registry, with the server's other registries).
 *
 * All hooks mutate the given object in place and never touch the store; validation
 * returns field errors (empty = valid) instead of throwing.
 */
import type { UserInfo } from '../../api/auth/user.js';
import type { FieldError } from '../../api/meta/validation.js';
import type { KubeObject } from '../../api/object.js';
import type { PolicyRule } from './auth/rbac.js';
import type { StorageCodec } from './registry.js';

/**
 * What a strategy's escalation check may learn about the writer of one request (the API
 * server builds it from its authorizer and RBAC objects; see Strategy.checkEscalation).
 */
export interface WriteAuthority {
  readonly user: UserInfo;
  /** The request's API group and resource (`rbac.authorization.k8s.io`, `roles`), as a Forbidden answer names them. */
  readonly group: string;
  readonly resource: string;
  /** The request's namespace; undefined for a cluster-scoped resource. */
  readonly namespace: string | undefined;
  /** The request's name; undefined on create. */
  readonly name: string | undefined;
  /** Whether the authorizer allows the writer `verb` on `resource` (of `group`, in `namespace`) named `name`. */
  may(verb: string, resource: string, name: string): Promise<boolean>;
  /** The RBAC rules the writer holds in `namespace` (cluster-wide ones included), as RBAC's RulesFor. */
  rules(): Promise<PolicyRule[]>;
  /** A Role (in `namespace`; none without one) or ClusterRole by name; undefined when there is none. */
  role(kind: 'Role' | 'ClusterRole', name: string): Promise<KubeObject | undefined>;
}

/**
 * The check of one write that an escalation check returns: called with the object about to
 * be written and, for an update, the stored one.
 * @throws ApiError 403 Forbidden.
 */
export type WriteCheck = (obj: KubeObject, old?: KubeObject) => void;

/** Writes of other resources that a strategy's afterCreate may make (the API server's own, without admission). */
export interface RelatedWrites {
  /** Creates `body` in `namespace` (undefined: cluster-scoped) of the served resource `group`/`version`/`resource` (core: group ''). */
  create(
    group: string,
    version: string,
    resource: string,
    namespace: string | undefined,
    body: KubeObject,
  ): Promise<KubeObject>;
}

export interface Strategy {
  /**
   * Clears what a client may not set on create (as Kubernetes: e.g. `status` of kinds
   * with a status subresource, which starts empty or at its initial value) and sets
   * initial values (e.g. `metadata.generation` = 1 is set by the registry; a Pod's
   * `status.phase` = Pending here).
   */
  prepareForCreate(obj: KubeObject): void;

  /**
   * Carries over from `old` what the main resource may not change (e.g. `status` of
   * kinds with a status subresource) and bumps nothing itself: the registry increments
   * `metadata.generation` when `generationFields` changed.
   */
  prepareForUpdate(obj: KubeObject, old: KubeObject): void;

  /** For `.../status` writes: keeps everything but `status` (and labels/annotations where Kubernetes allows) from `old`. */
  prepareForStatusUpdate(obj: KubeObject, old: KubeObject): void;

  /** Server-side defaulting, the same defaults Kubernetes fills (idempotent). */
  defaults(obj: KubeObject): void;

  /**
   * Validation of a whole object (create and update), with Kubernetes' rules and field
   * paths (`spec.template.spec.containers[0].name`). The registry has already checked
   * `metadata.name`/`namespace` syntax.
   */
  validate(obj: KubeObject): FieldError[];

  /** Additional update rules (immutable fields, e.g. a Deployment's `spec.selector`). */
  validateUpdate(obj: KubeObject, old: KubeObject): FieldError[];

  /** Validation of a status write. */
  validateStatusUpdate(obj: KubeObject, old: KubeObject): FieldError[];

  /**
   * The top-level fields whose change increments `metadata.generation` (usually
   * `['spec']`; empty for kinds without generation semantics).
   */
  readonly generationFields: readonly string[];

  /**
   * Whether a PUT to a name that does not exist creates the object (201) instead of
   * answering 404, as `RESTUpdateStrategy.AllowCreateOnUpdate()`: true for Services,
   * Endpoints, Events, Leases and the four RBAC kinds, as upstream. Omitted: false.
   */
  readonly allowCreateOnUpdate?: boolean;

  /**
   * Whether a DELETE that removes the object at once answers with the object (true) or
   * with a `Status` naming it (name, group, resource, uid), as the generic registry's
   * `ReturnDeletedObject`: true for Pods, Services, ServiceAccounts, Namespaces,
   * PersistentVolumes, PersistentVolumeClaims and StorageClasses, whose
   * pkg/registry/.../storage/storage.go set it. Omitted: false.
   */
  readonly returnDeletedObject?: boolean;

  /**
   * For a kind served in a version other than its storage version (autoscaling/v1
   * HorizontalPodAutoscalers, stored as autoscaling/v2): the conversion the registry and
   * the watch cache apply to every object written and read. Omitted: stored as served.
   */
  readonly storageCodec?: StorageCodec;

  /**
   * The field-selector values of an object: `metadata.name` and `metadata.namespace`
   * always, plus kind-specific ones (pods: `spec.nodeName`, `status.phase`, ...).
   * A selector on a field not listed here is refused with 400 BadRequest.
   */
  selectableFields(obj: KubeObject): Record<string, string>;

  /**
   * Finalizers a kind keeps outside `metadata.finalizers` that hold a deleted object the
   * same way: while any is left, a DELETE only marks the object and an update does not
   * remove it (a Namespace's `spec.finalizers`, as Kubernetes'
   * ShouldDeleteNamespaceDuringUpdate). Omitted: none.
   */
  specFinalizers?(obj: KubeObject): readonly string[];

  /** Called on the copy a DELETE marks terminating (a Namespace's `status.phase: Terminating`). */
  prepareForDelete?(obj: KubeObject): void;

  /**
   * For `.../finalize` writes (Namespaces only, as Kubernetes' namespaceFinalizeStrategy):
   * keeps everything but what the subresource may change from `old`. Omitted: the kind
   * has no finalize subresource.
   */
  prepareForFinalizeUpdate?(obj: KubeObject, old: KubeObject): void;

  /** Validation of a finalize write. */
  validateFinalizeUpdate?(obj: KubeObject, old: KubeObject): FieldError[];

  /**
   * Escalation prevention of a create, update or patch of the main resource, when the
   * server enforces authorization (RBAC's Roles, ClusterRoles and bindings, as Kubernetes'
   * policybased REST storage). `source` is what a binding write grants the roleRef of: the
   * body of a create or update, the stored object for a patch. Resolves to the check of the
   * object about to be written, or undefined when there is nothing to check. Omitted:
   * nothing is checked.
   * @throws ApiError (e.g. 404 when a binding's role does not exist).
   */
  checkEscalation?(
    authority: WriteAuthority,
    source: KubeObject | undefined,
  ): Promise<WriteCheck | undefined>;

  /**
   * Called with the stored object after a create that was not a dry run, before the
   * create answers (a Namespace's `default` ServiceAccount). Its error fails the request;
   * the object stays created. Omitted: nothing more is written.
   */
  afterCreate?(obj: KubeObject, related: RelatedWrites): Promise<void>;

  /**
   * Whether an update bumps `metadata.generation`, for kinds where that is not a list of
   * top-level fields (custom resources: any change but metadata, and status when the
   * status subresource is on). Omitted: `generationFields` decide.
   */
  generationChanged?(obj: KubeObject, old: KubeObject): boolean;

  /**
   * Finalizers a DELETE adds before it marks the object (a CRD's
   * `customresourcecleanup.apiextensions.k8s.io`, as upstream's CRD REST Delete), so the
   * object stays until their owner removes them. Omitted: none.
   */
  deleteFinalizers?(obj: KubeObject): readonly string[];

  /**
   * Removes, in place, the fields the kind's schema does not declare and returns their
   * paths (`spec.foo`), for `fieldValidation` (custom resources, pruned by their CRD's
   * structural schema). Omitted: the handlers prune by the kind's client-node model.
   */
  unknownFields?(obj: KubeObject): string[];

  /**
   * The PATCH content types the kind accepts; another is 415 (custom resources take no
   * strategic merge patch, as upstream). Omitted: all four.
   */
  readonly patchTypes?: readonly string[];

  /**
   * The warnings a valid create sends back (`Warning: 299` headers; kubectl prints them as
   * `Warning: <text>`), as `RESTCreateStrategy.WarningsOnCreate`: e.g. a Deployment's pod
   * template with a duplicate env name. Called after validation passed, on the object about
   * to be written. Omitted: none.
   */
  warningsOnCreate?(obj: KubeObject): string[];

  /**
   * The warnings of a valid update of the main resource (not status or finalize writes), as
   * `RESTUpdateStrategy.WarningsOnUpdate`: called after validation, with `metadata.generation`
   * already set, so a kind can warn only when its spec changed (as upstream's workloads do).
   * Omitted: none.
   */
  warningsOnUpdate?(obj: KubeObject, old: KubeObject): string[];

  /**
   * The scale subresource of a kind whose replicas are not at `spec.replicas` with a
   * `spec.selector` (custom resources: the CRD's scale paths). Omitted: the built-in shape.
   */
  readonly scale?: ScaleAccessor;
}

/** Where a kind keeps what its autoscaling/v1 Scale shows. */
export interface ScaleAccessor {
  /** Desired and observed replicas and the label selector (string form) of `obj`. */
  read(obj: KubeObject): { specReplicas: number; statusReplicas: number; selector: string };
  /** Sets the desired replicas of `obj`, in place. */
  setReplicas(obj: KubeObject, replicas: number): void;
}
