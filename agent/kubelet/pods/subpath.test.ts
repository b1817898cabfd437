/**
 * subPath resolution against the real filesystem and the real kernel's bind mounts (as
 * root; the mount cases are skipped otherwise): every way a pod's own files could point a
 * subPath out of its volume — an absolute or relative symlink, a link in the middle, a
 * directory made through a link, a directory swapped for a link between the check and
 * the mount — fails, and nothing outside the volume is created or mounted; links that
 * stay inside the volume work as in Kubernetes. Teardown unmounts before it removes, so
 * it never deletes through a mount.
 */
import assert from 'node:assert/strict';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { hostMounter } from './mount.js';
import {
  cleanSubPaths,
  prepareSafeSubpath,
  safeMakeDir,
  safeOpenSubPath,
  SubPathError,
  validatePathNoBacksteps,
} from './subpath.js';

const NOT_ROOT = process.getuid?.() !== 0 ? 'needs root: bind mounts' : undefined;

const made: string[] = [];
afterEach(async () => {
  for (const dir of made.splice(0)) {
    for (const m of (await hostMounter.mountPoints()).filter((p) => p.startsWith(`${dir}/`)).reverse())
      await hostMounter.unmount(m);
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * A pod dir with a volume holding `real/file` (text `inside`), `real-file`, an in-volume
 * link `alias -> real`, and, outside the volume, `host/secret` (text `host secret`) with
 * links to it: `abs -> <host>`, `rel -> ../../host`, `mid -> <host>` (used as `mid/secret`).
 */
function layout(): { podDir: string; volume: string; host: string } {
  const root = mkdtempSync(join(tmpdir(), 'k8ts-subpath-'));
  made.push(root);
  const podDir = join(root, 'pod');
  const volume = join(podDir, 'volumes', 'kubernetes.io~empty-dir', 'data');
  const host = join(root, 'host');
  mkdirSync(join(volume, 'real'), { recursive: true });
  mkdirSync(host);
  writeFileSync(join(volume, 'real', 'file'), 'inside');
  writeFileSync(join(volume, 'real-file'), 'inside file');
  writeFileSync(join(host, 'secret'), 'host secret');
  symlinkSync('real', join(volume, 'alias'));
  symlinkSync(host, join(volume, 'abs'));
  symlinkSync('../../../../host', join(volume, 'rel'));
  symlinkSync(host, join(volume, 'mid'));
  symlinkSync(join(host, 'secret'), join(volume, 'file-link'));
  return { podDir, volume, host };
}

describe('subPath: validatePathNoBacksteps', () => {
  for (const [p, ok] of [
    ['a/b', true],
    ['a/..b', true],
    ['..', false],
    ['a/../../b', false],
    ['/etc', false],
  ] as const) {
    it(`${p}: ${ok ? 'accepted' : 'refused'}`, () => {
      if (ok) validatePathNoBacksteps(p);
      else assert.throws(() => validatePathNoBacksteps(p), SubPathError);
    });
  }
});

describe('subPath: safeMakeDir', () => {
  it('creates missing directories inside the volume with the volume’s mode', () => {
    const { volume } = layout();
    safeMakeDir(join(volume, 'new/deeper'), volume, 0o777);
    assert.equal(statSync(join(volume, 'new/deeper')).mode & 0o777, 0o777);
    safeMakeDir(join(volume, 'alias/under-alias'), volume, 0o755);
    assert.ok(statSync(join(volume, 'real/under-alias')).isDirectory(), 'through an in-volume link');
  });

  for (const sub of ['abs/made-by-pod', 'rel/made-by-pod', 'mid/x/made-by-pod']) {
    it(`${sub}: refused, nothing made outside the volume`, () => {
      const { volume, host } = layout();
      assert.throws(() => safeMakeDir(join(volume, sub), volume, 0o777), SubPathError);
      assert.deepEqual(readdirSync(host), ['secret']);
    });
  }
});

describe('subPath: prepareSafeSubpath', () => {
  const prepare = (podDir: string, volume: string, sub: string, index = 0) =>
    prepareSafeSubpath(
      {
        volumeMountIndex: index,
        path: join(volume, sub),
        volumeName: 'data',
        volumePath: volume,
        podDir,
        containerName: 'app',
      },
      hostMounter,
    );

  it(
    'binds a directory, a file and an in-volume link under volume-subpaths',
    { skip: NOT_ROOT },
    async () => {
      const { podDir, volume } = layout();
      const dir = await prepare(podDir, volume, 'real', 0);
      assert.equal(dir, join(podDir, 'volume-subpaths', 'data', 'app', '0'));
      assert.equal(readFileSync(join(dir, 'file'), 'utf8'), 'inside');
      const file = await prepare(podDir, volume, 'real-file', 1);
      assert.equal(readFileSync(file, 'utf8'), 'inside file');
      const alias = await prepare(podDir, volume, 'alias', 2);
      assert.equal(readFileSync(join(alias, 'file'), 'utf8'), 'inside');
      // Prepared again (the container restarted): the same target, mounted once.
      await prepare(podDir, volume, 'real', 0);
      const mounts = (await hostMounter.mountPoints()).filter((m) => m === dir);
      assert.equal(mounts.length, 1);
    },
  );

  for (const sub of ['abs', 'rel', 'mid/secret', 'file-link']) {
    it(`${sub}: a link out of the volume is refused and nothing is mounted`, { skip: NOT_ROOT }, async () => {
      const { podDir, volume } = layout();
      await assert.rejects(prepare(podDir, volume, sub), SubPathError);
      const mounts = (await hostMounter.mountPoints()).filter((m) => m.startsWith(podDir));
      assert.deepEqual(mounts, []);
    });
  }

  it(
    'a directory swapped for a link after it was opened: the mount is still the opened one',
    { skip: NOT_ROOT },
    async () => {
      const { podDir, volume, host } = layout();
      const fd = safeOpenSubPath(join(volume, 'real'), volume);
      try {
        renameSync(join(volume, 'real'), join(volume, 'real.old'));
        symlinkSync(host, join(volume, 'real'));
        const target = join(podDir, 'volume-subpaths', 'data', 'app', '0');
        mkdirSync(target, { recursive: true });
        await hostMounter.bindMount(`/proc/${process.pid}/fd/${fd}`, target);
        assert.deepEqual(readdirSync(target), ['file'], 'the opened directory, not the host’s');
      } finally {
        closeSync(fd);
      }
      // Opening now, with the link in place, is refused.
      assert.throws(() => safeOpenSubPath(join(volume, 'real'), volume), SubPathError);
    },
  );

  it(
    'cleanSubPaths unmounts first: the files behind a mount are never deleted',
    { skip: NOT_ROOT },
    async () => {
      const { podDir, volume } = layout();
      await prepare(podDir, volume, 'real', 0);
      await cleanSubPaths(podDir, hostMounter);
      assert.equal(existsSync(join(podDir, 'volume-subpaths')), false);
      assert.equal(readFileSync(join(volume, 'real', 'file'), 'utf8'), 'inside');
    },
  );
});
