/**
 * The service load balancer controller: k8ts has no cloud load balancer, so a Service of
 * `type: LoadBalancer` is served on every node like a NodePort (by kube-proxy, on the
 * Service's port at each node's address) and this controller reports the Ready nodes'
 * InternalIPs in `status.loadBalancer.ingress` (as k3s's servicelb does). One writer per
 * Service, here, rather than every agent writing the same status and fighting over it.
 * A Service that stops being a LoadBalancer has its ingress cleared.
 *
 * A node's port serves one Service: k3s's servicelb runs each LoadBalancer Service as a
 * DaemonSet whose pods take the Service's ports as hostPorts, so a second Service on a port
 * already taken gets pods that stay Pending and no ingress. Here the same: of the
 * LoadBalancer Services that want one port (and protocol), only one is given ingress
 * (admittedLoadBalancers), the others are left with none (`<pending>` in kubectl) and a
 * Warning Event `PortInUse`, until the port frees (its Service is deleted, changes port or
 * stops being a LoadBalancer); their NodePorts and ClusterIPs are served as ever.
 */
import { deletedObject } from '../../../api/client/informer.js';
import { resources } from '../../../api/client/resource.js';
import { metaNamespaceKey, splitMetaNamespaceKey } from '../../../api/client/store.js';
import { getCondition } from '../../../api/podutil.js';
import type { Node, Service } from '../../../api/types.js';
import { RateLimitingQueue } from '../../../api/workqueue/rateLimited.js';
import type { Controller, ControllerContext, ControllerFactory } from '../context.js';
import { runQueue } from '../run.js';

/** The component name of this controller's Events. */
export const SERVICELB_COMPONENT = 'servicelb-controller';

/** The InternalIPs of Ready, schedulable nodes, sorted: the addresses a LoadBalancer Service is reached on. */
export function ingressIPs(nodes: readonly Node[]): string[] {
  const ips = new Set<string>();
  for (const n of nodes) {
    if (n.spec?.unschedulable || getCondition(n.status?.conditions, 'Ready')?.status !== 'True') continue;
    const ip = n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address;
    if (ip) ips.add(ip);
  }
  return [...ips].sort();
}

/** The ports a LoadBalancer Service takes on every node, as `port/protocol` (e.g. `80/TCP`). */
export function loadBalancerPorts(svc: Service): string[] {
  return [...new Set((svc.spec.ports ?? []).map((p) => `${p.port}/${p.protocol ?? 'TCP'}`))];
}

/** Why a LoadBalancer Service is given no ingress: a port of its that another one holds. */
export interface PortConflict {
  /** `port/protocol`. */
  port: string;
  /** The Service key (`namespace/name`) that holds it. */
  holder: string;
}

/**
 * Which LoadBalancer Services may be given ingress, each port/protocol going to one Service
 * (see the file comment). Services are taken in order, those that hold ingress now first
 * (a Service served keeps its port), then the older (creationTimestamp), then by key; each
 * is admitted when none of its ports was taken by one admitted before it, and then takes
 * them all (as a DaemonSet pod holds all its hostPorts or none). Services of other types
 * are ignored. Returns the blocked ones: Service key -> the first conflict.
 */
export function admittedLoadBalancers(services: readonly Service[]): Map<string, PortConflict> {
  const lbs = services
    .filter((s) => s.spec.type === 'LoadBalancer')
    .map((s) => ({
      svc: s,
      key: metaNamespaceKey(s),
      serving: (s.status?.loadBalancer?.ingress?.length ?? 0) > 0 ? 0 : 1,
      created: Date.parse(s.metadata.creationTimestamp ?? '') || 0,
    }))
    .sort(
      (a, b) =>
        a.serving - b.serving || a.created - b.created || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
    );
  const taken = new Map<string, string>();
  const blocked = new Map<string, PortConflict>();
  for (const { svc, key } of lbs) {
    const ports = loadBalancerPorts(svc);
    const conflict = ports.find((p) => taken.has(p));
    if (conflict !== undefined) {
      blocked.set(key, { port: conflict, holder: taken.get(conflict)! });
      continue;
    }
    for (const p of ports) taken.set(p, key);
  }
  return blocked;
}

/** Builds the controller; see the file comment. */
export const serviceLBController: ControllerFactory = (ctx: ControllerContext): Controller => {
  const services = ctx.informers.informerFor<Service>(resources.services);
  const nodes = ctx.informers.informerFor<Node>(resources.nodes);
  const recorder = ctx.recorder(SERVICELB_COMPONENT);
  const queue = new RateLimitingQueue<string>({ clock: ctx.clock });
  const enqueueAll = () => {
    for (const s of services.lister().list())
      if (s.spec.type === 'LoadBalancer') queue.add(metaNamespaceKey(s));
  };
  // A LoadBalancer's change (a new one, a port changed, one deleted) may take or free a port
  // another one waits for: every LoadBalancer Service is looked at again.
  const onService = (s: Service, old?: Service) => {
    queue.add(metaNamespaceKey(s));
    if (s.spec.type === 'LoadBalancer' || old?.spec.type === 'LoadBalancer') enqueueAll();
  };
  services.addEventHandler({
    onAdd: (s) => onService(s),
    onUpdate: (old, s) => onService(s, old),
    onDelete: (s) => onService(deletedObject(s), deletedObject(s)),
  });
  nodes.addEventHandler({ onAdd: enqueueAll, onUpdate: enqueueAll, onDelete: enqueueAll });
  /** The blocked Services an Event was recorded for (key -> the conflict), so that it is recorded once. */
  const reported = new Map<string, string>();

  const reconcile = async (key: string): Promise<void> => {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const svc = services.lister().get(namespace, name);
    if (!svc) {
      reported.delete(key);
      return;
    }
    const current = svc.status?.loadBalancer?.ingress ?? [];
    const conflict =
      svc.spec.type === 'LoadBalancer' ? admittedLoadBalancers(services.lister().list()).get(key) : undefined;
    const want =
      svc.spec.type === 'LoadBalancer' && !conflict
        ? ingressIPs(nodes.lister().list()).map((ip) => ({ ip }))
        : [];
    if (conflict) {
      const said = `${conflict.port} ${conflict.holder}`;
      if (reported.get(key) !== said) {
        reported.set(key, said);
        recorder.event(
          svc,
          'Warning',
          'PortInUse',
          `port ${conflict.port} is taken on the nodes by LoadBalancer Service ${conflict.holder}; no ingress until it frees`,
        );
      }
    } else reported.delete(key);
    if (JSON.stringify(current) === JSON.stringify(want)) return;
    await ctx.client.patch(
      resources.services,
      namespace,
      name,
      'merge',
      { status: { loadBalancer: want.length > 0 ? { ingress: want } : {} } },
      { subresource: 'status' },
    );
  };

  return {
    name: 'servicelb',
    // One worker: whether a Service may take a port depends on the others' status, so two
    // decisions must not be made at once from the same cache.
    run: (signal) =>
      runQueue({ name: 'servicelb', queue, workers: 1, reconcile, signal, logger: ctx.logger }),
  };
};
