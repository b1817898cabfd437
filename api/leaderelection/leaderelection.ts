/**
 * Leader election on a `coordination.k8s.io/v1` Lease, in the manner of client-go's
 * `tools/leaderelection` with a LeaseLock, so that of several control processes only one
 * runs the scheduler and the controllers at a time.
 *
 * Contract (as client-go):
 * - A candidate acquires the Lease when it does not exist (create), when nobody holds it
 *   (`holderIdentity` empty, as after a release), when it already names this candidate,
 *   or when it has expired. Expiry is judged by the candidate's own clock only: the Lease
 *   is expired once `leaseDurationSeconds` have passed since this candidate last *saw the
 *   record change*. The remote `renewTime` is never compared with the local clock, so
 *   clock skew between hosts does not matter (only skew rate does).
 * - Every write carries the `resourceVersion` last read; a 409 means another candidate
 *   wrote first, and this attempt simply fails.
 * - The leader renews every `retryPeriod`; if a renewal has not succeeded within
 *   `renewDeadline` (retrying every `retryPeriod`), it stops leading. Because
 *   renewDeadline < leaseDuration, it stops before any other candidate may take over.
 * - Taking the Lease from another holder increments `leaseTransitions`; renewing keeps it
 *   and `acquireTime`.
 * - With `releaseOnCancel`, stopping writes `holderIdentity: ""` and
 *   `leaseDurationSeconds: 1` so that another candidate takes over at its next retry
 *   instead of waiting out the lease.
 *
 * Like client-go this is not fencing: a leader that is paused longer than the lease can
 * briefly overlap with its successor.
 */
import type { Clock } from '../clock.js';
import { realClock } from '../clock.js';
import type { Logger } from '../log.js';
import type { Lease, LeaseClient, LeaseSpec } from './lease.js';
import { formatMicroTime, isConflict, isNotFound } from './lease.js';

/** client-go's JitterFactor: acquire retries wait retryPeriod × [1, 2.2). */
export const JITTER_FACTOR = 1.2;
/** `--leader-elect-lease-duration` of kube-controller-manager and kube-scheduler. */
export const DEFAULT_LEASE_DURATION_SECONDS = 15;
/** `--leader-elect-renew-deadline`. */
export const DEFAULT_RENEW_DEADLINE_SECONDS = 10;
/** `--leader-elect-retry-period`. */
export const DEFAULT_RETRY_PERIOD_SECONDS = 2;

/** What the elector tells its owner. Errors thrown by callbacks are logged and ignored. */
export interface LeaderCallbacks {
  /**
   * Called (asynchronously) once this candidate leads. `signal` aborts when leadership
   * ends — lost renewal or run() stopped; the work must stop then. If it returns a
   * promise, a release (releaseOnCancel) waits for it to settle first.
   */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /**
   * Called once when run() finishes — as client-go, also when this candidate never led
   * (run() was stopped while still acquiring).
   */
  onStoppedLeading(): void;
  /**
   * Called (asynchronously) with the holder's identity whenever the observed holder
   * changes to a non-empty identity other than the last one reported, this candidate
   * included; the first observed leader is reported too.
   */
  onNewLeader?(identity: string): void;
}

/** Where the elector logs: the two levels it uses of the house Logger. */
export type ElectionLogger = Pick<Logger, 'info' | 'warn'>;

/** Configuration of a LeaderElector. Durations in seconds, as the `--leader-elect-*` flags. */
export interface LeaderElectionConfig {
  /** The Lease I/O (httpLeaseClient(), or one over the REST client). */
  client: LeaseClient;
  /** Namespace and name of the Lease (kube-controller-manager: `kube-system/kube-controller-manager`). */
  namespace: string;
  name: string;
  /** This candidate's identity, unique among candidates (e.g. `hostname_uuid`); non-empty. */
  identity: string;
  /** Whole seconds (>= 1) that others wait after the last change they saw before taking over. Default 15. */
  leaseDurationSeconds?: number;
  /** Seconds the leader keeps retrying a renewal before it stops leading; < leaseDuration. Default 10. */
  renewDeadlineSeconds?: number;
  /** Seconds between attempts (acquire retries are jittered ×[1, 2.2)); renewDeadline > 1.2 × retryPeriod. Default 2. */
  retryPeriodSeconds?: number;
  /**
   * Release the Lease when run() stops (default false, as client-go). Only safe when the
   * leader's work has finished by then; the elector waits for onStartedLeading's promise.
   */
  releaseOnCancel?: boolean;
  callbacks: LeaderCallbacks;
  /** Time source (default: the real clock). */
  clock?: Clock;
  /** Random numbers in [0, 1) for the retry jitter (default Math.random). */
  random?: () => number;
  logger?: ElectionLogger;
}

/** The part of a Lease's spec that the election reads and writes (client-go `LeaderElectionRecord`). */
interface ElectionRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  /** MicroTime strings, kept as read so that a renewal preserves acquireTime exactly. */
  acquireTime: string;
  renewTime: string;
  leaseTransitions: number;
}

const EMPTY_RECORD: ElectionRecord = {
  holderIdentity: '',
  leaseDurationSeconds: 0,
  acquireTime: '',
  renewTime: '',
  leaseTransitions: 0,
};

const silentLogger: ElectionLogger = { info: () => {}, warn: () => {} };

/**
 * One candidate in a leader election. Construct it from a LeaderElectionConfig (validated
 * as client-go's NewLeaderElector: throws on a bad config), then `await run(signal)`.
 */
export class LeaderElector {
  readonly identity: string;
  private readonly client: LeaseClient;
  private readonly namespace: string;
  private readonly name: string;
  private readonly leaseDurationSeconds: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly releaseOnCancel: boolean;
  private readonly callbacks: LeaderCallbacks;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly logger: ElectionLogger;

  /** The record as last read or written, and when (local clock) it last changed. */
  private observed: ElectionRecord = EMPTY_RECORD;
  private observedRaw = '';
  private observedTime = 0;
  /** The Lease as last read or written: the base (and resourceVersion) of the next update. */
  private lease: Lease | undefined;
  private reportedLeader = '';
  private running = false;

  constructor(cfg: LeaderElectionConfig) {
    const leaseDurationSeconds = cfg.leaseDurationSeconds ?? DEFAULT_LEASE_DURATION_SECONDS;
    const renewDeadlineSeconds = cfg.renewDeadlineSeconds ?? DEFAULT_RENEW_DEADLINE_SECONDS;
    const retryPeriodSeconds = cfg.retryPeriodSeconds ?? DEFAULT_RETRY_PERIOD_SECONDS;
    const fail = (why: string): never => {
      throw new Error(`leader election for ${cfg.namespace}/${cfg.name}: ${why}`);
    };
    if (!cfg.client) fail('client is required');
    if (!cfg.namespace || !cfg.name) fail('namespace and name of the Lease are required');
    if (!cfg.identity) fail('identity must not be empty');
    if (typeof cfg.callbacks?.onStartedLeading !== 'function') fail('onStartedLeading is required');
    if (typeof cfg.callbacks?.onStoppedLeading !== 'function') fail('onStoppedLeading is required');
    if (!Number.isInteger(leaseDurationSeconds) || leaseDurationSeconds < 1) {
      fail(`leaseDurationSeconds must be a whole number >= 1, got ${leaseDurationSeconds}`);
    }
    if (!(renewDeadlineSeconds > 0) || !(retryPeriodSeconds > 0)) {
      fail('renewDeadlineSeconds and retryPeriodSeconds must be greater than zero');
    }
    if (leaseDurationSeconds <= renewDeadlineSeconds) {
      fail('leaseDurationSeconds must be greater than renewDeadlineSeconds');
    }
    if (renewDeadlineSeconds <= JITTER_FACTOR * retryPeriodSeconds) {
      fail(`renewDeadlineSeconds must be greater than retryPeriodSeconds × ${JITTER_FACTOR}`);
    }
    this.client = cfg.client;
    this.namespace = cfg.namespace;
    this.name = cfg.name;
    this.identity = cfg.identity;
    this.leaseDurationSeconds = leaseDurationSeconds;
    this.renewDeadlineMs = renewDeadlineSeconds * 1000;
    this.retryPeriodMs = retryPeriodSeconds * 1000;
    this.releaseOnCancel = cfg.releaseOnCancel ?? false;
    this.callbacks = cfg.callbacks;
    this.clock = cfg.clock ?? realClock;
    this.random = cfg.random ?? Math.random;
    this.logger = cfg.logger ?? silentLogger;
  }

  /** The holder last observed (empty when none yet, or the Lease was released). */
  getLeader(): string {
    return this.observed.holderIdentity;
  }

  /** Whether run() is active and the record last observed names this candidate as holder. */
  isLeader(): boolean {
    return this.running && this.observed.holderIdentity === this.identity;
  }

  /**
   * Campaigns until this candidate leads, then leads until renewal fails or `signal` aborts.
   * Resolves when it is over (after the release, with releaseOnCancel, and after
   * onStoppedLeading). API errors never reject it: they are retried. Rejects if already running.
   * To campaign again after losing, call run() again.
   */
  async run(signal: AbortSignal = new AbortController().signal): Promise<void> {
    if (this.running) throw new Error(`leader election ${this.describe()}: run() is already active`);
    this.running = true;
    try {
      if (!(await this.acquire(signal))) return;
      const leading = new AbortController();
      const endLeading = () => leading.abort();
      signal.addEventListener('abort', endLeading, { once: true });
      let work: Promise<void>;
      try {
        work = Promise.resolve()
          .then(() => this.callbacks.onStartedLeading(leading.signal))
          .catch((err: unknown) =>
            this.logger.warn('onStartedLeading failed', this.meta({ error: String(err) })),
          );
        await this.renew(signal);
      } finally {
        signal.removeEventListener('abort', endLeading);
        leading.abort();
      }
      if (this.releaseOnCancel) {
        await work;
        await this.release();
      }
    } finally {
      this.running = false;
      try {
        this.callbacks.onStoppedLeading();
      } catch (err) {
        this.logger.warn('onStoppedLeading failed', this.meta({ error: String(err) }));
      }
    }
  }

  /** Retries every retryPeriod (jittered) until the Lease is ours; false if `signal` aborted first. */
  private async acquire(signal: AbortSignal): Promise<boolean> {
    this.logger.info('attempting to acquire leader lease', this.meta());
    while (!signal.aborted) {
      const ok = await this.tryAcquireOrRenew(signal);
      this.maybeReportTransition();
      if (ok && !signal.aborted) {
        this.logger.info('acquired leader lease', this.meta());
        return true;
      }
      await this.clock.sleep(this.retryPeriodMs * (1 + this.random() * JITTER_FACTOR), signal);
    }
    return false;
  }

  /**
   * Renews every retryPeriod. Each renewal is a round that retries every retryPeriod
   * until it succeeds or renewDeadline has passed since the round began (a hanging request
   * counts against it too); a failed round ends leadership. Returns when leadership is
   * lost or `signal` aborts.
   */
  private async renew(signal: AbortSignal): Promise<void> {
    for (;;) {
      const round = new AbortController();
      const timer = this.clock.setTimeout(() => round.abort(), this.renewDeadlineMs);
      const stop = () => round.abort();
      signal.addEventListener('abort', stop, { once: true });
      let ok = false;
      try {
        while (!round.signal.aborted) {
          ok = await this.tryAcquireOrRenew(round.signal);
          if (ok) break;
          await this.clock.sleep(this.retryPeriodMs, round.signal);
        }
      } finally {
        this.clock.clearTimeout(timer);
        signal.removeEventListener('abort', stop);
      }
      this.maybeReportTransition();
      if (signal.aborted) return;
      if (!ok) {
        this.logger.warn('failed to renew leader lease within the renew deadline', this.meta());
        return;
      }
      await this.clock.sleep(this.retryPeriodMs, signal);
      if (signal.aborted) return;
    }
  }

  /**
   * One attempt (client-go tryAcquireOrRenew): true when the Lease now names this
   * candidate with a fresh renewTime. Never throws. Once `signal` has aborted, results
   * that arrive are discarded, so a late answer cannot make a stopped elector a leader.
   */
  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const now = this.clock.now();
    const desired: ElectionRecord = {
      holderIdentity: this.identity,
      leaseDurationSeconds: this.leaseDurationSeconds,
      acquireTime: formatMicroTime(now),
      renewTime: formatMicroTime(now),
      leaseTransitions: 0,
    };

    // 1. The leader's fast path: update what it wrote last time, assuming nobody else has
    //    written since; a 409 (or any error) falls back to reading the Lease.
    if (this.isLeader() && this.isLeaseValid(now) && this.lease) {
      desired.acquireTime = this.observed.acquireTime;
      desired.leaseTransitions = this.observed.leaseTransitions;
      try {
        const updated = await this.call(
          (s) => this.client.update(withRecord(this.lease!, desired), s),
          signal,
        );
        if (signal.aborted) return false;
        this.lease = updated;
        this.setObserved(desired);
        return true;
      } catch (err) {
        if (signal.aborted) return false;
        this.logger.info(
          'optimistic lease renewal failed, reading the lease',
          this.meta({ error: String(err) }),
        );
      }
    }

    // 2. Read the Lease; create it if it does not exist.
    let current: Lease;
    try {
      current = await this.call((s) => this.client.get(this.namespace, this.name, s), signal);
    } catch (err) {
      if (signal.aborted) return false;
      if (!isNotFound(err)) {
        this.logger.warn('error reading the leader lease', this.meta({ error: String(err) }));
        return false;
      }
      try {
        const created = await this.call((s) => this.client.create(this.newLease(desired), s), signal);
        if (signal.aborted) return false;
        this.lease = created;
        this.setObserved(desired);
        return true;
      } catch (createErr) {
        if (!signal.aborted) {
          this.logger.warn('error creating the leader lease', this.meta({ error: String(createErr) }));
        }
        return false;
      }
    }
    if (signal.aborted) return false;
    this.lease = current;

    // 3. The observation clock restarts only when the record changes: that is what makes
    //    expiry a local judgement, independent of the writer's clock.
    const old = recordOf(current.spec);
    const raw = JSON.stringify(old);
    if (raw !== this.observedRaw) {
      this.setObserved(old);
      this.observedRaw = raw;
    }
    if (old.holderIdentity !== '' && this.isLeaseValid(now) && !this.isLeader()) return false;

    // 4. Take or renew it, guarded by the resourceVersion just read.
    if (this.isLeader()) {
      desired.acquireTime = old.acquireTime;
      desired.leaseTransitions = old.leaseTransitions;
    } else {
      desired.leaseTransitions = old.leaseTransitions + 1;
    }
    try {
      const updated = await this.call((s) => this.client.update(withRecord(current, desired), s), signal);
      if (signal.aborted) return false;
      this.lease = updated;
      this.setObserved(desired);
      return true;
    } catch (err) {
      if (!signal.aborted) {
        const why = isConflict(err) ? 'another candidate wrote the lease first' : String(err);
        this.logger.info('failed to update the leader lease', this.meta({ error: why }));
      }
      return false;
    }
  }

  /**
   * Gives the Lease up (client-go release): empty holder, 1 s duration, same transitions.
   * Only if the Lease still names this candidate; retries conflicts until renewDeadline.
   */
  private async release(): Promise<void> {
    const round = new AbortController();
    const timer = this.clock.setTimeout(() => round.abort(), this.renewDeadlineMs);
    try {
      while (!round.signal.aborted) {
        let current: Lease;
        try {
          current = await this.call((s) => this.client.get(this.namespace, this.name, s), round.signal);
        } catch (err) {
          this.logger.warn(
            'could not read the leader lease to release it',
            this.meta({ error: String(err) }),
          );
          return;
        }
        const held = recordOf(current.spec);
        if (held.holderIdentity !== this.identity) return;
        const now = this.clock.now();
        const released: ElectionRecord = {
          holderIdentity: '',
          leaseDurationSeconds: 1,
          acquireTime: formatMicroTime(now),
          renewTime: formatMicroTime(now),
          leaseTransitions: held.leaseTransitions,
        };
        try {
          this.lease = await this.call(
            (s) => this.client.update(withRecord(current, released), s),
            round.signal,
          );
          this.setObserved(released);
          this.logger.info('released leader lease', this.meta());
          return;
        } catch (err) {
          // A renewal in flight when we stopped may have bumped the resourceVersion.
          if (isConflict(err)) continue;
          this.logger.warn('failed to release the leader lease', this.meta({ error: String(err) }));
          return;
        }
      }
    } finally {
      this.clock.clearTimeout(timer);
    }
  }

  private isLeaseValid(now: number): boolean {
    return this.observedTime + this.observed.leaseDurationSeconds * 1000 > now;
  }

  private setObserved(record: ElectionRecord): void {
    this.observed = record;
    this.observedTime = this.clock.now();
  }

  private maybeReportTransition(): void {
    const holder = this.observed.holderIdentity;
    if (holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    const onNewLeader = this.callbacks.onNewLeader;
    if (holder === '' || !onNewLeader) return;
    queueMicrotask(() => {
      try {
        onNewLeader.call(this.callbacks, holder);
      } catch (err) {
        this.logger.warn('onNewLeader failed', this.meta({ error: String(err) }));
      }
    });
  }

  /** Runs one LeaseClient call, rejecting as soon as `signal` aborts even if the call hangs. */
  private call<T>(fn: (signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (signal.aborted) return reject(new Error('aborted'));
      const onAbort = () => reject(new Error('aborted'));
      signal.addEventListener('abort', onAbort, { once: true });
      const settle = () => signal.removeEventListener('abort', onAbort);
      let p: Promise<T>;
      try {
        p = fn(signal);
      } catch (err) {
        settle();
        return reject(err);
      }
      p.then(
        (v) => {
          settle();
          resolve(v);
        },
        (err: unknown) => {
          settle();
          reject(err);
        },
      );
    });
  }

  private newLease(record: ElectionRecord): Lease {
    return withRecord(
      {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: this.name, namespace: this.namespace },
      },
      record,
    );
  }

  private describe(): string {
    return `${this.namespace}/${this.name}`;
  }

  private meta(extra: Record<string, unknown> = {}): Record<string, unknown> {
    return { lease: this.describe(), identity: this.identity, ...extra };
  }
}

/** The election record held in a LeaseSpec; absent fields read as empty / 0. */
function recordOf(spec: LeaseSpec | undefined): ElectionRecord {
  return {
    holderIdentity: spec?.holderIdentity ?? '',
    leaseDurationSeconds: spec?.leaseDurationSeconds ?? 0,
    acquireTime: spec?.acquireTime ?? '',
    renewTime: spec?.renewTime ?? '',
    leaseTransitions: spec?.leaseTransitions ?? 0,
  };
}

/** `lease` with the election fields of its spec replaced by `record` (other spec fields kept). */
function withRecord(lease: Lease, record: ElectionRecord): Lease {
  const spec: LeaseSpec = {
    ...lease.spec,
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    leaseTransitions: record.leaseTransitions,
  };
  // A time read as absent stays absent rather than becoming an invalid empty MicroTime.
  if (record.acquireTime) spec.acquireTime = record.acquireTime;
  if (record.renewTime) spec.renewTime = record.renewTime;
  return { ...lease, metadata: { ...lease.metadata }, spec };
}
