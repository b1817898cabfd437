/**
 * The runtime layer's errors: one class with stable codes, as CRI's gRPC status codes
 * (NotFound, InvalidArgument, ...) plus the image-pull reasons the kubelet turns into pod
 * statuses (`ErrImagePull`, `InvalidImageName`).
 */

export const CRI_ERROR_CODES = [
  /** An id (sandbox, container, image) the runtime does not know. */
  'NotFound',
  /** A malformed request (bad image reference: the kubelet reports InvalidImageName). */
  'InvalidArgument',
  /** The image could not be pulled (unreachable registry, unknown image: ErrImagePull). */
  'ImagePullFailed',
  /** A name or id already in use (a container name the runtime has reserved). */
  'AlreadyExists',
  /** The operation is not valid in the object's state (start of a removed container, ...). */
  'FailedPrecondition',
  /** The runtime is not reachable (daemon down); the caller retries. */
  'Unavailable',
  /** A deadline passed (execSync timeout). */
  'DeadlineExceeded',
  /** Anything else the runtime reported. */
  'Internal',
] as const;

export type CriErrorCode = (typeof CRI_ERROR_CODES)[number];

/** An error from a runtime adapter; `code` is stable, `message` says what failed and why. */
export class CriError extends Error {
  constructor(
    readonly code: CriErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CriError';
  }
}

/** True when `err` is a CriError with `code`. */
export function isCriError(err: unknown, code?: CriErrorCode): err is CriError {
  return err instanceof CriError && (code === undefined || err.code === code);
}
