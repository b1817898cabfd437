/**
 * The node IPAM controller (Kubernetes' pkg/controller/nodeipam, range allocator): gives
 * every Node without one a `spec.podCIDR` (and `spec.podCIDRs`) cut from the cluster CIDR
 * (`ctx.config.clusterCIDR`, /`nodeCIDRMaskSize` each), so that each agent can put its
 * pods on a bridge network of its own. CIDRs already on Nodes are taken at start; a
 * deleted Node's CIDR is freed. When the range is exhausted the Node gets a Warning event
 * `CIDRNotAvailable` and is retried with backoff.
 */
import { deletedObject } from '../../../api/client/informer.js';
import { resources } from '../../../api/client/resource.js';
import type { Node } from '../../../api/types.js';
import { RateLimitingQueue } from '../../../api/workqueue/rateLimited.js';
import type { Controller, ControllerContext, ControllerFactory } from '../context.js';
import { runQueue } from '../run.js';
import { CidrSet, parseCidr } from './cidr.js';

/** Builds the controller; see the file comment. @throws Error for a malformed clusterCIDR or mask size. */
export const nodeIpamController: ControllerFactory = (ctx: ControllerContext): Controller => {
  const cidrs = new CidrSet(parseCidr(ctx.config.clusterCIDR), ctx.config.nodeCIDRMaskSize);
  const nodes = ctx.informers.informerFor<Node>(resources.nodes);
  const queue = new RateLimitingQueue<string>({ clock: ctx.clock });
  const recorder = ctx.recorder('cidrAllocator');
  // Every name whose CIDR this controller has written, until the informer shows it, so a
  // stale cache never makes it allocate a second range to the same Node.
  const pending = new Map<string, string>();

  const observe = (n: Node) => {
    const cidr = n.spec?.podCIDR;
    if (cidr) {
      cidrs.occupy(cidr);
      if (pending.get(n.metadata.name!) === cidr) pending.delete(n.metadata.name!);
    } else queue.add(n.metadata.name!);
  };
  nodes.addEventHandler({
    onAdd: observe,
    onUpdate: (_, n) => observe(n),
    onDelete: (obj) => {
      const n = deletedObject(obj);
      if (n.spec?.podCIDR) cidrs.release(n.spec.podCIDR);
      pending.delete(n.metadata.name!);
      // A freed range may be what a waiting Node needs.
      for (const waiting of nodes.lister().list())
        if (!waiting.spec?.podCIDR) queue.add(waiting.metadata.name!);
    },
  });

  const reconcile = async (name: string): Promise<void> => {
    const node = nodes.lister().get(name);
    if (!node || node.spec?.podCIDR || pending.has(name)) return;
    const cidr = cidrs.allocate();
    if (cidr === undefined) {
      recorder.event(node, 'Warning', 'CIDRNotAvailable', `Node ${name} status is now: CIDRNotAvailable`);
      throw new Error(`no pod CIDR left in ${ctx.config.clusterCIDR} for node ${name}`);
    }
    try {
      await ctx.client.patch(resources.nodes, undefined, name, 'merge', {
        spec: { podCIDR: cidr, podCIDRs: [cidr] },
      });
      pending.set(name, cidr);
      ctx.logger.info('allocated pod CIDR', { node: name, podCIDR: cidr });
    } catch (err) {
      cidrs.release(cidr);
      throw err;
    }
  };

  return {
    name: 'nodeipam',
    run: (signal) => runQueue({ name: 'nodeipam', queue, workers: 1, reconcile, signal, logger: ctx.logger }),
  };
};
