import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeWatchStream, parseWatchLine, WatchDecodeError } from './watch.js';

async function collect(chunks: (string | Buffer)[]): Promise<unknown[]> {
  async function* source() {
    for (const c of chunks) yield c;
  }
  const out: unknown[] = [];
  for await (const ev of decodeWatchStream(source())) out.push(ev);
  return out;
}

const added = { type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '5' } } };
const bookmark = { type: 'BOOKMARK', object: { metadata: { resourceVersion: '9' } } };

describe('decodeWatchStream', () => {
  const cases: { name: string; chunks: (string | Buffer)[]; want: unknown[] }[] = [
    {
      name: 'one event per chunk',
      chunks: [`${JSON.stringify(added)}\n`, `${JSON.stringify(bookmark)}\n`],
      want: [added, bookmark],
    },
    {
      name: 'two events in one chunk',
      chunks: [`${JSON.stringify(added)}\n${JSON.stringify(bookmark)}\n`],
      want: [added, bookmark],
    },
    {
      name: 'an event split across chunks',
      chunks: [JSON.stringify(added).slice(0, 7), `${JSON.stringify(added).slice(7)}\n`],
      want: [added],
    },
    { name: 'blank lines and CRLF', chunks: [`\n${JSON.stringify(added)}\r\n\n`], want: [added] },
    { name: 'a last line without newline', chunks: [JSON.stringify(bookmark)], want: [bookmark] },
    { name: 'nothing', chunks: [], want: [] },
  ];
  for (const c of cases) {
    it(c.name, async () => assert.deepEqual(await collect(c.chunks), c.want));
  }

  it('a multi-byte character split across Buffer chunks', async () => {
    const ev = { type: 'ADDED', object: { metadata: { name: 'x', annotations: { note: 'größe ✓' } } } };
    const bytes = Buffer.from(`${JSON.stringify(ev)}\n`);
    const cut = bytes.indexOf(Buffer.from('✓')) + 1;
    assert.deepEqual(await collect([bytes.subarray(0, cut), bytes.subarray(cut)]), [ev]);
  });

  it('rejects lines that are not watch events', async () => {
    for (const bad of ['not json', '{"type":"ADDED"}', '{"type":"NOPE","object":{}}', '[1]']) {
      await assert.rejects(collect([`${bad}\n`]), WatchDecodeError, bad);
      assert.throws(() => parseWatchLine(bad), WatchDecodeError);
    }
  });
});
