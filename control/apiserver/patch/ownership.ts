/**
 * Moving field ownership when an object changes (structured-merge-diff's
 * `Updater.update`): every manager other than the writer loses the fields that were
 * removed, and the fields whose values the write changed or added are conflicts — for an
 * Update (or a forced Apply) the other managers simply lose them, for an Apply without
 * force they are reported and nothing is written.
 */
import type { FieldSet } from './fieldset.js';
import type { Manager, Managers } from './managed-fields.js';
import { compare, type Comparison, type Place } from './typed.js';

/** One field another manager owns that an Apply would change. */
export interface Conflict {
  manager: Manager;
  path: string[];
}

/** Thrown by `reassignOwnership` when an unforced Apply conflicts. */
export class ApplyConflicts extends Error {
  constructor(readonly conflicts: Conflict[]) {
    super(`Apply failed with ${conflicts.length} conflict(s)`);
  }
}

/** A copy of `set` without the top-level fields `names` (a strategy's reset fields, e.g. `status`). */
export function withoutTopLevel(set: FieldSet, names: readonly string[]): FieldSet {
  if (names.length === 0) return set;
  const out = set.copy();
  for (const n of names) out.children.delete(`f:${n}`);
  return out;
}

export interface ReassignInput {
  live: unknown;
  next: unknown;
  place: Place;
  managers: Managers;
  /** The identifier of the writing manager, whose own set is left alone. */
  self: string;
  force: boolean;
  /** Top-level fields whose changes move no ownership (the strategy resets them). */
  resetFields: readonly string[];
}

/**
 * Compares `live` with `next` and updates the other managers in place.
 * @returns the comparison (reset fields excluded)
 * @throws ApplyConflicts when `force` is false and another manager owns a changed field
 *   (managers are then left unchanged)
 */
export function reassignOwnership(input: ReassignInput): Comparison {
  const raw = compare(input.live, input.next, input.place);
  const c: Comparison = {
    modified: withoutTopLevel(raw.modified, input.resetFields),
    added: withoutTopLevel(raw.added, input.resetFields),
    removed: withoutTopLevel(raw.removed, input.resetFields),
  };
  const conflicts = new Map<string, FieldSet>();
  const conflictList: Conflict[] = [];
  const ids = [...input.managers.keys()].filter((id) => id !== input.self).sort();
  // Nobody else to take fields from (a create, or an object with one manager): done.
  if (ids.length === 0) return c;
  const changed = c.modified.union(c.added);
  for (const id of ids) {
    const m = input.managers.get(id)!;
    const owned = m.set.intersection(changed);
    if (owned.empty()) continue;
    conflicts.set(id, owned);
    for (const path of owned.paths()) conflictList.push({ manager: m, path });
  }
  if (!input.force && conflictList.length > 0) throw new ApplyConflicts(conflictList);
  for (const id of ids) {
    const m = input.managers.get(id)!;
    const lost = conflicts.get(id);
    let set = lost ? m.set.difference(lost) : m.set;
    if (!c.removed.empty()) set = set.difference(c.removed);
    m.set = set;
    if (set.empty()) input.managers.delete(id);
  }
  return c;
}
