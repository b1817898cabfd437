/**
 * The pods-by-node index both node controllers read (Kubernetes' `spec.nodeName` pod
 * indexer, controller.AddPodNodeNameIndexer). Shared informers refuse two different
 * functions under one index name, so every user adds this one through addPodNodeNameIndex.
 */
import { fieldIndexFunc } from '../../../api/client/indexer.js';
import type { SharedInformer } from '../../../api/client/informer.js';
import type { Pod } from '../../../api/types.js';

/** The index name: pods by `spec.nodeName` ('' for unbound pods). */
export const POD_NODE_NAME_INDEX = 'spec.nodeName';

const podNodeNameIndexFunc = fieldIndexFunc<Pod>('spec.nodeName');

/**
 * Adds the `spec.nodeName` index to a pod informer. When another component already added an
 * index of that name with its own function it is kept: an index of that name means pods by
 * node name (as AddPodNodeNameIndexer, which leaves an existing one alone).
 */
export function addPodNodeNameIndex(pods: SharedInformer<Pod>): void {
  try {
    pods.addIndexers({ [POD_NODE_NAME_INDEX]: podNodeNameIndexFunc });
  } catch (err) {
    if (!(err instanceof Error && err.message.includes('indexer conflict'))) throw err;
  }
}
