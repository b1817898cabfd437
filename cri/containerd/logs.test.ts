/**
 * pumpLog (logs.ts) on CRI log files as containerd 1.6 writes them: what `kubectl logs`
 * shows of a container's output, as the kubelet's ReadLogs shows it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, describe, it } from 'node:test';
import type { ContainerLogOptions } from '../api.js';
import { pumpLog } from './logs.js';

const dir = mkdtempSync(join(tmpdir(), 'k8ts-logs-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** What pumpLog writes for a file of `lines` (not following). */
async function shown(name: string, lines: string[], opts: ContainerLogOptions = {}): Promise<string> {
  const path = join(dir, name);
  writeFileSync(path, lines.map((l) => `${l}\n`).join(''));
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise<void>((resolve) => out.on('end', () => resolve()));
  await pumpLog(path, opts, out, () => Promise.resolve(false));
  await ended;
  return Buffer.concat(chunks).toString('utf8');
}

// `sh -c 'echo a; printf no-newline; exit 3'`: containerd's CRI writes the output left at
// the container's exit as a P entry.
const exited = [
  '2026-12-02T06:55:32.866945137Z stdout F a',
  '2026-12-02T06:55:34.867402455Z stdout P no-newline',
];

describe('pumpLog', () => {
  it('joins partial lines', async () => {
    const text = await shown('joined.log', [
      '2026-12-02T06:55:32.000000001Z stdout P ab',
      '2026-12-02T06:55:32.000000002Z stdout F cd',
    ]);
    assert.equal(text, 'abcd\n');
  });

  it('shows the last output of an exited container that has no newline, as the kubelet does', async () => {
    assert.equal(await shown('exited.log', exited), 'a\nno-newline');
  });

  it('prefixes a timestamp at the start of each line only, and counts a started line for tail', async () => {
    assert.equal(
      await shown('ts.log', exited, { timestamps: true }),
      '2026-12-02T06:55:32.866945137Z a\n2026-12-02T06:55:34.867402455Z no-newline',
    );
    assert.equal(await shown('tail.log', exited, { tailLines: 1 }), 'no-newline');
  });
});
