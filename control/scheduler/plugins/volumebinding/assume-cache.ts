/**
 * The scheduler's assume cache of volumes or claims (pkg/scheduler/util/assumecache): the
 * informer's objects, overlaid with the versions the scheduler has decided on but not yet
 * seen back from the API server, so that the next pod's cycle sees a volume as taken the
 * moment this pod's Reserve chose it, and a claim as provisioned on its selected node.
 *
 * An assumed object stands until the informer shows a newer resourceVersion than the one it
 * was assumed over (the write landed, or someone else changed the object: the informer's
 * version wins), or until restore() drops it (Unreserve, a failed PreBind). Reads never
 * modify; objects are the informer's own or the assumed copies, never to be mutated.
 */
import type { KubeObject } from '../../../../api/object.js';
import { resourceVersionNumber } from '../../../../api/storage/volume.js';

/** Where the informer's objects come from. */
export interface AssumeCacheSource<T extends KubeObject> {
  /** The informer's object under `key`, if any. */
  get(key: string): T | undefined;
  /** Every object of the informer. */
  list(): T[];
  /** The key of an object (`name`, or `namespace/name`). */
  keyOf(obj: T): string;
  /** For error messages, e.g. `v1.PersistentVolume`. */
  description: string;
}

/** Informer objects with assumed versions on top; see the file comment. */
export class AssumeCache<T extends KubeObject> {
  private readonly assumed = new Map<string, T>();

  constructor(private readonly source: AssumeCacheSource<T>) {}

  /** The latest object under `key`: the assumed one while the informer has nothing newer. */
  get(key: string): T | undefined {
    const api = this.source.get(key);
    const mine = this.assumed.get(key);
    if (!mine) return api;
    if (!api || resourceVersionNumber(api) > resourceVersionNumber(mine)) {
      this.assumed.delete(key);
      return api;
    }
    return mine;
  }

  /** The informer's object, ignoring assumptions (GetAPIObj). */
  getAPI(key: string): T | undefined {
    return this.source.get(key);
  }

  /** Every object, each as get() returns it. */
  list(): T[] {
    return this.source.list().map((o) => this.get(this.source.keyOf(o)) ?? o);
  }

  /**
   * Makes `obj` the latest version of its key until the informer has a newer one.
   * @throws Error when the key is unknown, or `obj` is older than the latest version.
   */
  assume(obj: T): void {
    const key = this.source.keyOf(obj);
    const current = this.get(key);
    if (!current) throw new Error(`could not find ${this.source.description} "${key}"`);
    const have = resourceVersionNumber(current);
    const want = resourceVersionNumber(obj);
    if (want < have)
      throw new Error(
        `${this.source.description} "${key}" is out of sync (stored: ${have}, assume: ${want})`,
      );
    this.assumed.set(key, obj);
  }

  /** Drops the assumed version of `key` (the informer's is the latest again). */
  restore(key: string): void {
    this.assumed.delete(key);
  }
}
