/**
 * EventRecorder: how components report what they did to an object as core/v1 Events
 * (`kubectl describe` and `kubectl get events` read them), in the manner of client-go's
 * tools/record: recording is fire-and-forget and never fails the caller; a repeat of the
 * same event (same object, type, reason, message, source) increments `count` and
 * `lastTimestamp` of the existing Event instead of creating another one (the
 * EventCorrelator's deduplication).
 *
 * As client-go's broadcaster, events wait in a queue and one writer sends them in order,
 * one request at a time, so that a burst of events (a scheduler binding thousands of pods)
 * lags behind the component's own requests instead of competing with them, and repeats of
 * one event are applied in order. An event that finds `maxQueued` events waiting is
 * dropped and reported to `onError` (client-go drops at 1000; the default here is larger,
 * so that a burst is written late rather than lost).
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
import { Fifo } from '../workqueue/fifo.js';
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
  /** Events that may wait to be written (about 1 KiB each); more are dropped. Default 25 000. */
  maxQueued?: number;
}

/** Given to `onError` for an event dropped because `maxQueued` events were already waiting. */
export class EventQueueFullError extends Error {
  constructor(limit: number) {
    super(`event dropped: ${limit} events are already waiting to be written`);
  }
}

/** Given to `onError` for an event still queued when `flush(timeoutMs)` gave up waiting. */
export class EventFlushTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`event dropped: not written within the ${timeoutMs} ms given to flush`);
  }
}

/** How long a component's shutdown waits for its queued events, ms (then drops the rest). */
export const SHUTDOWN_FLUSH_MS = 2000;

/** What an event is about: an object with apiVersion/kind/metadata, or a ready ObjectReference. */
export type EventTarget = KubeObject | ObjectReference;

export type EventType = 'Normal' | 'Warning';

/** An event waiting in the queue: what event() was told, and when. */
interface Queued {
  key: string;
  ref: ObjectReference;
  namespace: string;
  type: EventType;
  reason: string;
  message: string;
  /** RFC 3339 time of the event() call. */
  at: string;
}

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
  private readonly maxQueued: number;
  /** Events not written yet, oldest first. */
  private readonly queue = new Fifo<Queued>();
  /** The writer's run while the queue is being drained. */
  private draining: Promise<void> | undefined;
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
    this.maxQueued = opts.maxQueued ?? 25_000;
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
    const queued: Queued = {
      key,
      ref,
      namespace,
      type,
      reason,
      message,
      at: rfc3339(new Date(this.clock.now())),
    };
    if (this.queue.length >= this.maxQueued) {
      this.report(new EventQueueFullError(this.maxQueued), described(queued));
      return;
    }
    this.queue.push(queued);
    this.draining ??= this.drain();
  }

  /**
   * Resolves when every event recorded so far (and while waiting) has been written or
   * dropped. With `timeoutMs` (a shutdown: SHUTDOWN_FLUSH_MS), resolves after that many
   * milliseconds at the latest: the events still queued then are dropped and reported to
   * `onError` (EventFlushTimeoutError); a write already sent is left to finish. client-go's
   * broadcaster does not wait for its queue at shutdown at all.
   */
  async flush(timeoutMs?: number): Promise<void> {
    if (timeoutMs === undefined) {
      while (this.draining) await this.draining;
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<true>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs)));
    try {
      while (this.draining) if ((await Promise.race([this.draining, timedOut])) === true) break;
    } finally {
      clearTimeout(timer);
    }
    for (const q of this.queue.takeAll()) this.report(new EventFlushTimeoutError(timeoutMs), described(q));
  }

  /** Writes the queued events one at a time until none is left. */
  private async drain(): Promise<void> {
    try {
      // Started by event(): the first write waits until the caller's turn ends.
      await Promise.resolve();
      for (let next = this.queue.shift(); next; next = this.queue.shift()) {
        try {
          await this.write(next);
        } catch (err) {
          this.report(err, described(next));
        }
      }
    } finally {
      this.draining = undefined;
    }
  }

  /** Tells `onError`; an onError that throws must not stop the writer or reach event()'s caller. */
  private report(err: unknown, event: CoreEvent): void {
    try {
      this.onError(err, event);
    } catch {
      // Nowhere left to report it.
    }
  }

  /** Writes one event: a count update of the Event already written for its key, or a new Event. */
  private async write({ key, ref, namespace, type, reason, message, at: now }: Queued): Promise<void> {
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
          this.report(err, { metadata: { name: seen.name, namespace }, involvedObject: ref });
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
      source: { component: this.component, host: this.host },
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
      this.report(err, event);
    }
  }
}

/** What onError is told of a queued event that was not written: its namespace, object, reason, message and type. */
function described(q: Queued): CoreEvent {
  return {
    metadata: { namespace: q.namespace },
    involvedObject: q.ref,
    reason: q.reason,
    message: q.message,
    type: q.type,
  };
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
