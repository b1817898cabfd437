/**
 * EventRecorder: how components report what they did to an object as core/v1 Events
 * (`kubectl describe` and `kubectl get events` read them), in the manner of client-go's
 * tools/record: recording is fire-and-forget and never fails the caller; a repeat of the
 * same event (same object, type, reason, message, source) increments `count` and
 * `lastTimestamp` of the existing Event instead of creating another one (the
 * EventCorrelator's deduplication).
 *
 *   const recorder = new EventRecorder({ client, component: 'replicaset-controller' });
 *   recorder.event(rs, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`);
 */
import type { Clock } from '../clock.js';
import { realClock } from '../clock.js';
import type { KubeObject } from '../object.js';
import { rfc3339 } from '../object.js';
import type { CoreEvent, ObjectReference } from '../types.js';
import { isNotFound } from './errors.js';
import { resources } from './resource.js';
import type { RestClient } from './rest.js';

/** Settings of an EventRecorder. */
export interface EventRecorderOptions {
  client: RestClient;
  /** `source.component` and `reportingComponent`, e.g. `default-scheduler`, `kubelet`. */
  component: string;
  /** `source.host` (the kubelet sets its node name); default none. */
  host?: string;
  clock?: Clock;
  /** Told when writing an event fails (the event is then dropped, as client-go after its retries). */
  onError?: (err: unknown, event: CoreEvent) => void;
  /** How many distinct events to remember for deduplication; default 4096 (least recently used go first). */
  cacheSize?: number;
}

/** What an event is about: an object with apiVersion/kind/metadata, or a ready ObjectReference. */
export type EventTarget = KubeObject | ObjectReference;

export type EventType = 'Normal' | 'Warning';

interface Seen {
  name: string;
  namespace: string;
  count: number;
}

/** Records core/v1 Events for one component (see the file comment). */
export class EventRecorder {
  private readonly client: RestClient;
  private readonly component: string;
  private readonly host: string | undefined;
  private readonly clock: Clock;
  private readonly onError: (err: unknown, event: CoreEvent) => void;
  private readonly cacheSize: number;
  /** Dedup key → the Event written for it; a Map keeps insertion order for LRU eviction. */
  private readonly seen = new Map<string, Seen>();
  /** Per dedup key, the tail of its write chain, so count updates apply in order. */
  private readonly chains = new Map<string, Promise<void>>();
  private readonly pending = new Set<Promise<void>>();
  /** Keeps names unique when two events of one object are created in the same millisecond. */
  private seq = 0;

  constructor(opts: EventRecorderOptions) {
    if (!opts.component) throw new Error('EventRecorder: component is required');
    this.client = opts.client;
    this.component = opts.component;
    this.host = opts.host;
    this.clock = opts.clock ?? realClock;
    this.onError = opts.onError ?? (() => {});
    this.cacheSize = opts.cacheSize ?? 4096;
  }

  /**
   * Records that `reason` happened to `target` (CamelCase reason, human message). Returns
   * at once; the write happens in the background. Objects without a namespace get their
   * events in `default`, as Kubernetes does for Nodes.
   */
  event(target: EventTarget, type: EventType, reason: string, message: string): void {
    const ref = referenceOf(target);
    const namespace = ref.namespace || 'default';
    const key = [ref.kind, namespace, ref.name, ref.uid, ref.fieldPath, type, reason, message].join('\u0000');
    const previous = this.chains.get(key) ?? Promise.resolve();
    const next = previous.then(() => this.write(key, ref, namespace, type, reason, message));
    this.chains.set(key, next);
    this.pending.add(next);
    void next.finally(() => {
      this.pending.delete(next);
      if (this.chains.get(key) === next) this.chains.delete(key);
    });
  }

  /** Resolves when every event recorded so far has been written (or dropped). For tests and shutdown. */
  async flush(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private async write(
    key: string,
    ref: ObjectReference,
    namespace: string,
    type: EventType,
    reason: string,
    message: string,
  ): Promise<void> {
    const now = rfc3339(new Date(this.clock.now()));
    const seen = this.seen.get(key);
    if (seen) {
      this.seen.delete(key);
      this.seen.set(key, seen);
      try {
        await this.client.patch(resources.events, seen.namespace, seen.name, 'merge', {
          count: seen.count + 1,
          lastTimestamp: now,
        });
        seen.count++;
        return;
      } catch (err) {
        // Expired or deleted meanwhile: start a new Event, as the correlator does on a failed patch.
        this.seen.delete(key);
        if (!isNotFound(err)) {
          this.onError(err, { metadata: { name: seen.name, namespace }, involvedObject: ref });
          return;
        }
      }
    }
    const event: CoreEvent = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        // As client-go: the object's name and a hex timestamp in nanoseconds.
        name: `${ref.name ?? 'unknown'}.${(BigInt(this.clock.now()) * 1_000_000n + BigInt(this.seq++ % 1_000_000)).toString(16)}`,
        namespace,
      },
      involvedObject: ref,
      reason,
      message,
      type,
      source: { component: this.component, ...(this.host !== undefined ? { host: this.host } : {}) },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      reportingComponent: this.component,
      reportingInstance: this.host ?? '',
    };
    try {
      const created = await this.client.create<CoreEvent>(resources.events, event);
      this.seen.set(key, { name: created.metadata.name!, namespace, count: 1 });
      while (this.seen.size > this.cacheSize) this.seen.delete(this.seen.keys().next().value!);
    } catch (err) {
      this.onError(err, event);
    }
  }
}

/** The ObjectReference of `target` (apiVersion, kind, namespace, name, uid, resourceVersion). */
export function referenceOf(target: EventTarget): ObjectReference {
  if (!('metadata' in target) || target.metadata === undefined) return { ...(target as ObjectReference) };
  const obj = target as KubeObject;
  const m = obj.metadata!;
  const ref: ObjectReference = {};
  if (obj.apiVersion) ref.apiVersion = obj.apiVersion;
  if (obj.kind) ref.kind = obj.kind;
  if (m.namespace) ref.namespace = m.namespace;
  if (m.name) ref.name = m.name;
  if (m.uid) ref.uid = m.uid;
  if (m.resourceVersion) ref.resourceVersion = m.resourceVersion;
  return ref;
}
