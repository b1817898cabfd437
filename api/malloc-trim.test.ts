/**
 * malloc_trim for the C heap (api/malloc-trim.ts): the addon is built by npm ci, and a trim
 * gives back the free pages that free() left resident between live blocks.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadMallocTrim, startMallocTrim, type MallocTrim } from './malloc-trim.js';

/**
 * A child process (its own heap) that malloc's 256 MiB in 64 KiB Buffers, each followed by a
 * 1 KiB one it keeps, frees the large ones, collects, and prints its RssAnon (KiB) before
 * and after one trim(), and what the trim resolved to.
 */
const CHILD = `
const { readFileSync } = require('node:fs');
const addon = require(process.argv[1]);
const rssAnon = () => Number(/RssAnon:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
let large = [];
const kept = [];
for (let i = 0; i < 4096; i++) {
  large.push(Buffer.alloc(64 * 1024, 1));
  kept.push(Buffer.alloc(1024, 1));
}
large = [];
for (let i = 0; i < 3; i++) global.gc();
const before = rssAnon();
addon.trim().then((released) => console.log(JSON.stringify({ before, after: rssAnon(), released, kept: kept.length })));
`;

describe('malloc-trim', () => {
  it('is built by npm ci, and a trim gives back the free heap between live blocks', () => {
    assert.ok(loadMallocTrim(), 'k8ts-malloc-trim is installed and loads (npm ci builds api/malloc-trim)');
    const addon = fileURLToPath(new URL('./malloc-trim/build/Release/malloc_trim.node', import.meta.url));
    const out = execFileSync(process.execPath, ['--expose-gc', '-e', CHILD, addon], { encoding: 'utf8' });
    const { before, after, released } = JSON.parse(out) as {
      before: number;
      after: number;
      released: boolean;
    };
    assert.equal(released, true);
    // 256 MiB were freed; free() kept them (the 1 KiB blocks between hold the heap's top).
    assert.ok(before - after > 128 * 1024, `RssAnon ${before} KiB before the trim, ${after} KiB after`);
  });

  it('trims every quiet interval until stopped, never a busy one, and is a no-op without the addon', async () => {
    let trims = 0;
    const addon: MallocTrim = { trim: async () => (trims++, true) };
    const busy = startMallocTrim(addon, 5, () => 0.9, 0.3);
    await new Promise((r) => setTimeout(r, 60));
    busy();
    assert.equal(trims, 0, 'no trim while the event loop is busy');
    const stop = startMallocTrim(addon, 5, () => 0.1, 0.3);
    await new Promise((r) => setTimeout(r, 60));
    stop();
    const seen = trims;
    assert.ok(seen >= 2, `${seen} trims in 60 ms at a 5 ms interval`);
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(trims, seen, 'no trim after stop()');
    startMallocTrim(undefined, 5)();
  });
});
