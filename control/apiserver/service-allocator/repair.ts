/**
 * The repair loop of the Service allocations (kube-apiserver's ipallocator/controller and
 * portallocator/controller Repair): it compares the allocation keys with the Services that
 * use them, releases what was left behind by a crash between a reservation and the Service
 * write (or between a delete and the release), and records what Services use without a key.
 */
import { errorMessage } from '../../../api/errors.js';
import type { KubeObject } from '../../../api/object.js';
import { isStorageError } from '../../storage/errors.js';
import type { Store } from '../../storage/store.js';
import { SERVICE_IPS_PREFIX, SERVICE_NODE_PORTS_PREFIX, holderOf, ownerOf } from './range.js';
import type { KeyRange, Owner } from './range.js';
import { allocatedItems } from './spec.js';

/** What a repair run reads and writes, and where it reports. */
export interface AllocationRepairConfig {
  store: Store;
  ips: KeyRange;
  ports: KeyRange;
  logger: {
    warn(message: string, meta?: Record<string, unknown>): void;
    info?(message: string, meta?: Record<string, unknown>): void;
  };
}

/**
 * Repairs the allocations of one API server's ServiceAllocator: repair() is one run,
 * start()/stop() the periodic loop. Keeps, between runs, the keys seen unused.
 */
export class AllocationRepair {
  private readonly store: Store;
  private readonly ips: KeyRange;
  private readonly ports: KeyRange;
  private readonly logger: AllocationRepairConfig['logger'];
  /** Allocation keys seen unused in the last repair runs: key → its modRevision and the run count. */
  private readonly leaks = new Map<string, { modRevision: number; runs: number }>();
  private repairTimer: NodeJS.Timeout | undefined;
  private repairing: Promise<unknown> | undefined;

  constructor(cfg: AllocationRepairConfig) {
    this.store = cfg.store;
    this.ips = cfg.ips;
    this.ports = cfg.ports;
    this.logger = cfg.logger;
  }

  /**
   * One run of the repair controllers (kube-apiserver's ipallocator/controller Repair and
   * portallocator/controller Repair, every 3 minutes there), over one consistent snapshot:
   * the Services and both allocation prefixes are read at the same store revision.
   * - An allocation key no Service uses is released after it has been seen so, unchanged,
   *   in `leakRuns` runs in a row (Kubernetes' numRepairsBeforeLeakCleanup, 3), so that a
   *   reservation whose Service write is still in flight is never taken back. The delete
   *   is guarded by the key's revision.
   * - A Service's address or port without a key gets one (recorded for that Service); one
   *   outside the configured range, or also used by another Service, is only reported.
   * - A key recorded for another owner than the Service using the item is re-recorded.
   * @returns what was released, recorded and reported, as `<ip>` / `<port>` strings.
   * @throws StorageError from the store reads (writes that lose a race are skipped).
   */
  async repair(leakRuns = 3): Promise<RepairResult> {
    const services = await this.store.list('/registry/services/');
    const at = { revision: services.revision };
    const [ipKeys, portKeys] = await Promise.all([
      this.store.list(SERVICE_IPS_PREFIX, at),
      this.store.list(SERVICE_NODE_PORTS_PREFIX, at),
    ]);
    const result: RepairResult = { released: [], recorded: [], outOfRange: [], duplicates: [] };
    // Every item some Service uses: store key → its item, range and owner.
    const wanted = new Map<string, { item: string; range: KeyRange; owner: Owner }>();
    for (const kv of services.items) {
      let svc: KubeObject;
      try {
        svc = JSON.parse(kv.value) as KubeObject;
      } catch {
        continue;
      }
      const owner = ownerOf(svc);
      const { ips, ports } = allocatedItems(svc);
      const uses = [
        ...ips.map((item) => ({ item, range: this.ips })),
        ...ports.map((item) => ({ item, range: this.ports })),
      ];
      for (const { item, range } of uses) {
        if (!range.contains(item)) {
          result.outOfRange.push(item);
          this.logger.warn('service allocator repair: a Service uses an item outside the range', {
            service: `${owner.namespace}/${owner.name}`,
            item,
          });
          continue;
        }
        const key = range.keyOf(item);
        const other = wanted.get(key);
        if (other && other.owner.uid !== owner.uid) {
          result.duplicates.push(item);
          this.logger.warn('service allocator repair: an item is used by two Services', {
            item,
            services: [`${other.owner.namespace}/${other.owner.name}`, `${owner.namespace}/${owner.name}`],
          });
          continue;
        }
        wanted.set(key, { item, range, owner });
      }
    }
    const seen = new Set<string>();
    for (const kv of [...ipKeys.items, ...portKeys.items]) {
      seen.add(kv.key);
      const use = wanted.get(kv.key);
      if (use) {
        this.leaks.delete(kv.key);
        if (holderOf(kv.value).uid !== use.owner.uid) {
          await ignoreRaces(this.store.update(kv.key, JSON.stringify(use.owner), kv.modRevision));
        }
        continue;
      }
      const before = this.leaks.get(kv.key);
      const runs = before && before.modRevision === kv.modRevision ? before.runs + 1 : 1;
      if (runs < leakRuns) {
        this.leaks.set(kv.key, { modRevision: kv.modRevision, runs });
        continue;
      }
      this.leaks.delete(kv.key);
      if (await ignoreRaces(this.store.delete(kv.key, kv.modRevision))) {
        const item = kv.key.slice(kv.key.lastIndexOf('/') + 1);
        result.released.push(item);
        this.logger.info?.('service allocator repair: released an item no Service uses', {
          item,
          heldBy: kv.value,
        });
      }
    }
    // Forget candidates whose key is gone.
    for (const key of this.leaks.keys()) if (!seen.has(key)) this.leaks.delete(key);
    for (const [key, use] of wanted) {
      if (seen.has(key)) continue;
      if (await ignoreRaces(this.store.create(key, JSON.stringify(use.owner)))) {
        result.recorded.push(use.item);
        this.logger.warn('service allocator repair: recorded an item a Service used without allocation', {
          service: `${use.owner.namespace}/${use.owner.name}`,
          item: use.item,
        });
      }
    }
    return result;
  }

  /**
   * Runs repair() now and then every `intervalMs` (kube-apiserver: 3 minutes) until
   * stop(); failures are logged and retried at the next interval.
   */
  start(intervalMs: number): void {
    if (this.repairTimer || intervalMs <= 0) return;
    const tick = () => {
      this.repairing = this.repair()
        .catch((err: unknown) =>
          this.logger.warn('service allocator repair failed', {
            error: errorMessage(err),
          }),
        )
        .finally(() => {
          this.repairing = undefined;
        });
    };
    this.repairTimer = setInterval(tick, intervalMs);
    this.repairTimer.unref();
    tick();
  }

  /** Stops the repair loop; resolves when a run in progress has ended. */
  async stop(): Promise<void> {
    clearInterval(this.repairTimer);
    this.repairTimer = undefined;
    await this.repairing;
  }
}

/** What one repair() run did (items as text: addresses and ports). */
export interface RepairResult {
  /** Keys no Service used in enough runs in a row, deleted. */
  released: string[];
  /** Items Services used without a key, now recorded. */
  recorded: string[];
  /** Items Services use outside the configured ranges (reported only). */
  outOfRange: string[];
  /** Items used by more than one Service (reported only). */
  duplicates: string[];
}

/** Resolves true when `write` succeeded, false when it lost a race (the key changed, appeared or went). */
async function ignoreRaces(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (err) {
    if (
      isStorageError(err, 'KeyExists') ||
      isStorageError(err, 'KeyNotFound') ||
      isStorageError(err, 'Conflict')
    )
      return false;
    throw err;
  }
}
