/**
 * The resource metrics API, `metrics.k8s.io/v1beta1` — what metrics-server serves as an
 * aggregated API in Kubernetes and `kubectl top` reads: NodeMetrics (`nodes`, cluster
 * scoped) and PodMetrics (`pods`, namespaced), list and get. Figures come from each
 * node's kubelet API (`/stats/summary`, api/stats.ts) through the agent tunnel, fetched
 * when asked (no cache, so no stale figures; a node that does not answer in time is
 * left out of lists, as metrics-server leaves out nodes it cannot scrape).
 *
 * Units as metrics-server writes them: CPU in nanocores (`123456n`), memory in KiB
 * (`2048Ki`), `window` the span the CPU rate was averaged over (`1.002s`).
 */
import { request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { parseLabelSelector, SelectorParseError } from '../../api/meta/labels.js';
import type { KubeObject } from '../../api/object.js';
import type { StatsSummary, UsageSample } from '../../api/stats.js';
import type { ListQuery, Registry } from './registry.js';
import type { ResourceInfo } from './resources.js';
import { decodePathSegment } from './request.js';
import { ApiError, badRequest, methodNotAllowed } from './status.js';
import type { TunnelServer } from './tunnel.js';

export const METRICS_GROUP = 'metrics.k8s.io';
export const METRICS_VERSION = 'v1beta1';
const PREFIX = `/apis/${METRICS_GROUP}/${METRICS_VERSION}`;

/** The two resources, for discovery only (they are not stored; see resources.ts). */
export const METRICS_RESOURCES: readonly ResourceInfo[] = [
  {
    group: METRICS_GROUP,
    version: METRICS_VERSION,
    resource: 'nodes',
    singular: '',
    kind: 'NodeMetrics',
    listKind: 'NodeMetricsList',
    namespaced: false,
    shortNames: [],
    categories: [],
    verbs: ['get', 'list'],
    subresources: [],
    model: '',
  },
  {
    group: METRICS_GROUP,
    version: METRICS_VERSION,
    resource: 'pods',
    singular: '',
    kind: 'PodMetrics',
    listKind: 'PodMetricsList',
    namespaced: true,
    shortNames: [],
    categories: [],
    verbs: ['get', 'list'],
    subresources: [],
    model: '',
  },
];

export interface ResourceMetricsConfig {
  nodes: Registry;
  pods: Registry;
  tunnels: TunnelServer;
  /** Milliseconds to wait for one node's summary; default 10 000. */
  timeoutMs?: number;
  now?: () => Date;
}

/** Serves the paths under `/apis/metrics.k8s.io/v1beta1/` (discovery documents excepted). */
export class ResourceMetricsApi {
  constructor(private readonly cfg: ResourceMetricsConfig) {}

  /** Whether `pathname` is a metrics resource path (not the group-version's discovery document). */
  static handles(pathname: string): boolean {
    return pathname.startsWith(`${PREFIX}/`);
  }

  /**
   * What a metrics path asks for, for authorization (kube-apiserver's RequestInfo of an
   * aggregated API): `get` of one NodeMetrics/PodMetrics, `list` of a collection;
   * undefined for a path serve() answers 404.
   */
  static requestInfo(
    url: URL,
  ): { verb: 'get' | 'list'; resource: 'nodes' | 'pods'; namespace?: string; name?: string } | undefined {
    if (!ResourceMetricsApi.handles(url.pathname)) return undefined;
    const rest = url.pathname
      .slice(PREFIX.length + 1)
      .split('/')
      .filter(Boolean)
      .map(decodePathSegment);
    const verb = (name: string | undefined) => (name === undefined ? 'list' : 'get') as 'get' | 'list';
    if (rest[0] === 'nodes' && rest.length <= 2)
      return { verb: verb(rest[1]), resource: 'nodes', ...(rest[1] !== undefined ? { name: rest[1] } : {}) };
    if (rest[0] === 'pods' && rest.length === 1) return { verb: 'list', resource: 'pods' };
    if (rest[0] === 'namespaces' && rest[1] !== undefined && rest[2] === 'pods' && rest.length <= 4)
      return {
        verb: verb(rest[3]),
        resource: 'pods',
        namespace: rest[1],
        ...(rest[3] !== undefined ? { name: rest[3] } : {}),
      };
    return undefined;
  }

  /**
   * Answers GET of NodeMetrics/PodMetrics lists and objects.
   * @throws ApiError 404 (unknown path, node or pod without metrics), 405 (not GET), 400 (bad selector).
   */
  async serve(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD')
      throw methodNotAllowed(req.method ?? 'GET', METRICS_GROUP);
    const rest = url.pathname
      .slice(PREFIX.length + 1)
      .split('/')
      .filter(Boolean)
      .map(decodePathSegment);
    const query = this.listQuery(url.searchParams);
    if (rest[0] === 'nodes' && rest.length <= 2) {
      writeJson(res, 200, await this.nodeMetrics(rest[1], query));
      return;
    }
    if (rest[0] === 'pods' && rest.length === 1) {
      writeJson(res, 200, await this.podMetrics(undefined, undefined, query));
      return;
    }
    if (rest[0] === 'namespaces' && rest[2] === 'pods' && rest.length <= 4) {
      writeJson(res, 200, await this.podMetrics(rest[1], rest[3], query));
      return;
    }
    throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
  }

  private listQuery(q: URLSearchParams): ListQuery {
    const ls = q.get('labelSelector');
    try {
      return ls ? { labelSelector: parseLabelSelector(ls) } : {};
    } catch (err) {
      if (err instanceof SelectorParseError) throw badRequest(`unable to parse requirement: ${err.message}`);
      throw err;
    }
  }

  private async nodeMetrics(name: string | undefined, query: ListQuery): Promise<unknown> {
    const nodes = name
      ? [await this.cfg.nodes.get(undefined, name)]
      : (await this.cfg.nodes.list(undefined, query)).items;
    const summaries = await this.summaries(nodes.map((n) => n.metadata!.name!));
    const items = nodes.flatMap((n) => {
      const s = summaries.get(n.metadata!.name!);
      if (!s) return [];
      return [
        {
          metadata: this.metadata(n),
          timestamp: s.node.time,
          window: windowOf(s.node),
          usage: usageOf(s.node),
        },
      ];
    });
    if (name) {
      if (!items[0])
        throw new ApiError(404, 'NotFound', `nodemetrics.metrics.k8s.io "${name}" not found`, {
          name,
          group: METRICS_GROUP,
          kind: 'nodes',
        });
      return { kind: 'NodeMetrics', apiVersion: `${METRICS_GROUP}/${METRICS_VERSION}`, ...items[0] };
    }
    return {
      kind: 'NodeMetricsList',
      apiVersion: `${METRICS_GROUP}/${METRICS_VERSION}`,
      metadata: {},
      items: items.map((i) => ({ ...i })),
    };
  }

  private async podMetrics(
    namespace: string | undefined,
    name: string | undefined,
    query: ListQuery,
  ): Promise<unknown> {
    const pods = name
      ? [await this.cfg.pods.get(namespace, name)]
      : (await this.cfg.pods.list(namespace, query)).items;
    const bound = pods.filter((p) => (p as { spec?: { nodeName?: string } }).spec?.nodeName);
    const nodeOf = (p: KubeObject) => (p as { spec: { nodeName: string } }).spec.nodeName;
    const summaries = await this.summaries([...new Set(bound.map(nodeOf))]);
    const items = bound.flatMap((p) => {
      const stats = summaries
        .get(nodeOf(p))
        ?.pods.find((s) => s.podRef.uid === p.metadata?.uid && s.containers.length > 0);
      if (!stats) return [];
      const first = stats.containers[0]!;
      return [
        {
          metadata: this.metadata(p),
          timestamp: first.time,
          window: windowOf(first),
          containers: stats.containers.map((c) => ({ name: c.name, usage: usageOf(c) })),
        },
      ];
    });
    if (name) {
      if (!items[0])
        throw new ApiError(404, 'NotFound', `podmetrics.metrics.k8s.io "${namespace}/${name}" not found`, {
          name,
          group: METRICS_GROUP,
          kind: 'pods',
        });
      return { kind: 'PodMetrics', apiVersion: `${METRICS_GROUP}/${METRICS_VERSION}`, ...items[0] };
    }
    return { kind: 'PodMetricsList', apiVersion: `${METRICS_GROUP}/${METRICS_VERSION}`, metadata: {}, items };
  }

  private metadata(obj: KubeObject): Record<string, unknown> {
    return {
      name: obj.metadata?.name,
      ...(obj.metadata?.namespace ? { namespace: obj.metadata.namespace } : {}),
      creationTimestamp: (this.cfg.now?.() ?? new Date()).toISOString().replace(/\.\d+Z$/, 'Z'),
      ...(obj.metadata?.labels ? { labels: obj.metadata.labels } : {}),
    };
  }

  /** The summaries of the nodes that answered, by node name. */
  private async summaries(nodes: string[]): Promise<Map<string, StatsSummary>> {
    const out = new Map<string, StatsSummary>();
    await Promise.all(
      nodes.map(async (node) => {
        try {
          out.set(node, await this.summary(node));
        } catch {
          // Left out, as metrics-server leaves out a node it cannot scrape.
        }
      }),
    );
    return out;
  }

  private async summary(node: string): Promise<StatsSummary> {
    const stream = await this.cfg.tunnels.dial(node);
    const timeoutMs = this.cfg.timeoutMs ?? 10_000;
    return new Promise<StatsSummary>((resolve, reject) => {
      const req = request({
        method: 'GET',
        path: '/stats/summary',
        headers: { host: `kubelet.${node}`, connection: 'close' },
        createConnection: () => stream as Socket,
        timeout: timeoutMs,
      });
      req.on('timeout', () => req.destroy(new Error(`no summary from ${node} within ${timeoutMs} ms`)));
      req.on('error', reject);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new Error(`summary of ${node}: HTTP ${res.statusCode}`));
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString()) as StatsSummary);
          } catch (err) {
            reject(err as Error);
          }
        });
      });
      req.end();
    });
  }
}

function usageOf(u: UsageSample): { cpu: string; memory: string } {
  return {
    cpu: `${Math.max(0, Math.round(u.usageNanoCores))}n`,
    memory: `${Math.round(u.workingSetBytes / 1024)}Ki`,
  };
}

function windowOf(u: UsageSample): string {
  return `${Number(u.windowSeconds.toFixed(3))}s`;
}

function writeJson(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}
