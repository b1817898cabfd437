/**
 * What `k8ts token create|list|delete` and `k8ts kubeconfig --user` do (kubeadm's
 * `token` commands; k3s's `token` commands), as API clients with the data dir's admin
 * kubeconfig — except user kubeconfigs, which need the CA key in `DATA_DIR/tls`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadKubeconfig } from '../api/client/kubeconfig.js';
import { ApiStatusError } from '../api/client/errors.js';
import { resources } from '../api/client/resource.js';
import { RestClient } from '../api/client/rest.js';
import type { KubeObject } from '../api/object.js';
import { caHash, signLeaf } from '../api/tls/certs.js';
import {
  BOOTSTRAP_TOKEN_SECRET_PREFIX,
  BOOTSTRAP_TOKEN_SECRET_TYPE,
  bootstrapTokenSecret,
  formatJoinToken,
  generateBootstrapToken,
  secretStrings,
} from '../api/auth/bootstrap-token.js';
import { kubeconfig } from './main.js';

/** One row of `k8ts token list`. */
export interface TokenInfo {
  id: string;
  /** RFC 3339, or undefined for a token that does not expire. */
  expires?: string;
  description: string;
  groups: string;
}

function adminClient(dataDir: string): { client: RestClient; ca: string } {
  const kc = loadKubeconfig(join(dataDir, 'kubeconfig.yaml'));
  if (!kc.config.ca)
    throw new Error(`the kubeconfig in ${dataDir} has no CA: is the server running with --insecure-http?`);
  return { client: new RestClient({ ...kc.config, userAgent: 'k8ts-token' }), ca: kc.config.ca };
}

/** How long a token from `k8ts token create` lasts unless told (kubeadm's default --ttl). */
export const DEFAULT_TOKEN_TTL_SECONDS = 24 * 3600;

/**
 * Creates a bootstrap token (a kube-system Secret) and returns its join token
 * `K10<CA hash>::<id>.<secret>`. `ttlSeconds`: seconds until it expires (the tokencleaner
 * controller then deletes it); default DEFAULT_TOKEN_TTL_SECONDS; 0: never, as kubeadm's
 * `--ttl 0`.
 */
export async function createToken(
  dataDir: string,
  opts: { ttlSeconds?: number; description?: string } = {},
): Promise<string> {
  const { client, ca } = adminClient(dataDir);
  try {
    const { id, secret, token } = generateBootstrapToken();
    const ttlSeconds = opts.ttlSeconds ?? DEFAULT_TOKEN_TTL_SECONDS;
    const secretObject = bootstrapTokenSecret(id, secret, {
      ...(opts.description !== undefined ? { description: opts.description } : {}),
      ...(ttlSeconds > 0 ? { ttlSeconds } : {}),
    });
    await client.create(resources.secrets, secretObject, { namespace: 'kube-system' });
    return formatJoinToken(caHash(ca), token);
  } finally {
    client.close();
  }
}

/** The bootstrap tokens (ids, never secrets). */
export async function listTokens(dataDir: string): Promise<TokenInfo[]> {
  const { client } = adminClient(dataDir);
  try {
    const list = await client.list(resources.secrets, {
      namespace: 'kube-system',
      fieldSelector: `type=${BOOTSTRAP_TOKEN_SECRET_TYPE}`,
    });
    return list.items
      .filter((s: KubeObject) => s.metadata?.name?.startsWith(BOOTSTRAP_TOKEN_SECRET_PREFIX))
      .map((s: KubeObject) => {
        const d = secretStrings(s);
        return {
          id: d['token-id'] ?? '',
          ...(d.expiration ? { expires: d.expiration } : {}),
          description: d.description ?? '',
          groups: d['auth-extra-groups'] ?? '',
        };
      });
  } finally {
    client.close();
  }
}

/**
 * Deletes a bootstrap token: `id`, `<id>.<secret>` or a whole join token. Agents that
 * joined keep their node credentials; the token cannot join anyone else.
 * @throws the API's 404 error when there is no such token.
 */
export async function deleteToken(dataDir: string, idOrToken: string): Promise<string> {
  const tail = idOrToken.includes('::') ? idOrToken.slice(idOrToken.lastIndexOf('::') + 2) : idOrToken;
  const id = tail.split('.')[0]!;
  const { client } = adminClient(dataDir);
  try {
    await client.delete(resources.secrets, 'kube-system', `${BOOTSTRAP_TOKEN_SECRET_PREFIX}${id}`);
    return id;
  } catch (err) {
    if (err instanceof ApiStatusError && err.status.code === 404)
      throw new Error(`bootstrap token "${id}" not found (see: k8ts token list)`);
    throw err;
  } finally {
    client.close();
  }
}

/**
 * A kubeconfig for a user: a client certificate CN=<user>, O=<each group>, signed with the
 * CA in `DATA_DIR/tls` (so it runs where the server's data dir is), for the server URL of
 * the admin kubeconfig. What the user may do is then up to RBAC.
 */
export async function userKubeconfig(
  dataDir: string,
  user: string,
  groups: readonly string[],
): Promise<string> {
  const dir = join(dataDir, 'tls');
  const ca = {
    cert: readFileSync(join(dir, 'server-ca.crt'), 'utf8'),
    key: readFileSync(join(dir, 'server-ca.key'), 'utf8'),
  };
  const server = loadKubeconfig(join(dataDir, 'kubeconfig.yaml')).config.server;
  const signed = await signLeaf(ca, { usage: 'client', user, groups });
  return kubeconfig(server, { ca, admin: { cert: signed.cert, key: signed.key! } }, user);
}
