/**
 * ImageLocality (pkg/scheduler/framework/plugins/imagelocality): prefers nodes that
 * already have the pod's container images (`node.status.images`), weighing each image by
 * its size and by how many nodes have it (an image on every node says nothing). The sum is
 * clamped between 23 MB and 1000 MB per container and scaled to 0..100. Pods are skipped
 * when no node reports images (fake and freshly started nodes).
 */
import type { Node, Pod } from '../../../../api/types.js';
import type { CycleState } from '../../framework/cycle-state.js';
import { MAX_NODE_SCORE } from '../../framework/interface.js';
import type { Handle, PreScorePlugin, ScorePlugin } from '../../framework/interface.js';
import type { NodeInfo } from '../../framework/node-info.js';
import { Status } from '../../framework/status.js';

const SUCCESS = Status.success;
const SKIP = Status.skip;

export const NAME = 'ImageLocality';
const PRE_SCORE_KEY = `PreScore${NAME}`;
const MB = 1024 * 1024;
/** Below this sum the score is 0 (minThreshold). */
export const MIN_THRESHOLD = 23 * MB;
/** Per container, above this sum the score is the maximum (maxContainerThreshold). */
export const MAX_CONTAINER_THRESHOLD = 1000 * MB;

interface NodeImage {
  names?: string[];
  sizeBytes?: number;
}

/** `nginx` → `nginx:latest`; names with a tag or digest are kept (normalizedImageName). */
export function normalizedImageName(name: string): string {
  const lastSlash = name.lastIndexOf('/');
  const tail = name.slice(lastSlash + 1);
  return tail.includes(':') || tail.includes('@') ? name : `${name}:latest`;
}

function imagesOf(node: Node | undefined): NodeImage[] {
  const images = node?.status?.images;
  return Array.isArray(images) ? (images as NodeImage[]) : [];
}

/** The score for a summed, spread-weighted image size and a container count (calculatePriority). */
export function calculatePriority(sumScores: number, numContainers: number): number {
  const maxThreshold = MAX_CONTAINER_THRESHOLD * numContainers;
  const s = Math.min(Math.max(sumScores, MIN_THRESHOLD), maxThreshold);
  return Math.trunc((MAX_NODE_SCORE * (s - MIN_THRESHOLD)) / (maxThreshold - MIN_THRESHOLD));
}

interface ScoreState {
  /** Image name → number of nodes that have it. */
  spread: Map<string, number>;
  total: number;
  wanted: string[];
}

export class ImageLocality implements PreScorePlugin, ScorePlugin {
  readonly name = NAME;

  constructor(private readonly handle: Handle) {}

  preScore(state: CycleState, pod: Pod): Status {
    const wanted = [...(pod.spec.initContainers ?? []), ...pod.spec.containers]
      .map((c) => c.image)
      .filter((i): i is string => !!i)
      .map(normalizedImageName);
    if (wanted.length === 0) return SKIP;
    const spread = this.imageSpread();
    if (spread.size === 0) return SKIP;
    state.write(PRE_SCORE_KEY, {
      spread,
      total: this.handle.nodeInfos().length,
      wanted,
    } satisfies ScoreState);
    return SUCCESS;
  }

  private spreadGeneration = -1;
  private spread = new Map<string, number>();

  /** Image name → number of nodes reporting it; recomputed only when nodes changed. */
  private imageSpread(): Map<string, number> {
    const gen = this.handle.nodesGeneration();
    if (gen === this.spreadGeneration) return this.spread;
    const spread = new Map<string, number>();
    for (const ni of this.handle.nodeInfos()) {
      for (const img of imagesOf(ni.node)) {
        for (const n of img.names ?? []) {
          const name = normalizedImageName(n);
          spread.set(name, (spread.get(name) ?? 0) + 1);
        }
      }
    }
    this.spread = spread;
    this.spreadGeneration = gen;
    return spread;
  }

  score(state: CycleState, pod: Pod, node: NodeInfo): number {
    const s = state.read<ScoreState>(PRE_SCORE_KEY);
    if (!s) return 0;
    const sizes = new Map<string, number>();
    for (const img of imagesOf(node.node)) {
      for (const n of img.names ?? []) sizes.set(normalizedImageName(n), img.sizeBytes ?? 0);
    }
    let sum = 0;
    for (const w of s.wanted) {
      const size = sizes.get(w);
      if (size !== undefined) sum += size * ((s.spread.get(w) ?? 0) / s.total);
    }
    return calculatePriority(sum, pod.spec.containers.length);
  }
}
