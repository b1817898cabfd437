/**
 * Which resources the API server serves, learned from the API itself (client-go's
 * discovery client): `/api`, `/api/v1`, `/apis` and `/apis/<group>/<version>`. The
 * garbage collector and the namespace controller act on every resource that supports
 * the verbs they need, including ones they were never told about (hub and spoke: they
 * never read the API server's own resource table).
 */
import type { ResourceRef } from '../../api/client/resource.js';
import type { RestClient } from '../../api/client/rest.js';

/** A served resource with the verbs discovery lists for it (`list`, `watch`, `delete`, ...). */
export interface DiscoveredResource extends ResourceRef {
  readonly verbs: readonly string[];
}

interface APIVersions {
  versions?: string[];
}

interface APIGroupList {
  groups?: { name: string; preferredVersion?: { version: string }; versions?: { version: string }[] }[];
}

interface APIResourceList {
  groupVersion?: string;
  resources?: { name: string; namespaced?: boolean; kind?: string; verbs?: string[] }[];
}

/**
 * The resources of every group at its preferred version (client-go's
 * ServerPreferredResources), without subresources (`pods/status`).
 * Resolves with them sorted by group, then resource.
 * @throws ApiStatusError or a connection error when a discovery document cannot be read;
 *   a partial answer is not given, so callers keep what they knew before and retry.
 */
export async function discoverPreferredResources(client: RestClient): Promise<DiscoveredResource[]> {
  return (await discover(client, false)).preferred;
}

/**
 * The resources of every served version of every group (client-go's
 * ServerGroupsAndResources, what a REST mapper maps kinds with), and among them those of
 * each group's preferred version; without subresources, each list sorted by group, then
 * resource (then version). A CRD's older served versions are in `all`: an ownerReference
 * may name any of them. A version other than the preferred one whose document cannot be
 * read is left out.
 * @throws as discoverPreferredResources, for the documents of preferred versions.
 */
export function discoverAllResources(
  client: RestClient,
): Promise<{ all: DiscoveredResource[]; preferred: DiscoveredResource[] }> {
  return discover(client, true);
}

async function discover(
  client: RestClient,
  allVersions: boolean,
): Promise<{ all: DiscoveredResource[]; preferred: DiscoveredResource[] }> {
  const core = await client.request<APIVersions>('GET', '/api');
  const coreVersion = core.versions?.[0];
  const groupVersions: { group: string; version: string; path: string; preferred: boolean }[] = [];
  if (coreVersion)
    groupVersions.push({ group: '', version: coreVersion, path: `/api/${coreVersion}`, preferred: true });
  const groups = await client.request<APIGroupList>('GET', '/apis');
  for (const g of groups.groups ?? []) {
    const preferred = g.preferredVersion?.version ?? g.versions?.[0]?.version;
    const versions = allVersions ? (g.versions ?? []).map((v) => v.version) : [preferred];
    if (preferred && !versions.includes(preferred)) versions.push(preferred);
    for (const version of versions)
      if (version)
        groupVersions.push({
          group: g.name,
          version,
          path: `/apis/${g.name}/${version}`,
          preferred: version === preferred,
        });
  }
  // Only a preferred version's document is required: another that cannot be read (an
  // aggregated API down) leaves just its kinds out.
  const lists = await Promise.all(
    groupVersions.map(async (gv) => {
      const read = client.request<APIResourceList>('GET', gv.path);
      return { gv, list: gv.preferred ? await read : await read.catch((): APIResourceList => ({})) };
    }),
  );
  const all: DiscoveredResource[] = [];
  const preferred: DiscoveredResource[] = [];
  for (const { gv, list } of lists) {
    for (const r of list.resources ?? []) {
      if (r.name.includes('/') || !r.kind) continue;
      const found: DiscoveredResource = Object.freeze({
        group: gv.group,
        version: gv.version,
        resource: r.name,
        kind: r.kind,
        namespaced: r.namespaced === true,
        verbs: Object.freeze([...(r.verbs ?? [])]),
      });
      all.push(found);
      if (gv.preferred) preferred.push(found);
    }
  }
  // By code unit, as Go compares strings (localeCompare would also load ICU's collation
  // data, some 3 MB of RSS, into every control process at start).
  const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  const order = (a: DiscoveredResource, b: DiscoveredResource) =>
    cmp(a.group, b.group) || cmp(a.resource, b.resource) || cmp(a.version, b.version);
  return { all: all.sort(order), preferred: preferred.sort(order) };
}

/** True when `r` lists every verb of `verbs`. */
export function supportsVerbs(r: DiscoveredResource, ...verbs: string[]): boolean {
  return verbs.every((v) => r.verbs.includes(v));
}

/** `resource.group` (`replicasets.apps`; `pods` for the core group), as Kubernetes prints a GroupResource. */
export function groupResource(r: Pick<ResourceRef, 'group' | 'resource'>): string {
  return r.group === '' ? r.resource : `${r.resource}.${r.group}`;
}
