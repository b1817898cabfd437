/**
 * dockerode, loaded without the two parts of it the adapter never calls until they are
 * needed: docker-modem's SSH transport (`lib/ssh.js`, which loads ssh2 and its poly1305
 * WebAssembly, for a `ssh://` DOCKER_HOST) and dockerode's BuildKit session
 * (`lib/session.js`, which loads @grpc/grpc-js and @grpc/proto-loader with protobufjs,
 * for `buildImage` with BuildKit). Both modules are required at the top of their
 * packages' entry files, so an agent talking to the local socket held them all the same:
 * some 10 MiB of RSS and 16 MiB of external (WebAssembly) memory in a bare `node`, the
 * largest part of what the agent adds to an idle `k8ts server` (issue 20 item 7).
 *
 * Each of the two is put in the CommonJS module cache, before dockerode is loaded, as a
 * stand-in function that loads the real module on its first call and hands the call on
 * (both export a single function: `ssh(opts)` returns an http.Agent, `withSession(docker,
 * auth, handler)` opens a session). Where a file is not where docker-modem 5 and
 * dockerode 4-5 keep it, it is left alone and loaded as before.
 */
import { createRequire, Module } from 'node:module';
import { dirname } from 'node:path';
import type DockerType from 'dockerode';

const require = createRequire(import.meta.url);

/** The modules replaced by a stand-in until first called: [package, file in it]. */
const LAZY: readonly (readonly [string, string])[] = [
  ['docker-modem', 'lib/ssh.js'],
  ['dockerode', 'lib/session.js'],
];

/**
 * Puts a stand-in for the CommonJS module `filename` (which must export one function) in
 * the module cache: a function that, on its first call, drops itself from the cache,
 * requires the real module and from then on calls it. No-op when the module is loaded.
 */
export function deferFunctionModule(filename: string): void {
  if (require.cache[filename]) return;
  let real: ((...args: unknown[]) => unknown) | undefined;
  const standIn = function (this: unknown, ...args: unknown[]): unknown {
    if (!real) {
      if (require.cache[filename] === stub) delete require.cache[filename];
      real = require(filename) as (...args: unknown[]) => unknown;
    }
    return real.apply(this, args);
  };
  const stub = new Module(filename);
  stub.filename = filename;
  stub.loaded = true;
  stub.exports = standIn;
  require.cache[filename] = stub;
}

/** The path of `file` inside `pkg` as resolved from `from`'s directory, or undefined. */
function resolveIn(pkg: string, file: string, from: string): string | undefined {
  try {
    return require.resolve(`${pkg}/${file}`, { paths: [from] });
  } catch {
    return undefined;
  }
}

function loadDockerode(): typeof DockerType {
  const dockerodeMain = require.resolve('dockerode');
  // docker-modem is dockerode's dependency: resolved from dockerode's own directory.
  for (const [pkg, file] of LAZY) {
    const filename = resolveIn(pkg, file, dirname(dockerodeMain));
    if (filename) deferFunctionModule(filename);
  }
  return require(dockerodeMain) as typeof DockerType;
}

/** The dockerode constructor (its default export). */
const Docker: typeof DockerType = loadDockerode();
export default Docker;
