/**
 * The garbage collector's dependency graph (Kubernetes' pkg/controller/garbagecollector
 * graph.go + the bookkeeping half of graph_builder.go): one node per object uid, each
 * knowing its ownerReferences and its dependents. Informer events change the graph; each
 * change answers which nodes the collector must look at again:
 *
 * - attemptToDelete: a dependent whose owner went away (or never existed: an owner known
 *   only from an ownerReference is a "virtual" node, checked against the API), an owner
 *   whose foreground deletion may have finished, the dependents of an owner that started
 *   a foreground deletion;
 * - attemptToOrphan: an owner deleted with the `orphan` finalizer.
 *
 * Pure logic, no I/O: the collector (garbagecollector.ts) verifies everything against the
 * live API before it deletes, so a stale graph costs a GET, never a wrong delete.
 */
import type { KubeObject, OwnerReference } from '../../../api/object.js';

/** Kubernetes' finalizers for deletion propagation (metav1.FinalizerOrphanDependents / FinalizerDeleteDependents). */
export const FINALIZER_ORPHAN = 'orphan';
export const FINALIZER_FOREGROUND = 'foregroundDeletion';

/** Which object a node is: the coordinates of an ownerReference plus a namespace ('' when cluster-scoped or unknown). */
export interface ObjectIdentity {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/** One object in the graph. */
export class GraphNode {
  identity: ObjectIdentity;
  /** The object's ownerReferences as last observed (empty for a virtual node). */
  owners: OwnerReference[] = [];
  readonly dependents = new Set<GraphNode>();
  /** Known only from a dependent's ownerReference; not (yet) seen by an informer. */
  virtual: boolean;
  /** deletionTimestamp is set. */
  beingDeleted = false;
  /** deletionTimestamp is set and the `foregroundDeletion` finalizer waits for dependents. */
  deletingDependents = false;

  constructor(identity: ObjectIdentity, virtual: boolean) {
    this.identity = identity;
    this.virtual = virtual;
  }

  /** Dependents whose ownerReference to this node has `blockOwnerDeletion: true` (they hold a foreground deletion). */
  blockingDependents(): GraphNode[] {
    return [...this.dependents].filter((d) =>
      d.owners.some((o) => o.uid === this.identity.uid && o.blockOwnerDeletion === true),
    );
  }
}

/** An informer event (or a "virtual" delete: the collector found an owner absent with a live GET). */
export interface GraphEvent {
  type: 'add' | 'update' | 'delete';
  obj: KubeObject;
  /** The previous state, for updates. */
  oldObj?: KubeObject;
  /** A delete not seen by an informer: `identity` was verified absent. */
  virtual?: ObjectIdentity;
}

/** The uids whose nodes the collector should process after an event. */
export interface GraphActions {
  attemptToDelete: string[];
  attemptToOrphan: string[];
}

/** The identity of an object an informer delivered (apiVersion and kind as the informer fills them). */
export function identityOf(obj: KubeObject): ObjectIdentity {
  const m = obj.metadata ?? {};
  return {
    apiVersion: obj.apiVersion ?? '',
    kind: obj.kind ?? '',
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
  };
}

function sameIdentity(a: ObjectIdentity, b: ObjectIdentity): boolean {
  return (
    a.uid === b.uid &&
    a.name === b.name &&
    a.kind === b.kind &&
    a.apiVersion === b.apiVersion &&
    a.namespace === b.namespace
  );
}

function refMatches(ref: OwnerReference, id: ObjectIdentity): boolean {
  return (
    ref.uid === id.uid && ref.name === id.name && ref.kind === id.kind && ref.apiVersion === id.apiVersion
  );
}

function hasFinalizer(obj: KubeObject | undefined, f: string): boolean {
  return obj?.metadata?.finalizers?.includes(f) ?? false;
}

function beingDeleted(obj: KubeObject | undefined): boolean {
  return !!obj?.metadata?.deletionTimestamp;
}

/** True when `obj` is being deleted with finalizer `f` and `old` was not (Kubernetes' startsWaitingForDependents*). */
function startsWaiting(old: KubeObject | undefined, obj: KubeObject, f: string): boolean {
  if (!beingDeleted(obj) || !hasFinalizer(obj, f)) return false;
  return !old || !beingDeleted(old) || !hasFinalizer(old, f);
}

/**
 * Splits `dependents` by whether their ownerReference to `owner.uid` names `owner`
 * exactly (and, for a namespaced owner, they live in its namespace): Kubernetes'
 * partitionDependents. A dependent may be in both lists.
 */
export function partitionDependents(
  dependents: Iterable<GraphNode>,
  owner: ObjectIdentity,
): { matching: GraphNode[]; nonmatching: GraphNode[] } {
  const matching: GraphNode[] = [];
  const nonmatching: GraphNode[] = [];
  for (const dep of dependents) {
    let match = false;
    let mismatch = false;
    if (owner.namespace !== '' && owner.namespace !== dep.identity.namespace) mismatch = true;
    else
      for (const ref of dep.owners) {
        if (ref.uid !== owner.uid) continue;
        if (refMatches(ref, owner)) match = true;
        else mismatch = true;
      }
    if (match) matching.push(dep);
    if (mismatch) nonmatching.push(dep);
  }
  return { matching, nonmatching };
}

/** The owner→dependents graph, keyed by uid. Not safe for re-entrant use; JavaScript's one thread makes each call atomic. */
export class DependencyGraph {
  private readonly uidToNode = new Map<string, GraphNode>();

  /** The node of `uid`, if the graph has one. */
  node(uid: string): GraphNode | undefined {
    return this.uidToNode.get(uid);
  }

  /** Number of nodes (virtual ones included). */
  get size(): number {
    return this.uidToNode.size;
  }

  /**
   * Applies one event (Kubernetes' GraphBuilder.processGraphChanges) and returns what to
   * process. Objects without a uid are ignored.
   */
  process(ev: GraphEvent): GraphActions {
    const actions: GraphActions = { attemptToDelete: [], attemptToOrphan: [] };
    const del = (n: GraphNode) => actions.attemptToDelete.push(n.identity.uid);
    const observed = identityOf(ev.obj);
    const uid = ev.virtual?.uid ?? observed.uid;
    if (!uid) return actions;
    const existing = this.uidToNode.get(uid);
    const meta = ev.obj.metadata ?? {};

    if (ev.type !== 'delete') {
      if (!existing) {
        const n = new GraphNode(observed, false);
        n.owners = [...(meta.ownerReferences ?? [])];
        n.beingDeleted = beingDeleted(ev.obj);
        n.deletingDependents = n.beingDeleted && hasFinalizer(ev.obj, FINALIZER_FOREGROUND);
        this.uidToNode.set(uid, n);
        this.addDependentToOwners(n, n.owners, actions);
        this.processTransitions(ev.oldObj, ev.obj, n, actions);
        return actions;
      }
      if (existing.virtual) {
        // First sight of an owner that dependents named: those that named it wrongly
        // (another kind, name or namespace) must be looked at again.
        if (!sameIdentity(existing.identity, observed)) {
          for (const dep of partitionDependents(existing.dependents, observed).nonmatching) del(dep);
          existing.identity = observed;
        }
        existing.virtual = false;
      }
      const { added, removed, changed } = referencesDiffs(existing.owners, meta.ownerReferences ?? []);
      if (added.length + removed.length + changed.length > 0) {
        // A dependent that stopped blocking may let a foreground deletion finish
        // (Kubernetes' addUnblockedOwnersToDeleteQueue).
        const unblocked = [
          ...removed.filter((r) => r.blockOwnerDeletion === true),
          ...changed.filter((c) => c.old.blockOwnerDeletion === true && c.new.blockOwnerDeletion !== true),
        ];
        for (const ref of unblocked) {
          const owner = this.uidToNode.get('uid' in ref ? ref.uid : ref.old.uid);
          if (owner?.deletingDependents) del(owner);
        }
        existing.owners = [...(meta.ownerReferences ?? [])];
        this.addDependentToOwners(existing, added, actions);
        this.removeDependentFromOwners(existing, removed);
      }
      if (beingDeleted(ev.obj)) existing.beingDeleted = true;
      this.processTransitions(ev.oldObj, ev.obj, existing, actions);
      return actions;
    }

    // delete
    if (!existing) return actions;
    let remove = true;
    if (ev.virtual) {
      const deleted = ev.virtual;
      const { matching, nonmatching } = partitionDependents(existing.dependents, deleted);
      if (existing.virtual) {
        // Dependents disagree on who this owner is: keep the node for the others.
        if (nonmatching.length > 0) {
          remove = false;
          for (const dep of matching) del(dep);
          if (sameIdentity(existing.identity, deleted)) {
            const alternate = alternateOwnerIdentity(nonmatching, deleted);
            if (alternate) {
              existing.identity = alternate;
              del(existing);
            }
          }
        }
      } else if (!sameIdentity(existing.identity, deleted)) {
        // The object is real and exists under other coordinates: only the dependents that
        // named the absent coordinates are orphaned by it.
        remove = false;
        for (const dep of matching) del(dep);
      }
    }
    if (!remove) return actions;
    this.uidToNode.delete(uid);
    this.removeDependentFromOwners(existing, existing.owners);
    for (const dep of existing.dependents) del(dep);
    for (const ref of existing.owners) {
      const owner = this.uidToNode.get(ref.uid);
      // The owner's foreground deletion may be done now.
      if (owner?.deletingDependents) del(owner);
    }
    return actions;
  }

  private addDependentToOwners(n: GraphNode, owners: OwnerReference[], actions: GraphActions): void {
    for (const ref of owners) {
      let owner = this.uidToNode.get(ref.uid);
      if (!owner) {
        // An owner not seen yet: a virtual node, which the collector checks with the API
        // (and removes with a virtual delete when the owner does not exist).
        owner = new GraphNode(
          {
            apiVersion: ref.apiVersion,
            kind: ref.kind,
            name: ref.name,
            uid: ref.uid,
            namespace: n.identity.namespace,
          },
          true,
        );
        this.uidToNode.set(ref.uid, owner);
        actions.attemptToDelete.push(ref.uid);
      }
      owner.dependents.add(n);
    }
  }

  private removeDependentFromOwners(n: GraphNode, owners: OwnerReference[]): void {
    for (const ref of owners) this.uidToNode.get(ref.uid)?.dependents.delete(n);
  }

  private processTransitions(
    oldObj: KubeObject | undefined,
    obj: KubeObject,
    n: GraphNode,
    actions: GraphActions,
  ): void {
    if (startsWaiting(oldObj, obj, FINALIZER_ORPHAN)) {
      actions.attemptToOrphan.push(n.identity.uid);
      return;
    }
    if (startsWaiting(oldObj, obj, FINALIZER_FOREGROUND)) {
      n.deletingDependents = true;
      for (const dep of n.dependents) actions.attemptToDelete.push(dep.identity.uid);
      actions.attemptToDelete.push(n.identity.uid);
    }
  }
}

/** The ownerReferences added, removed and changed (same uid, other fields) between two lists. */
export function referencesDiffs(
  old: readonly OwnerReference[],
  now: readonly OwnerReference[],
): {
  added: OwnerReference[];
  removed: OwnerReference[];
  changed: { old: OwnerReference; new: OwnerReference }[];
} {
  const before = new Map(old.map((r) => [r.uid, r]));
  const added: OwnerReference[] = [];
  const changed: { old: OwnerReference; new: OwnerReference }[] = [];
  for (const r of now) {
    const o = before.get(r.uid);
    if (!o) added.push(r);
    else {
      before.delete(r.uid);
      if (
        o.name !== r.name ||
        o.kind !== r.kind ||
        o.apiVersion !== r.apiVersion ||
        o.controller !== r.controller ||
        o.blockOwnerDeletion !== r.blockOwnerDeletion
      )
        changed.push({ old: o, new: r });
    }
  }
  return { added, removed: [...before.values()], changed };
}

/**
 * Coordinates of `uid` as one of `dependents` names it, other than `verifiedAbsent`
 * (Kubernetes' getAlternateOwnerIdentity), so a virtual owner is checked under each name
 * its dependents use.
 */
function alternateOwnerIdentity(
  dependents: GraphNode[],
  verifiedAbsent: ObjectIdentity,
): ObjectIdentity | undefined {
  for (const dep of dependents) {
    for (const ref of dep.owners) {
      if (ref.uid !== verifiedAbsent.uid) continue;
      // Already verified: the same coordinates (in any namespace, for a cluster-scoped owner).
      if (
        refMatches(ref, verifiedAbsent) &&
        (verifiedAbsent.namespace === '' || verifiedAbsent.namespace === dep.identity.namespace)
      )
        continue;
      const id: ObjectIdentity = {
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        name: ref.name,
        uid: ref.uid,
        namespace: dep.identity.namespace,
      };
      if (!sameIdentity(id, verifiedAbsent)) return id;
    }
  }
  return undefined;
}
