/**
 * The API server with `security` on, for in-process tests of authentication,
 * authorization and admission: a fresh CA, a serving certificate for 127.0.0.1, and the
 * real ApiServer (strategies, validation) over `store` on a free loopback port.
 *
 *   const { ca, server, url } = await startSecureApiServer(new MemoryStore());
 *   const { cert, key } = await signLeaf(ca, { usage: 'client', user: 'root', groups: ['system:masters'] });
 */
import winston from 'winston';
import { createCA, signLeaf, type KeyPair } from '../../../api/tls/certs.js';
import type { Store } from '../../storage/store.js';
import { ApiServer, type ApiServerConfig } from '../server.js';
import { nameValidatorFor, strategyFor } from '../strategies/index.js';

/** A started secure server: its CA (to sign client certificates with), the server, and `https://127.0.0.1:<port>`. */
export interface SecureApiServer {
  ca: KeyPair;
  server: ApiServer;
  url: string;
}

/**
 * Starts the server; `extra` adds to its config (e.g. `podSecurity`, a logger). The caller
 * stops `server`.
 */
export async function startSecureApiServer(
  store: Store,
  extra: Partial<ApiServerConfig> = {},
): Promise<SecureApiServer> {
  const ca = await createCA('test-ca');
  const served = await signLeaf(ca, {
    usage: 'server',
    commonName: 'k8ts',
    sans: [{ type: 'ip', value: '127.0.0.1' }],
  });
  const server = new ApiServer({
    store,
    strategyFor,
    nameValidatorFor,
    port: 0,
    logger: winston.createLogger({ silent: true }),
    security: { ca, serving: { cert: served.cert, key: served.key! } },
    ...extra,
  });
  const url = `https://127.0.0.1:${(await server.start()).port}`;
  return { ca, server, url };
}
