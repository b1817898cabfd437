/**
 * Test harness of the controller tests: the real API server in process (test/support/api.ts)
 * over a memory store, optionally a FakeKubelet playing a few nodes, and a ControllerManager
 * running the controllers under test as the API clients they are; plus the polling and
 * "get or undefined" every such test needs.
 *
 *   const cluster = useControllers({ controllers: { endpoint: endpointsController }, nodes: [makeNode('a')] });
 *   it('…', async () => { await cluster.api.client.create(…); await until('…', () => …); });
 */
import { after, before } from 'node:test';
import type { Clock } from '../../api/clock.js';
import { isNotFound } from '../../api/client/errors.js';
import type { ResourceRef } from '../../api/client/resource.js';
import type { RestClient } from '../../api/client/rest.js';
import type { KubeObject } from '../../api/object.js';
import type { Node, Pod, ReplicaSet } from '../../api/types.js';
import { startTestApi } from '../../test/support/api.js';
import { until as poll } from '../../test/support/wait.js';
import type { TestApi, TestApiOptions } from '../../test/support/api.js';
import { FakeKubelet } from '../../test/support/fake-nodes.js';
import type { ControllerFactory, ControllersConfig, Logger } from './context.js';
import { silentLogger } from './context.js';
import { ControllerManager } from './manager.js';

/** What startControllers() runs. */
export interface ControllerTestOptions {
  /** The controllers to run, by name (as ControllerManagerOptions.controllers). */
  controllers: Readonly<Record<string, ControllerFactory>>;
  config?: Partial<ControllersConfig>;
  clock?: Clock;
  /** Default: silentLogger. */
  logger?: Logger;
  /** Options of the API server. */
  api?: TestApiOptions;
  /** Nodes a FakeKubelet serves (none: no kubelet). */
  nodes?: Node[];
  /** FakeKubeletOptions.ready: whether a pod becomes Ready when it runs; default always. */
  ready?: (pod: Pod) => boolean;
  /** FakeKubeletOptions.leaseRenewMs. */
  leaseRenewMs?: number;
  /** Runs once the API server (and kubelet) are up, before the controllers start. */
  setup?: (api: TestApi) => Promise<void>;
}

/** A running test cluster; stop() ends the controllers, then the kubelet, then the server. */
export interface ControllerTest {
  api: TestApi;
  /** The FakeKubelet; undefined when no `nodes` were given. */
  kubelet: FakeKubelet | undefined;
  stop(): Promise<void>;
}

/**
 * Starts the API server, the FakeKubelet of `opts.nodes` (if any), runs `opts.setup`, then
 * the ControllerManager. Rejects when the server or the kubelet cannot start.
 */
export async function startControllers(opts: ControllerTestOptions): Promise<ControllerTest> {
  const api = await startTestApi(opts.api);
  let kubelet: FakeKubelet | undefined;
  if (opts.nodes) {
    kubelet = new FakeKubelet({
      client: api.client,
      nodes: opts.nodes,
      ...(opts.ready ? { ready: opts.ready } : {}),
      ...(opts.leaseRenewMs !== undefined ? { leaseRenewMs: opts.leaseRenewMs } : {}),
    });
    await kubelet.start();
  }
  await opts.setup?.(api);
  const ac = new AbortController();
  const done = new ControllerManager({
    client: api.client,
    controllers: opts.controllers,
    config: opts.config,
    clock: opts.clock,
    logger: opts.logger ?? silentLogger,
    // As in the control process: the informers share the API server's (frozen) objects,
    // so a controller that writes to one it did not copy fails here.
    informerTransform: api.server.informerTransform,
  }).run(ac.signal);
  return {
    api,
    kubelet,
    stop: async () => {
      ac.abort();
      await done;
      await kubelet?.stop();
      await api.stop();
    },
  };
}

/** The cluster of useControllers(); its fields are readable once the suite's `before` has run. */
export interface ControllerSuite {
  readonly api: TestApi;
  /** @throws Error when the suite has no `nodes`. */
  readonly kubelet: FakeKubelet;
}

/**
 * startControllers() in the current suite's `before`, stop() in its `after` (node:test
 * hooks, so call it at the top of a file or a describe()).
 */
export function useControllers(opts: ControllerTestOptions | (() => ControllerTestOptions)): ControllerSuite {
  let cluster: ControllerTest | undefined;
  before(async () => {
    cluster = await startControllers(typeof opts === 'function' ? opts() : opts);
  });
  after(async () => {
    await cluster?.stop();
  });
  const running = (): ControllerTest => {
    if (!cluster) throw new Error('useControllers: the suite has not started');
    return cluster;
  };
  return {
    get api() {
      return running().api;
    },
    get kubelet() {
      const { kubelet } = running();
      if (!kubelet) throw new Error('useControllers: no nodes, so no kubelet');
      return kubelet;
    },
  };
}

/**
 * Polls `probe` every 20 ms until it returns a value other than undefined/false and
 * returns it; a probe that throws is one more miss. Fails (AssertionError naming `what`,
 * with the last error) after `timeoutMs`. test/support/wait.ts's until(), with `false`
 * read as "not yet" too.
 */
export function until<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 15_000,
): Promise<T> {
  return poll(
    what,
    async () => {
      const v = await probe();
      return v === false ? undefined : v;
    },
    timeoutMs,
    20,
  );
}

/** GET one object; undefined when the server answers 404 (other errors are thrown). */
export async function getIfExists<T extends KubeObject = KubeObject>(
  client: RestClient,
  ref: ResourceRef,
  namespace: string | undefined,
  name: string,
): Promise<T | undefined> {
  try {
    return await client.get<T>(ref, namespace, name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Waits until GET of the object answers 404 (see until()); resolves true. */
export function untilGone(
  client: RestClient,
  ref: ResourceRef,
  namespace: string | undefined,
  name: string,
  timeoutMs?: number,
): Promise<true> {
  return until(
    `${ref.resource} ${name} gone`,
    async () => (await getIfExists(client, ref, namespace, name)) === undefined || undefined,
    timeoutMs,
  );
}

/** Options of makeReplicaSet(). */
export interface ReplicaSetFixture {
  replicas?: number;
  /** The `app` label of the selector and the template; default the ReplicaSet's name. */
  app?: string;
  /** The template's labels; default `{ app }`. */
  templateLabels?: Record<string, string>;
  /** The ReplicaSet's own labels; default none. */
  labels?: Record<string, string>;
  /** The image of the template's one container `c`; default `nginx`. */
  image?: string;
  /** More spec fields, laid over the rest. */
  spec?: Partial<ReplicaSet['spec']>;
}

/** A ReplicaSet `namespace/name` selecting `app: <app>`, with a one-container pod template. */
export function makeReplicaSet(namespace: string, name: string, o: ReplicaSetFixture = {}): ReplicaSet {
  const selector = { app: o.app ?? name };
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, namespace, labels: o.labels },
    spec: {
      replicas: o.replicas,
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: o.templateLabels ?? selector },
        spec: { containers: [{ name: 'c', image: o.image ?? 'nginx' }] },
      },
      ...o.spec,
    },
  };
}
