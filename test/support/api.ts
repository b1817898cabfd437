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
import winston from 'winston';
import { RestClient } from '../../api/client/rest.js';
import { ApiServer } from '../../control/apiserver/server.js';
import { nameValidatorFor, strategyFor } from '../../control/apiserver/strategies/index.js';
import { MemoryStore } from '../../control/storage/memory.js';

export interface TestApi {
  url: string;
  client: RestClient;
  /** Stops the server, closes the client and the store. Idempotent. */
  stop(): Promise<void>;
}

/** Starts the API server; see the file comment. */
export async function startTestApi(): Promise<TestApi> {
  const store = new MemoryStore();
  const server = new ApiServer({
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
  let stopped: Promise<void> | undefined;
  return {
    url,
    client,
    stop: () =>
      (stopped ??= (async () => {
        client.close();
        await server.stop();
        await store.close();
      })()),
  };
}
