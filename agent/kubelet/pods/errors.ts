/**
 * Why a container could not be started: the kubelet's container start reasons
 * (pkg/kubelet/container/sync_result.go and images/types.go), which become the container's
 * `state.waiting.reason` and `message` until the next successful start.
 */

export const START_FAILURE_REASONS = [
  /** The pull failed (kubelet's ErrImagePull). */
  'ErrImagePull',
  /** A pull of this image failed recently; waiting before the next try (ImagePullBackOff). */
  'ImagePullBackOff',
  /** `imagePullPolicy: Never` and the image is not present. */
  'ErrImageNeverPull',
  /** The image reference cannot be parsed. */
  'InvalidImageName',
  /** The container's configuration could not be made (a missing ConfigMap or Secret key, ...). */
  'CreateContainerConfigError',
  /** The runtime refused to create the container. */
  'CreateContainerError',
  /** The runtime created but could not start the container. */
  'RunContainerError',
  /** The container crashed recently; waiting before restarting it (CrashLoopBackOff). */
  'CrashLoopBackOff',
  /** The postStart hook failed; the container was killed (kubelet's ErrPostStartHook). */
  'PostStartHookError',
] as const;

export type StartFailureReason = (typeof START_FAILURE_REASONS)[number];

/** A failed start of one container: `reason` is stable, `message` says what and why. */
export class ContainerStartError extends Error {
  constructor(
    readonly reason: StartFailureReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ContainerStartError';
  }
}

/** True when `err` is a ContainerStartError. */
export function isContainerStartError(err: unknown): err is ContainerStartError {
  return err instanceof ContainerStartError;
}

/** A volume that could not be set up; the kubelet's FailedMount event says `message`. */
export class MountError extends Error {
  constructor(
    readonly volume: string,
    message: string,
  ) {
    super(`MountVolume.SetUp failed for volume "${volume}" : ${message}`);
    this.name = 'MountError';
  }
}
