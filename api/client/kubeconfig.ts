/**
 * Reads a kubeconfig file (clientcmd's v1 Config) into the settings of a RestClient: the
 * current context's cluster (`server`, `certificate-authority(-data)`,
 * `insecure-skip-tls-verify`, `tls-server-name`) and user (`token`, `tokenFile`,
 * `client-certificate(-data)`, `client-key(-data)`). File paths are relative to the
 * kubeconfig's own directory, as kubectl resolves them; `-data` fields are base64 PEM.
 * Exec plugins, auth providers and basic auth are not supported and are refused rather
 * than silently ignored.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { RestClientConfig } from './rest.js';

/** A kubeconfig that cannot be used: unreadable, malformed, or naming what does not exist. */
export class KubeconfigError extends Error {
  override readonly name = 'KubeconfigError';
}

/** What a kubeconfig says about one context. */
export interface Kubeconfig {
  /** The context used (the file's `current-context` unless another was asked for). */
  context: string;
  /** Connection settings for `new RestClient(config)`. */
  config: RestClientConfig;
  /** The context's default namespace, if it sets one. */
  namespace?: string;
}

/** Options of loadKubeconfig / parseKubeconfig. */
export interface KubeconfigOptions {
  /** A context other than `current-context`. */
  context?: string;
}

/**
 * Reads and parses the kubeconfig at `path` (see parseKubeconfig).
 * @throws KubeconfigError when the file cannot be read or used.
 */
export function loadKubeconfig(path: string, opts: KubeconfigOptions = {}): Kubeconfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new KubeconfigError(`cannot read kubeconfig ${path}: ${(err as Error).message}`);
  }
  return parseKubeconfig(text, { ...opts, baseDir: dirname(resolve(path)) });
}

/**
 * Parses kubeconfig YAML (or JSON) text. `baseDir` resolves relative file paths (default:
 * the working directory). Files named by the config (CA, client certificate and key,
 * token file) are read here, so the result holds PEM text and the token itself.
 * @throws KubeconfigError for malformed YAML, a missing context/cluster/user, a cluster
 *   without `server`, a certificate without its key, an unreadable file, or an
 *   unsupported credential (exec, auth-provider, username/password).
 */
export function parseKubeconfig(
  text: string,
  opts: KubeconfigOptions & { baseDir?: string } = {},
): Kubeconfig {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new KubeconfigError(`kubeconfig is not valid YAML: ${(err as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null) throw new KubeconfigError('kubeconfig is empty');
  const root = doc as Record<string, unknown>;
  const baseDir = opts.baseDir ?? process.cwd();

  const contextName = opts.context ?? str(root['current-context']);
  if (!contextName) throw new KubeconfigError('kubeconfig has no current-context, and no context was given');
  const context = named(root.contexts, 'context', contextName);
  const clusterName = str(context.cluster);
  const userName = str(context.user);
  if (!clusterName) throw new KubeconfigError(`context "${contextName}" names no cluster`);
  const cluster = named(root.clusters, 'cluster', clusterName);
  const user = userName ? named(root.users, 'user', userName) : {};

  const server = str(cluster.server);
  if (!server) throw new KubeconfigError(`cluster "${clusterName}" has no server`);
  const config: RestClientConfig = { server };

  const readPath = (p: string, what: string): string => {
    const full = isAbsolute(p) ? p : resolve(baseDir, p);
    try {
      return readFileSync(full, 'utf8');
    } catch (err) {
      throw new KubeconfigError(`cannot read ${what} ${full}: ${(err as Error).message}`);
    }
  };
  const pem = (dataKey: string, fileKey: string, from: Record<string, unknown>, what: string) => {
    const data = str(from[dataKey]);
    if (data) return Buffer.from(data, 'base64').toString('utf8');
    const file = str(from[fileKey]);
    return file ? readPath(file, what) : undefined;
  };

  const ca = pem('certificate-authority-data', 'certificate-authority', cluster, 'certificate-authority');
  if (ca !== undefined) config.ca = ca;
  if (cluster['insecure-skip-tls-verify'] === true) config.insecureSkipTLSVerify = true;
  const tlsServerName = str(cluster['tls-server-name']);
  if (tlsServerName) config.tlsServerName = tlsServerName;

  for (const unsupported of ['exec', 'auth-provider', 'username', 'password']) {
    if (user[unsupported] !== undefined)
      throw new KubeconfigError(`user "${userName}": ${unsupported} credentials are not supported`);
  }
  const token =
    str(user.token) ?? (str(user.tokenFile) ? readPath(str(user.tokenFile)!, 'tokenFile').trim() : undefined);
  if (token) config.token = token;
  const cert = pem('client-certificate-data', 'client-certificate', user, 'client-certificate');
  const key = pem('client-key-data', 'client-key', user, 'client-key');
  if ((cert === undefined) !== (key === undefined))
    throw new KubeconfigError(
      `user "${userName}": a client certificate needs its key, and a key its certificate`,
    );
  if (cert !== undefined && key !== undefined) {
    config.cert = cert;
    config.key = key;
  }

  const namespace = str(context.namespace);
  return { context: contextName, config, ...(namespace ? { namespace } : {}) };
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The `field` object of the entry called `name` in a kubeconfig list (`clusters`, `users`, `contexts`). */
function named(list: unknown, field: string, name: string): Record<string, unknown> {
  const entries: unknown[] = Array.isArray(list) ? list : [];
  const entry = entries.find(
    (e): e is Record<string, unknown> =>
      typeof e === 'object' && e !== null && (e as Record<string, unknown>).name === name,
  );
  if (!entry) throw new KubeconfigError(`kubeconfig has no ${field} named "${name}"`);
  const value = entry[field];
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}
