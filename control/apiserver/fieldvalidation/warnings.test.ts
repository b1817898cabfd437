// Warning headers (warnings.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ResponseWarnings, warningHeader, warningHeaders } from './index.js';

describe('Warning headers', () => {
  it('formats one as Kubernetes does', () => {
    assert.equal(warningHeader('unknown field "spec.foo"'), '299 - "unknown field \\"spec.foo\\""');
    assert.equal(warningHeader('a\\b'), '299 - "a\\\\b"');
    assert.equal(warningHeader('bad\ntext'), undefined);
  });

  it('sends non-ASCII text as UTF-8 bytes', () => {
    const h = warningHeader('unknown field "spec.이름"')!;
    assert.equal(Buffer.from(h, 'latin1').toString('utf8'), '299 - "unknown field \\"spec.이름\\""');
  });

  it('drops empty and repeated texts', () => {
    assert.deepEqual(warningHeaders(['a', '', 'b', 'a']), ['299 - "a"', '299 - "b"']);
  });

  it('truncates past 4096 runes as the warning recorder does', () => {
    const texts = Array.from({ length: 20 }, (_, i) => `${i}`.padStart(300, 'x'));
    const headers = warningHeaders(texts);
    // 13 × 300 runes fit; the 14th starts truncation: 256 runes each, 16 of them fill 4096.
    assert.equal(headers.length, 16);
    for (const [i, h] of headers.entries()) assert.equal(h, `299 - "${texts[i]!.slice(0, 256)}"`);
    assert.deepEqual(
      warningHeaders(texts.slice(0, 13)),
      texts.slice(0, 13).map((t) => `299 - "${t}"`),
    );
  });

  it('ResponseWarnings: one recorder for the whole request, repeats dropped, earlier headers cut once over the limit', () => {
    const sink = {
      headersSent: false,
      headers: [] as string[],
      setHeader(_n: string, v: string[]) {
        this.headers = v;
      },
    };
    const w = new ResponseWarnings(sink);
    w.add('a');
    w.add('b "q"');
    w.add('a');
    assert.deepEqual(sink.headers, ['299 - "a"', '299 - "b \\"q\\""']);
    const long = Array.from({ length: 14 }, (_, i) => `${i}`.padStart(300, 'x'));
    const many = new ResponseWarnings(sink);
    for (const t of long) many.add(t);
    // The 14th text passes 4096 runes: every header so far is rewritten cut to 256 runes.
    assert.deepEqual(
      sink.headers,
      long.map((t) => `299 - "${t.slice(0, 256)}"`),
    );
    sink.headersSent = true;
    many.add('late');
    assert.equal(sink.headers.length, 14);
  });
});
