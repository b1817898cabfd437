/**
 * scripts/build-images.sh and the images it builds, against the real Docker engine: the script's
 * up-to-date check, --force and its error messages; then containers of every image, reached on
 * the default bridge by their container IP from this host.
 *
 * The first run builds whatever is missing (a minute or two: javac + jlink), so `npm test` works
 * on a fresh machine. Every container carries the label io.k8ts.test=images and is removed at the
 * end, also after a failure.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('./build-images.sh', import.meta.url));
const TEST_LABEL = 'io.k8ts.test=images';
const IMAGES = ['spring-server:1.0', 'spring-server:1.1', 'k8ts/pause:1.0', 'k8ts/busybox:1.0'] as const;
/** A first build compiles and jlinks the JDK runtime: minutes on a loaded 2-core machine. */
const BUILD_TIMEOUT_MS = 15 * 60_000;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; never throws for a non-zero exit status (it is in `code`). */
async function run(
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeout = 120_000,
): Promise<Run> {
  try {
    const { stdout, stderr } = await execFileP(file, args, {
      env: { ...process.env, ...env },
      timeout,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number | string; stdout?: string; stderr?: string; message: string };
    if (typeof e.code !== 'number') throw err;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

async function buildImages(args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return run('bash', [SCRIPT, ...args], env, BUILD_TIMEOUT_MS);
}

/** `docker ARGS...` → trimmed stdout; throws with docker's stderr on failure. */
async function docker(...args: string[]): Promise<string> {
  const r = await run('docker', args);
  if (r.code !== 0) throw new Error(`docker ${args.join(' ')} exited ${r.code}: ${r.stderr.trim()}`);
  return r.stdout.trim();
}

/** The script's report: reference → state ("built" | "up to date"), one line per image. */
function parseReport(stdout: string): Map<string, string> {
  const states = new Map<string, string>();
  for (const line of stdout.trim().split('\n')) {
    const m = /^(\S+)\s+(built|up to date)\s+[\d.]+ [kM]B$/.exec(line);
    assert.ok(m, `unexpected report line: ${JSON.stringify(line)}`);
    states.set(m[1], m[2]);
  }
  return states;
}

async function imageId(ref: string): Promise<string> {
  return docker('image', 'inspect', '--format', '{{.Id}}', ref);
}

async function labels(ref: string): Promise<Record<string, string>> {
  return JSON.parse(await docker('image', 'inspect', '--format', '{{json .Config.Labels}}', ref)) as Record<
    string,
    string
  >;
}

/** Polls `check` until it returns a value other than undefined; throws after `timeoutMs`. */
async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const containers: string[] = [];

/** `docker run -d` with the test label; the container is removed in `after`. */
async function startContainer(...args: string[]): Promise<string> {
  const id = await docker('run', '-d', '--label', TEST_LABEL, ...args);
  containers.push(id);
  return id;
}

async function exitCode(id: string): Promise<number> {
  return Number(await docker('inspect', '--format', '{{.State.ExitCode}}', id));
}

async function httpGet(url: string): Promise<{ status: number; type: string; body: string }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: await res.text() };
}

before(async () => {
  const first = await buildImages();
  assert.equal(first.code, 0, `build-images.sh failed:\n${first.stderr}`);
  assert.deepEqual([...parseReport(first.stdout).keys()], [...IMAGES]);
});

after(async () => {
  // Also the leftovers of an earlier, interrupted run of this file: they carry our label.
  const leftovers = (await docker('ps', '-aq', '--filter', `label=${TEST_LABEL}`))
    .split('\n')
    .filter(Boolean);
  const ids = [...new Set([...containers, ...leftovers])];
  if (ids.length > 0) await run('docker', ['rm', '-f', ...ids]);
});

describe('scripts/build-images.sh', () => {
  it('finds every image up to date on a second run and rebuilds none', async (t) => {
    const before = await Promise.all(IMAGES.map(imageId));
    const second = await buildImages();
    assert.equal(second.code, 0, second.stderr);
    for (const line of second.stdout.trim().split('\n')) t.diagnostic(line);
    assert.deepEqual(
      [...parseReport(second.stdout)],
      IMAGES.map((ref) => [ref, 'up to date']),
    );
    assert.deepEqual(await Promise.all(IMAGES.map(imageId)), before);
  });

  it('labels every image io.k8ts.image=true with a source hash per version', async () => {
    const hashes = new Map<string, string>();
    for (const ref of IMAGES) {
      const l = await labels(ref);
      assert.equal(l['io.k8ts.image'], 'true', ref);
      assert.match(l['io.k8ts.source-hash'] ?? '', /^[0-9a-f]{16}$/, ref);
      hashes.set(ref, l['io.k8ts.source-hash']);
    }
    assert.notEqual(hashes.get('spring-server:1.0'), hashes.get('spring-server:1.1'));
  });

  it('rebuilds a named image with --force and keeps its source hash', async () => {
    const oldId = await imageId('k8ts/pause:1.0');
    const oldHash = (await labels('k8ts/pause:1.0'))['io.k8ts.source-hash'];
    const forced = await buildImages(['--force', 'pause']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.deepEqual([...parseReport(forced.stdout)], [['k8ts/pause:1.0', 'built']]);
    assert.notEqual(await imageId('k8ts/pause:1.0'), oldId);
    assert.equal((await labels('k8ts/pause:1.0'))['io.k8ts.source-hash'], oldHash);
    // The replaced image is removed, not left dangling — unless a container (a running
    // pod's sandbox on this host) still uses it, which Docker does not allow.
    const users = (await run('docker', ['ps', '-aq', '--filter', `ancestor=${oldId}`])).stdout.trim();
    if (users === '') assert.notEqual((await run('docker', ['image', 'inspect', oldId])).code, 0);
  });

  const failures: { name: string; args: string[]; env: NodeJS.ProcessEnv; code: number; message: RegExp }[] =
    [
      {
        name: 'docker is not reachable',
        args: [],
        env: { DOCKER_HOST: 'unix:///nonexistent/docker.sock' },
        code: 1,
        message: /docker is not reachable.*start dockerd: bash scripts\/start-dockerd\.sh/,
      },
      {
        name: 'jlink is missing',
        args: ['spring-server'],
        env: { JLINK: 'no-such-jlink' },
        code: 1,
        message: /no-such-jlink not found: install the Debian package openjdk-17-jdk-headless/,
      },
      {
        name: 'gcc is missing',
        args: ['pause'],
        env: { CC: 'no-such-gcc' },
        code: 1,
        message: /no-such-gcc not found: install the Debian package gcc/,
      },
      {
        name: 'busybox is missing',
        args: ['busybox'],
        env: { BUSYBOX: '/nonexistent/busybox' },
        code: 1,
        message: /\/nonexistent\/busybox not found: install the Debian package busybox-static/,
      },
      {
        name: 'busybox is dynamically linked',
        args: ['busybox'],
        env: { BUSYBOX: '/bin/ls' },
        code: 1,
        message: /\/bin\/ls is dynamically linked: install the Debian package busybox-static/,
      },
      {
        name: 'an image name is unknown',
        args: ['nginx'],
        env: {},
        code: 2,
        message: /unknown image 'nginx'/,
      },
    ];
  for (const c of failures) {
    it(`fails with a clear message when ${c.name}`, async () => {
      const r = await buildImages(c.args, c.env);
      assert.equal(r.code, c.code, r.stderr);
      assert.match(r.stderr, c.message);
      assert.equal(r.stdout, '');
    });
  }
});

describe('spring-server image', () => {
  for (const version of ['1.0', '1.1']) {
    it(`spring-server:${version} answers with its version and hostname and exits 0 on SIGTERM`, async () => {
      const id = await startContainer(`spring-server:${version}`);
      const [hostname, ip] = (
        await docker('inspect', '--format', '{{.Config.Hostname}} {{.NetworkSettings.IPAddress}}', id)
      ).split(' ');
      assert.ok(ip, 'container has an IP on the default bridge');

      const root = await until(`spring-server:${version} on ${ip}:8080`, async () => {
        const r = await httpGet(`http://${ip}:8080/`);
        return r.status === 200 ? r : undefined;
      });
      assert.equal(root.body, `spring-server ${version} on ${hostname}\n`);
      assert.match(root.type, /^text\/plain/);

      const health = await httpGet(`http://${ip}:8080/actuator/health`);
      assert.equal(health.status, 200);
      assert.equal(health.type, 'application/json');
      assert.deepEqual(JSON.parse(health.body), { status: 'UP' });
      assert.equal((await httpGet(`http://${ip}:8080/nope`)).status, 404);

      // If SIGTERM did not end it, docker would SIGKILL it after 10 s: exit code 137.
      await docker('stop', '--time', '10', id);
      assert.equal(await exitCode(id), 0);
      const logs = await docker('logs', id);
      assert.match(
        logs,
        new RegExp(`^Started spring-server ${version.replace('.', '\\.')} on port 8080$`, 'm'),
      );
      assert.match(logs, /shutting down/);
    });
  }

  it('runs sh, wget and the other busybox applets through docker exec', async () => {
    const id = await startContainer('spring-server:1.0');
    const health = await until('wget inside the container', async () => {
      const r = await run('docker', [
        'exec',
        id,
        'sh',
        '-c',
        'wget -qO- http://127.0.0.1:8080/actuator/health',
      ]);
      return r.code === 0 ? r.stdout : undefined;
    });
    assert.equal(health, '{"status":"UP"}');
    assert.equal(await docker('exec', id, 'sh', '-c', 'echo ok'), 'ok');
    assert.equal(await docker('exec', id, 'sh', '-c', 'echo $SPRING_SERVER_VERSION'), '1.0');
  });
});

describe('k8ts/pause image', () => {
  it('exits 0 on SIGTERM within a second, as user 65535', async () => {
    const id = await startContainer('k8ts/pause:1.0');
    assert.equal(await docker('inspect', '--format', '{{.Config.User}}', id), '65535:65535');
    // docker stop sends SIGTERM and, after 1 s, SIGKILL (exit code 137).
    await docker('stop', '--time', '1', id);
    assert.equal(await exitCode(id), 0);
  });

  it('reaps orphans of containers sharing its PID namespace', async () => {
    const pause = await startContainer('k8ts/pause:1.0');
    // The inner sh exits at once, so its `sleep 3` is re-parented to PID 1 (pause); when the
    // sleep ends, only pause's SIGCHLD handler can remove its zombie from the process table.
    // Until the forked child has exec'd, ps shows it as `sh`: wait to see it as `sleep` first.
    const script = [
      'sh -c "sleep 3 &"',
      'orphan() { ps -o ppid,comm | awk \'$1 == 1 && $2 == "sleep"\' | grep -q .; }',
      'i=0; until orphan; do i=$((i + 1)); [ $i -lt 100 ] || { echo "no orphan of pause"; ps; exit 2; }; usleep 20000; done',
      'i=0; while ps -o comm | grep -qx sleep; do',
      '  i=$((i + 1)); [ $i -lt 200 ] || { echo "not reaped"; ps -o pid,ppid,stat,comm; exit 1; }; usleep 50000',
      'done',
      'echo reaped',
    ].join('\n');
    const r = await run('docker', [
      'run',
      '--rm',
      '--label',
      TEST_LABEL,
      `--pid=container:${pause}`,
      'k8ts/busybox:1.0',
      'sh',
      '-c',
      script,
    ]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.stdout.trim(), 'reaped');
  });
});

describe('k8ts/busybox image', () => {
  it('runs sh with the environment given and exits with its status', async () => {
    const r = await run('docker', [
      'run',
      '--rm',
      '--label',
      TEST_LABEL,
      '-e',
      'GREETING=hello',
      'k8ts/busybox:1.0',
      'sh',
      '-c',
      'echo "$GREETING from $(hostname)"; which sleep env wget ps nslookup >/dev/null || exit 9; exit 3',
    ]);
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stdout, /^hello from [0-9a-f]{12}\n$/);
  });
});
