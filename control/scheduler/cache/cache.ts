/**
 * The scheduler cache (pkg/scheduler/backend/cache): a NodeInfo per node, fed by the Node
 * and (assigned) Pod informers, plus the pods the scheduler has *assumed* — placed on a
 * node in memory the moment it decided, before the Binding is written and observed — so
 * that the next pod's cycle already sees the previous decision.
 *
 * Life of an assumed pod (cache.go's state machine):
 *
 *   assumePod ──► assumed ──finishBinding──► assumed, binding done ──addPod (informer)──► added
 *                    │                                 │
 *                    └──────────forgetPod──────────────┘ (binding failed: resources given back)
 *
 * `addPod` of an assumed pod confirms it (moving it if the informer says another node);
 * `removePod` drops a pod whatever its state. Assumed pods never expire: a binding either
 * fails (forgetPod) or is observed (addPod), as Kubernetes since 1.29 (no assume TTL).
 *
 * The scheduling cycle runs synchronously between informer events, so it reads the cache
 * directly instead of a snapshot.
 */
import type { Node, Pod } from '../../../api/types.js';
import { NodeInfo, PodInfo, podKey } from '../framework/node-info.js';

interface PodState {
  info: PodInfo;
  nodeName: string;
  assumed: boolean;
  bindingFinished: boolean;
}

export class SchedulerCache {
  private readonly nodes = new Map<string, NodeInfo>();
  /** NodeInfos that have a Node, in the order nodes were added. */
  private readonly list: NodeInfo[] = [];
  private readonly podStates = new Map<string, PodState>();
  private nodeGen = 0;

  /** Every node with a Node object (the scheduling candidates), in a stable order. */
  nodeInfos(): readonly NodeInfo[] {
    return this.list;
  }

  /** Changes whenever a Node is added, updated or removed. */
  get nodesGeneration(): number {
    return this.nodeGen;
  }

  get nodeCount(): number {
    return this.list.length;
  }

  /** The NodeInfo of `name`, including one whose Node is gone but still holds pods. */
  getNodeInfo(name: string): NodeInfo | undefined {
    return this.nodes.get(name);
  }

  addNode(node: Node): void {
    const name = node.metadata.name!;
    let ni = this.nodes.get(name);
    if (!ni) this.nodes.set(name, (ni = new NodeInfo(name)));
    if (!ni.node) this.list.push(ni);
    ni.setNode(node);
    this.nodeGen++;
  }

  updateNode(node: Node): void {
    this.addNode(node);
  }

  removeNode(node: Node): void {
    const name = node.metadata.name!;
    const ni = this.nodes.get(name);
    if (!ni) return;
    const i = this.list.indexOf(ni);
    if (i >= 0) this.list.splice(i, 1);
    ni.node = undefined;
    this.nodeGen++;
    ni.labels = undefined;
    ni.taints = [];
    // Pods still bound to a deleted node keep their NodeInfo until their own deletion arrives.
    if (ni.pods.size === 0) this.nodes.delete(name);
  }

  /** True while `pod` is assumed and not yet confirmed by the informer. */
  isAssumedPod(pod: Pod): boolean {
    return this.podStates.get(podKey(pod))?.assumed === true;
  }

  /** The node a pod is bound or assumed to, if the cache has it. */
  nodeOf(pod: Pod): string | undefined {
    return this.podStates.get(podKey(pod))?.nodeName;
  }

  /**
   * Places `pod` on `nodeName` before the binding is observed; returns the PodInfo used.
   * @throws Error when the pod is already in the cache (assumed or bound).
   */
  assumePod(pod: Pod, nodeName: string, info?: PodInfo): PodInfo {
    const key = podKey(pod);
    if (this.podStates.has(key)) throw new Error(`pod ${key} is in the cache, so can't be assumed`);
    const assumed: Pod = { ...pod, spec: { ...pod.spec, nodeName } };
    const pi = info ? info.withPod(assumed, true) : new PodInfo(assumed);
    this.nodeInfoFor(nodeName).addPod(pi);
    this.podStates.set(key, { info: pi, nodeName, assumed: true, bindingFinished: false });
    return pi;
  }

  /** The binding of an assumed pod was written. */
  finishBinding(pod: Pod): void {
    const st = this.podStates.get(podKey(pod));
    if (st?.assumed) st.bindingFinished = true;
  }

  /** Gives back what an assumed pod took (its binding failed). A pod that is no longer assumed is left alone. */
  forgetPod(pod: Pod): void {
    const key = podKey(pod);
    const st = this.podStates.get(key);
    if (!st?.assumed) return;
    this.removeFromNode(st.nodeName, key);
    this.podStates.delete(key);
  }

  /** An assigned pod appeared (or an assumed one was confirmed). */
  addPod(pod: Pod): void {
    const key = podKey(pod);
    const nodeName = pod.spec.nodeName!;
    const st = this.podStates.get(key);
    if (st) {
      // Confirming an assumed pod, or a duplicate add: make the cache say what the API says.
      if (st.nodeName !== nodeName) this.removeFromNode(st.nodeName, key);
      const pi = st.info.withPod(pod);
      this.nodeInfoFor(nodeName).addPod(pi);
      this.podStates.set(key, { info: pi, nodeName, assumed: false, bindingFinished: true });
      return;
    }
    const pi = new PodInfo(pod);
    this.nodeInfoFor(nodeName).addPod(pi);
    this.podStates.set(key, { info: pi, nodeName, assumed: false, bindingFinished: true });
  }

  /** An assigned pod changed. */
  updatePod(pod: Pod): void {
    this.addPod(pod);
  }

  /** A pod is gone (deleted, or finished: terminal pods hold no resources). */
  removePod(pod: Pod): void {
    const key = podKey(pod);
    const st = this.podStates.get(key);
    if (!st) return;
    this.removeFromNode(st.nodeName, key);
    this.podStates.delete(key);
  }

  /** Number of pods in the cache, assumed ones included. */
  get podCount(): number {
    return this.podStates.size;
  }

  private nodeInfoFor(name: string): NodeInfo {
    let ni = this.nodes.get(name);
    if (!ni) this.nodes.set(name, (ni = new NodeInfo(name)));
    return ni;
  }

  private removeFromNode(nodeName: string, key: string): void {
    const ni = this.nodes.get(nodeName);
    if (!ni) return;
    ni.removePod(key);
    if (!ni.node && ni.pods.size === 0) this.nodes.delete(nodeName);
  }
}
