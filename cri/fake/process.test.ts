import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fakeProgram, splitScript, type FakeStep } from './process.js';

describe('splitScript', () => {
  const cases: [string, string[][] | undefined][] = [
    ['echo a b', [['echo', 'a', 'b']]],
    [
      'echo \'a;b\' "c d"; exit 3',
      [
        ['echo', 'a;b', 'c d'],
        ['exit', '3'],
      ],
    ],
    ['echo x >&2\nfalse', [['echo', 'x', '>&2'], ['false']]],
    ['echo x 1>&2', [['echo', 'x', '>&2']]],
    ['echo a\\ b', [['echo', 'a b']]],
    ['echo "say \\"hi\\""', [['echo', 'say "hi"']]],
    ['echo $HOME', undefined],
    ['a | b', undefined],
    ['a && b', undefined],
    ["echo 'open", undefined],
  ];
  for (const [script, want] of cases) {
    it(JSON.stringify(script), () => assert.deepEqual(splitScript(script), want));
  }
});

describe('fakeProgram', () => {
  const serve: FakeStep = { op: 'serve' };
  const cases: [string[], FakeStep[]][] = [
    [[], [serve]],
    [['/spring-server'], [serve]],
    [['sleep', '3600'], [{ op: 'sleep', seconds: 3600 }]],
    [['sleep', 'infinity'], [serve]],
    [['sh', '-c', 'exit 3'], [{ op: 'exit', code: 3 }]],
    [['/bin/sh', '-c', 'exit 300'], [{ op: 'exit', code: 44 }]],
    [
      ['sh', '-c', 'echo -n hi; echo err >&2; false'],
      [
        { op: 'write', stream: 'stdout', data: 'hi' },
        { op: 'write', stream: 'stderr', data: 'err\n' },
        { op: 'status', code: 1 },
      ],
    ],
    [
      ['sh', '-c', 'echo a; nc -l -p 80'],
      [{ op: 'write', stream: 'stdout', data: 'a\n' }, serve],
    ],
    [['sh', '-c', 'while true; do sleep 1; done'], [serve]],
    [['true'], [{ op: 'status', code: 0 }]],
  ];
  for (const [argv, want] of cases) {
    it(JSON.stringify(argv), () => assert.deepEqual(fakeProgram(argv), want));
  }
});
