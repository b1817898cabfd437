/**
 * An in-process API server for controller and scheduler tests: the real ApiServer
 * (strategies, validation, watch cache) over a MemoryStore, bound to 127.0.0.1 on a free
 * port, with a RestClient pointed at it. Faster to start than the CLI (`k8ts-server.ts`)
 * and still the real wire protocol, so controllers are exercised as the API clients they are.
 *
 *   const api = await startTestApi();
 *   after(() => api.stop());
 *   await api.client.create(resources.nodes, node);
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import winston from 'winston';
import { RestClient } from '../../api/client/rest.js';
import { ApiServer, type ApiServerConfig } from '../../control/apiserver/server.js';
import { findResource } from '../../control/apiserver/resources.js';
import { nameValidatorFor, strategyFor } from '../../control/apiserver/strategies/index.js';
import { kubeconfig } from '../../control/main.js';
import { MemoryStore } from '../../control/storage/memory.js';
import { run, type CommandResult } from './k8ts-server.js';

/**
 * Whether the API server serves `resource` of `group`/`version` (its resource table), for
 * tests under agent/, which may not import control/ themselves (agent/boundaries.test.ts).
 */
export function apiServes(group: string, version: string, resource: string): boolean {
  return findResource(group, version, resource) !== undefined;
}

export interface TestApi {
  url: string;
  client: RestClient;
  /** The server itself (its informerTransform, for clients that share its objects as the control process's do). */
  server: ApiServer;
  /** The store under the server (what is stored, as a test checks it: keys, storage forms). */
  store: MemoryStore;
  /** Runs the real kubectl against this server (own kubeconfig and cache dir); never rejects on a non-zero exit. */
  kubectl(...args: string[]): Promise<CommandResult>;
  /** Like kubectl(), writing `stdin` to it (`kubectl apply -f -`). */
  kubectlIn(stdin: string, ...args: string[]): Promise<CommandResult>;
  /** Stops the server, closes the client and the store. Idempotent. */
  stop(): Promise<void>;
}

/** Settings of the in-process API server that tests may change (kube-apiserver flags). */
export type TestApiOptions = Pick<
  ApiServerConfig,
  'defaultNotReadyTolerationSeconds' | 'defaultUnreachableTolerationSeconds' | 'serviceAccountTokens'
>;

/** Starts the API server (with `opts` added to its config); see the file comment. */
export async function startTestApi(opts: TestApiOptions = {}): Promise<TestApi> {
  const store = new MemoryStore();
  const server = new ApiServer({
    ...opts,
    store,
    strategyFor,
    nameValidatorFor,
    bindAddress: '127.0.0.1',
    port: 0,
    logger: winston.createLogger({ silent: true }),
  });
  const { port } = await server.start();
  const url = `http://127.0.0.1:${port}`;
  const client = new RestClient({ server: url });
  const dir = mkdtempSync(join(tmpdir(), 'k8ts-test-api-'));
  const kubeconfigPath = join(dir, 'kubeconfig.yaml');
  writeFileSync(kubeconfigPath, kubeconfig(url), { mode: 0o600 });
  const kubectlArgs = (args: string[]) => [
    '--kubeconfig',
    kubeconfigPath,
    '--cache-dir',
    join(dir, 'cache'),
    ...args,
  ];
  let stopped: Promise<void> | undefined;
  return {
    url,
    client,
    server,
    store,
    kubectl: (...args) => run('kubectl', kubectlArgs(args)),
    kubectlIn: (stdin, ...args) => run('kubectl', kubectlArgs(args), { stdin }),
    stop: () =>
      (stopped ??= (async () => {
        client.close();
        await server.stop();
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      })()),
  };
}
