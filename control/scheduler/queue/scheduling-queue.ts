/**
 * The scheduling queue (pkg/scheduler/backend/queue/scheduling_queue.go, PriorityQueue):
 * where pods wait for a scheduling attempt. Three parts:
 *
 * - activeQ: pods ready to be tried, highest `spec.priority` first, then first come
 *   (PrioritySort). pop() takes from here and waits while it is empty.
 * - backoffQ: pods that failed recently, held until their backoff expires: 1 s after the
 *   first failed attempt, doubling per attempt up to 10 s (podInitialBackoff /
 *   podMaxBackoff). Checked every second.
 * - unschedulablePods: pods no node could take. They leave it when a cluster event that
 *   one of their rejecting plugins registered for happens (a node is added, an assigned
 *   pod is deleted, ...) — to backoffQ if still backing off, else activeQ — or when they
 *   have waited `podMaxInUnschedulablePodsDuration` (60 s here, checked every 30 s;
 *   Kubernetes has used 5 min since 1.27).
 *
 * A pod that failed while a move request happened during its attempt goes to backoffQ,
 * not unschedulablePods: the event may have made it schedulable (moveRequestCycle). A
 * failure with an Error (no plugin rejected it) always goes to backoffQ.
 *
 * Pods are keyed by uid (PodInfo key). Time comes from the injected Clock.
 */
import type { Clock } from '../../../api/clock.js';
import { realClock } from '../../../api/clock.js';
import type { Pod } from '../../../api/types.js';
import { eventMatches } from '../framework/events.js';
import type { ClusterEvent } from '../framework/events.js';
import { events } from '../framework/events.js';
import { podKey } from '../framework/node-info.js';
import { KeyedHeap } from './heap.js';

/** A pod in the queue with its scheduling history (framework.QueuedPodInfo). */
export interface QueuedPodInfo {
  pod: Pod;
  key: string;
  /** When it last entered the queue (ms since the epoch): activeQ order and backoff start. */
  timestamp: number;
  /** When it first entered the queue. */
  initialAttemptTimestamp: number;
  /** Scheduling attempts so far (incremented by pop()). */
  attempts: number;
  /** Plugins that rejected it in its last attempt; empty after an Error. */
  unschedulablePlugins: Set<string>;
}

/** Settings of a SchedulingQueue. */
export interface SchedulingQueueConfig {
  clock?: Clock;
  /** ms; default 1000. */
  podInitialBackoffMs?: number;
  /** ms; default 10 000. */
  podMaxBackoffMs?: number;
  /** ms an unschedulable pod waits at most before it is retried anyway; default 60 000. */
  podMaxInUnschedulablePodsDurationMs?: number;
  /** Plugin name → events that may make pods it rejected schedulable (Framework.eventsByPlugin). */
  eventsByPlugin?: ReadonlyMap<string, readonly ClusterEvent[]>;
}

/** Where a pod currently is. */
export type QueueName = 'activeQ' | 'backoffQ' | 'unschedulablePods';

export class SchedulingQueue {
  private readonly clock: Clock;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly maxUnschedulableMs: number;
  private readonly eventsByPlugin: ReadonlyMap<string, readonly ClusterEvent[]>;
  private readonly activeQ = new KeyedHeap<QueuedPodInfo>(
    (p) => p.key,
    (a, b) => {
      const pa = a.pod.spec.priority ?? 0;
      const pb = b.pod.spec.priority ?? 0;
      return pa > pb || (pa === pb && a.timestamp < b.timestamp);
    },
  );
  private readonly backoffQ = new KeyedHeap<QueuedPodInfo>(
    (p) => p.key,
    (a, b) => this.backoffExpiry(a) < this.backoffExpiry(b),
  );
  private readonly unschedulablePods = new Map<string, QueuedPodInfo>();
  /** Popped pods whose attempt has not finished (done() not called). */
  private readonly inFlight = new Map<string, QueuedPodInfo>();
  private cycle = 0;
  private moveRequestCycle = -1;
  private closed = false;
  private waiters: ((p: QueuedPodInfo | undefined) => void)[] = [];
  private timers: unknown[] = [];

  constructor(cfg: SchedulingQueueConfig = {}) {
    this.clock = cfg.clock ?? realClock;
    this.initialBackoffMs = cfg.podInitialBackoffMs ?? 1000;
    this.maxBackoffMs = cfg.podMaxBackoffMs ?? 10_000;
    this.maxUnschedulableMs = cfg.podMaxInUnschedulablePodsDurationMs ?? 60_000;
    this.eventsByPlugin = cfg.eventsByPlugin ?? new Map();
    if (!(this.initialBackoffMs > 0) || this.maxBackoffMs < this.initialBackoffMs) {
      throw new Error('SchedulingQueue: need 0 < podInitialBackoffMs <= podMaxBackoffMs');
    }
  }

  /** The number of pops so far: the current scheduling cycle. */
  get schedulingCycle(): number {
    return this.cycle;
  }

  /** Starts the periodic flushes (backoffQ every 1 s, unschedulablePods every 30 s). */
  run(): void {
    const every = (ms: number, fn: () => void) => {
      const tick = () => {
        if (this.closed) return;
        fn();
        this.timers.push(this.clock.setTimeout(tick, ms));
      };
      this.timers.push(this.clock.setTimeout(tick, ms));
    };
    every(1000, () => this.flushBackoffQCompleted());
    every(30_000, () => this.flushUnschedulablePodsLeftover());
  }

  /** Stops the flushes and wakes pop() callers with undefined. */
  close(): void {
    this.closed = true;
    for (const t of this.timers) this.clock.clearTimeout(t);
    this.timers = [];
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w(undefined);
  }

  /** A new pending pod: straight to activeQ (removed from the other queues). */
  add(pod: Pod): void {
    const key = podKey(pod);
    if (this.inFlight.has(key)) return;
    const now = this.clock.now();
    const existing = this.find(key);
    this.backoffQ.delete(key);
    this.unschedulablePods.delete(key);
    const qpi: QueuedPodInfo = existing
      ? { ...existing, pod }
      : {
          pod,
          key,
          timestamp: now,
          initialAttemptTimestamp: now,
          attempts: 0,
          unschedulablePlugins: new Set(),
        };
    this.pushActive(qpi);
  }

  /**
   * A pending pod changed. In activeQ or backoffQ it is updated in place; in
   * unschedulablePods it moves on (to backoffQ or activeQ) when its spec or labels
   * changed, since that may make it schedulable; an in-flight pod is left to its attempt;
   * an unknown pod is added.
   */
  update(oldPod: Pod | undefined, newPod: Pod): void {
    const key = podKey(newPod);
    if (this.inFlight.has(key)) return;
    const active = this.activeQ.get(key);
    if (active) {
      this.activeQ.addOrUpdate({ ...active, pod: newPod });
      return;
    }
    const backoff = this.backoffQ.get(key);
    if (backoff) {
      this.backoffQ.addOrUpdate({ ...backoff, pod: newPod });
      return;
    }
    const unsched = this.unschedulablePods.get(key);
    if (unsched) {
      const updated = { ...unsched, pod: newPod };
      if (oldPod && !podChangedForScheduling(oldPod, newPod)) {
        this.unschedulablePods.set(key, updated);
        return;
      }
      this.unschedulablePods.delete(key);
      if (this.isBackingOff(updated)) this.backoffQ.addOrUpdate(updated);
      else this.pushActive(updated);
      return;
    }
    this.add(newPod);
  }

  /** A pending pod is gone (deleted, or bound by someone else). */
  delete(pod: Pod): void {
    const key = podKey(pod);
    this.activeQ.delete(key);
    this.backoffQ.delete(key);
    this.unschedulablePods.delete(key);
  }

  /**
   * The next pod to schedule; waits while activeQ is empty. Resolves undefined once the
   * queue is closed (or `signal` aborts).
   */
  pop(signal?: AbortSignal): Promise<QueuedPodInfo | undefined> {
    if (this.closed || signal?.aborted) return Promise.resolve(undefined);
    const qpi = this.activeQ.pop();
    if (qpi) return Promise.resolve(this.startAttempt(qpi));
    return new Promise((resolve) => {
      const onAbort = () => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(undefined);
      };
      const waiter = (p: QueuedPodInfo | undefined) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(p);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Pops without waiting; undefined when activeQ is empty. */
  tryPop(): QueuedPodInfo | undefined {
    const qpi = this.closed ? undefined : this.activeQ.pop();
    return qpi ? this.startAttempt(qpi) : undefined;
  }

  /** The attempt of a popped pod is over (whatever its outcome). */
  done(key: string): void {
    this.inFlight.delete(key);
  }

  /**
   * Puts back a pod whose attempt failed in `podSchedulingCycle`, with `pod` its latest
   * state (see the file comment for where it goes). Ignored when the pod is already queued.
   */
  addUnschedulableIfNotPresent(qpi: QueuedPodInfo, podSchedulingCycle: number): QueueName | undefined {
    const key = qpi.key;
    this.inFlight.delete(key);
    if (this.find(key)) return undefined;
    const back: QueuedPodInfo = { ...qpi, timestamp: this.clock.now() };
    if (this.moveRequestCycle >= podSchedulingCycle || back.unschedulablePlugins.size === 0) {
      this.backoffQ.addOrUpdate(back);
      return 'backoffQ';
    }
    this.unschedulablePods.set(key, back);
    return 'unschedulablePods';
  }

  /**
   * A cluster event happened: every unschedulable pod rejected by a plugin that registered
   * for it (or by no known plugin) moves to backoffQ or activeQ.
   */
  moveAllToActiveOrBackoffQueue(event: ClusterEvent): number {
    let moved = 0;
    for (const [key, qpi] of this.unschedulablePods) {
      if (!this.interested(qpi, event)) continue;
      this.unschedulablePods.delete(key);
      if (this.isBackingOff(qpi)) this.backoffQ.addOrUpdate(qpi);
      else this.pushActive(qpi);
      moved++;
    }
    this.moveRequestCycle = this.cycle;
    return moved;
  }

  /** Moves pods whose backoff has expired from backoffQ to activeQ. */
  flushBackoffQCompleted(): void {
    const now = this.clock.now();
    for (;;) {
      const head = this.backoffQ.peek();
      if (!head || this.backoffExpiry(head) > now) return;
      this.backoffQ.pop();
      this.pushActive(head);
    }
  }

  /** Retries pods that have been unschedulable for podMaxInUnschedulablePodsDuration. */
  flushUnschedulablePodsLeftover(): void {
    const now = this.clock.now();
    for (const [key, qpi] of this.unschedulablePods) {
      if (now - qpi.timestamp < this.maxUnschedulableMs) continue;
      this.unschedulablePods.delete(key);
      if (this.isBackingOff(qpi)) this.backoffQ.addOrUpdate(qpi);
      else this.pushActive(qpi);
    }
  }

  /** Which queue holds the pod with `key`, if any. */
  whereIs(key: string): QueueName | undefined {
    if (this.activeQ.has(key)) return 'activeQ';
    if (this.backoffQ.has(key)) return 'backoffQ';
    if (this.unschedulablePods.has(key)) return 'unschedulablePods';
    return undefined;
  }

  /** Counts per queue (for logs and tests). */
  pendingPods(): Record<QueueName, number> {
    return {
      activeQ: this.activeQ.size,
      backoffQ: this.backoffQ.size,
      unschedulablePods: this.unschedulablePods.size,
    };
  }

  /** How long a pod that has had `attempts` attempts backs off: 1 s doubling, capped (calculateBackoffDuration). */
  backoffDuration(attempts: number): number {
    let d = this.initialBackoffMs;
    for (let i = 1; i < attempts; i++) {
      d *= 2;
      if (d >= this.maxBackoffMs) return this.maxBackoffMs;
    }
    return d;
  }

  private backoffExpiry(qpi: QueuedPodInfo): number {
    return qpi.timestamp + this.backoffDuration(qpi.attempts);
  }

  private isBackingOff(qpi: QueuedPodInfo): boolean {
    return qpi.attempts > 0 && this.backoffExpiry(qpi) > this.clock.now();
  }

  private interested(qpi: QueuedPodInfo, event: ClusterEvent): boolean {
    if (event === events.unschedulableTimeout || qpi.unschedulablePlugins.size === 0) return true;
    for (const plugin of qpi.unschedulablePlugins) {
      const registered = this.eventsByPlugin.get(plugin);
      // A plugin that registered nothing cannot tell: any event may help.
      if (!registered) return true;
      for (const r of registered) if (eventMatches(r, event)) return true;
    }
    return false;
  }

  private find(key: string): QueuedPodInfo | undefined {
    return this.activeQ.get(key) ?? this.backoffQ.get(key) ?? this.unschedulablePods.get(key);
  }

  private pushActive(qpi: QueuedPodInfo): void {
    const waiter = this.waiters.shift();
    if (waiter && this.activeQ.size === 0) {
      waiter(this.startAttempt(qpi));
      return;
    }
    if (waiter) this.waiters.unshift(waiter);
    this.activeQ.addOrUpdate(qpi);
    if (this.waiters.length > 0) {
      const w = this.waiters.shift()!;
      w(this.startAttempt(this.activeQ.pop()!));
    }
  }

  private startAttempt(qpi: QueuedPodInfo): QueuedPodInfo {
    this.cycle++;
    const attempt = { ...qpi, attempts: qpi.attempts + 1 };
    this.inFlight.set(qpi.key, attempt);
    return attempt;
  }
}

/**
 * Whether a pending pod's update may change a scheduling decision: anything but its
 * status and bookkeeping metadata (isPodUpdated: resourceVersion, generation,
 * managedFields and status are ignored).
 */
export function podChangedForScheduling(oldPod: Pod, newPod: Pod): boolean {
  const strip = (p: Pod) => {
    const {
      resourceVersion: _rv,
      generation: _g,
      managedFields: _mf,
      ...meta
    } = p.metadata as Record<string, unknown>;
    return JSON.stringify({ meta, spec: p.spec });
  };
  return strip(oldPod) !== strip(newPod);
}
