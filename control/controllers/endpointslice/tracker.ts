/**
 * The EndpointSlice controller's expectations (Kubernetes' EndpointSliceTracker): the
 * generation of every slice it last wrote, by Service, and the slices it deleted. With
 * them it knows (a) whether a slice event is an echo of its own write (no resync needed)
 * or someone else's change, and (b) whether the informer cache lags behind its writes, in
 * which case reconciling now would act on stale slices — it throws and retries instead.
 */
import { metaNamespaceKey } from '../../../api/client/store.js';
import type { EndpointSlice, Service } from '../../../api/types.js';
import { LABEL_SERVICE_NAME } from './endpoint.js';

const DELETION_EXPECTED = -1;

function serviceKeyOf(slice: EndpointSlice): string {
  return `${slice.metadata.namespace ?? ''}/${slice.metadata.labels?.[LABEL_SERVICE_NAME] ?? ''}`;
}

/** See the file comment. Slices are identified by uid; generations are metadata.generation. */
export class EndpointSliceTracker {
  /** service key → slice uid → generation written (or DELETION_EXPECTED). */
  private readonly byService = new Map<string, Map<string, number>>();
  /** service key → uid of the Service the tracked writes were for. */
  private readonly serviceUIDs = new Map<string, string>();

  private generations(slice: EndpointSlice, create = false): Map<string, number> | undefined {
    const key = serviceKeyOf(slice);
    let g = this.byService.get(key);
    if (!g && create) this.byService.set(key, (g = new Map()));
    return g;
  }

  /** True when the slice is tracked. */
  has(slice: EndpointSlice): boolean {
    return this.generations(slice)?.has(slice.metadata.uid!) ?? false;
  }

  /** True when the slice is not ours as written: untracked, or newer than what we wrote. */
  shouldSync(slice: EndpointSlice): boolean {
    const g = this.generations(slice)?.get(slice.metadata.uid!);
    return g === undefined || (slice.metadata.generation ?? 0) > g;
  }

  /**
   * True when `cached` (the cache's slices of `svc`) is behind our writes: a slice older
   * than we wrote it, one we deleted still there, or one we wrote missing. Writes tracked
   * for an earlier Service of the same name are forgotten.
   */
  staleSlices(svc: Service, cached: readonly EndpointSlice[]): boolean {
    const key = metaNamespaceKey(svc);
    const uid = svc.metadata.uid ?? '';
    const tracked = this.serviceUIDs.get(key);
    if (tracked && uid && tracked !== uid) this.byService.delete(key);
    this.serviceUIDs.set(key, uid);
    const gens = this.byService.get(key);
    if (!gens) return false;
    const seen = new Set<string>();
    for (const s of cached) {
      seen.add(s.metadata.uid!);
      const g = gens.get(s.metadata.uid!);
      if (g !== undefined && (g === DELETION_EXPECTED || g > (s.metadata.generation ?? 0))) return true;
    }
    for (const [sliceUID, g] of gens) if (g !== DELETION_EXPECTED && !seen.has(sliceUID)) return true;
    return false;
  }

  /** Records a slice as written (the server's answer to a create or update). */
  update(slice: EndpointSlice): void {
    this.generations(slice, true)!.set(slice.metadata.uid!, slice.metadata.generation ?? 0);
  }

  /** Records that we deleted the slice. */
  expectDeletion(slice: EndpointSlice): void {
    this.generations(slice, true)!.set(slice.metadata.uid!, DELETION_EXPECTED);
  }

  /** Forgets the slice; returns true when we expected its deletion (false: someone else deleted it). */
  handleDeletion(slice: EndpointSlice): boolean {
    const gens = this.generations(slice);
    if (!gens) return true;
    const g = gens.get(slice.metadata.uid!);
    gens.delete(slice.metadata.uid!);
    return g === undefined || g === DELETION_EXPECTED;
  }

  /** Forgets a deleted Service. */
  deleteService(key: string): void {
    this.byService.delete(key);
    this.serviceUIDs.delete(key);
  }
}
