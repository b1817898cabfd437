/**
 * `node --import tsx scripts/heap-summary.ts FILE.heapsnapshot [--baseline FILE] [--per N]
 * [--top K] [--depth D]`: where the live heap of a process goes, from a V8 heap snapshot
 * (which V8 takes after a full GC, so everything in it is live). With `--baseline`, each
 * row is this snapshot's minus the baseline's (e.g. after deploying N pods minus before).
 *
 * Prints, in MiB (and bytes per unit with `--per N`, e.g. the number of pods):
 * - self size by node type and constructor;
 * - retained size by class: for each class, the objects of that class not dominated by
 *   another of the same class, and what they keep alive (Chrome DevTools' "Retained");
 * - self size by owner path: each node's self size goes to the chain of its nearest
 *   dominators that are instances of named classes (plain Objects, Arrays, Maps and
 *   strings are not owners), e.g. `CachedObject < CacheEvent < EventBuffer < WatchCache`:
 *   the JSON of a pod kept by the watch cache's history counts there.
 */
import { parseArgs } from 'node:util';
import { dominators, readHeapSnapshot } from './lib/heapsnapshot.js';
import { table } from './lib/stats.js';

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    per: { type: 'string' },
    top: { type: 'string', default: '30' },
    depth: { type: 'string', default: '4' },
    baseline: { type: 'string' },
  },
});
const file = positionals[0];
if (!file)
  throw new Error(
    'usage: heap-summary.ts FILE.heapsnapshot [--baseline FILE] [--per N] [--top K] [--depth D]',
  );
const PER = flags.per ? Number(flags.per) : 0;
const TOP = Number(flags.top);
const DEPTH = Number(flags.depth);

/** Classes that only hold things for an owner: they are not owners themselves. */
const GENERIC = new Set([
  'Object',
  'Array',
  'Map',
  'Set',
  'WeakMap',
  'WeakSet',
  'WeakRef',
  'Promise',
  'Function',
  'Error',
  'ArrayBuffer',
  'Uint8Array',
  'Buffer',
  'FastBuffer',
  'Arguments',
  'RegExp',
  'Date',
  'Module',
  'Generator',
]);

interface Summary {
  total: number;
  live: number;
  bySelf: Groups;
  byRetained: Groups;
  byPath: Groups;
}
type Groups = Map<string, { size: number; count: number }>;

/** The three groupings of one snapshot (see the file comment). */
function summarize(file: string): Summary {
  const t0 = performance.now();
  const s = readHeapSnapshot(file);
  const { idom, retained } = dominators(s);
  process.stderr.write(
    `heap-summary: ${s.count} nodes read in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
  );

  const typeNames: string[] = [];
  const names: string[] = [];
  for (let n = 0; n < s.count; n++) {
    typeNames.push(s.type(n));
    names.push(s.name(n));
  }
  const isClass = (n: number) =>
    typeNames[n] === 'object' &&
    !GENERIC.has(names[n]!) &&
    !names[n]!.startsWith('(') &&
    !names[n]!.startsWith('system /') &&
    names[n] !== '';
  const label = (n: number) => {
    const t = typeNames[n]!;
    if (t === 'object' || t === 'native' || t === 'hidden') return `${t} ${names[n]!.slice(0, 60)}`;
    if (t === 'code' && names[n]!.startsWith('(')) return `code ${names[n]}`;
    return t;
  };

  // Self size by type and constructor.
  let total = 0;
  let live = 0;
  const bySelf = new Map<string, { size: number; count: number }>();
  for (let n = 0; n < s.count; n++) {
    const size = s.selfSize[n]!;
    total += size;
    if (idom[n] === 0xffffffff) continue;
    live += size;
    const g = bySelf.get(label(n)) ?? { size: 0, count: 0 };
    g.size += size;
    g.count++;
    bySelf.set(label(n), g);
  }

  // Nearest class-instance dominator of each node, top down (idom before the node: process
  // in order of depth by walking the tree from the root).
  const children = new Uint32Array(s.count + 1);
  for (let n = 1; n < s.count; n++) if (idom[n] !== 0xffffffff) children[idom[n]! + 1]!++;
  for (let n = 0; n < s.count; n++) children[n + 1]! += children[n]!;
  const kids = new Uint32Array(children[s.count]!);
  const fill = children.slice(0, s.count);
  for (let n = 1; n < s.count; n++) if (idom[n] !== 0xffffffff) kids[fill[idom[n]!]!++] = n;
  const owner = new Int32Array(s.count).fill(-1); // nearest class ancestor, itself excluded
  const sameClassAbove = new Uint8Array(s.count); // a dominator has the same class name
  const stack = [0];
  const classesAbove = new Map<number, Set<string>>();
  while (stack.length > 0) {
    const v = stack.pop()!;
    for (let k = children[v]!; k < children[v + 1]!; k++) {
      const w = kids[k]!;
      owner[w] = isClass(v) ? v : owner[v]!;
      stack.push(w);
    }
  }
  // Same-class nesting: walk owners (few levels) for each class node.
  for (let n = 0; n < s.count; n++) {
    if (!isClass(n)) continue;
    for (let o = owner[n]!; o >= 0; o = owner[o]!) {
      if (names[o] === names[n]) {
        sameClassAbove[n] = 1;
        break;
      }
    }
  }
  classesAbove.clear();

  const byRetained = new Map<string, { size: number; count: number }>();
  for (let n = 0; n < s.count; n++) {
    if (!isClass(n) || sameClassAbove[n] || idom[n] === 0xffffffff) continue;
    const g = byRetained.get(names[n]!) ?? { size: 0, count: 0 };
    g.size += retained[n]!;
    g.count++;
    byRetained.set(names[n]!, g);
  }

  const pathMemo = new Map<number, string>();
  const pathOf = (n: number): string => {
    const start = isClass(n) ? n : owner[n]!;
    if (start < 0) return '(no owner)';
    const memo = pathMemo.get(start);
    if (memo !== undefined) return memo;
    const parts: string[] = [];
    for (let o = start; o >= 0 && parts.length < DEPTH; o = owner[o]!) {
      if (parts.at(-1) !== names[o]) parts.push(names[o]!);
    }
    const p = parts.join(' < ');
    pathMemo.set(start, p);
    return p;
  };
  const byPath = new Map<string, { size: number; count: number }>();
  for (let n = 0; n < s.count; n++) {
    if (idom[n] === 0xffffffff) continue;
    const p = pathOf(n);
    const g = byPath.get(p) ?? { size: 0, count: 0 };
    g.size += s.selfSize[n]!;
    g.count++;
    byPath.set(p, g);
  }

  return { total, live, bySelf, byRetained, byPath };
}

const mib = (b: number) => (b / 2 ** 20).toFixed(1);
const perUnit = (b: number) => (b / PER).toFixed(0);

const now = summarize(file);
const base = flags.baseline ? summarize(flags.baseline) : undefined;

/** Rows of a grouping, minus the baseline's when there is one, largest first. */
function rows(pick: (s: Summary) => Groups): [string, { size: number; count: number }][] {
  const m = new Map([...pick(now)].map(([k, g]) => [k, { ...g }]));
  if (base)
    for (const [k, g] of pick(base)) {
      const cur = m.get(k) ?? { size: 0, count: 0 };
      m.set(k, { size: cur.size - g.size, count: cur.count - g.count });
    }
  return [...m].sort((a, b) => Math.abs(b[1].size) - Math.abs(a[1].size)).slice(0, TOP);
}

function print(title: string, what: string, pick: (s: Summary) => Groups): void {
  console.log(`\n### ${title}${base ? ', minus the baseline' : ''}\n`);
  console.log(
    table([
      ['MiB', ...(PER ? [`bytes ÷ ${PER}`] : []), 'count', what],
      ...rows(pick).map(([k, g]) => [mib(g.size), ...(PER ? [perUnit(g.size)] : []), String(g.count), k]),
    ]),
  );
}

const live = now.live - (base?.live ?? 0);
console.log(
  `heap snapshot ${file}${base ? ` minus ${flags.baseline}` : ''}: ${mib(now.total)} MiB self size in all, ` +
    `${mib(now.live)} MiB reachable` +
    (base ? `; reachable minus the baseline's ${mib(live)} MiB` : '') +
    (PER > 0 ? ` (${perUnit(live)} bytes ÷ ${PER})` : ''),
);
print('Self size by type / constructor', 'type constructor', (x) => x.bySelf);
print('Retained size by class (outermost instances)', 'class', (x) => x.byRetained);
print(`Self size by owner path (nearest ${DEPTH} class dominators)`, 'owner path', (x) => x.byPath);
