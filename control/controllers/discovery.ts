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
  const out: DiscoveredResource[] = [];
  const core = await client.request<APIVersions>('GET', '/api');
  const coreVersion = core.versions?.[0];
  const groupVersions: { group: string; version: string; path: string }[] = [];
  if (coreVersion) groupVersions.push({ group: '', version: coreVersion, path: `/api/${coreVersion}` });
  const groups = await client.request<APIGroupList>('GET', '/apis');
  for (const g of groups.groups ?? []) {
    const version = g.preferredVersion?.version ?? g.versions?.[0]?.version;
    if (version) groupVersions.push({ group: g.name, version, path: `/apis/${g.name}/${version}` });
  }
  const lists = await Promise.all(
    groupVersions.map(async (gv) => ({ gv, list: await client.request<APIResourceList>('GET', gv.path) })),
  );
  for (const { gv, list } of lists) {
    for (const r of list.resources ?? []) {
      if (r.name.includes('/') || !r.kind) continue;
      out.push(
        Object.freeze({
          group: gv.group,
          version: gv.version,
          resource: r.name,
          kind: r.kind,
          namespaced: r.namespaced === true,
          verbs: Object.freeze([...(r.verbs ?? [])]),
        }),
      );
    }
  }
  return out.sort((a, b) =>
    a.group === b.group ? a.resource.localeCompare(b.resource) : a.group.localeCompare(b.group),
  );
}

/** True when `r` lists every verb of `verbs`. */
export function supportsVerbs(r: DiscoveredResource, ...verbs: string[]): boolean {
  return verbs.every((v) => r.verbs.includes(v));
}

/** `resource.group` (`replicasets.apps`; `pods` for the core group), as Kubernetes prints a GroupResource. */
export function groupResource(r: Pick<ResourceRef, 'group' | 'resource'>): string {
  return r.group === '' ? r.resource : `${r.resource}.${r.group}`;
}
