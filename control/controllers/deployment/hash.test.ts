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
  it('is the safe encoding of the decimal FNV-1a of the canonical template', () => {
    const t = template('spring-server:1.0');
    assert.equal(computeHash(t), safeEncodeString(String(fnv1a32(enc(canonicalJSON(t))))));
  });
  it('appends collisionCount as 8 little-endian bytes', () => {
    const t = template('spring-server:1.0');
    const bytes = new Uint8Array([2, 0, 0, 0, 0, 0, 0, 0]);
    const want = safeEncodeString(String(fnv1a32(bytes, fnv1a32(enc(canonicalJSON(t))))));
    assert.equal(computeHash(t, 2), want);
    assert.notEqual(computeHash(t, 2), computeHash(t));
    assert.notEqual(computeHash(t, 0), computeHash(t), 'a collisionCount of 0 is still hashed in');
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
