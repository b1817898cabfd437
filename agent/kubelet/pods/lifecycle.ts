/**
 * Container lifecycle hooks: the kubelet's handler runner (pkg/kubelet/lifecycle/handlers.go)
 * for `lifecycle.postStart` and `lifecycle.preStop`.
 *
 * - exec runs the command in the container (the runtime's ExecSync); a non-zero exit code
 *   or an exec error fails the hook with `Exec lifecycle hook ([cmd]) for Container "c" in
 *   Pod "p" failed - error: ..., message: "<output>"`.
 * - httpGet sends GET to host (default: the pod IP), port (a number or a named container
 *   port), path, scheme and headers, with User-Agent `kube-lifecycle/<version>`; only a
 *   failed request fails the hook (`Http lifecycle hook (/path) for Container "c" in Pod
 *   "p" failed - error: ...`) — any HTTP status counts as done, as in the kubelet.
 * - sleep waits `seconds` on the kubelet's clock (PodLifecycleSleepAction).
 * - tcpSocket is deprecated for hooks and not run (the kubelet only logs it); neither is a
 *   handler naming no action.
 */
import type { Clock } from '../../../api/clock.js';
import { probeHttp, type ExecFn } from '../prober/probe.js';
import { podDesc, type KubeletContainer, type KubeletPod, type LifecycleHandler } from './types.js';
import { errorMessage } from '../../../api/errors.js';

/** User-Agent of lifecycle httpGet hooks (the kubelet's `kube-lifecycle/<major.minor>`). */
export const LIFECYCLE_USER_AGENT = 'kube-lifecycle/1.32';

/** What running a hook needs. */
export interface HookContext {
  exec: ExecFn;
  clock: Clock;
  /** The pod IP (default host of httpGet). */
  podIP: string;
  /** Aborts a sleep hook (the kubelet's context). */
  signal?: AbortSignal;
}

/** A hook that failed; `message` says why (it is logged, never put into an event). */
export class HookError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HookError';
  }
}

/** Seconds an exec or httpGet hook may take before it counts as failed when no other bound applies. */
const HOOK_TIMEOUT_SECONDS = 120;

/**
 * Runs `handler` for `container` (running as `containerId`) of `pod`; resolves with the
 * handler's output (exec: stdout+stderr; httpGet: ''), rejects with HookError.
 * `timeoutSeconds` bounds exec and httpGet (default 120 s).
 */
export async function runLifecycleHandler(
  pod: KubeletPod,
  container: KubeletContainer,
  containerId: string,
  handler: LifecycleHandler,
  ctx: HookContext,
  timeoutSeconds = HOOK_TIMEOUT_SECONDS,
): Promise<string> {
  if (handler.exec) {
    const cmd = handler.exec.command ?? [];
    const fail = (err: string, msg: string) =>
      new HookError(
        `Exec lifecycle hook ([${cmd.join(' ')}]) for Container ${JSON.stringify(container.name)} in Pod ${JSON.stringify(podDesc(pod))} failed - error: ${err}, message: ${JSON.stringify(msg)}`,
      );
    let out;
    try {
      out = await ctx.exec(containerId, cmd, Math.max(1, timeoutSeconds));
    } catch (err) {
      throw fail(errorMessage(err), '');
    }
    const msg = out.stdout.toString('utf8') + out.stderr.toString('utf8');
    if (out.exitCode !== 0) throw fail(`command '${cmd.join(' ')}' exited with ${out.exitCode}: `, msg);
    return msg;
  }
  if (handler.httpGet) {
    const action = {
      ...handler.httpGet,
      httpHeaders: [
        { name: 'User-Agent', value: LIFECYCLE_USER_AGENT },
        ...(handler.httpGet.httpHeaders ?? []),
      ],
    };
    const outcome = await probeHttp(
      action,
      { podIP: ctx.podIP, containerId, container },
      Math.max(1, timeoutSeconds),
    );
    // An HTTP status of any kind means the hook was delivered (handlers.go checks only the request).
    if (
      outcome.result === 'Unknown' ||
      (outcome.result === 'Failure' && !outcome.output.startsWith('HTTP probe failed with statuscode'))
    ) {
      throw new HookError(
        `Http lifecycle hook (${handler.httpGet.path ?? ''}) for Container ${JSON.stringify(container.name)} in Pod ${JSON.stringify(podDesc(pod))} failed - error: ${outcome.output}, message: ""`,
      );
    }
    return '';
  }
  if (handler.sleep) {
    await ctx.clock.sleep(Math.max(0, handler.sleep.seconds) * 1000, ctx.signal);
    return '';
  }
  return '';
}
