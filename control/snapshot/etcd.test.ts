/**
 * Snapshots of the etcd datastore against a real etcd (Debian's etcd-server, through
 * test/support/etcd.ts): saved through Maintenance.Snapshot and checked (size shape,
 * sha256 trailer, bbolt magic), restored with `etcdctl snapshot restore` into a new member
 * data dir, and that member, started on its own, serves the same keys, values and
 * revisions; a truncated or altered snapshot is refused before etcdctl runs.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePorts, startEtcd, type EtcdMember } from '../../test/support/etcd.js';
import { EtcdStore } from '../storage/etcd.js';
import type { KeyValue } from '../storage/store.js';
import { isSnapshotError } from './errors.js';
import { metadataPath } from './metadata.js';
import { restoreSnapshot } from './restore.js';
import { Snapshotter } from './snapshotter.js';

const roots: string[] = [];
const children: ChildProcess[] = [];
const killAll = () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
};
process.on('exit', killAll);
after(() => {
  killAll();
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});
function tempDir(prefix = 'k8ts-etcd-snap-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  roots.push(d);
  return d;
}

/** Starts etcd on an existing (restored) member data dir; resolves when /health says true. */
async function startRestoredMember(dataDir: string, name: string, clientPort: number, peerPort: number) {
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  let log = '';
  const child = spawn(
    'etcd',
    [
      `--name=${name}`,
      `--data-dir=${dataDir}`,
      `--listen-client-urls=${client}`,
      `--advertise-client-urls=${client}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      '--log-level=warn',
      '--logger=zap',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  child.stdout!.resume();
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`restored etcd exited ${child.exitCode}:\n${log}`);
    try {
      const body = (await (
        await fetch(`${client}/health`, { signal: AbortSignal.timeout(1000) })
      ).json()) as {
        health?: string;
      };
      if (body.health === 'true') return { endpoint: client, child };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`restored etcd not healthy in 20 s:\n${log}`);
}

/** A k8ts data dir as a server leaves it (the sidecar carries these). */
function dataDirWithCredentials(): string {
  const dir = tempDir();
  mkdirSync(join(dir, 'tls'), { mode: 0o700 });
  writeFileSync(join(dir, 'tls', 'server-ca.key'), 'CA KEY\n', { mode: 0o600 });
  writeFileSync(join(dir, 'node-token'), 'K10abc::id.secret\n', { mode: 0o600 });
  return dir;
}

describe('etcd snapshots', () => {
  let etcd: EtcdMember;
  let store: EtcdStore;
  let dataDir: string;
  let snapshotPath: string;
  let revision: number;
  let items: KeyValue[];
  before(async () => {
    etcd = await startEtcd();
    store = await EtcdStore.open({ endpoints: etcd.endpoints });
    for (let i = 0; i < 100; i++) {
      await store.create(`/registry/configmaps/default/cm-${i}`, JSON.stringify({ data: { i: String(i) } }));
      await store.create(`/registry/secrets/default/s-${i}`, JSON.stringify({ data: { password: 'cHc=' } }));
    }
    const kv = await store.get('/registry/configmaps/default/cm-0');
    await store.update('/registry/configmaps/default/cm-0', '{"data":{"i":"changed"}}', kv!.modRevision);
    await store.delete('/registry/configmaps/default/cm-1');
    revision = await store.currentRevision();
    items = (await store.list('/registry/')).items;
    dataDir = dataDirWithCredentials();
    const saved = await new Snapshotter({
      source: { datastore: 'etcd', endpoints: ['http://127.0.0.1:1', ...etcd.endpoints] },
      dataDir,
      nodeName: 'node-e',
    }).save();
    snapshotPath = join(dataDir, 'snapshots', saved.name);
  });
  after(async () => {
    await store?.close();
    await etcd?.stop();
  });

  it('saves a checked snapshot with its revision (the first endpoint that answers)', () => {
    const meta = JSON.parse(readFileSync(metadataPath(snapshotPath), 'utf8')) as {
      datastore: string;
      revision: number;
      size: number;
    };
    assert.equal(meta.datastore, 'etcd');
    assert.equal(meta.revision, revision, "etcdctl snapshot status's revision");
    const size = statSync(snapshotPath).size;
    assert.equal(meta.size, size);
    assert.equal(size % 512, 32, 'bbolt pages and the sha256 trailer');
    assert.equal(statSync(snapshotPath).mode & 0o777, 0o600);
  });

  it('restores into a new member data dir that serves the same keys and revision', async () => {
    const target = tempDir();
    const etcdDataDir = join(tempDir(), 'member');
    const [clientPort, peerPort] = await freePorts(2);
    const peer = `http://127.0.0.1:${peerPort}`;
    const result = await restoreSnapshot({
      snapshot: snapshotPath,
      dataDir: target,
      etcd: {
        dataDir: etcdDataDir,
        name: 'restored',
        initialCluster: `restored=${peer}`,
        initialAdvertisePeerUrls: peer,
        initialClusterToken: 'k8ts-restored',
      },
    });
    assert.equal(result.datastore, 'etcd');
    assert.deepEqual(result.files.sort(), ['node-token', 'tls/server-ca.key']);
    assert.equal(readFileSync(join(target, 'node-token'), 'utf8'), 'K10abc::id.secret\n');
    const member = await startRestoredMember(etcdDataDir, 'restored', clientPort!, peerPort!);
    const restored = await EtcdStore.open({ endpoints: [member.endpoint] });
    try {
      assert.equal(await restored.currentRevision(), revision);
      assert.deepEqual((await restored.list('/registry/')).items, items);
      const next = await restored.create('/registry/configmaps/default/after-restore', '{}');
      assert.equal(next.modRevision, revision + 1);
    } finally {
      await restored.close();
      member.child.kill('SIGTERM');
      await new Promise((r) => member.child.once('exit', r));
    }
  });

  const cases = [
    {
      name: 'truncated, with its sidecar',
      sidecar: true,
      damage: (p: string) => truncateSync(p, statSync(p).size - 1000),
      message: /it is truncated; refusing to restore it/,
    },
    {
      name: 'truncated, without a sidecar',
      sidecar: false,
      damage: (p: string) => truncateSync(p, statSync(p).size - 1000),
      message: /not a whole snapshot with its sha256 trailer \(n·512 \+ 32\): truncated/,
    },
    {
      name: 'a byte changed, without a sidecar',
      sidecar: false,
      damage: (p: string) => {
        const buf = readFileSync(p);
        buf[8192] = buf[8192]! ^ 0xff;
        writeFileSync(p, buf);
      },
      message: /fails its sha256 trailer/,
    },
  ];
  for (const c of cases) {
    it(`refuses a snapshot ${c.name}, before etcdctl runs`, async () => {
      const copy = join(tempDir(), 'snap');
      copyFileSync(snapshotPath, copy);
      if (c.sidecar) copyFileSync(metadataPath(snapshotPath), metadataPath(copy));
      c.damage(copy);
      const etcdDataDir = join(tempDir(), 'member');
      const target = tempDir();
      await assert.rejects(
        restoreSnapshot({ snapshot: copy, dataDir: target, etcd: { dataDir: etcdDataDir } }),
        (err) => {
          assert.ok(
            isSnapshotError(err) && (err.code === 'Corrupt' || err.code === 'Truncated'),
            String(err),
          );
          assert.match(err.message, c.message);
          return true;
        },
      );
      assert.ok(!existsSync(etcdDataDir), 'no member data dir was made');
      assert.ok(!existsSync(join(target, 'node-token')), 'no credentials were written');
    });
  }

  it('refuses a member data dir that is not empty, and an etcd snapshot without one', async () => {
    const etcdDataDir = tempDir();
    writeFileSync(join(etcdDataDir, 'something'), 'x');
    await assert.rejects(
      restoreSnapshot({ snapshot: snapshotPath, dataDir: tempDir(), etcd: { dataDir: etcdDataDir } }),
      (err) => isSnapshotError(err, 'Exists') && /is not empty; restore into a new one/.test(err.message),
    );
    await assert.rejects(
      restoreSnapshot({ snapshot: snapshotPath, dataDir: tempDir() }),
      (err) => isSnapshotError(err, 'Invalid') && /give --etcd-data-dir/.test(err.message),
    );
  });
});
