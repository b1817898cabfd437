/**
 * A resource strategy: what is specific to one kind in the generic registry's create,
 * update and status flows (as the apiserver's `rest.RESTCreateStrategy` /
 * `RESTUpdateStrategy` per resource). Everything generic (names, uid, timestamps,
 * resourceVersion, optimistic concurrency, storage) stays in the registry.
 *
 * Order on create:  prepareForCreate → defaults → validate (→ write)
 * Order on update:  prepareForUpdate → defaults → validate + validateUpdate (→ write)
 * Order on status:  prepareForStatusUpdate → validateStatusUpdate (→ write)
 * Order on finalize: prepareForFinalizeUpdate → validateFinalizeUpdate (→ write)
 *
 * All hooks mutate the given object in place and never touch the store; validation
 * returns field errors (empty = valid) instead of throwing.
 */
import type { FieldError } from '../../api/meta/validation.js';
import type { KubeObject } from '../../api/object.js';

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
   * answering 404, as `RESTUpdateStrategy.AllowCreateOnUpdate()`: true for Leases,
   * Endpoints and Events, which their writers PUT without a GET first. Omitted: false.
   */
  readonly allowCreateOnUpdate?: boolean;

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
}
