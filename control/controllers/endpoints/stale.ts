/**
 * Knows when the Endpoints informer cache is behind this controller's own writes
 * (Kubernetes' staleEndpointsTracker, plus the same idea for creates): acting on such a
 * cache would overwrite a newer object (409 at best) or try to create one that exists.
 * The controller then throws, and the key is retried once the cache has caught up.
 */
import type { Clock } from '../../../api/clock.js';
import { realClock } from '../../../api/clock.js';
import { metaNamespaceKey } from '../../../api/client/store.js';
import type { Endpoints } from '../../../api/types.js';

/** How long a create is waited for before the cache is trusted again (as ControllerExpectations' 5 min). */
export const CREATE_EXPECTATION_TTL_MS = 5 * 60_000;

/** See the file comment. Keys are `namespace/name` of the Endpoints (= of the Service). */
export class StaleEndpointsTracker {
  /** key → resourceVersion that an update of ours replaced. */
  private readonly staleVersions = new Map<string, string>();
  /** key → clock ms at which we created it (not yet seen in the cache). */
  private readonly creates = new Map<string, number>();

  constructor(private readonly clock: Clock = realClock) {}

  /** Records that an update replaced `old`: a cache still holding its resourceVersion is stale. */
  markStale(key: string, old: Endpoints): void {
    if (old.metadata.resourceVersion) this.staleVersions.set(key, old.metadata.resourceVersion);
  }

  /** Records a create: until the cache shows the object (or the TTL passes), a cache without it is stale. */
  expectCreate(key: string): void {
    this.creates.set(key, this.clock.now());
  }

  /** The informer saw `ep` (add or update): a pending create of it is fulfilled. */
  observed(ep: Endpoints): void {
    this.creates.delete(metaNamespaceKey(ep));
  }

  /** True when the cached Endpoints of `key` (undefined: none cached) predates our last write. */
  isStale(key: string, cached: Endpoints | undefined): boolean {
    if (cached) return this.staleVersions.get(key) === cached.metadata.resourceVersion;
    const at = this.creates.get(key);
    if (at === undefined) return false;
    if (this.clock.now() - at > CREATE_EXPECTATION_TTL_MS) {
      this.creates.delete(key);
      return false;
    }
    return true;
  }

  /** Forgets a Service's state (it was deleted). */
  delete(key: string): void {
    this.staleVersions.delete(key);
    this.creates.delete(key);
  }
}
