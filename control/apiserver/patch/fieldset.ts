/**
 * Sets of field paths, as server-side apply records ownership (structured-merge-diff's
 * fieldpath.Set), and their wire form FieldsV1 in `metadata.managedFields[].fieldsV1`.
 *
 * A path is a list of path elements, each written as in FieldsV1:
 *   `f:<name>`   a struct field or map key          → printed `.name`
 *   `k:<json>`   an associative list item by its key fields, keys sorted
 *                (`k:{"containerPort":8080,"protocol":"TCP"}`) → `[containerPort=8080,protocol="TCP"]`
 *   `v:<json>`   an item of a set list (`v:"foo"`)  → `[="foo"]`
 *   `i:<n>`      a list item by index               → `[3]`
 * A set is a tree: every node may itself be a member (`".": {}` in FieldsV1 when it also
 * has children) and has children by path element.
 */
import { canonicalJson, isObject } from './json.js';

export class FieldSet {
  /** Whether the path leading to this node is in the set (meaningless at the root). */
  member = false;
  readonly children = new Map<string, FieldSet>();

  /** An empty set, or one holding `paths`. */
  static of(...paths: readonly (readonly string[])[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** Adds a path (an empty path adds nothing). */
  insert(path: readonly string[]): void {
    if (path.length === 0) return;
    let children = this.children;
    let node: FieldSet | undefined;
    for (const pe of path) {
      node = children.get(pe);
      if (!node) {
        node = new FieldSet();
        children.set(pe, node);
      }
      children = node.children;
    }
    node!.member = true;
  }

  /** Whether `path` is a member. */
  has(path: readonly string[]): boolean {
    const node = this.node(path);
    return node !== undefined && path.length > 0 && node.member;
  }

  /** The subtree under `path`, if any. */
  node(path: readonly string[]): FieldSet | undefined {
    let node: FieldSet | undefined;
    let children = this.children;
    for (const pe of path) {
      node = children.get(pe);
      if (!node) return undefined;
      children = node.children;
    }
    return node ?? this;
  }

  /** A child node by path element. */
  child(pe: string): FieldSet | undefined {
    return this.children.get(pe);
  }

  /** True when no path is a member. */
  empty(): boolean {
    for (const c of this.children.values()) if (c.member || !c.empty()) return false;
    return true;
  }

  copy(): FieldSet {
    const s = new FieldSet();
    s.member = this.member;
    for (const [pe, c] of this.children) s.children.set(pe, c.copy());
    return s;
  }

  /** Adds the members of `other` to this set, in place (`other`'s root membership aside). */
  mergeFrom(other: FieldSet): void {
    mergeInto(this, other);
  }

  /** Members of either set. */
  union(other: FieldSet): FieldSet {
    const s = this.copy();
    mergeInto(s, other);
    return s;
  }

  /** Members of this set that are not members of `other` (exact paths, not prefixes). */
  difference(other: FieldSet): FieldSet {
    return combine(this, other, (a, b) => a && !b);
  }

  /** Members of both sets. */
  intersection(other: FieldSet): FieldSet {
    return combine(this, other, (a, b) => a && b);
  }

  /**
   * Every member path, in structured-merge-diff's order: at each node its own member
   * children first, then the subtrees, each group sorted by path element.
   */
  paths(): string[][] {
    const out: string[][] = [];
    const walk = (node: FieldSet, prefix: string[]): void => {
      const sorted = [...node.children.keys()].sort(comparePathElements);
      for (const pe of sorted) if (node.children.get(pe)!.member) out.push([...prefix, pe]);
      for (const pe of sorted) {
        const c = node.children.get(pe)!;
        if (c.children.size > 0) walk(c, [...prefix, pe]);
      }
    };
    walk(this, []);
    return out;
  }

  /** The FieldsV1 JSON of the set (keys sorted, `"."` for members that have children). */
  toFieldsV1(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const sorted = [...this.children.keys()].sort(comparePathElements);
    for (const pe of sorted) {
      const c = this.children.get(pe)!;
      // A body is empty exactly when no member lies below (so `empty()` need not walk again).
      const body = c.toFieldsV1();
      let hasBody = false;
      for (const _ in body) {
        hasBody = true;
        break;
      }
      if (!c.member && !hasBody) continue;
      out[pe] = c.member && hasBody ? { '.': {}, ...body } : body;
    }
    return out;
  }

  /**
   * Parses FieldsV1 JSON.
   * @throws Error on a key that is not a path element or a value that is not an object.
   */
  static fromFieldsV1(v: unknown): FieldSet {
    const s = new FieldSet();
    readFieldsV1(s, v);
    return s;
  }
}

function readFieldsV1(node: FieldSet, v: unknown): void {
  if (!isObject(v)) throw new Error('FieldsV1 must be a JSON object');
  for (const [key, body] of Object.entries(v)) {
    if (key === '.') {
      node.member = true;
      continue;
    }
    if (!/^[fkvi]:/.test(key)) throw new Error(`unexpected FieldsV1 key ${JSON.stringify(key)}`);
    const child = new FieldSet();
    readFieldsV1(child, body);
    // A key with an empty body is a member leaf.
    if (isObject(body) && Object.keys(body).length === 0) child.member = true;
    node.children.set(key, child);
  }
}

function mergeInto(dst: FieldSet, src: FieldSet): void {
  for (const [pe, c] of src.children) {
    let d = dst.children.get(pe);
    if (!d) {
      d = new FieldSet();
      dst.children.set(pe, d);
    }
    d.member = d.member || c.member;
    mergeInto(d, c);
  }
}

function combine(
  a: FieldSet,
  b: FieldSet | undefined,
  keep: (inA: boolean, inB: boolean) => boolean,
): FieldSet {
  const out = new FieldSet();
  for (const [pe, ca] of a.children) {
    const cb = b?.children.get(pe);
    const c = combine(ca, cb, keep);
    c.member = keep(ca.member, cb?.member ?? false);
    if (c.member || c.children.size > 0) out.children.set(pe, c);
  }
  return out;
}

const KIND_ORDER: Record<string, number> = { f: 0, k: 1, v: 2, i: 3 };

/** Orders path elements as structured-merge-diff does: fields, then keys, values, indexes. */
export function comparePathElements(a: string, b: string): number {
  const ka = KIND_ORDER[a[0]!] ?? 9;
  const kb = KIND_ORDER[b[0]!] ?? 9;
  if (ka !== kb) return ka - kb;
  if (a[0] === 'i') return Number(a.slice(2)) - Number(b.slice(2));
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `f:<name>`. */
export function fieldElement(name: string): string {
  return `f:${name}`;
}

/** `k:{...}` for an associative list item with these key values (sorted by key name). */
export function keyElement(keys: Readonly<Record<string, unknown>>): string {
  return `k:${canonicalJson(keys)}`;
}

/** `v:<json>` for an item of a set list. */
export function valueElement(v: unknown): string {
  return `v:${canonicalJson(v)}`;
}

/** A path as structured-merge-diff prints it in conflicts: `.spec.containers[name="c"].image`. */
export function pathString(path: readonly string[]): string {
  let out = '';
  for (const pe of path) {
    const body = pe.slice(2);
    switch (pe[0]) {
      case 'f':
        out += `.${body}`;
        break;
      case 'k': {
        const keys = JSON.parse(body) as Record<string, unknown>;
        out += `[${Object.entries(keys)
          .map(([k, v]) => `${k}=${printValue(v)}`)
          .join(',')}]`;
        break;
      }
      case 'v':
        out += `[=${printValue(JSON.parse(body))}]`;
        break;
      default:
        out += `[${body}]`;
    }
  }
  return out;
}

function printValue(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : canonicalJson(v);
}
