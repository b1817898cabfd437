/**
 * Registry credentials from a pod's imagePullSecrets: the kubelet's docker keyring
 * (pkg/credentialprovider/keyring.go, config.go) over the secrets' docker configs.
 *
 * - A secret of type `kubernetes.io/dockerconfigjson` gives `.dockerconfigjson`'s `auths`;
 *   `kubernetes.io/dockercfg` gives `.dockercfg` itself; other types and bad JSON give
 *   nothing (the API server validated them already).
 * - An entry's key is a registry, optionally with a scheme and a path (`https://r:5000/team`,
 *   `r:5000`, `*.example.com`); `/v1/` and `/v2/` count as the host itself. Its `auth`
 *   (base64 `user:password`) is split into username and password, as the kubelet does.
 * - lookupCredentials(image): every entry whose key matches the image's repository (host glob
 *   per label, same port, path prefix), more specific keys first; docker.io's images also
 *   match `index.docker.io` keys. None matching: the pull goes without credentials.
 */
import { DEFAULT_DOMAIN, parseImageReference, type AuthConfig } from '../../../cri/index.js';
import type { KubeObject } from '../../../api/object.js';

/** One registry's credentials from a docker config: the key as written, and CRI's AuthConfig. */
export interface DockerConfigEntry {
  /** The config's key normalized: `host[:port][/path]`, no scheme. */
  key: string;
  auth: AuthConfig;
}

/** The legacy host of docker.io's credentials (keyring.go's defaultRegistryHost). */
const DOCKER_INDEX = 'index.docker.io';

interface RawEntry {
  username?: unknown;
  password?: unknown;
  auth?: unknown;
  identitytoken?: unknown;
  registrytoken?: unknown;
}

/** `key` without scheme, `/v1/` or `/v2/` (keyring.go's Add). */
function normalizeKey(key: string): string | undefined {
  const withScheme = /^https?:\/\//.test(key) ? key : `https://${key}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return undefined;
  }
  let path = decodeURIComponent(url.pathname);
  if (path.startsWith('/v2/') || path.startsWith('/v1/')) path = path.slice(3);
  // URL lower-cases the host and drops a default port; keep the host as written.
  const host = withScheme.replace(/^https?:\/\//, '').split('/')[0]!;
  return path && path !== '/' ? host + path.replace(/\/+$/, '') : host;
}

/** An entry's AuthConfig, `auth` decoded to username and password (config.go's UnmarshalJSON). */
function authOf(raw: RawEntry): AuthConfig {
  const out: AuthConfig = {};
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  let username = str(raw.username);
  let password = str(raw.password);
  const auth = str(raw.auth);
  if (auth && !username && !password) {
    const plain = Buffer.from(auth, 'base64').toString('utf8');
    const colon = plain.indexOf(':');
    if (colon > 0) [username, password] = [plain.slice(0, colon), plain.slice(colon + 1)];
  }
  if (username) out.username = username;
  if (password) out.password = password;
  if (auth) out.auth = auth;
  const identityToken = str(raw.identitytoken);
  const registryToken = str(raw.registrytoken);
  if (identityToken) out.identityToken = identityToken;
  if (registryToken) out.registryToken = registryToken;
  return out;
}

/**
 * The docker config entries of one pull secret (see the file comment); [] for a secret of
 * another type or with a config that does not parse.
 */
export function dockerConfigEntries(secret: KubeObject): DockerConfigEntry[] {
  const type = secret.type as string | undefined;
  const data = (secret.data ?? {}) as Record<string, string>;
  const field =
    type === 'kubernetes.io/dockerconfigjson'
      ? '.dockerconfigjson'
      : type === 'kubernetes.io/dockercfg'
        ? '.dockercfg'
        : undefined;
  if (!field || typeof data[field] !== 'string') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(data[field], 'base64').toString('utf8'));
  } catch {
    return [];
  }
  const auths = field === '.dockerconfigjson' ? (parsed as { auths?: unknown } | null)?.auths : parsed;
  if (!auths || typeof auths !== 'object') return [];
  const out: DockerConfigEntry[] = [];
  for (const [k, v] of Object.entries(auths as Record<string, unknown>)) {
    const key = normalizeKey(k);
    if (key === undefined || !v || typeof v !== 'object') continue;
    out.push({ key, auth: authOf(v as RawEntry) });
  }
  return out;
}

/** `host[:port]` and path of a schemeless `key` or repository. */
function split(s: string): { host: string; port: string; path: string } {
  const slash = s.indexOf('/');
  const hostPort = slash === -1 ? s : s.slice(0, slash);
  const path = slash === -1 ? '' : s.slice(slash);
  const m = /^(.*?)(?::(\d+))?$/.exec(hostPort)!;
  return { host: m[1]!.toLowerCase(), port: m[2] ?? '', path };
}

/** keyring.go's URLsMatch: the same number of host labels, each glob-matched; same port; path prefix. */
function keyMatches(key: string, repo: string): boolean {
  const k = split(key);
  const r = split(repo);
  if (k.port !== r.port) return false;
  const kl = k.host.split('.');
  const rl = r.host.split('.');
  if (kl.length !== rl.length) return false;
  for (let i = 0; i < kl.length; i++) {
    const re = new RegExp(`^${kl[i]!.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^.]*')}$`);
    if (!re.test(rl[i]!)) return false;
  }
  return r.path.startsWith(k.path);
}

/**
 * The credentials to try for `image`, in order (keyring.go's Lookup): entries whose key
 * matches the image's repository, the longest key first; for docker.io's images, else the
 * `index.docker.io` entries. [] when none matches (pull without credentials).
 * @throws Error from parseImageReference for a malformed reference.
 */
export function lookupCredentials(entries: DockerConfigEntry[], image: string): AuthConfig[] {
  const ref = parseImageReference(image);
  const repo = `${ref.domain}/${ref.path}`;
  const keys = [...new Set(entries.map((e) => e.key))].sort().reverse();
  const out: AuthConfig[] = [];
  for (const key of keys) {
    if (keyMatches(key, repo)) out.push(...entries.filter((e) => e.key === key).map((e) => e.auth));
  }
  if (out.length === 0 && ref.domain === DEFAULT_DOMAIN) {
    out.push(...entries.filter((e) => e.key === DOCKER_INDEX).map((e) => e.auth));
  }
  return out;
}
