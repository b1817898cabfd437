/**
 * The kubelet's probe manager (pkg/kubelet/prober/prober_manager.go): one ProbeWorker per
 * pod, container and probe type (liveness, readiness, startup), and the results they
 * publish (the results managers). Pod workers tell it what runs after each sync
 * (updatePod) and read the verdicts back: readiness drives the container's `ready` and
 * the pod's ContainersReady/Ready conditions, startup its `started`, a liveness or startup
 * Failure makes the pod worker kill and restart the container. A published change calls
 * `onChange(podUid)` so the pod worker syncs again.
 *
 * Each run's event on the container, as pkg/kubelet/prober/prober.go: a Failure is Warning
 * `Unhealthy` "Readiness probe failed: HTTP probe failed with statuscode: 503", a probe
 * that could not run (Unknown) Warning `Unhealthy` "Readiness probe errored: strconv.Atoi:
 * parsing \"web\": invalid syntax", a Warning result Warning `ProbeWarning` "Liveness
 * probe warning: Probe terminated redirects, Response body: …". The recorder aggregates
 * the repeats (count).
 */
import type { Logger } from '../../../api/log.js';
import type { Clock } from '../../../api/clock.js';
import type { EventRecorder } from '../../../api/client/events.js';
import type { ObjectReference } from '../../../api/types.js';
import type { KubeletContainer, KubeletPod, Probe, ProbeType } from '../pods/types.js';
import { runProbe, type ExecFn, type ProbeOutcome, type ProbeTarget, type ProbeVerdict } from './probe.js';
import { initialResult, ProbeWorker, type ContainerView } from './worker.js';

/** Dependencies of a ProbeManager. */
export interface ProbeManagerConfig {
  clock: Clock;
  recorder: Pick<EventRecorder, 'event'>;
  logger: Logger;
  /** The runtime's ExecSync, for exec probes. */
  exec: ExecFn;
  /** Called when a published result of a pod's container changes. */
  onChange(podUid: string): void;
  /** Replaces the real probers (tests of the state machine). */
  runProbe?: (probe: Probe, target: ProbeTarget) => Promise<ProbeOutcome>;
}

const TYPES: readonly ProbeType[] = ['startup', 'liveness', 'readiness'];
const PROBE_FIELD = {
  liveness: 'livenessProbe',
  readiness: 'readinessProbe',
  startup: 'startupProbe',
} as const;
const TITLE = { liveness: 'Liveness', readiness: 'Readiness', startup: 'Startup' } as const;

interface PodEntry {
  /** The pod's identity, for the probes' events (not the pod: a newer version may have come since). */
  ref: { namespace: string; name: string; uid: string };
  views: Map<string, ContainerView>;
  workers: Map<string, { worker: ProbeWorker; abort: AbortController; done: Promise<void> }>;
}

/** See the file comment. */
export class ProbeManager {
  private readonly cfg: ProbeManagerConfig;
  private readonly pods = new Map<string, PodEntry>();
  /** `<uid>/<container>/<type>` → the result published for containerId. */
  private readonly results = new Map<string, { containerId: string; result: ProbeVerdict }>();
  private stopped = false;

  constructor(cfg: ProbeManagerConfig) {
    this.cfg = cfg;
  }

  /** The probe of `type` a container has, if any. */
  static probeOf(container: KubeletContainer, type: ProbeType): Probe | undefined {
    return container[PROBE_FIELD[type]];
  }

  /**
   * Tells the manager what runs for `pod` now: `views` maps container names to their
   * current container (absent: none yet). Starts workers for probes not yet watched.
   */
  updatePod(pod: KubeletPod, views: Map<string, ContainerView>): void {
    if (this.stopped) return;
    const uid = pod.metadata.uid ?? '';
    let entry = this.pods.get(uid);
    if (!entry) {
      // A pod without probes needs nothing kept (its verdicts are the initial ones), and a
      // pod's containers and their probes never change.
      if (!pod.spec.containers.some((c) => TYPES.some((type) => ProbeManager.probeOf(c, type)))) return;
      const ref = { namespace: pod.metadata.namespace ?? '', name: pod.metadata.name ?? '', uid };
      entry = { ref, views, workers: new Map() };
      this.pods.set(uid, entry);
    }
    entry.views = views;
    for (const container of pod.spec.containers) {
      for (const type of TYPES) {
        const probe = ProbeManager.probeOf(container, type);
        const key = `${container.name}/${type}`;
        if (!probe || entry.workers.has(key)) continue;
        const abort = new AbortController();
        const e = entry;
        const worker = new ProbeWorker({
          type,
          probe,
          clock: this.cfg.clock,
          view: () => e.views.get(container.name),
          started: (cid) => this.started(uid, container, cid),
          run: (t) =>
            this.cfg.runProbe
              ? this.cfg.runProbe(probe, { ...t, container })
              : runProbe(probe, { ...t, container }, this.cfg.exec),
          publish: (cid, result) => this.publish(uid, container.name, type, cid, result),
          record: (o) => this.recordEvent(e.ref, container.name, type, o),
        });
        entry.workers.set(key, { worker, abort, done: worker.run(abort.signal) });
      }
    }
  }

  /** Stops the pod's workers and forgets its results. */
  async removePod(uid: string): Promise<void> {
    const entry = this.pods.get(uid);
    if (!entry) return;
    this.pods.delete(uid);
    for (const k of [...this.results.keys()]) if (k.startsWith(`${uid}/`)) this.results.delete(k);
    for (const w of entry.workers.values()) w.abort.abort();
    await Promise.all([...entry.workers.values()].map((w) => w.done));
  }

  /** Stops every worker. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.pods.keys()].map((uid) => this.removePod(uid)));
  }

  /** The published result of a container's probe of `type` (the initial value when none for this container). */
  result(uid: string, containerName: string, type: ProbeType, containerId: string): ProbeVerdict {
    const r = this.results.get(`${uid}/${containerName}/${type}`);
    return r && r.containerId === containerId ? r.result : initialResult(type);
  }

  /** True when the container has no startup probe, or its startup probe succeeded. */
  started(uid: string, container: KubeletContainer, containerId: string): boolean {
    if (!container.startupProbe) return true;
    return this.result(uid, container.name, 'startup', containerId) === 'Success';
  }

  /** True when the container has no readiness probe, or its readiness probe succeeded (and it has started). */
  ready(uid: string, container: KubeletContainer, containerId: string): boolean {
    if (!this.started(uid, container, containerId)) return false;
    if (!container.readinessProbe) return true;
    return this.result(uid, container.name, 'readiness', containerId) === 'Success';
  }

  private publish(
    uid: string,
    name: string,
    type: ProbeType,
    containerId: string,
    result: ProbeVerdict,
  ): void {
    const key = `${uid}/${name}/${type}`;
    const prev = this.results.get(key);
    if (prev && prev.containerId === containerId && prev.result === result) return;
    this.results.set(key, { containerId, result });
    if (prev?.containerId === containerId || result !== initialResult(type)) {
      this.cfg.logger.debug('probe result', { pod: uid, container: name, probe: type, result });
      this.cfg.onChange(uid);
    }
  }

  private recordEvent(pod: PodEntry['ref'], name: string, type: ProbeType, o: ProbeOutcome): void {
    const ref: ObjectReference = {
      apiVersion: 'v1',
      kind: 'Pod',
      ...pod,
      fieldPath: `spec.containers{${name}}`,
    };
    const [reason, words] =
      o.result === 'Warning'
        ? ['ProbeWarning', 'warning']
        : o.result === 'Unknown'
          ? ['Unhealthy', 'errored']
          : ['Unhealthy', 'failed'];
    this.cfg.recorder.event(ref, 'Warning', reason, `${TITLE[type]} probe ${words}: ${o.output}`);
  }
}
