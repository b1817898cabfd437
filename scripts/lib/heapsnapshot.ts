/**
 * A V8 heap snapshot (`.heapsnapshot`, as written by `v8.writeHeapSnapshot()` or
 * `node --heapsnapshot-signal`), read without JSON.parse of the whole file (a control
 * process at 2,000 pods writes some 700 MB, past V8's longest string), and its dominator
 * tree: what each object keeps alive (retained size, as Chrome DevTools computes it).
 *
 * Reading: the file is `{"snapshot":{"meta":...,"node_count":N,"edge_count":E},
 * "nodes":[...],"edges":[...],...,"strings":[...]}`; the number arrays are parsed straight
 * into typed arrays, the strings one by one.
 *
 * Dominators: Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm" (2001),
 * over the graph from node 0 (the synthetic root) without weak edges, which do not retain.
 * The retained size of a node is its self size plus that of every node it dominates.
 */
import { readFileSync } from 'node:fs';

export interface HeapSnapshot {
  /** Number of nodes. */
  readonly count: number;
  /** Per node: its type name (`object`, `string`, `closure`, ...). */
  type(n: number): string;
  /** Per node: its name (a constructor for objects, the text for strings). */
  name(n: number): string;
  readonly selfSize: Float64Array;
  /** CSR edges: the edges of node n are firstEdge[n] .. firstEdge[n + 1] - 1. */
  readonly firstEdge: Uint32Array;
  readonly edgeTo: Uint32Array;
  /** Per edge: its type name (`property`, `element`, `internal`, `weak`, ...). */
  edgeType(e: number): string;
  /** Per edge: the property name, or the element index as text. */
  edgeName(e: number): string;
}

interface Meta {
  node_fields: string[];
  node_types: [string[], ...unknown[]];
  edge_fields: string[];
  edge_types: [string[], ...unknown[]];
}

/** Parses a `.heapsnapshot` file. @throws Error when the file is not a heap snapshot. */
export function readHeapSnapshot(path: string): HeapSnapshot {
  const buf = readFileSync(path);
  const head = buf.subarray(0, 1 << 16).toString('latin1');
  const nodesAt = head.indexOf('"nodes":[');
  if (!head.startsWith('{"snapshot":') || nodesAt < 0) throw new Error(`${path}: not a V8 heap snapshot`);
  const header = JSON.parse(head.slice('{"snapshot":'.length, nodesAt).replace(/,\s*$/, '')) as {
    meta: Meta;
    node_count: number;
    edge_count: number;
  };
  const meta = header.meta;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  let pos = nodesAt + '"nodes":['.length;
  const nodes = new Float64Array(header.node_count * nf);
  pos = parseNumbers(buf, pos, nodes);
  pos = indexOf(buf, '"edges":[', pos) + '"edges":['.length;
  const edges = new Float64Array(header.edge_count * ef);
  pos = parseNumbers(buf, pos, edges);
  pos = indexOf(buf, '"strings":[', pos) + '"strings":['.length;
  const strings = parseStrings(buf, pos);

  const count = header.node_count;
  const iType = meta.node_fields.indexOf('type');
  const iName = meta.node_fields.indexOf('name');
  const iSize = meta.node_fields.indexOf('self_size');
  const iEdges = meta.node_fields.indexOf('edge_count');
  const eType = meta.edge_fields.indexOf('type');
  const eName = meta.edge_fields.indexOf('name_or_index');
  const eTo = meta.edge_fields.indexOf('to_node');
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const selfSize = new Float64Array(count);
  const firstEdge = new Uint32Array(count + 1);
  const edgeTo = new Uint32Array(header.edge_count);
  let e = 0;
  for (let n = 0; n < count; n++) {
    selfSize[n] = nodes[n * nf + iSize]!;
    firstEdge[n] = e;
    e += nodes[n * nf + iEdges]!;
  }
  firstEdge[count] = e;
  for (let i = 0; i < header.edge_count; i++) edgeTo[i] = edges[i * ef + eTo]! / nf;
  const elementType = edgeTypes.indexOf('element');
  const hiddenType = edgeTypes.indexOf('hidden');
  return {
    count,
    type: (n) => nodeTypes[nodes[n * nf + iType]!]!,
    name: (n) => strings[nodes[n * nf + iName]!] ?? '',
    selfSize,
    firstEdge,
    edgeTo,
    edgeType: (i) => edgeTypes[edges[i * ef + eType]!]!,
    edgeName: (i) => {
      const t = edges[i * ef + eType]!;
      const v = edges[i * ef + eName]!;
      return t === elementType || t === hiddenType ? String(v) : (strings[v] ?? '');
    },
  };
}

function indexOf(buf: Buffer, what: string, from: number): number {
  const at = buf.indexOf(what, from, 'latin1');
  if (at < 0) throw new Error(`heap snapshot: ${what} missing`);
  return at;
}

/** Parses comma-separated non-negative integers from `pos` up to `]` into `out`; returns the position after `]`. */
function parseNumbers(buf: Buffer, pos: number, out: Float64Array): number {
  let i = 0;
  let v = 0;
  let inNumber = false;
  for (;;) {
    const c = buf[pos++]!;
    if (c >= 48 && c <= 57) {
      v = v * 10 + (c - 48);
      inNumber = true;
    } else {
      if (inNumber) {
        if (i < out.length) out[i] = v;
        i++;
        v = 0;
        inNumber = false;
      }
      if (c === 93 /* ] */) break;
      if (pos > buf.length) throw new Error('heap snapshot: truncated number array');
    }
  }
  if (i !== out.length) throw new Error(`heap snapshot: ${i} numbers where the header says ${out.length}`);
  return pos;
}

/** Parses the JSON string array starting at `pos` (after `[`). */
function parseStrings(buf: Buffer, pos: number): string[] {
  const out: string[] = [];
  for (;;) {
    while (buf[pos] !== 34 /* " */ && buf[pos] !== 93 /* ] */) pos++;
    if (buf[pos] === 93) return out;
    const start = pos++;
    let escaped = false;
    while (buf[pos] !== 34 || escaped) {
      escaped = !escaped && buf[pos] === 92; /* \ */
      pos++;
    }
    pos++;
    out.push(JSON.parse(buf.toString('utf8', start, pos)) as string);
  }
}

/**
 * The immediate dominator of every node (idom[0] = 0; unreachable nodes get 0xffffffff)
 * and each node's retained size, bytes.
 */
export function dominators(s: HeapSnapshot): { idom: Uint32Array; retained: Float64Array } {
  const n = s.count;
  const weak = (e: number) => s.edgeType(e) === 'weak';
  // Edge types once, as a flag array: edgeType() per visit is too slow for 50 M edges.
  const isWeak = new Uint8Array(s.edgeTo.length);
  for (let e = 0; e < s.edgeTo.length; e++) if (weak(e)) isWeak[e] = 1;
  // Postorder of an iterative DFS from the root.
  const UNSEEN = 0xffffffff;
  const order = new Uint32Array(n).fill(UNSEEN); // node → postorder number
  const byOrder = new Uint32Array(n); // postorder number → node
  const stackNode = new Uint32Array(n);
  const stackEdge = new Uint32Array(n);
  const visited = new Uint8Array(n);
  let sp = 0;
  let next = 0;
  stackNode[0] = 0;
  stackEdge[0] = s.firstEdge[0]!;
  visited[0] = 1;
  sp = 1;
  while (sp > 0) {
    const v = stackNode[sp - 1]!;
    const e = stackEdge[sp - 1]!;
    if (e < s.firstEdge[v + 1]!) {
      stackEdge[sp - 1] = e + 1;
      if (isWeak[e]) continue;
      const w = s.edgeTo[e]!;
      if (visited[w]) continue;
      visited[w] = 1;
      stackNode[sp] = w;
      stackEdge[sp] = s.firstEdge[w]!;
      sp++;
    } else {
      sp--;
      order[v] = next;
      byOrder[next++] = v;
    }
  }
  // Predecessors (CSR), reachable nodes only.
  const predCount = new Uint32Array(n + 1);
  for (let v = 0; v < n; v++) {
    if (!visited[v]) continue;
    for (let e = s.firstEdge[v]!; e < s.firstEdge[v + 1]!; e++)
      if (!isWeak[e]) predCount[s.edgeTo[e]! + 1]!++;
  }
  for (let v = 0; v < n; v++) predCount[v + 1]! += predCount[v]!;
  const preds = new Uint32Array(predCount[n]!);
  const fill = predCount.slice(0, n);
  for (let v = 0; v < n; v++) {
    if (!visited[v]) continue;
    for (let e = s.firstEdge[v]!; e < s.firstEdge[v + 1]!; e++) {
      if (isWeak[e]) continue;
      const w = s.edgeTo[e]!;
      preds[fill[w]!++] = v;
    }
  }
  // idom in postorder numbers.
  const doms = new Uint32Array(next).fill(UNSEEN);
  const root = order[0]!;
  doms[root] = root;
  let changed = true;
  while (changed) {
    changed = false;
    for (let b = next - 1; b >= 0; b--) {
      if (b === root) continue;
      const node = byOrder[b]!;
      let newIdom = UNSEEN;
      for (let p = predCount[node]!; p < predCount[node + 1]!; p++) {
        const pb = order[preds[p]!]!;
        if (pb === UNSEEN || doms[pb] === UNSEEN) continue;
        if (newIdom === UNSEEN) {
          newIdom = pb;
          continue;
        }
        let f1 = pb;
        let f2 = newIdom;
        while (f1 !== f2) {
          while (f1 < f2) f1 = doms[f1]!;
          while (f2 < f1) f2 = doms[f2]!;
        }
        newIdom = f1;
      }
      if (newIdom !== UNSEEN && doms[b] !== newIdom) {
        doms[b] = newIdom;
        changed = true;
      }
    }
  }
  const idom = new Uint32Array(n).fill(UNSEEN);
  for (let b = 0; b < next; b++) idom[byOrder[b]!] = byOrder[doms[b]!]!;
  const retained = new Float64Array(n);
  // Postorder: children before their dominators.
  for (let b = 0; b < next; b++) {
    const v = byOrder[b]!;
    retained[v]! += s.selfSize[v]!;
    if (v !== 0) retained[idom[v]!]! += retained[v]!;
  }
  return { idom, retained };
}
