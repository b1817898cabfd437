/**
 * Debian's `docker-registry` (distribution 2.x) on 127.0.0.1 for pull tests, plain HTTP,
 * with its storage in a temp dir and optionally htpasswd basic auth (one user, bcrypt by
 * Python's crypt, which distribution's htpasswd accepts); run in the machine's namespace
 * or, with `wrapper` (a simulated host's nsenter), inside a host's.
 *
 *   const reg = await startRegistry({ users: { ann: 'pw' } });
 *   // docker push `${reg.host}/spring-server:1.0` ... a pull with ann/pw ...
 *   await reg.stop();    // SIGTERM by PID (SIGKILL after 10 s), the storage dir removed
 *
 * `storageDir` serves an existing registry's storage (its blobs and manifests), so a second
 * registry — with auth, or in another namespace — has the images pushed to the first; such a
 * dir is not removed by stop().
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './k8ts-server.js';
import { untilTruthy } from './wait.js';

export const REGISTRY_BIN = '/usr/bin/docker-registry';

/** Options of startRegistry. */
export interface RegistryOptions {
  /** htpasswd users (name → password); none: no auth. */
  users?: Record<string, string>;
  /** Serve this storage dir (see the file comment) instead of a new one. */
  storageDir?: string;
  /** Command prefix to run it inside a simulated host's namespace (`h.nsenter`). */
  wrapper?: string[];
}

/** A running registry. */
export interface TestRegistry {
  /** `127.0.0.1:<port>`, the registry's host in the namespace it runs in. */
  host: string;
  /** The storage dir (for another registry on the same images). */
  storageDir: string;
  /** What the registry logged so far. */
  log(): string;
  /** `Authorization` of basic auth for `user` (for the readiness check and callers). */
  basic(user: string): string;
  /** Stops it by PID and removes its dirs (not a storageDir passed in). */
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/**
 * Starts docker-registry and resolves once `/v2/` answers (200, or 401 with auth; asked by
 * curl inside the namespace when `wrapper` is given), within 30 s.
 * @throws AssertionError when the binary is missing or the registry exits.
 */
export async function startRegistry(opts: RegistryOptions = {}): Promise<TestRegistry> {
  assert.ok(
    existsSync(REGISTRY_BIN),
    `${REGISTRY_BIN} is missing: apt-get install docker-registry (.ci/run does)`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'k8ts-registry-'));
  const storageDir = opts.storageDir ?? join(dir, 'data');
  mkdirSync(storageDir, { recursive: true });
  // A simulated host's namespace is new: nothing listens there yet.
  const port = opts.wrapper ? randomInt(20_000, 30_000) : await freePort();
  const host = `127.0.0.1:${port}`;
  const users = Object.entries(opts.users ?? {});
  const lines = [
    'version: 0.1',
    'log:',
    '  level: warn',
    'storage:',
    '  filesystem:',
    `    rootdirectory: ${storageDir}`,
    'http:',
    `  addr: ${host}`,
  ];
  if (users.length > 0) {
    const htpasswd = join(dir, 'htpasswd');
    const script =
      'import crypt, json, sys\n' +
      'for u, p in json.loads(sys.argv[1]):\n' +
      '    print(u + ":" + crypt.crypt(p, crypt.mksalt(crypt.METHOD_BLOWFISH)))\n';
    const out = execFileSync('python3', ['-W', 'ignore', '-c', script, JSON.stringify(users)], {
      encoding: 'utf8',
    });
    writeFileSync(htpasswd, out);
    lines.push('auth:', '  htpasswd:', '    realm: k8ts-test', `    path: ${htpasswd}`);
  }
  const config = join(dir, 'config.yml');
  writeFileSync(config, lines.join('\n') + '\n');
  const argv = [...(opts.wrapper ?? []), REGISTRY_BIN, 'serve', config];
  const child: ChildProcess = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const want = users.length > 0 ? 401 : 200;
  const reg: TestRegistry = {
    host,
    storageDir,
    log: () => log,
    basic: (user) => `Basic ${Buffer.from(`${user}:${opts.users?.[user] ?? ''}`).toString('base64')}`,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await untilTruthy(
      `the registry on ${host}`,
      async () => {
        assert.equal(child.exitCode, null, `docker-registry exited:\n${log}`);
        if (opts.wrapper) {
          const r = await run(opts.wrapper[0]!, [
            ...opts.wrapper.slice(1),
            'curl',
            '-s',
            '-o',
            '/dev/null',
            '-w',
            '%{http_code}',
            `http://${host}/v2/`,
          ]);
          return r.stdout.trim() === String(want);
        }
        const res = await fetch(`http://${host}/v2/`).catch(() => undefined);
        return res?.status === want;
      },
      30_000,
    );
  } catch (err) {
    await reg.stop();
    throw err;
  }
  return reg;
}
