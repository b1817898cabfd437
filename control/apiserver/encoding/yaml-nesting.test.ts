import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { yamlNestingExceeds } from './yaml-nesting.js';

const LIMIT = 1000;
const deepFlow = (n: number) =>
  `kind: ConfigMap\nmetadata:\n  name: it's\ndata:\n  x: ${'['.repeat(n)}${']'.repeat(n)}\n`;
const deepBlock = (n: number) => `a:\n  ${'- '.repeat(n)}x\n`;

describe('yamlNestingExceeds', () => {
  const cases: [string, string, boolean][] = [
    [
      'an ordinary manifest',
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {a: b}\nspec:\n  containers:\n    - name: c\n      args: ["it\'s", "[not", "nested]"]\n',
      false,
    ],
    // A quote inside a plain scalar must not hide the brackets after it (a byte scan's blind spot).
    ['flow nesting past the limit after an apostrophe in a plain scalar', deepFlow(LIMIT + 1), true],
    ['flow nesting at the limit less the mapping it sits in', deepFlow(LIMIT - 10), false],
    ['block sequences nested on one line', deepBlock(LIMIT + 1), true],
    [
      'brackets inside quoted scalars do not count',
      `x: "${'['.repeat(5000)}"\ny: '${'{'.repeat(5000)}'\n`,
      false,
    ],
    ['a block scalar of brackets does not count', `x: |\n  ${'['.repeat(5000)}\n`, false],
  ];
  for (const [name, text, want] of cases) it(name, () => assert.equal(yamlNestingExceeds(text, LIMIT), want));

  it('stops at the limit on a 2 MiB body instead of walking all of it', () => {
    assert.equal(yamlNestingExceeds(deepFlow(1_000_000), LIMIT), true);
  });
});
