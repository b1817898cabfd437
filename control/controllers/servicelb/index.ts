/**
 * The service load balancer controller: k8ts has no cloud load balancer, so a Service of
 * `type: LoadBalancer` is served on every node like a NodePort (by kube-proxy, on the
 * Service's port at each node's address) and this controller reports the Ready nodes'
 * InternalIPs in `status.loadBalancer.ingress` (as k3s's servicelb does). One writer per
 * Service, here, rather than every agent writing the same status and fighting over it.
 * A Service that stops being a LoadBalancer has its ingress cleared.
 */
import { deletedObject } from '../../../api/client/informer.js';
import { resources } from '../../../api/client/resource.js';
import { metaNamespaceKey, splitMetaNamespaceKey } from '../../../api/client/store.js';
import { getCondition } from '../../../api/podutil.js';
import type { Node, Service } from '../../../api/types.js';
import { RateLimitingQueue } from '../../../api/workqueue/rateLimited.js';
import type { Controller, ControllerContext, ControllerFactory } from '../context.js';
import { runQueue } from '../run.js';

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

/** Builds the controller; see the file comment. */
export const serviceLBController: ControllerFactory = (ctx: ControllerContext): Controller => {
  const services = ctx.informers.informerFor<Service>(resources.services);
  const nodes = ctx.informers.informerFor<Node>(resources.nodes);
  const queue = new RateLimitingQueue<string>({ clock: ctx.clock });
  const enqueueAll = () => {
    for (const s of services.lister().list())
      if (s.spec.type === 'LoadBalancer') queue.add(metaNamespaceKey(s));
  };
  services.addEventHandler({
    onAdd: (s) => queue.add(metaNamespaceKey(s)),
    onUpdate: (_, s) => queue.add(metaNamespaceKey(s)),
    onDelete: (s) => queue.add(metaNamespaceKey(deletedObject(s))),
  });
  nodes.addEventHandler({ onAdd: enqueueAll, onUpdate: enqueueAll, onDelete: enqueueAll });

  const reconcile = async (key: string): Promise<void> => {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const svc = services.lister().get(namespace, name);
    if (!svc) return;
    const current = svc.status?.loadBalancer?.ingress ?? [];
    const want =
      svc.spec.type === 'LoadBalancer' ? ingressIPs(nodes.lister().list()).map((ip) => ({ ip })) : [];
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
    run: (signal) =>
      runQueue({ name: 'servicelb', queue, workers: 2, reconcile, signal, logger: ctx.logger }),
  };
};
