/**
 * Snapshots of the `etcd` datastore: etcd's own Maintenance.Snapshot API, and its own
 * restore.
 *
 * Save: one member streams its whole backend (a bbolt database) followed by the SHA-256 of
 * those bytes, 32 bytes; etcd pads nothing, so a complete snapshot's size is
 * `n·512 + 32` (etcdutl's hasChecksum). The stream is written to a `.partial` file with
 * back-pressure, and kept only when it ended with remaining_bytes 0, its size has that
 * shape, its trailer matches the SHA-256 of the rest, and its first page carries bbolt's
 * magic. Only one endpoint answers a snapshot (etcd's advice): the first that does, in
 * the order given.
 *
 * Restore: `etcdctl snapshot restore` (Debian's etcd-client 3.4; etcdutl is 3.5+), which
 * builds a new member data dir (WAL, raft snapshot, membership) around the db and refuses
 * a data dir that exists; the file is checked here first, so a bad one is refused with
 * the same words as a bad sqlite one. etcd 3.4's restore has no `--bump-revision`: the
 * restored member's revision is the snapshot's, and clients that saw a later one must
 * relist (README, "Backup and restore").
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import type { ISnapshotResponse } from 'etcd3';
import { SnapshotError } from './errors.js';
import { fsyncFile } from './metadata.js';

const SHA256_SIZE = 32;

/** etcd's snapshot stream as a Node readable (etcd3's IResponseStream is one, typed narrower). */
interface SnapshotStream {
  on(event: 'data', fn: (item: ISnapshotResponse) => void): unknown;
  on(event: 'end', fn: () => void): unknown;
  on(event: 'error', fn: (err: Error) => void): unknown;
  pause(): unknown;
  resume(): unknown;
  cancel?(): void;
}

/** What an etcd snapshot holds. */
export interface EtcdSnapshotInfo {
  /** See SnapshotMetadata.revision. */
  revision: number;
  /** The endpoint that streamed it. */
  endpoint: string;
}

/**
 * Streams a snapshot of one etcd member to `destination` (a new file, 0600) and checks it
 * (see the top of this file).
 * @throws SnapshotError Failed when no endpoint answers or the stream breaks; Corrupt when
 *   what arrived does not check out. `destination` is removed on any failure.
 */
export async function saveEtcdSnapshot(
  endpoints: readonly string[],
  destination: string,
  opts: { dialTimeoutMs?: number } = {},
): Promise<EtcdSnapshotInfo> {
  const failures: string[] = [];
  // Imported here, not at the top: etcd3 (with gRPC and protobufjs, some 5 MB of heap) is
  // loaded only by a server that snapshots etcd, not by every one that may (the sqlite default).
  const { Etcd3 } = await import('etcd3');
  for (const endpoint of endpoints) {
    const client = new Etcd3({
      hosts: [endpoint.replace(/\/$/, '')],
      grpcOptions: { 'grpc.max_receive_message_length': -1 },
    });
    try {
      const status = await client.maintenance.status({ deadline: Date.now() + (opts.dialTimeoutMs ?? 5000) });
      const before = Number(status.header.revision);
      const stream = (await client.maintenance.snapshot()) as unknown as SnapshotStream;
      await writeStream(stream, destination);
      await fsyncFile(destination);
      await checkEtcdSnapshot(destination);
      const revision = (await etcdctlRevision(destination)) ?? before;
      return { revision, endpoint };
    } catch (err) {
      rmSync(destination, { force: true });
      if (err instanceof SnapshotError && err.code === 'Corrupt') throw err;
      failures.push(`${endpoint}: ${(err as Error).message}`);
    } finally {
      client.close();
    }
  }
  throw new SnapshotError('Failed', `etcd snapshot failed on every endpoint: ${failures.join('; ')}`);
}

/** Writes the stream's blobs to `path`, pausing it while the file lags; rejects on a short stream. */
function writeStream(stream: SnapshotStream, path: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const out = createWriteStream(path, { mode: 0o600, flags: 'wx' });
    let remaining: string | undefined;
    let failed = false;
    const fail = (err: Error) => {
      if (failed) return;
      failed = true;
      stream.cancel?.();
      out.destroy();
      reject(err);
    };
    out.on('error', fail);
    stream.on('error', fail);
    stream.on('data', (msg) => {
      remaining = String(msg.remaining_bytes);
      if (!out.write(msg.blob)) {
        stream.pause();
        out.once('drain', () => stream.resume());
      }
    });
    stream.on('end', () => {
      if (failed) return;
      if (remaining !== '0') {
        fail(new Error(`the snapshot stream ended with ${remaining ?? 'all'} bytes still to come`));
        return;
      }
      out.end(() => resolve());
    });
  });
}

/**
 * Checks an etcd snapshot file: the `n·512 + 32` size, the SHA-256 trailer, bbolt's magic.
 * @returns nothing; a file that passes is what etcd sent.
 * @throws SnapshotError Corrupt (truncated files fail the size or the trailer), naming the file.
 */
export async function checkEtcdSnapshot(path: string): Promise<void> {
  const size = statSync(path).size;
  if (size < 4096 + SHA256_SIZE || size % 512 !== SHA256_SIZE)
    throw new SnapshotError(
      'Corrupt',
      `etcd snapshot ${path} is ${size} bytes, not a whole snapshot with its sha256 trailer (n·512 + 32): truncated or not an etcd snapshot; refusing to restore it`,
    );
  const hash = createHash('sha256');
  let magic: number | undefined;
  for await (const chunk of createReadStream(path, {
    start: 0,
    end: size - SHA256_SIZE - 1,
    highWaterMark: 1 << 20,
  })) {
    const buf = chunk as Buffer;
    if (magic === undefined && buf.length >= 20) magic = buf.readUInt32LE(16);
    hash.update(buf);
  }
  const trailer = await readTail(path, size);
  if (magic !== 0xed0cdaed)
    throw new SnapshotError(
      'Corrupt',
      `etcd snapshot ${path} does not start with a bbolt meta page; refusing to restore it`,
    );
  if (!hash.digest().equals(trailer))
    throw new SnapshotError(
      'Corrupt',
      `etcd snapshot ${path} fails its sha256 trailer (the data is not what etcd sent); refusing to restore it`,
    );
}

async function readTail(path: string, size: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of createReadStream(path, { start: size - SHA256_SIZE })) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

/** `etcdctl snapshot status`'s revision, or undefined when etcdctl is not installed or says nothing. */
async function etcdctlRevision(path: string): Promise<number | undefined> {
  const r = await runEtcdctl(['snapshot', 'status', path, '--write-out', 'json']).catch(() => undefined);
  if (!r || r.code !== 0) return undefined;
  try {
    const rev = (JSON.parse(r.stdout) as { revision?: unknown }).revision;
    return typeof rev === 'number' && rev > 0 ? rev : undefined;
  } catch {
    return undefined;
  }
}

/** Where and as what the restored member will run (etcdctl snapshot restore's flags). */
export interface EtcdRestoreOptions {
  /** The new member data dir; must not exist, or be empty. */
  dataDir: string;
  /** `--name` (etcd's default: `default`). */
  name?: string;
  /** `--initial-cluster`, e.g. `default=http://127.0.0.1:2380` (etcd's default for the name). */
  initialCluster?: string;
  /** `--initial-cluster-token` (etcd's default: `etcd-cluster`). */
  initialClusterToken?: string;
  /** `--initial-advertise-peer-urls` (etcd's default: `http://localhost:2380`). */
  initialAdvertisePeerUrls?: string;
}

/**
 * Builds a new etcd member data dir from a checked snapshot with `etcdctl snapshot restore`.
 * @throws SnapshotError Exists when `opts.dataDir` has files; Failed when etcdctl is
 *   missing or fails (its output in the message).
 */
export async function restoreEtcdSnapshot(path: string, opts: EtcdRestoreOptions): Promise<void> {
  if (existsSync(opts.dataDir) && readdirSync(opts.dataDir).length > 0)
    throw new SnapshotError(
      'Exists',
      `etcd data dir ${opts.dataDir} is not empty; restore into a new one (etcd refuses to restore over a member's data)`,
    );
  if (existsSync(opts.dataDir)) rmSync(opts.dataDir, { recursive: true });
  const args = ['snapshot', 'restore', path, '--data-dir', opts.dataDir];
  if (opts.name !== undefined) args.push('--name', opts.name);
  if (opts.initialCluster !== undefined) args.push('--initial-cluster', opts.initialCluster);
  if (opts.initialClusterToken !== undefined) args.push('--initial-cluster-token', opts.initialClusterToken);
  if (opts.initialAdvertisePeerUrls !== undefined)
    args.push('--initial-advertise-peer-urls', opts.initialAdvertisePeerUrls);
  let r: { code: number | null; stdout: string; stderr: string };
  try {
    r = await runEtcdctl(args);
  } catch (err) {
    throw new SnapshotError(
      'Failed',
      `cannot run etcdctl (Debian: apt-get install etcd-client): ${(err as Error).message}; run 'ETCDCTL_API=3 etcdctl ${args.join(' ')}' where it is installed`,
    );
  }
  if (r.code !== 0)
    throw new SnapshotError(
      'Failed',
      `etcdctl ${args.join(' ')} failed (exit ${String(r.code)}): ${r.stderr.trim() || r.stdout.trim()}`,
    );
}

function runEtcdctl(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('etcdctl', args, {
      env: { ...process.env, ETCDCTL_API: '3' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
