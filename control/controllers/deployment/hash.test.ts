import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PodTemplateSpec } from '../../../api/types.js';
import {
  canonicalJSON,
  computeHash,
  equalIgnoreHash,
  fnv1a32,
  POD_TEMPLATE_HASH_LABEL,
  safeEncodeString,
} from './hash.js';

const enc = (s: string) => new TextEncoder().encode(s);

const template = (image: string, extra: Record<string, unknown> = {}): PodTemplateSpec => ({
  metadata: { labels: { app: 'backend-app' } },
  spec: { containers: [{ name: 'spring-container', image, ...extra }] },
});

describe('fnv1a32', () => {
  const cases: [string, number][] = [
    ['', 0x811c9dc5],
    ['a', 0xe40c292c],
    ['foobar', 0xbf9cf968],
  ];
  for (const [input, want] of cases) {
    it(`hashes ${JSON.stringify(input)} to 0x${want.toString(16)}`, () => {
      assert.equal(fnv1a32(enc(input)), want);
    });
  }
  it('continues from a previous state as one hash over both parts', () => {
    assert.equal(fnv1a32(enc('bar'), fnv1a32(enc('foo'))), fnv1a32(enc('foobar')));
  });
});

describe('safeEncodeString', () => {
  it("maps decimal digits onto apimachinery's safe alphabet (code point mod 27)", () => {
    assert.equal(safeEncodeString('0123456789'), '456789bcdf');
  });
  it('keeps the length', () => {
    assert.equal(safeEncodeString('4294967295').length, 10);
  });
});

describe('computeHash', () => {
  // The canonical form written out by hand, and hashes from an independent FNV-1a 32 and
  // safe encoding (a few lines of Python, checked against the FNV vectors above), not from
  // hash.ts. A change to any of them renames every ReplicaSet a Deployment made. They are
  // not Kubernetes' own values: hash.ts hashes this JSON, not Go's spew dump (see its header).
  const canonical =
    '{"metadata":{"labels":{"app":"backend-app"}},"spec":{"containers":[{"image":"spring-server:1.0","name":"spring-container"}]}}';
  it('is the safe encoding of the decimal FNV-1a of the canonical template', () => {
    const t = template('spring-server:1.0');
    assert.equal(canonicalJSON(t), canonical);
    assert.equal(fnv1a32(enc(canonical)), 1819124498);
    assert.equal(computeHash(t), '5d5f5688fd');
    assert.equal(computeHash(template('spring-server:1.1')), '76758854cf');
  });
  it('appends collisionCount as 8 little-endian bytes', () => {
    const t = template('spring-server:1.0');
    assert.equal(computeHash(t, 2), '555f5998c6');
    assert.equal(computeHash(t, 0), '86968d477d', 'a collisionCount of 0 is still hashed in');
  });
  it('differs for different images and uses only the safe alphabet', () => {
    const a = computeHash(template('spring-server:1.0'));
    const b = computeHash(template('spring-server:1.1'));
    assert.notEqual(a, b);
    for (const h of [a, b]) assert.match(h, /^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
  });
  it('ignores key order, empty values and an existing pod-template-hash label', () => {
    const base = computeHash(template('spring-server:1.0'));
    const reordered: PodTemplateSpec = {
      spec: { containers: [{ image: 'spring-server:1.0', name: 'spring-container', resources: {} }] },
      metadata: { labels: { app: 'backend-app', [POD_TEMPLATE_HASH_LABEL]: 'abc' }, annotations: {} },
    };
    (reordered.metadata as Record<string, unknown>).creationTimestamp = null;
    assert.equal(computeHash(reordered), base);
  });
  it('keeps false, 0 and "" (meaningful for pointer fields)', () => {
    const base = computeHash(template('spring-server:1.0'));
    for (const extra of [{ stdin: false }, { x: 0 }, { workingDir: '' }]) {
      assert.notEqual(computeHash(template('spring-server:1.0', extra)), base, JSON.stringify(extra));
    }
  });
});

describe('equalIgnoreHash', () => {
  const cases: [string, PodTemplateSpec, PodTemplateSpec, boolean][] = [
    ['same', template('a'), template('a'), true],
    ['other image', template('a'), template('b'), false],
    [
      'hash label only on one side',
      template('a'),
      { ...template('a'), metadata: { labels: { app: 'backend-app', [POD_TEMPLATE_HASH_LABEL]: 'x' } } },
      true,
    ],
    ['other label', template('a'), { ...template('a'), metadata: { labels: { app: 'other' } } }, false],
    [
      'template annotation added (rollout restart)',
      template('a'),
      {
        ...template('a'),
        metadata: {
          labels: { app: 'backend-app' },
          annotations: { 'kubectl.kubernetes.io/restartedAt': 't' },
        },
      },
      false,
    ],
  ];
  for (const [name, a, b, want] of cases) {
    it(name, () => assert.equal(equalIgnoreHash(a, b), want));
  }
});
