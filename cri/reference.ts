/**
 * Image references, as the docker distribution grammar (github.com/distribution/reference,
 * `reference.go` and `normalize.go`) defines them:
 *
 *   reference := name [ ":" tag ] [ "@" digest ]
 *   name      := [ domain "/" ] path-component [ "/" path-component ]*
 *
 * Both adapters validate with it before talking to a runtime, so a malformed reference is
 * always InvalidArgument (the kubelet's InvalidImageName), and the fake adapter matches
 * references the way Docker does (`busybox` = `busybox:latest` =
 * `docker.io/library/busybox:latest`).
 */
import { CriError } from './errors.js';

/** A parsed image reference. */
export interface ImageReference {
  /** Registry host[:port]; `docker.io` when the reference names none. */
  domain: string;
  /** Repository path inside the registry, e.g. `library/busybox`, `k8ts/pause`. */
  path: string;
  /** The tag, when the reference has one (no default is filled in here). */
  tag?: string;
  /** `algorithm:hex`, when the reference has one. */
  digest?: string;
}

/** Docker Hub, the registry of references that name no domain. */
export const DEFAULT_DOMAIN = 'docker.io';
const OFFICIAL_REPO_PREFIX = 'library/';

const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const DOMAIN_COMPONENT = /^(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$/;
const NAME_TOTAL_LENGTH_MAX = 255;

function invalid(ref: string, why: string): CriError {
  return new CriError('InvalidArgument', `invalid image reference ${JSON.stringify(ref)}: ${why}`);
}

function isDomain(s: string): boolean {
  const [host = '', port, ...rest] = s.split(':');
  if (rest.length > 0) return false;
  if (port !== undefined && !/^[0-9]+$/.test(port)) return false;
  return host.split('.').every((c) => DOMAIN_COMPONENT.test(c));
}

/**
 * Parses `ref` (e.g. `spring-server:1.0`, `127.0.0.1:5000/k8ts/pause:1.0`,
 * `busybox@sha256:<64 hex>`).
 * @throws CriError InvalidArgument naming what is wrong (empty, upper case in the path,
 *   bad tag or digest, name longer than 255 characters).
 */
export function parseImageReference(ref: string): ImageReference {
  if (ref === '') throw invalid(ref, 'empty');
  let rest = ref;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw invalid(ref, `bad digest ${JSON.stringify(digest)}`);
  }
  let tag: string | undefined;
  const lastColon = rest.lastIndexOf(':');
  // A colon after the last slash separates the tag; one before it is a registry's port.
  if (lastColon > rest.lastIndexOf('/')) {
    tag = rest.slice(lastColon + 1);
    rest = rest.slice(0, lastColon);
    if (!TAG.test(tag)) throw invalid(ref, `bad tag ${JSON.stringify(tag)}`);
  }
  const name = rest;
  if (name === '') throw invalid(ref, 'no repository name');
  if (name.length > NAME_TOTAL_LENGTH_MAX) {
    throw invalid(ref, `repository name longer than ${NAME_TOTAL_LENGTH_MAX} characters`);
  }
  const parts = name.split('/');
  let domain = DEFAULT_DOMAIN;
  // As normalize.go's splitDockerDomain: the first component is a registry when it looks
  // like a host (a dot, a port, `localhost`) or is not a valid lower-case path component.
  const first = parts[0] ?? '';
  if (
    parts.length > 1 &&
    (first.includes('.') || first.includes(':') || first === 'localhost' || first !== first.toLowerCase())
  ) {
    if (!isDomain(first)) throw invalid(ref, `bad registry ${JSON.stringify(first)}`);
    domain = first;
    parts.shift();
  }
  for (const p of parts) {
    if (!PATH_COMPONENT.test(p)) {
      throw invalid(
        ref,
        p !== p.toLowerCase()
          ? 'repository name must be lowercase'
          : `bad path component ${JSON.stringify(p)}`,
      );
    }
  }
  let path = parts.join('/');
  if (domain === DEFAULT_DOMAIN && parts.length === 1) path = OFFICIAL_REPO_PREFIX + path;
  const out: ImageReference = { domain, path };
  if (tag !== undefined) out.tag = tag;
  if (digest !== undefined) out.digest = digest;
  return out;
}

/** Repository without tag or digest, in the familiar form (`busybox`, `k8ts/pause`, `127.0.0.1:1/nope`). */
export function familiarRepository(ref: ImageReference): string {
  if (ref.domain !== DEFAULT_DOMAIN) return `${ref.domain}/${ref.path}`;
  return ref.path.startsWith(OFFICIAL_REPO_PREFIX) ? ref.path.slice(OFFICIAL_REPO_PREFIX.length) : ref.path;
}

/**
 * The short form Docker shows in `RepoTags` (`busybox:latest`, `k8ts/pause:1.0`,
 * `127.0.0.1:1/nope:1`): Docker Hub's domain and `library/` dropped, tag `latest` filled
 * in when the reference has neither tag nor digest.
 */
export function familiarName(ref: ImageReference): string {
  let name = familiarRepository(ref);
  if (ref.tag !== undefined) name += `:${ref.tag}`;
  else if (ref.digest === undefined) name += ':latest';
  if (ref.digest !== undefined) name += `@${ref.digest}`;
  return name;
}
