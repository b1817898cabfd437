/**
 * One probe of one container, run every `periodSeconds` (the kubelet's prober worker,
 * pkg/kubelet/prober/worker.go). Contract:
 *
 * - The worker follows whichever container currently runs for its spec container. A new
 *   container id resets it: result back to the initial value (readiness Failure, liveness
 *   Success, startup Unknown), counters cleared, hold lifted.
 * - Nothing is probed while the container is not running (readiness then reads Failure),
 *   during `initialDelaySeconds` after it started, or — for liveness and readiness — before
 *   the startup probe succeeded. A startup probe stops once it succeeded.
 * - A verdict changes the published result only after `failureThreshold` consecutive
 *   failures or `successThreshold` consecutive successes.
 * - A published liveness or startup Failure puts the worker on hold until the container
 *   is replaced (the kubelet kills and restarts it; probing a dying container is useless).
 * - Every run that is not a plain Success is reported, each period (prober.go's events):
 *   a Failure ("Liveness probe failed: ..."), an Unknown — the probe could not run, its
 *   verdict is thrown away, as worker.go's doProbe does on an error ("Readiness probe
 *   errored: ...") — and a Warning, which counts as a Success ("... probe warning: ...").
 * Defaults: initialDelaySeconds 0, periodSeconds 10, timeoutSeconds 1, successThreshold
 * 1, failureThreshold 3. Time comes from the injected clock.
 */
import type { Clock } from '../../../api/clock.js';
import type { Probe, ProbeType } from '../pods/types.js';
import type { ProbeOutcome, ProbeTarget, ProbeVerdict } from './probe.js';

/** What the worker knows of its container at a tick (from the pod worker's last sync). */
export interface ContainerView {
  containerId: string;
  running: boolean;
  /** Milliseconds since the epoch the container started (running only). */
  startedAt: number;
  podIP: string;
}

/** The dependencies of a ProbeWorker. */
export interface ProbeWorkerConfig {
  type: ProbeType;
  probe: Probe;
  clock: Clock;
  /** The container as last seen, undefined when it has none. */
  view(): ContainerView | undefined;
  /** Whether the container's startup probe has succeeded (true when it has none). */
  started(containerId: string): boolean;
  /** Runs the probe once. */
  run(target: Omit<ProbeTarget, 'container'>): Promise<ProbeOutcome>;
  /** Publishes a result for `containerId`. */
  publish(containerId: string, result: ProbeVerdict): void;
  /** Told about each run that failed, errored (Unknown) or warned, for its event. */
  record(outcome: ProbeOutcome): void;
}

/** The value a probe has before any verdict (the kubelet's initialValue). */
export function initialResult(type: ProbeType): ProbeVerdict {
  return type === 'readiness' ? 'Failure' : type === 'liveness' ? 'Success' : 'Unknown';
}

/** See the file comment. */
export class ProbeWorker {
  private readonly cfg: ProbeWorkerConfig;
  private containerId = '';
  private lastResult: ProbeVerdict = 'Unknown';
  private resultRun = 0;
  private onHold = false;
  private succeededStartup = false;
  readonly periodMs: number;

  constructor(cfg: ProbeWorkerConfig) {
    this.cfg = cfg;
    this.periodMs = (cfg.probe.periodSeconds || 10) * 1000;
  }

  /**
   * One round: probe if the contract allows and publish per the thresholds. A startup
   * probe that succeeded stays idle until its container is replaced.
   */
  async tick(): Promise<void> {
    const { type, probe, clock } = this.cfg;
    const view = this.cfg.view();
    if (!view) return;
    if (view.containerId !== this.containerId) {
      this.containerId = view.containerId;
      this.lastResult = 'Unknown';
      this.resultRun = 0;
      this.onHold = false;
      this.succeededStartup = false;
      this.cfg.publish(view.containerId, initialResult(type));
    }
    if (!view.running) {
      if (type === 'readiness') this.cfg.publish(view.containerId, 'Failure');
      return;
    }
    if (this.onHold) return;
    if (clock.now() - view.startedAt < (probe.initialDelaySeconds ?? 0) * 1000) return;
    if (type === 'startup' && this.succeededStartup) return;
    if (type !== 'startup' && !this.cfg.started(view.containerId)) return;
    const outcome = await this.cfg.run({ podIP: view.podIP, containerId: view.containerId });
    // The container may have been replaced while the probe ran: the verdict is stale.
    if (this.cfg.view()?.containerId !== view.containerId) return;
    if (outcome.result !== 'Success') this.cfg.record(outcome);
    if (outcome.result === 'Unknown') return;
    const result = outcome.result === 'Warning' ? 'Success' : outcome.result;
    if (result === this.lastResult) this.resultRun++;
    else {
      this.lastResult = result;
      this.resultRun = 1;
    }
    const threshold = result === 'Failure' ? probe.failureThreshold || 3 : probe.successThreshold || 1;
    if (this.resultRun < threshold) return;
    this.cfg.publish(view.containerId, result);
    if (type === 'startup' && result === 'Success') this.succeededStartup = true;
    if ((type === 'liveness' || type === 'startup') && result === 'Failure') {
      this.onHold = true;
      this.resultRun = 0;
    }
  }

  /** Ticks every period until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.tick();
      } catch {
        // A failing tick (a runtime hiccup) is retried next period.
      }
      await this.cfg.clock.sleep(this.periodMs, signal);
    }
  }
}
