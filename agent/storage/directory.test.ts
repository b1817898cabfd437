/**
 * The local-path volume directories (directory.ts) on disk: made 0777, removed only as a
 * direct child of the storage directory, a symlink in a volume's place unlinked without
 * touching what it points to, and nothing removed through a mount.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Mounter } from '../kubelet/pods/mount.js';
import { createVolumeDir, removeVolumeDir, storageDir, VolumeDirectoryError } from './directory.js';

function mounterWith(points: string[]): Mounter {
  const no = () => Promise.reject(new Error('not in this test'));
  return { bindMount: no, mountTmpfs: no, unmount: no, mountPoints: () => Promise.resolve(points) };
}

describe('local-path volume directories', () => {
  let dir: string;
  let storage: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'k8ts-local-path-'));
    storage = storageDir(dir);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('makes the directory 0777 under DATA_DIR/storage, idempotently', () => {
    const path = createVolumeDir(storage, 'pvc-a');
    assert.equal(path, join(dir, 'storage', 'pvc-a'));
    assert.equal(statSync(path).mode & 0o777, 0o777);
    writeFileSync(join(path, 'keep'), 'x');
    assert.equal(createVolumeDir(storage, 'pvc-a'), path);
    assert.ok(existsSync(join(path, 'keep')), 'a second create keeps the data');
    assert.throws(() => createVolumeDir(storage, '../escape'), VolumeDirectoryError);
  });

  it('removes a volume directory with its contents; a missing one is success', async () => {
    const path = createVolumeDir(storage, 'pvc-b');
    mkdirSync(join(path, 'sub'));
    writeFileSync(join(path, 'sub', 'f'), 'data');
    await removeVolumeDir(storage, path, mounterWith([]));
    assert.equal(existsSync(path), false);
    await removeVolumeDir(storage, path, mounterWith([]));
  });

  it('never follows links out of the storage directory', async () => {
    const outside = join(dir, 'precious');
    mkdirSync(outside);
    writeFileSync(join(outside, 'f'), 'keep me');
    // A link in a volume's place: unlinked, its target untouched.
    symlinkSync(outside, join(storage, 'pvc-link'));
    await removeVolumeDir(storage, join(storage, 'pvc-link'), mounterWith([]));
    assert.equal(existsSync(join(storage, 'pvc-link')), false);
    assert.ok(existsSync(join(outside, 'f')));
    // A link inside a volume: rm unlinks it, the target stays.
    const path = createVolumeDir(storage, 'pvc-c');
    symlinkSync(outside, join(path, 'link'));
    await removeVolumeDir(storage, path, mounterWith([]));
    assert.ok(existsSync(join(outside, 'f')));
    // Paths that are not a direct child of the storage directory are refused.
    for (const p of [
      outside,
      join(storage, 'pvc-c', '..', '..', 'precious'),
      join(storage, 'a', 'b'),
      'relative',
    ])
      await assert.rejects(removeVolumeDir(storage, p, mounterWith([])), VolumeDirectoryError, p);
    assert.ok(existsSync(join(outside, 'f')));
  });

  it('leaves a directory with a mount in it alone', async () => {
    const path = createVolumeDir(storage, 'pvc-d');
    await assert.rejects(removeVolumeDir(storage, path, mounterWith([join(path, 'm')])), /still mounted/);
    assert.ok(existsSync(path));
  });
});
