/**
 * Writes the `kubernetes` Service's endpoints from the live API servers, as kube-apiserver's
 * EndpointsAdapter (pkg/controlplane/reconcilers/endpointsadapter.go) writes them: the
 * legacy Endpoints `default/kubernetes` (label `endpointslice.kubernetes.io/skip-mirror:
 * "true"`) and the EndpointSlice `default/kubernetes` (label `kubernetes.io/service-name:
 * kubernetes`, addressType IPv4, every endpoint ready), port `https`/TCP. Neither carries
 * a managed-by label or an ownerReference, as upstream's do not, so the endpoint and
 * EndpointSlice controllers (which only manage Services with a selector, and slices of
 * their own managed-by) leave them alone.
 *
 * Upstream's API servers all serve one port; k8ts' control processes on one host may not.
 * So the endpoints are grouped by port: the Endpoints object gets one subset per port,
 * and each port its own EndpointSlice — the lowest port's is `kubernetes`, the others'
 * `kubernetes-<port>`. With one port (any real deployment) that is exactly upstream's one
 * subset and one slice. Other slices labelled for the Service are deleted.
 *
 * Writes happen only when something differs, and a write that loses a race (409) is left
 * to the next reconcile: whoever wrote meanwhile wrote from the same leases.
 */
import { labelSelectorFromSet } from '../../api/meta/labels.js';
import type { KubeObject } from '../../api/object.js';
import type { EndpointSlice, Endpoints } from '../../api/types.js';
import type { Registry } from '../apiserver/registry.js';
import { ApiError } from '../apiserver/status.js';
import { isDeepStrictEqual } from 'node:util';
import type { ApiEndpoint } from './leases.js';

export const LABEL_SKIP_MIRROR = 'endpointslice.kubernetes.io/skip-mirror';
export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';

type Writable = Pick<Registry, 'get' | 'create' | 'update' | 'delete' | 'list'>;

export interface EndpointsWriterConfig {
  /** The registry of core/v1 endpoints. */
  endpoints: Writable;
  /** The registry of discovery.k8s.io/v1 endpointslices. */
  endpointSlices: Writable;
  namespace?: string;
  service?: string;
  /** The name of the endpoint port (and of the Service's port); default `https`. */
  portName?: string;
}

/** See the file comment. */
export class EndpointsWriter {
  private readonly cfg: Required<EndpointsWriterConfig>;

  constructor(cfg: EndpointsWriterConfig) {
    this.cfg = { namespace: 'default', service: 'kubernetes', portName: 'https', ...cfg };
  }

  /**
   * Makes the Endpoints and EndpointSlices say `endpoints` (sorted by address, then port;
   * see EndpointLeases.list). An empty list changes nothing: since the caller has just
   * renewed its own lease, none means the store is wrong, and erasing every endpoint of
   * the API would be worse than keeping stale ones (upstream refuses the same way).
   * @returns whether anything was written.
   * @throws ApiError from the registries (409 and 404 races excepted: retried next time).
   */
  async sync(endpoints: readonly ApiEndpoint[]): Promise<boolean> {
    if (endpoints.length === 0) return false;
    const byPort = new Map<number, string[]>();
    for (const ep of endpoints) {
      const ips = byPort.get(ep.port) ?? [];
      if (!ips.includes(ep.ip)) ips.push(ep.ip);
      byPort.set(ep.port, ips);
    }
    const ports = [...byPort.keys()].sort((a, b) => a - b);
    let wrote = await this.syncEndpoints(ports.map((port) => ({ port, ips: byPort.get(port)! })));
    const desired = new Map<string, EndpointSlice>();
    for (const [i, port] of ports.entries()) {
      const name = i === 0 ? this.cfg.service : `${this.cfg.service}-${port}`;
      desired.set(name, this.slice(name, port, byPort.get(port)!));
    }
    const existing = (
      await this.cfg.endpointSlices.list(this.cfg.namespace, {
        labelSelector: labelSelectorFromSet({ [LABEL_SERVICE_NAME]: this.cfg.service }),
      })
    ).items as EndpointSlice[];
    for (const slice of existing) {
      const want = desired.get(slice.metadata.name!);
      if (!want) {
        wrote =
          (await this.race(() => this.cfg.endpointSlices.delete(this.cfg.namespace, slice.metadata.name!))) ||
          wrote;
        continue;
      }
      desired.delete(slice.metadata.name!);
      if (
        slice.addressType === want.addressType &&
        isDeepStrictEqual(slice.endpoints ?? [], want.endpoints) &&
        isDeepStrictEqual(slice.ports ?? [], want.ports) &&
        isDeepStrictEqual(slice.metadata.labels ?? {}, want.metadata.labels)
      )
        continue;
      wrote =
        (await this.race(() =>
          this.cfg.endpointSlices.update(this.cfg.namespace, slice.metadata.name!, {
            ...want,
            metadata: { ...slice.metadata, labels: want.metadata.labels },
          } as KubeObject),
        )) || wrote;
    }
    for (const slice of desired.values()) {
      wrote =
        (await this.race(() => this.cfg.endpointSlices.create(this.cfg.namespace, slice as KubeObject))) ||
        wrote;
    }
    return wrote;
  }

  private async syncEndpoints(groups: { port: number; ips: string[] }[]): Promise<boolean> {
    const { namespace, service, portName } = this.cfg;
    const want: Endpoints = {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: service, namespace, labels: { [LABEL_SKIP_MIRROR]: 'true' } },
      subsets: groups.map(({ port, ips }) => ({
        addresses: ips.map((ip) => ({ ip })),
        ports: [{ name: portName, port, protocol: 'TCP' }],
      })),
    };
    let current: Endpoints | undefined;
    try {
      current = (await this.cfg.endpoints.get(namespace, service)) as Endpoints;
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
    if (!current) return this.race(() => this.cfg.endpoints.create(namespace, want as KubeObject));
    if (
      isDeepStrictEqual(current.subsets ?? [], want.subsets) &&
      isDeepStrictEqual(current.metadata.labels ?? {}, want.metadata.labels)
    )
      return false;
    return this.race(() =>
      this.cfg.endpoints.update(namespace, service, {
        ...want,
        metadata: { ...current.metadata, labels: want.metadata.labels },
      } as KubeObject),
    );
  }

  private slice(name: string, port: number, ips: string[]): EndpointSlice {
    return {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name,
        namespace: this.cfg.namespace,
        labels: { [LABEL_SERVICE_NAME]: this.cfg.service },
      },
      addressType: 'IPv4',
      endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
      ports: [{ name: this.cfg.portName, port, protocol: 'TCP' }],
    };
  }

  /** Runs a write; true when it happened, false when it lost a race (409, 404). */
  private async race(write: () => Promise<unknown>): Promise<boolean> {
    try {
      await write();
      return true;
    } catch (err) {
      if (err instanceof ApiError && (err.code === 409 || err.code === 404)) return false;
      throw err;
    }
  }
}
