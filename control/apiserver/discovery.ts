/**
 * Discovery documents: `/version`, `/api`, `/apis`, `/apis/<group>`, `/api/v1` and
 * `/apis/<group>/<version>`, in both the per-group ("legacy", metav1) form and the
 * aggregated form (apidiscovery.k8s.io `APIGroupDiscoveryList`) that kubectl and
 * client-go ask for first. Everything is derived from the resource table (RESOURCES), so
 * discovery, routing and OpenAPI cannot disagree.
 *
 * The builders are pure and return plain JSON objects. `discoveryResponse()` adds the
 * HTTP layer an API server needs around them (content negotiation on `Accept`, ETag,
 * `If-None-Match`, 404/406 as metav1.Status; the parts OpenAPI shares are in
 * document-response.ts) without doing any I/O, so the server only copies status, headers
 * and body onto its response.
 *
 * Wire facts this follows (client-go v0.32 discovery client, apiserver v0.32):
 * - client-go sends `Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,
 *   application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json`
 *   to `/api` and `/apis`, and decides how to decode purely from the response's
 *   `Content-Type` parameters (g, v, as). A plain `application/json` answer makes it fall
 *   back to fetching every `/apis/<g>/<v>` list.
 * - In the aggregated form a resource's `responseKind` carries the group and version of its
 *   APIResource (empty for the resource's own group-version), subresources carry their own
 *   kind (`deployments/scale` is autoscaling/v1 Scale) and verbs; `freshness: Current`.
 * - Verbs are sorted, as the apiserver's installer sorts them; resources are listed by
 *   name, each followed by its subresources (`pods`, `pods/attach`, `pods/binding`, ...).
 */
import { createHash } from 'node:crypto';
import { CONTENT_TYPE_JSON, documentResponse, serialize, statusResponse } from './document-response.js';
import { acceptableClauses } from './negotiation.js';
import type { DocumentRequest, DocumentResponse, SerializedDocument } from './document-response.js';
import { ApiError } from './status.js';
import { METRICS_RESOURCES } from './resource-metrics.js';
import { RESOURCES, groupVersion } from './resources.js';
import type { ResourceInfo, Subresource, Verb } from './resources.js';

// ---------------------------------------------------------------------------------------
// Content types (JSON itself: document-response.ts)

/** Aggregated discovery, apidiscovery.k8s.io/v2 (what kubectl 1.30+ asks for first). */
export const CONTENT_TYPE_AGGREGATED_V2 =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
/** Aggregated discovery, apidiscovery.k8s.io/v2beta1 (kubectl 1.26–1.32 also accept it; removed in 1.33). */
export const CONTENT_TYPE_AGGREGATED_V2BETA1 =
  'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';

export type AggregatedDiscoveryVersion = 'v2' | 'v2beta1';

// ---------------------------------------------------------------------------------------
// /version

/** The Kubernetes release whose API this server implements (kubectl warns beyond ±1 minor). */
export const KUBERNETES_RELEASE = { major: '1', minor: '32', patch: '0' } as const;

/**
 * `gitVersion` of /version: `v1.32.0+k8ts`. The suffix is semver *build metadata* (as
 * k3s's `+k3s1`), not a pre-release (`-k8ts`), so version constraints such as Helm's
 * `kubeVersion: ">=1.32.0"` still hold; kubectl parses it with ParseSemantic and only
 * compares major and minor.
 */
export const GIT_VERSION = `v${KUBERNETES_RELEASE.major}.${KUBERNETES_RELEASE.minor}.${KUBERNETES_RELEASE.patch}+k8ts`;

/** k8s.io/apimachinery/pkg/version.Info, the body of `/version`. */
export interface VersionInfo {
  major: string;
  minor: string;
  gitVersion: string;
  gitCommit: string;
  gitTreeState: string;
  /** RFC 3339. */
  buildDate: string;
  goVersion: string;
  compiler: string;
  /** `<os>/<arch>` in Go's spelling, e.g. `linux/amd64`. */
  platform: string;
}

export interface VersionInfoOptions {
  gitCommit?: string;
  /** RFC 3339; default: the Unix epoch (unknown). */
  buildDate?: string;
}

const GO_OS: Readonly<Record<string, string>> = { win32: 'windows' };
const GO_ARCH: Readonly<Record<string, string>> = { x64: 'amd64', ia32: '386', arm: 'arm', arm64: 'arm64' };

/**
 * The body of `GET /version`. There is no Go toolchain: `goVersion` and `compiler` name
 * the JavaScript runtime that runs the server (`node20.x.y`, `v8`); clients only print them.
 */
export function versionInfo(opts: VersionInfoOptions = {}): VersionInfo {
  return {
    major: KUBERNETES_RELEASE.major,
    minor: KUBERNETES_RELEASE.minor,
    gitVersion: GIT_VERSION,
    gitCommit: opts.gitCommit ?? '',
    gitTreeState: opts.gitCommit ? 'clean' : '',
    buildDate: opts.buildDate ?? '1970-01-01T00:00:00Z',
    goVersion: `node${process.versions.node}`,
    compiler: 'v8',
    platform: `${GO_OS[process.platform] ?? process.platform}/${GO_ARCH[process.arch] ?? process.arch}`,
  };
}

// ---------------------------------------------------------------------------------------
// Per-group ("legacy") discovery: metav1 types

/** metav1.ServerAddressByClientCIDR. */
export interface ServerAddressByClientCIDR {
  clientCIDR: string;
  /** `host:port` clients in `clientCIDR` should use. */
  serverAddress: string;
}

/** metav1.APIVersions, the body of `GET /api`. */
export interface APIVersions {
  kind: 'APIVersions';
  apiVersion: 'v1';
  versions: string[];
  serverAddressByClientCIDRs: ServerAddressByClientCIDR[];
}

/** metav1.GroupVersionForDiscovery. */
export interface GroupVersionForDiscovery {
  /** `group/version`. */
  groupVersion: string;
  version: string;
}

/** metav1.APIGroup as listed inside an APIGroupList (no kind/apiVersion). */
export interface APIGroupInfo {
  name: string;
  versions: GroupVersionForDiscovery[];
  preferredVersion: GroupVersionForDiscovery;
}

/** metav1.APIGroup, the body of `GET /apis/<group>`. */
export interface APIGroup extends APIGroupInfo {
  kind: 'APIGroup';
  apiVersion: 'v1';
}

/** metav1.APIGroupList, the body of `GET /apis`. */
export interface APIGroupList {
  kind: 'APIGroupList';
  apiVersion: 'v1';
  groups: APIGroupInfo[];
}

/** metav1.APIResource. `group`/`version` appear only when they differ from the list's. */
export interface APIResource {
  /** Plural resource name, or `<resource>/<subresource>`. */
  name: string;
  /** Empty for subresources, as Kubernetes serves them. */
  singularName: string;
  namespaced: boolean;
  group?: string;
  version?: string;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  storageVersionHash?: string;
}

/** metav1.APIResourceList, the body of `GET /api/v1` and `GET /apis/<group>/<version>`. */
export interface APIResourceList {
  kind: 'APIResourceList';
  apiVersion: 'v1';
  groupVersion: string;
  resources: APIResource[];
}

/** The kind a subresource answers with, relative to its parent resource. */
interface SubresourceShape {
  /** Sorted, as the apiserver lists them. */
  verbs: Verb[];
  /** Omitted: the parent's kind in the parent's group-version. */
  kind?: { group: string; version: string; kind: string };
}

/**
 * Verbs and kinds of the subresources, as kube-apiserver's registries define them:
 * status and scale are get/update/patch (scale answers autoscaling/v1 Scale); binding and
 * eviction are create-only (policy/v1 Eviction); log is a get returning the Pod's log;
 * exec/attach/portforward are "connect" endpoints, which discovery lists as get and create
 * (GET and POST) with the options kind as their kind; a Namespace's finalize is update-only;
 * a ServiceAccount's token is create-only, answering authentication.k8s.io/v1 TokenRequest.
 */
export const SUBRESOURCE_SHAPES: Readonly<Record<Subresource, SubresourceShape>> = {
  status: { verbs: ['get', 'patch', 'update'] },
  scale: { verbs: ['get', 'patch', 'update'], kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' } },
  binding: { verbs: ['create'], kind: { group: '', version: '', kind: 'Binding' } },
  eviction: { verbs: ['create'], kind: { group: 'policy', version: 'v1', kind: 'Eviction' } },
  log: { verbs: ['get'] },
  exec: { verbs: ['create', 'get'], kind: { group: '', version: '', kind: 'PodExecOptions' } },
  attach: { verbs: ['create', 'get'], kind: { group: '', version: '', kind: 'PodAttachOptions' } },
  portforward: { verbs: ['create', 'get'], kind: { group: '', version: '', kind: 'PodPortForwardOptions' } },
  finalize: { verbs: ['update'] },
  token: { verbs: ['create'], kind: { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' } },
};

/**
 * The storage version hash of a kind, as the apiserver computes it: base64 of the first
 * 8 bytes of sha256(`<group>/<version>/<kind>`). Clients (the storage version migrator)
 * only compare it for equality.
 */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256')
    .update(`${group}/${version}/${kind}`)
    .digest()
    .subarray(0, 8)
    .toString('base64');
}

/**
 * What discovery lists: the stored resources, then the resource metrics API (served by the
 * API server itself, as metrics-server's aggregated API would be; see resource-metrics.ts).
 */
const DISCOVERED: readonly ResourceInfo[] = [...RESOURCES, ...METRICS_RESOURCES];

/**
 * The custom resources served now (apiextensions/custom-resources.ts: every served
 * version of each Established CRD, preferred version first), after the built-in ones.
 * Empty by default.
 */
export type CustomDiscovery = readonly ResourceInfo[];

function discovered(custom: CustomDiscovery): readonly ResourceInfo[] {
  return custom.length === 0 ? DISCOVERED : [...DISCOVERED, ...custom];
}

function resourcesOf(group: string, version: string, custom: CustomDiscovery): ResourceInfo[] {
  return discovered(custom).filter((r) => r.group === group && r.version === version);
}

/** Served groups (core excluded) in the order of first appearance, each with its versions (preferred first). */
function servedGroups(custom: CustomDiscovery): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const r of discovered(custom)) {
    if (r.group === '') continue;
    const versions = groups.get(r.group) ?? [];
    if (!versions.includes(r.version)) versions.push(r.version);
    groups.set(r.group, versions);
  }
  return groups;
}

function coreVersions(): string[] {
  return [...new Set(RESOURCES.filter((r) => r.group === '').map((r) => r.version))];
}

function sortedVerbs(verbs: readonly string[]): string[] {
  return [...verbs].sort();
}

function byName<T extends { name: string }>(a: T, b: T): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

export interface APIVersionsOptions {
  /**
   * `host:port` clients should reach this server at (`serverAddressByClientCIDRs` for
   * 0.0.0.0/0). Omitted: the list is empty, which clients accept.
   */
  serverAddress?: string;
}

/** The body of `GET /api`: the core group's versions (`['v1']`). */
export function apiVersions(opts: APIVersionsOptions = {}): APIVersions {
  return {
    kind: 'APIVersions',
    apiVersion: 'v1',
    versions: coreVersions(),
    serverAddressByClientCIDRs: opts.serverAddress
      ? [{ clientCIDR: '0.0.0.0/0', serverAddress: opts.serverAddress }]
      : [],
  };
}

function groupInfo(name: string, versions: readonly string[]): APIGroupInfo {
  const list = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions: list, preferredVersion: list[0]! };
}

/** The body of `GET /apis`: every served group except core, preferred version first. */
export function apiGroupList(custom: CustomDiscovery = []): APIGroupList {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [...servedGroups(custom)].map(([name, versions]) => groupInfo(name, versions)),
  };
}

/** The body of `GET /apis/<group>`; undefined when the group is not served (core included: it lives at /api). */
export function apiGroup(group: string, custom: CustomDiscovery = []): APIGroup | undefined {
  const versions = servedGroups(custom).get(group);
  if (!versions) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupInfo(group, versions) };
}

function resourceEntry(r: ResourceInfo): APIResource {
  const e: APIResource = {
    name: r.resource,
    singularName: r.singular,
    namespaced: r.namespaced,
    kind: r.kind,
    verbs: sortedVerbs(r.verbs),
  };
  if (r.shortNames.length > 0) e.shortNames = [...r.shortNames];
  if (r.categories.length > 0) e.categories = [...r.categories];
  // Resources that are not stored (metrics.k8s.io) have no storage version; a custom
  // resource's is its CRD's storage version.
  if (r.custom) e.storageVersionHash = storageVersionHash(r.group, r.custom.storageVersion, r.kind);
  else if (r.model) e.storageVersionHash = storageVersionHash(r.group, r.version, r.kind);
  return e;
}

function subresourceEntry(r: ResourceInfo, sub: Subresource): APIResource {
  const shape = SUBRESOURCE_SHAPES[sub];
  const e: APIResource = {
    name: `${r.resource}/${sub}`,
    singularName: '',
    namespaced: r.namespaced,
    kind: shape.kind?.kind ?? r.kind,
    verbs: sortedVerbs(shape.verbs),
  };
  if (shape.kind?.group) e.group = shape.kind.group;
  if (shape.kind?.version) e.version = shape.kind.version;
  return e;
}

/**
 * The body of `GET /api/v1` (group '') or `GET /apis/<group>/<version>`; undefined when
 * that group-version is not served.
 */
export function apiResourceList(
  group: string,
  version: string,
  custom: CustomDiscovery = [],
): APIResourceList | undefined {
  const served = resourcesOf(group, version, custom);
  if (served.length === 0) return undefined;
  const resources: APIResource[] = [];
  for (const r of [...served].sort((a, b) => byName({ name: a.resource }, { name: b.resource }))) {
    resources.push(resourceEntry(r));
    for (const sub of [...r.subresources].sort()) resources.push(subresourceEntry(r, sub));
  }
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: groupVersion({ group, version }),
    resources,
  };
}

// ---------------------------------------------------------------------------------------
// Aggregated discovery: apidiscovery.k8s.io/v2 (and v2beta1, the same shape)

/** metav1.GroupVersionKind. */
export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** apidiscovery APISubresourceDiscovery. */
export interface APISubresourceDiscovery {
  subresource: string;
  responseKind: GroupVersionKind;
  verbs: string[];
}

/** apidiscovery APIResourceDiscovery. */
export interface APIResourceDiscovery {
  resource: string;
  responseKind: GroupVersionKind;
  scope: 'Namespaced' | 'Cluster';
  singularResource: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  subresources?: APISubresourceDiscovery[];
}

/** apidiscovery APIVersionDiscovery. */
export interface APIVersionDiscovery {
  version: string;
  resources: APIResourceDiscovery[];
  freshness: 'Current' | 'Stale';
}

/** apidiscovery APIGroupDiscovery; the core group has no name. */
export interface APIGroupDiscovery {
  metadata: { name?: string };
  versions: APIVersionDiscovery[];
}

/** apidiscovery APIGroupDiscoveryList, the aggregated body of `GET /api` and `GET /apis`. */
export interface APIGroupDiscoveryList {
  kind: 'APIGroupDiscoveryList';
  apiVersion: `apidiscovery.k8s.io/${AggregatedDiscoveryVersion}`;
  metadata: Record<string, never>;
  items: APIGroupDiscovery[];
}

function versionDiscovery(group: string, version: string, custom: CustomDiscovery): APIVersionDiscovery {
  const resources = [...resourcesOf(group, version, custom)]
    .sort((a, b) => byName({ name: a.resource }, { name: b.resource }))
    .map((r): APIResourceDiscovery => {
      const d: APIResourceDiscovery = {
        resource: r.resource,
        // Empty group/version: "the group-version of this list", as the apiserver converts it.
        responseKind: { group: '', version: '', kind: r.kind },
        scope: r.namespaced ? 'Namespaced' : 'Cluster',
        singularResource: r.singular,
        verbs: sortedVerbs(r.verbs),
      };
      if (r.shortNames.length > 0) d.shortNames = [...r.shortNames];
      if (r.categories.length > 0) d.categories = [...r.categories];
      if (r.subresources.length > 0) {
        d.subresources = [...r.subresources].sort().map((sub) => {
          const shape = SUBRESOURCE_SHAPES[sub];
          return {
            subresource: sub,
            responseKind: shape.kind ?? { group: '', version: '', kind: r.kind },
            verbs: sortedVerbs(shape.verbs),
          };
        });
      }
      return d;
    });
  return { version, resources, freshness: 'Current' };
}

/**
 * The aggregated discovery document: for `'api'` the core group (one item without a name),
 * for `'apis'` every other served group. `version` only changes `apiVersion`: v2beta1 and
 * v2 have the same JSON shape.
 */
export function aggregatedDiscovery(
  root: 'api' | 'apis',
  version: AggregatedDiscoveryVersion = 'v2',
  custom: CustomDiscovery = [],
): APIGroupDiscoveryList {
  const items: APIGroupDiscovery[] =
    root === 'api'
      ? [{ metadata: {}, versions: coreVersions().map((v) => versionDiscovery('', v, custom)) }]
      : [...servedGroups(custom)].map(([name, versions]) => ({
          metadata: { name },
          versions: versions.map((v) => versionDiscovery(name, v, custom)),
        }));
  return { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${version}`, metadata: {}, items };
}

/** How to answer a discovery request: aggregated (which version) or per-group JSON. */
export type DiscoveryFormat =
  { aggregated: false } | { aggregated: true; version: AggregatedDiscoveryVersion };

/**
 * Picks the representation for a discovery request from its `Accept` header, as the
 * apiserver does: the first acceptable media range wins. `application/json` with
 * `g=apidiscovery.k8s.io;v=v2|v2beta1;as=APIGroupDiscoveryList` selects the aggregated
 * form (only where `allowAggregated`: `/api` and `/apis`); plain JSON, `application/*`,
 * `*\/*` or no header select per-group JSON. Returns undefined when nothing acceptable is
 * offered (answer 406), e.g. protobuf only.
 */
export function negotiateDiscovery(
  accept: string | undefined,
  allowAggregated = true,
): DiscoveryFormat | undefined {
  for (const m of acceptableClauses(accept)) {
    const jsonish =
      (m.type === 'application' && m.subtype === 'json') ||
      (m.type === 'application' && m.subtype === '*') ||
      (m.type === '*' && m.subtype === '*');
    if (!jsonish) continue;
    if (m.params.get('as') !== undefined) {
      const v = m.params.get('v');
      const aggregated =
        m.subtype === 'json' &&
        m.params.get('as') === 'APIGroupDiscoveryList' &&
        m.params.get('g') === 'apidiscovery.k8s.io' &&
        (v === 'v2' || v === 'v2beta1');
      if (aggregated && allowAggregated) return { aggregated: true, version: v };
      continue; // a conversion this endpoint does not offer
    }
    return { aggregated: false };
  }
  return undefined;
}

function notAcceptable(accept: string | undefined): DocumentResponse {
  return statusResponse(
    new ApiError(406, 'NotAcceptable', `only the following media types are accepted: ${CONTENT_TYPE_JSON}`, {
      causes: [{ reason: 'NotAcceptable', message: `Accept: ${accept ?? ''}` }],
    }),
  );
}

function notFound(path: string): DocumentResponse {
  return statusResponse(
    new ApiError(404, 'NotFound', `the server could not find the requested resource (${path})`),
  );
}

const cache = new Map<string, SerializedDocument>();
/** The custom resources the cached documents were built with (a new set empties the cache). */
const NO_CUSTOM: CustomDiscovery = [];
let cachedCustom: CustomDiscovery = NO_CUSTOM;

function cached(key: string, build: () => unknown): SerializedDocument {
  let doc = cache.get(key);
  if (!doc) {
    doc = serialize(build());
    cache.set(key, doc);
  }
  return doc;
}

export interface DiscoveryResponseOptions {
  /** See APIVersionsOptions.serverAddress. */
  serverAddress?: string;
  /** See VersionInfoOptions. */
  version?: VersionInfoOptions;
  /**
   * The custom resources served now. Documents are cached per set: pass the same array
   * until what is served changes (CustomResources.served() keeps it so).
   */
  custom?: CustomDiscovery;
}

/**
 * Answers a GET of a discovery path: `/version`, `/api`, `/apis`, `/api/<v>`,
 * `/apis/<g>`, `/apis/<g>/<v>` (a trailing slash is ignored). Returns undefined for any
 * other path, so the caller can route it elsewhere; 404 (Status) for an unserved group or
 * version under /api or /apis; 406 (Status) when `Accept` allows no JSON form. Bodies are
 * serialized once and cached (RESOURCES does not change while the process runs).
 *
 * Content types: `application/json` everywhere, except `/api` and `/apis` when the client
 * asks for aggregated discovery: then CONTENT_TYPE_AGGREGATED_V2 (or ..._V2BETA1).
 */
export function discoveryResponse(
  req: DocumentRequest,
  opts: DiscoveryResponseOptions = {},
): DocumentResponse | undefined {
  const path = req.path.length > 1 ? req.path.replace(/\/+$/, '') : req.path;
  const segments = path.split('/').slice(1);
  const root = segments[0];
  if (path === '/version') {
    // Not cached: cheap, and the options are the caller's.
    return documentResponse(serialize(versionInfo(opts.version)), CONTENT_TYPE_JSON, req.ifNoneMatch);
  }
  if (root !== 'api' && root !== 'apis') return undefined;
  if (segments.length > (root === 'api' ? 2 : 3)) return undefined;
  const custom = opts.custom ?? NO_CUSTOM;
  if (custom !== cachedCustom && !(custom.length === 0 && cachedCustom.length === 0)) {
    cache.clear();
    cachedCustom = custom;
  }

  const isRoot = segments.length === 1;
  const format = negotiateDiscovery(req.accept, isRoot);
  if (!format) return notAcceptable(req.accept);

  if (isRoot) {
    if (format.aggregated) {
      const contentType =
        format.version === 'v2' ? CONTENT_TYPE_AGGREGATED_V2 : CONTENT_TYPE_AGGREGATED_V2BETA1;
      const doc = cached(`${root}?aggregated=${format.version}`, () =>
        aggregatedDiscovery(root, format.version, custom),
      );
      return documentResponse(doc, contentType, req.ifNoneMatch);
    }
    const doc =
      root === 'api'
        ? cached(`api?server=${opts.serverAddress ?? ''}`, () =>
            apiVersions({ serverAddress: opts.serverAddress }),
          )
        : cached('apis', () => apiGroupList(custom));
    return documentResponse(doc, CONTENT_TYPE_JSON, req.ifNoneMatch);
  }

  let body: unknown;
  if (root === 'api') {
    body = apiResourceList('', segments[1]!, custom);
  } else if (segments.length === 2) {
    body = apiGroup(segments[1]!, custom);
  } else {
    body = apiResourceList(segments[1]!, segments[2]!, custom);
  }
  if (body === undefined) return notFound(path);
  return documentResponse(
    cached(path, () => body),
    CONTENT_TYPE_JSON,
    req.ifNoneMatch,
  );
}
