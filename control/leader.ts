/**
 * Runs a piece of the control process (the controller manager, the scheduler) only while
 * this process holds a `coordination.k8s.io/v1` Lease in `kube-system`, so that several
 * control processes can share one store and exactly one of each acts at a time
 * (kube-controller-manager's and kube-scheduler's `--leader-elect`). Unlike those
 * binaries, which exit when they lose the lease, a process that loses it stops the work
 * and stands for election again.
 */
import type { Clock } from '../api/clock.js';
import { configuredFetch } from '../api/client/fetch.js';
import type { RestClientConfig } from '../api/client/rest.js';
import { httpLeaseClient } from '../api/leaderelection/http.js';
import { LeaderElector } from '../api/leaderelection/leaderelection.js';
import type { Logger } from './controllers/context.js';

/** Lease timings, seconds, as the `--leader-elect-*` flags (defaults 15 / 10 / 2). */
export interface LeaderElectionTimings {
  leaseDurationSeconds: number;
  renewDeadlineSeconds: number;
  retryPeriodSeconds: number;
}

export const DEFAULT_LEADER_ELECTION: LeaderElectionTimings = {
  leaseDurationSeconds: 15,
  renewDeadlineSeconds: 10,
  retryPeriodSeconds: 2,
};

/** Options of runWhileLeading(). */
export interface RunWhileLeadingOptions {
  /** How to reach the API server: URL, CA and this component's credentials. */
  connection: RestClientConfig;
  /** Name of the Lease in kube-system, e.g. `kube-controller-manager`. */
  leaseName: string;
  /** This process's identity, unique among candidates (hostname + random suffix). */
  identity: string;
  timings: LeaderElectionTimings;
  logger: Logger;
  clock?: Clock;
  /** The work; it must stop (and its promise settle) when `signal` aborts. */
  work: (signal: AbortSignal) => Promise<void>;
  /** Ends the election (and the work) for good. */
  signal: AbortSignal;
}

/**
 * Stands for election until `signal` aborts; runs `work` each time leadership is gained
 * and aborts it when leadership is lost. Resolves once `signal` has aborted and the work
 * has stopped. Errors from `work` are logged, never thrown.
 */
export async function runWhileLeading(opts: RunWhileLeadingOptions): Promise<void> {
  const client = httpLeaseClient(opts.connection.server, { fetch: configuredFetch(opts.connection) });
  while (!opts.signal.aborted) {
    const elector = new LeaderElector({
      client,
      namespace: 'kube-system',
      name: opts.leaseName,
      identity: opts.identity,
      ...opts.timings,
      releaseOnCancel: true,
      ...(opts.clock ? { clock: opts.clock } : {}),
      logger: opts.logger,
      callbacks: {
        onStartedLeading: async (signal) => {
          opts.logger.info(`${opts.leaseName}: became leader`, { identity: opts.identity });
          try {
            await opts.work(signal);
          } catch (err) {
            opts.logger.error(`${opts.leaseName}: failed`, { error: String(err) });
          }
        },
        onStoppedLeading: () =>
          opts.logger.info(`${opts.leaseName}: stopped leading`, { identity: opts.identity }),
        onNewLeader: (id) => {
          if (id !== opts.identity) opts.logger.info(`${opts.leaseName}: leader is ${id}`);
        },
      },
    });
    await elector.run(opts.signal);
  }
}
