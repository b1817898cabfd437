import { errorMessage } from '../../../api/errors.js';
/**
 * The result of running a plugin at one extension point (Kubernetes' framework.Status):
 * a code and the human reasons behind it, never an exception. `Status.success` is the one
 * shared success value, so the hot filter loop allocates nothing when a node fits.
 *
 * Codes, as pkg/scheduler/framework/interface.go:
 * - `Success`: the plugin is happy.
 * - `Error`: something went wrong inside the scheduler (the pod is retried with backoff).
 * - `Unschedulable`: the pod does not fit this node now, but could if pods were preempted
 *   from it (e.g. `Insufficient cpu`).
 * - `UnschedulableAndUnresolvable`: the pod cannot fit this node whatever is preempted
 *   (an untolerated taint, a node selector that does not match).
 * - `Skip`: from PreFilter/PreScore only: this plugin has nothing to say about this pod, so
 *   its Filter/Score is not called for it this cycle.
 */

export const Code = {
  Success: 'Success',
  Error: 'Error',
  Unschedulable: 'Unschedulable',
  UnschedulableAndUnresolvable: 'UnschedulableAndUnresolvable',
  Skip: 'Skip',
} as const;
export type Code = (typeof Code)[keyof typeof Code];

/** A code with reasons (each a short phrase such as `Insufficient cpu`) and the plugin that returned it. */
export class Status {
  /** The shared Success value. */
  static readonly success = new Status(Code.Success, []);
  /** The shared Skip value. */
  static readonly skip = new Status(Code.Skip, []);

  constructor(
    readonly code: Code,
    readonly reasons: readonly string[],
    /** The plugin that returned this status, set by the framework when it records a failure. */
    readonly plugin = '',
  ) {}

  /** `Unschedulable` with reasons. */
  static unschedulable(...reasons: string[]): Status {
    return new Status(Code.Unschedulable, reasons);
  }

  /** `UnschedulableAndUnresolvable` with reasons. */
  static unresolvable(...reasons: string[]): Status {
    return new Status(Code.UnschedulableAndUnresolvable, reasons);
  }

  /** `Error` with the error's message as its reason. */
  static error(err: unknown): Status {
    return new Status(Code.Error, [errorMessage(err)]);
  }

  isSuccess(): boolean {
    return this.code === Code.Success;
  }

  isSkip(): boolean {
    return this.code === Code.Skip;
  }

  /** True for both unschedulable codes. */
  isRejected(): boolean {
    return this.code === Code.Unschedulable || this.code === Code.UnschedulableAndUnresolvable;
  }

  /** The reasons joined with ', ' (framework.Status.Message). */
  message(): string {
    return this.reasons.join(', ');
  }

  /** The same status attributed to `plugin`. */
  withPlugin(plugin: string): Status {
    return plugin === this.plugin ? this : new Status(this.code, this.reasons, plugin);
  }
}
