/**
 * The values the watch cache hands around: an object decoded once and serialized at most
 * once (`CachedObject`), one change of the cache (`CacheEvent`), and the watch events
 * API watchers receive (`WatchEvent`, the wire form of metav1.WatchEvent).
 *
 * Why objects carry their serialization: one change is sent to every watcher of the
 * resource — a thousand, for pods on a busy cluster. Encoding it once and writing the same
 * string to every response is what kube-apiserver's cachingObject does; here the first
 * `json()` call encodes and the others reuse it.
 *
 * Every object reachable from these values is shared by all watchers and by the cache's
 * own state: nobody may mutate it. Copy before changing anything.
 */
import type { KubeObject } from '../../../api/object.js';
import type { Status } from '../status.js';
import { stripManagedFields } from '../../../api/client/transform.js';
import { HistoryCodec, type PackedJson } from './history-codec.js';

/** The `type` of a watch event, as Kubernetes sends it. */
export const WatchEventType = {
  Added: 'ADDED',
  Modified: 'MODIFIED',
  Deleted: 'DELETED',
  Bookmark: 'BOOKMARK',
  Error: 'ERROR',
} as const;
export type WatchEventType = (typeof WatchEventType)[keyof typeof WatchEventType];

/**
 * One event on a watch: `{"type": ..., "object": ...}` on the wire. `object` is shared
 * and must not be mutated. `json()` is the event encoded once for all watchers;
 * `line()` is the same with the trailing newline of a newline-delimited JSON stream.
 */
export interface WatchEvent {
  readonly type: WatchEventType;
  readonly object: KubeObject;
  /** The object with everything its JSON has (managedFields too, which `object` may lack). */
  full(): KubeObject;
  json(): string;
  line(): string;
}

/** The annotation on the bookmark that ends the initial events of a watch with sendInitialEvents. */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/** A watch event over a shared, lazily encoded object. */
class SharedWatchEvent implements WatchEvent {
  private encoded: string | undefined;
  private encodedLine: string | undefined;

  constructor(
    readonly type: WatchEventType,
    private readonly source: { readonly object: KubeObject; json(): string; full(): KubeObject },
  ) {}

  get object(): KubeObject {
    return this.source.object;
  }

  full(): KubeObject {
    return this.source.full();
  }

  json(): string {
    return (this.encoded ??= `{"type":"${this.type}","object":${this.source.json()}}`);
  }

  line(): string {
    return (this.encodedLine ??= this.json() + '\n');
  }
}

/**
 * One object at one revision, as the cache keeps it: decoded once, its JSON encoded on
 * first use, its ADDED and MODIFIED events built on first use. `revision` is the object's
 * modRevision (its `metadata.resourceVersion`).
 *
 * Once a newer version replaced it (or a delete removed it) and that change has been
 * dispatched, the cache retires it: only its JSON stays, for the watchers that replay the
 * history from an older revision, which are few; `object` then decodes that JSON again on
 * every read. A decoded pod takes some three times its JSON in V8's heap, and the history
 * holds about 75 s of changes (kube-apiserver's eventFreshDuration): at 2,000 pods it was
 * most of the control process's live heap. Given a HistoryCodec, retire() also deflates
 * that JSON against the codec's dictionary (history-codec.ts: 4.1 KB of a pod to some
 * 200 B), and `json()` inflates it again on every read.
 */
export class CachedObject {
  private decoded: KubeObject | undefined;
  private encoded: string | undefined;
  /** The JSON, deflated, once retired with a codec (then `encoded` is undefined). */
  private packed: PackedJson | undefined;
  /** Set by hold(): a retired object keeps what it decodes until retire() is called again. */
  private held = false;
  /** The decoded object has no managedFields, which its JSON has (see decoded()). */
  private stripped = false;
  private added: WatchEvent | undefined;
  private modified: WatchEvent | undefined;

  constructor(
    readonly key: string,
    /** The namespace part of the key; undefined for cluster-scoped objects. */
    readonly namespace: string | undefined,
    readonly revision: number,
    object: KubeObject,
  ) {
    this.decoded = object;
  }

  /**
   * The cache's form of a decoded object: one with metadata.managedFields is encoded now
   * and kept decoded without them (its JSON, what watchers are sent, keeps them). Half of
   * a decoded pod's heap is its managedFields (5 of 10 KB at 2,000 pods), and nothing that
   * reads the cache's objects uses them: selectors, authorizers and the in-process
   * informers, which drop them anyway (stripManagedFields); `full()` has them.
   */
  static decoded(
    key: string,
    namespace: string | undefined,
    revision: number,
    object: KubeObject,
  ): CachedObject {
    const cached = new CachedObject(key, namespace, revision, object);
    if (object.metadata?.managedFields !== undefined) {
      cached.json();
      cached.decoded = stripManagedFields(object);
      cached.stripped = true;
    }
    return cached;
  }

  /** The object with everything its JSON has (managedFields too); shared unless decoded again. */
  full(): KubeObject {
    return this.stripped || this.decoded === undefined
      ? (JSON.parse(this.json()) as KubeObject)
      : this.decoded;
  }

  /** The object (shared: do not mutate); a new copy on each read once retired. */
  get object(): KubeObject {
    if (this.decoded !== undefined) return this.decoded;
    const obj = JSON.parse(this.json()) as KubeObject;
    if (this.held) {
      this.decoded = this.stripped ? stripManagedFields(obj) : obj;
    }
    return obj;
  }

  /** True once retire() has dropped the decoded object (and no hold() brought it back). */
  get retired(): boolean {
    return this.decoded === undefined;
  }

  /**
   * A retired object keeps what `object` decodes next until retire() (the cache holds the
   * previous version so while a change is dispatched: every watcher's filter reads it).
   * Nothing to do for an object not retired.
   */
  hold(): void {
    if (this.decoded === undefined) this.held = true;
  }

  /** The object's JSON (with managedFields); inflated again on each call once packed. */
  json(): string {
    if (this.encoded !== undefined) return this.encoded;
    if (this.packed !== undefined) return HistoryCodec.unpack(this.packed);
    return (this.encoded = JSON.stringify(this.decoded));
  }

  /** True once retire() packed the JSON (see the top of this class). */
  get packedJson(): boolean {
    return this.packed !== undefined;
  }

  /**
   * The ADDED or MODIFIED event carrying this object. `share` (a live dispatch, released
   * after it by releaseEvents()): one event for every watcher; otherwise (a replay, the
   * initial events of a watch) a new one, so that no encoded line stays behind on the
   * object until it changes. Never shared once retired.
   */
  event(type: 'ADDED' | 'MODIFIED', share = false): WatchEvent {
    if (this.retired || !share) return new SharedWatchEvent(type, this);
    if (type === 'ADDED') return (this.added ??= new SharedWatchEvent('ADDED', this));
    return (this.modified ??= new SharedWatchEvent('MODIFIED', this));
  }

  /**
   * Forgets the shared events (their lines are a second copy of the JSON once written to
   * a socket), to be made again if asked: once a change has been dispatched to the live
   * watchers, only a replay needs them. Writes in flight keep the strings they hold.
   */
  releaseEvents(): void {
    this.added = undefined;
    this.modified = undefined;
  }

  /**
   * Keeps only the JSON (encoding it now if no watcher had asked), packed with `codec`
   * when one is given and the JSON is not short (HistoryCodec.pack): see the top of this
   * class. Again on a retired object (after a hold()): drops what it decoded.
   */
  retire(codec?: HistoryCodec): void {
    if (this.packed === undefined) {
      const json = this.json();
      const packed = codec?.pack(json);
      if (packed !== undefined) {
        this.packed = packed;
        this.encoded = undefined;
      }
    }
    this.decoded = undefined;
    this.held = false;
    this.releaseEvents();
  }
}

/**
 * One change the cache applied: a PUT (create or update) with the new object and the one it
 * replaced, or a DELETE with the object as it was. `revision` is the change's revision.
 */
export class CacheEvent {
  private deletedEvent: WatchEvent | undefined;

  constructor(
    readonly type: 'PUT' | 'DELETE',
    readonly key: string,
    readonly namespace: string | undefined,
    readonly revision: number,
    /** The object after a PUT; undefined for a DELETE. */
    readonly current: CachedObject | undefined,
    /** The object before the change; undefined for a create. Always set for a DELETE. */
    readonly previous: CachedObject | undefined,
    /** Clock time (ms) at which the cache applied the change, for sizing its history. */
    readonly recordTime: number,
  ) {}

  /**
   * The DELETED event for watchers that saw the previous object and no longer see it:
   * the previous object with `metadata.resourceVersion` set to this change's revision, as
   * kube-apiserver reports deletions (and objects that stop matching a selector).
   * `share`: as CachedObject.event (a live dispatch shares one event).
   * @throws Error when the event has no previous object (a create).
   */
  deleted(share = false): WatchEvent {
    if (this.deletedEvent) return this.deletedEvent;
    const prev = this.previous;
    if (!prev) throw new Error(`watch cache: no previous object for ${this.key} at ${this.revision}`);
    // The whole last state, managedFields included, as kube-apiserver sends it.
    const object = withResourceVersion(prev.full(), this.revision);
    const event = new SharedWatchEvent(
      'DELETED',
      new CachedObject(prev.key, prev.namespace, this.revision, object),
    );
    // Shared while the change is dispatched; a replay (the previous object retired) makes its own.
    if (share && !prev.retired) this.deletedEvent = event;
    return event;
  }

  /**
   * Called once the change has been dispatched to the live watchers: the version it
   * replaced (or removed) is history now and is retired (packed with `codec` when given),
   * and the events made for the dispatch are let go (see CachedObject).
   */
  dispatched(codec?: HistoryCodec): void {
    this.previous?.retire(codec);
    this.current?.releaseEvents();
    this.deletedEvent = undefined;
  }
}

/** A shallow copy of `obj` whose metadata.resourceVersion is `revision` (the original is shared). */
export function withResourceVersion(obj: KubeObject, revision: number): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(revision) } };
}

/**
 * A BOOKMARK event: an object of the watched kind with only `metadata.resourceVersion`
 * set (and the initial-events-end annotation when it closes the initial events of a
 * watch with sendInitialEvents), as kube-apiserver sends them.
 */
export function bookmarkEvent(
  revision: number,
  typeMeta: { apiVersion: string; kind: string } | undefined,
  initialEventsEnd = false,
): WatchEvent {
  const object: KubeObject = {
    ...(typeMeta ? { apiVersion: typeMeta.apiVersion, kind: typeMeta.kind } : {}),
    metadata: initialEventsEnd
      ? { resourceVersion: String(revision), annotations: { [INITIAL_EVENTS_END_ANNOTATION]: 'true' } }
      : { resourceVersion: String(revision) },
  };
  return new SharedWatchEvent('BOOKMARK', new CachedObject('', undefined, revision, object));
}

/** An ERROR event whose object is a metav1.Status (410 Expired, 504 Timeout, ...). */
export function errorEvent(status: Status): WatchEvent {
  const object = status as unknown as KubeObject;
  return new SharedWatchEvent('ERROR', new CachedObject('', undefined, 0, object));
}
