/**
 * The errors the client raises, and predicates over them in the manner of
 * k8s.io/apimachinery/pkg/api/errors (IsNotFound, IsConflict, IsGone, ...).
 *
 * An API failure arrives as a `metav1.Status` (in an error response's body, or as the
 * object of a watch ERROR event); it becomes an `ApiStatusError`. Transport failures
 * (refused connections, resets, timeouts) stay Node's own errors, with their `code`
 * (`ECONNREFUSED`, `ECONNRESET`, ...), except a request that ran out of time, which is a
 * `RequestTimeoutError`.
 */

/** metav1.StatusCause. */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** metav1.Status, wire form. */
export interface Status {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string };
  status?: 'Success' | 'Failure';
  message?: string;
  /** metav1.StatusReason: `NotFound`, `AlreadyExists`, `Conflict`, `Expired`, `Gone`, ... */
  reason?: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    causes?: StatusCause[];
    retryAfterSeconds?: number;
  };
  /** The HTTP status code the failure stands for. */
  code?: number;
}

/**
 * An API request the server refused: `code` is the HTTP status (or the Status' own code,
 * for a watch ERROR event), `reason` the metav1.StatusReason (`NotFound`, `Conflict`,
 * `Expired`, ...; derived from the HTTP status when the body was not a Status),
 * `message` the server's message, `status` the whole Status as received (or synthesized).
 */
export class ApiStatusError extends Error {
  override readonly name = 'ApiStatusError';
  readonly code: number;
  readonly reason: string;
  readonly status: Status;

  constructor(status: Status, httpCode?: number) {
    const code = status.code ?? httpCode ?? 500;
    const reason = status.reason ?? reasonForCode(code);
    super(status.message ?? `the server responded with ${code} ${reason}`);
    this.code = code;
    this.reason = reason;
    this.status = status;
  }

  /**
   * The error for a non-2xx response: its body parsed as a Status when it is one, else
   * a Status synthesized from the HTTP code with the body (trimmed to 1 KiB) as message.
   */
  static fromResponse(httpCode: number, body: string): ApiStatusError {
    try {
      const parsed = JSON.parse(body) as unknown;
      if (isStatus(parsed)) return new ApiStatusError({ ...parsed, code: parsed.code ?? httpCode }, httpCode);
    } catch {
      // not JSON: fall through
    }
    const text = body.trim().slice(0, 1024);
    return new ApiStatusError(
      {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        code: httpCode,
        reason: reasonForCode(httpCode),
        message: text || `the server responded with ${httpCode} ${reasonForCode(httpCode)}`,
      },
      httpCode,
    );
  }
}

/** A request that did not complete within its timeout (`timeoutMs`, milliseconds). */
export class RequestTimeoutError extends Error {
  override readonly name = 'RequestTimeoutError';
  constructor(
    readonly method: string,
    readonly path: string,
    readonly timeoutMs: number,
  ) {
    super(`${method} ${path}: no response within ${timeoutMs} ms`);
  }
}

/** True when `v` looks like a metav1.Status (kind Status, or status/code fields of the right types). */
export function isStatus(v: unknown): v is Status {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return o.kind === 'Status' || (typeof o.status === 'string' && typeof o.code === 'number');
}

/** The metav1.StatusReason Kubernetes uses for an HTTP status code when nothing better is known. */
export function reasonForCode(code: number): string {
  switch (code) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 405:
      return 'MethodNotAllowed';
    case 406:
      return 'NotAcceptable';
    case 409:
      return 'Conflict';
    case 410:
      return 'Gone';
    case 413:
      return 'RequestEntityTooLarge';
    case 415:
      return 'UnsupportedMediaType';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 500:
      return 'InternalError';
    case 503:
      return 'ServiceUnavailable';
    case 504:
      return 'Timeout';
    default:
      return 'Unknown';
  }
}

function apiError(err: unknown): ApiStatusError | undefined {
  return err instanceof ApiStatusError ? err : undefined;
}

/** 404 NotFound. */
export function isNotFound(err: unknown): boolean {
  return apiError(err)?.code === 404;
}

/** 409 AlreadyExists (a create of an existing name). */
export function isAlreadyExists(err: unknown): boolean {
  const e = apiError(err);
  return e?.code === 409 && e.reason === 'AlreadyExists';
}

/** 409 Conflict (a stale resourceVersion on update, or a server-side apply conflict). */
export function isConflict(err: unknown): boolean {
  const e = apiError(err);
  return e?.code === 409 && e.reason !== 'AlreadyExists';
}

/**
 * 410: the resourceVersion (or continue token) is older than the server's history —
 * reason `Expired` or `Gone`, from an HTTP response or a watch ERROR event. The answer is
 * to list again (client-go's isExpiredError).
 */
export function isResourceExpired(err: unknown): boolean {
  const e = apiError(err);
  return e !== undefined && (e.code === 410 || e.reason === 'Expired' || e.reason === 'Gone');
}

/** 429 TooManyRequests. */
export function isTooManyRequests(err: unknown): boolean {
  return apiError(err)?.code === 429;
}

/** A connection refused by the server's host (`ECONNREFUSED`): the server is down or restarting. */
export function isConnectionRefused(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'ECONNREFUSED';
}
