/**
 * `node --import tsx scripts/cpuprofile-summary.ts FILE.cpuprofile [flags]`: where a V8 CPU
 * profile (`node --cpu-prof`, bench:scale's `--profile DIR`) spent its time, as text, for
 * comparing runs without a browser.
 *
 * Prints, over the samples in the window (`--from`/`--to`, seconds since the profile
 * started; default all of it):
 *  - busy time (everything but `(idle)`), and a timeline of the busy share per `--bucket`
 *    seconds (default 10) to find the stages;
 *  - the functions by self time and by total time (a function counts once per sample
 *    however often it recurses), `--top N` rows each (default 40);
 *  - files (repository paths; `node_modules/<package>` for dependencies, `node:` for Node's
 *    own) by self and by total time;
 *  - with `--focus NAME` (a function name, or `name@file` part), the callers and callees of
 *    every function whose `name file:line` contains it, by total time through them.
 *
 * Times are milliseconds of samples (V8's timeDeltas: each sample lasts until the next).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    from: { type: 'string' },
    to: { type: 'string' },
    top: { type: 'string', default: '40' },
    bucket: { type: 'string', default: '10' },
    focus: { type: 'string' },
  },
});
if (positionals.length !== 1) {
  process.stderr.write(
    'usage: cpuprofile-summary.ts FILE.cpuprofile [--from S] [--to S] [--top N] [--focus NAME]\n',
  );
  process.exit(2);
}
const TOP = Number(flags.top);
const profile = JSON.parse(readFileSync(positionals[0]!, 'utf8')) as Profile;

/** A repository-relative path, `node_modules/<pkg>`, or `node:<module>`. */
function fileOf(url: string): string {
  if (!url) return '(native)';
  if (url.startsWith('node:')) return url;
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return `node_modules/${rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  const m = /\/work\/[^/]+\/(.*)$/.exec(url.replace(/^file:\/\//, ''));
  return m ? m[1]! : url.replace(/^file:\/\//, '');
}

const byId = new Map<number, ProfileNode>();
const parent = new Map<number, number>();
for (const n of profile.nodes) byId.set(n.id, n);
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const fnKey = new Map<number, string>();
const fileKey = new Map<number, string>();
for (const n of profile.nodes) {
  const f = fileOf(n.callFrame.url);
  fileKey.set(n.id, f);
  fnKey.set(n.id, `${n.callFrame.functionName || '(anonymous)'} ${f}:${n.callFrame.lineNumber + 1}`);
}

// Self time per node within the window.
const from = flags.from !== undefined ? Number(flags.from) * 1e6 : -Infinity;
const to = flags.to !== undefined ? Number(flags.to) * 1e6 : Infinity;
const bucketUs = Number(flags.bucket) * 1e6;
const nodeSelf = new Map<number, number>();
const timeline: number[] = [];
const timelineAll: number[] = [];
let t = 0; // µs since startTime
let busy = 0;
let all = 0;
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i]!;
  const dur = profile.timeDeltas[i + 1] ?? 0;
  const id = profile.samples[i]!;
  const idle = byId.get(id)!.callFrame.functionName === '(idle)';
  const b = Math.floor(t / bucketUs);
  timelineAll[b] = (timelineAll[b] ?? 0) + dur;
  if (!idle) timeline[b] = (timeline[b] ?? 0) + dur;
  if (t < from || t >= to) continue;
  all += dur;
  if (idle) continue;
  busy += dur;
  nodeSelf.set(id, (nodeSelf.get(id) ?? 0) + dur);
}

function add(m: Map<string, number>, k: string, v: number): void {
  m.set(k, (m.get(k) ?? 0) + v);
}
const selfFn = new Map<string, number>();
const totalFn = new Map<string, number>();
const selfFile = new Map<string, number>();
const totalFile = new Map<string, number>();
const focusCallers = new Map<string, number>();
const focusCallees = new Map<string, number>();
let focusTotal = 0;
const focus = flags.focus;
for (const [id, self] of nodeSelf) {
  add(selfFn, fnKey.get(id)!, self);
  add(selfFile, fileKey.get(id)!, self);
  const fns = new Set<string>();
  const files = new Set<string>();
  const stack: number[] = [];
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) stack.push(cur);
  for (const n of stack) {
    fns.add(fnKey.get(n)!);
    files.add(fileKey.get(n)!);
  }
  for (const k of fns) add(totalFn, k, self);
  for (const k of files) add(totalFile, k, self);
  if (focus) {
    // The outermost frame that matches: its caller and the callee below it.
    const at = stack.findLastIndex((n) => fnKey.get(n)!.includes(focus));
    if (at >= 0) {
      focusTotal += self;
      add(focusCallers, at + 1 < stack.length ? fnKey.get(stack[at + 1]!)! : '(root)', self);
      add(focusCallees, at > 0 ? fnKey.get(stack[at - 1]!)! : '(self)', self);
    }
  }
}

const ms = (us: number) => (us / 1000).toFixed(0).padStart(8);
const pct = (us: number) => `${((100 * us) / Math.max(1, busy)).toFixed(1).padStart(5)} %`;
function print(title: string, m: Map<string, number>, n = TOP): void {
  process.stdout.write(`\n## ${title}\n`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, n))
    process.stdout.write(`${ms(v)} ms ${pct(v)}  ${k}\n`);
}

process.stdout.write(
  `profile ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s; window ${(all / 1e6).toFixed(1)} s, ` +
    `busy ${(busy / 1e6).toFixed(1)} s (${((100 * busy) / Math.max(1, all)).toFixed(0)} %)\n`,
);
process.stdout.write(`\n## busy share per ${flags.bucket} s\n`);
process.stdout.write(
  timelineAll
    .map(
      (a, i) =>
        `${String(i * Number(flags.bucket)).padStart(5)} s ${(((timeline[i] ?? 0) / Math.max(1, a)) * 100).toFixed(0).padStart(3)} %`,
    )
    .join('\n') + '\n',
);
print('self time by function', selfFn);
print('total time by function', totalFn);
print('self time by file', selfFile, TOP);
print('total time by file', totalFile, TOP);
if (focus) {
  process.stdout.write(`\n# focus "${focus}": ${ms(focusTotal)} ms ${pct(focusTotal)}\n`);
  print('callers', focusCallers, 20);
  print('callees', focusCallees, 30);
}
