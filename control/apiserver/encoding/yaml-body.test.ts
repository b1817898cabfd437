import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseYamlBody } from './yaml-body.js';

describe('parseYamlBody (go-yaml v2, YAML 1.1)', () => {
  it('resolves merge keys', () => {
    const doc = 'base: &b {app: web, tier: front}\nlabels:\n  <<: *b\n  tier: back\n';
    assert.deepEqual(parseYamlBody(doc), {
      base: { app: 'web', tier: 'front' },
      labels: { app: 'web', tier: 'back' },
    });
  });

  it('reads YAML 1.1 booleans and octals, and leaves quoted words strings', () => {
    assert.deepEqual(parseYamlBody('a: yes\nb: No\nc: on\nd: OFF\ne: "yes"\nf: 0777\ng: 0x1f\n'), {
      a: true,
      b: false,
      c: true,
      d: false,
      e: 'yes',
      f: 511,
      g: 31,
    });
  });

  it('keeps as strings what go-yaml v2 does not resolve into an untyped value', () => {
    assert.deepEqual(parseYamlBody('day: 2001-12-14\nport: 22:22\nt: 2001-12-14T21:59:43Z\n'), {
      day: '2001-12-14',
      port: '22:22',
      t: '2001-12-14T21:59:43Z',
    });
  });

  it('refuses repeated keys unless told not to', () => {
    assert.throws(() => parseYamlBody('a: 1\na: 2\n'));
    assert.deepEqual(parseYamlBody('a: 1\na: 2\n', false), { a: 2 });
  });
});
