// The agent's import boundaries (ARCHITECTURE.md, "Hub and spoke"; cri/index.ts), checked
// on every file under agent/, as Kubernetes' import-boss checks its .import-restrictions:
//
// - agent/ never imports control/: what both processes need (the join token's format, the
//   node identity's names, the tunnel's and the node credential's wire contracts) lives in
//   api/;
// - agent/ reaches the runtime layer only through cri/index.js; its tests may also import
//   the fake adapter (cri/fake/), the test double, as the kubelet's tests use cri-api's
//   FakeRuntimeService.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Files under agent/ that may import a cri module other than cri/index.js, each with the reason (none today). */
const CRI_EXCEPTIONS: ReadonlyMap<string, string> = new Map();

/** The module specifiers of `text`'s static imports, re-exports and dynamic import()s. */
export function importSpecifiers(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'";]*?\bfrom\s*'([^']+)'/g)) out.push(m[1]!);
  for (const m of text.matchAll(/(?:^|\n)\s*import\s*'([^']+)'/g)) out.push(m[1]!);
  for (const m of text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)) out.push(m[1]!);
  return out;
}

/**
 * What is wrong with `file` (a path relative to the repository, under agent/) importing
 * `specifier`; undefined when the import is allowed.
 */
export function boundaryViolation(file: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = relative(ROOT, resolve(ROOT, dirname(file), specifier))
    .split('\\')
    .join('/');
  if (target === 'control' || target.startsWith('control/')) return `${file} imports ${target} (control/)`;
  if (!target.startsWith('cri/') || target === 'cri/index.js') return undefined;
  if (/\.test\.ts$/.test(file) && target.startsWith('cri/fake/')) return undefined;
  if (CRI_EXCEPTIONS.has(file)) return undefined;
  return `${file} imports ${target} (the agent reaches cri/ only through cri/index.js)`;
}

function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(`${dir}/${e.name}`) : e.name.endsWith('.ts') ? [`${dir}/${e.name}`] : [],
  );
}

describe('agent import boundaries', () => {
  it('finds the imports a file makes', () => {
    const text = [
      "import type { A } from '../cri/api.js';",
      "import {\n  B,\n  C,\n} from '../../control/apiserver/auth/user.js';",
      "export { D } from './d.js';",
      "import './side-effect.js';",
      "const { E } = await import('../cri/docker/runtime.js');",
      "// a comment naming from 'nothing' is not an import",
    ].join('\n');
    assert.deepEqual(importSpecifiers(text), [
      '../cri/api.js',
      '../../control/apiserver/auth/user.js',
      './d.js',
      './side-effect.js',
      '../cri/docker/runtime.js',
    ]);
  });

  const cases: [file: string, specifier: string, allowed: boolean][] = [
    ['agent/kubelet/bootstrap.ts', '../../control/apiserver/auth/user.js', false],
    ['agent/kubelet/bootstrap.ts', '../../api/auth/user.js', true],
    ['agent/main.ts', '../control/main.js', false],
    ['agent/kubelet/pods/sync.ts', '../../../cri/api.js', false],
    ['agent/kubelet/pods/sync.ts', '../../../cri/errors.js', false],
    ['agent/kubelet/pods/sync.ts', '../../../cri/index.js', true],
    ['agent/kubelet/pods/manager.test.ts', '../../../cri/fake/runtime.js', true],
    ['agent/kubelet/pods/manager.ts', '../../../cri/fake/runtime.js', false],
    ['agent/kubelet/pods/sync.ts', 'node:fs', true],
    ['agent/kubelet/pods/sync.ts', './controller.js', true],
  ];
  for (const [file, specifier, allowed] of cases)
    it(`${file}: ${specifier} is ${allowed ? 'allowed' : 'refused'}`, () =>
      assert.equal(boundaryViolation(file, specifier) === undefined, allowed));

  it('no file under agent/ crosses them', () => {
    const checked = tsFiles('agent').filter((f) => f !== 'agent/boundaries.test.ts'); // its examples
    const violations = checked.flatMap((file) =>
      importSpecifiers(readFileSync(join(ROOT, file), 'utf8'))
        .map((s) => boundaryViolation(file, s))
        .filter((v): v is string => v !== undefined),
    );
    assert.deepEqual(violations, []);
  });
});
