// The fieldValidation directive (directive.ts): read from the query, and acted on.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyFieldValidation, fieldValidationDirective, strictDecodingErrors } from './index.js';
import type { FieldValidationVerb, StrictDecodeTarget } from './index.js';
import { ApiError } from '../status.js';

describe('fieldValidationDirective', () => {
  const ok: [string, string][] = [
    ['', 'Warn'],
    ['fieldValidation=', 'Warn'],
    ['fieldValidation=Strict', 'Strict'],
    ['fieldValidation=Warn', 'Warn'],
    ['fieldValidation=Ignore', 'Ignore'],
    ['fieldValidation=Ignore&fieldValidation=Strict', 'Ignore'],
    ['fieldManager=kubectl-client-side-apply&fieldValidation=Strict', 'Strict'],
  ];
  for (const [query, want] of ok) {
    it(`?${query} → ${want}`, () => {
      assert.equal(fieldValidationDirective(new URLSearchParams(query), 'create'), want);
    });
  }

  const bad: [string, FieldValidationVerb, string][] = [
    ['strict', 'create', 'CreateOptions'],
    ['Foo', 'update', 'UpdateOptions'],
    ['WARN', 'patch', 'PatchOptions'],
  ];
  for (const [value, verb, kind] of bad) {
    it(`${verb} ?fieldValidation=${value} → 422 on ${kind}`, () => {
      const body = `Unsupported value: "${value}": supported values: "", "Ignore", "Strict", "Warn"`;
      assert.throws(
        () => fieldValidationDirective(new URLSearchParams({ fieldValidation: value }), verb),
        (err: unknown) => {
          assert.ok(err instanceof ApiError);
          assert.equal(err.code, 422);
          assert.equal(err.reason, 'Invalid');
          assert.equal(err.message, `${kind}.meta.k8s.io "" is invalid: fieldValidation: ${body}`);
          assert.deepEqual(err.details, {
            group: 'meta.k8s.io',
            kind,
            causes: [{ reason: 'FieldValueNotSupported', message: body, field: 'fieldValidation' }],
          });
          return true;
        },
      );
    });
  }
});

describe('applyFieldValidation', () => {
  const create: StrictDecodeTarget = { verb: 'create', kind: 'Deployment', version: 'v1' };
  const two = { unknown: ['spec.foo', 'spec.bar'] };

  it('Strict on create/update: 400 with the strict decoding error', () => {
    assert.throws(
      () => applyFieldValidation('Strict', two, create),
      (err: unknown) => {
        assert.ok(err instanceof ApiError);
        assert.equal(err.code, 400);
        assert.equal(err.reason, 'BadRequest');
        assert.equal(
          err.message,
          'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: ' +
            'unknown field "spec.foo", unknown field "spec.bar"',
        );
        return true;
      },
    );
  });

  it('Strict with duplicates: duplicates first', () => {
    assert.throws(
      () =>
        applyFieldValidation(
          'Strict',
          { unknown: ['spec.foo'], duplicate: ['metadata.name'] },
          { verb: 'update', kind: 'Pod', version: 'v1' },
        ),
      {
        message:
          'Pod in version "v1" cannot be handled as a Pod: strict decoding error: ' +
          'duplicate field "metadata.name", unknown field "spec.foo"',
      },
    );
  });

  it('Strict on patch: 422 Invalid on field patch', () => {
    const badValue = '{"kind":"Deployment","spec":{"foo":1}}';
    const body =
      'Invalid value: "{\\"kind\\":\\"Deployment\\",\\"spec\\":{\\"foo\\":1}}": ' +
      'strict decoding error: unknown field "spec.foo"';
    assert.throws(
      () => applyFieldValidation('Strict', { unknown: ['spec.foo'] }, { verb: 'patch', badValue }),
      (err: unknown) => {
        assert.ok(err instanceof ApiError);
        assert.equal(err.code, 422);
        assert.equal(err.reason, 'Invalid');
        assert.equal(err.message, ` "" is invalid: patch: ${body}`);
        assert.deepEqual(err.details, {
          causes: [{ reason: 'FieldValueInvalid', message: body, field: 'patch' }],
        });
        return true;
      },
    );
  });

  const outcomes: { directive: 'Strict' | 'Warn' | 'Ignore'; unknown: string[]; warnings: string[] }[] = [
    { directive: 'Strict', unknown: [], warnings: [] },
    { directive: 'Warn', unknown: [], warnings: [] },
    {
      directive: 'Warn',
      unknown: ['spec.foo', 'spec.bar'],
      warnings: two.unknown.map((p) => `unknown field "${p}"`),
    },
    { directive: 'Ignore', unknown: ['spec.foo'], warnings: [] },
  ];
  for (const o of outcomes) {
    it(`${o.directive} with ${o.unknown.length} unknown → ${o.warnings.length} warnings`, () => {
      assert.deepEqual(applyFieldValidation(o.directive, { unknown: o.unknown }, create), {
        warnings: o.warnings,
      });
    });
  }

  it('words paths as Go quotes them, each once, at most 100', () => {
    assert.deepEqual(strictDecodingErrors({ unknown: ['a"b', 'tab\there', 'a"b'] }), [
      'unknown field "a\\"b"',
      'unknown field "tab\\there"',
    ]);
    const many = Array.from({ length: 120 }, (_, i) => `f${i}`);
    assert.equal(strictDecodingErrors({ unknown: many }).length, 100);
  });
});
