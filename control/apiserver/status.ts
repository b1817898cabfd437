/**
 * API errors as `metav1.Status`, and the one place where storage errors become HTTP
 * statuses and Kubernetes reasons (as k8s.io/apimachinery/pkg/api/errors and the
 * apiserver's storage error interpretation do).
 *
 * Every failure the API server answers is an `ApiError`; `toStatus()` gives the body:
 *   { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
 *     message, reason, details?: { name, group, kind, causes? }, code }
 */
import { isStorageError } from '../storage/errors.js';
import { errorMessage } from '../../api/errors.js';

/** The `reason` values of metav1.Status that this API server answers with. */
export const StatusReason = {
  /** metav1.StatusReasonUnknown: a code Kubernetes has no reason for (431). */
  Unknown: '',
  BadRequest: 'BadRequest',
  Unauthorized: 'Unauthorized',
  Forbidden: 'Forbidden',
  NotFound: 'NotFound',
  AlreadyExists: 'AlreadyExists',
  Conflict: 'Conflict',
  Gone: 'Gone',
  Expired: 'Expired',
  Invalid: 'Invalid',
  MethodNotAllowed: 'MethodNotAllowed',
  NotAcceptable: 'NotAcceptable',
  RequestEntityTooLarge: 'RequestEntityTooLarge',
  UnsupportedMediaType: 'UnsupportedMediaType',
  TooManyRequests: 'TooManyRequests',
  InternalError: 'InternalError',
  ServiceUnavailable: 'ServiceUnavailable',
  Timeout: 'Timeout',
} as const;
export type StatusReason = (typeof StatusReason)[keyof typeof StatusReason];

/** One cause of an Invalid (or other) error: `reason` is a field error type such as FieldValueInvalid. */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** The `details` of a Status: which object the error is about. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** A metav1.Status body. */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message: string;
  /** Left out when Unknown (''), as Go's omitempty does. */
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

/** Identifies the resource an error is about, for messages and `details`. */
export interface ResourceRef {
  /** API group, '' for core. */
  group: string;
  /** Plural resource name, e.g. 'deployments'. */
  resource: string;
  name?: string;
}

/** An API failure: an HTTP code, a Kubernetes reason, and a message for humans. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
  }

  /** The metav1.Status body of this error. */
  toStatus(): Status {
    const s: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      ...(this.reason !== StatusReason.Unknown ? { reason: this.reason } : {}),
      code: this.code,
    };
    if (this.details) s.details = this.details;
    return s;
  }
}

/**
 * The `Status` a DELETE that removed an object at once answers for kinds that do not
 * return the object (the generic registry's finalizeDelete): `status: Success` and the
 * object's name, group (left out for the core group), resource (in `kind`, as upstream
 * puts it there) and uid; no code, no message.
 */
export function deletedStatus(ref: ResourceRef, uid: string | undefined): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: {
      name: ref.name ?? '',
      ...(ref.group ? { group: ref.group } : {}),
      kind: ref.resource,
      ...(uid ? { uid } : {}),
    },
  };
}

/** `deployments.apps "web"` / `pods "web"`: how Kubernetes names a resource in messages. */
function qualified(ref: ResourceRef): string {
  return ref.group ? `${ref.resource}.${ref.group}` : ref.resource;
}

function detailsOf(ref: ResourceRef, causes?: StatusCause[]): StatusDetails {
  const d: StatusDetails = { kind: ref.resource };
  if (ref.name !== undefined) d.name = ref.name;
  if (ref.group) d.group = ref.group;
  if (causes) d.causes = causes;
  return d;
}

/** 404 NotFound: `pods "web" not found`. */
export function notFound(ref: ResourceRef): ApiError {
  return new ApiError(404, 'NotFound', `${qualified(ref)} "${ref.name ?? ''}" not found`, detailsOf(ref));
}

/**
 * 403 Forbidden about one object, as errors.NewForbidden words it (admission plugins'
 * refusals): `pods "web" is forbidden: <why>`; `causes` go into the details.
 */
export function newForbidden(ref: ResourceRef, why: string, causes?: StatusCause[]): ApiError {
  return new ApiError(
    403,
    'Forbidden',
    `${qualified(ref)} "${ref.name ?? ''}" is forbidden: ${why}`,
    detailsOf(ref, causes),
  );
}

/** 409 AlreadyExists: `pods "web" already exists`. */
export function alreadyExists(ref: ResourceRef): ApiError {
  return new ApiError(
    409,
    'AlreadyExists',
    `${qualified(ref)} "${ref.name ?? ''}" already exists`,
    detailsOf(ref),
  );
}

/** 409 Conflict, with the wording kubectl users see on a stale resourceVersion. */
export function conflict(
  ref: ResourceRef,
  why = 'the object has been modified; please apply your changes to the latest version and try again',
): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualified(ref)} "${ref.name ?? ''}": ${why}`,
    detailsOf(ref),
  );
}

/** 422 Invalid: `Deployment.apps "web" is invalid: [spec.replicas: Invalid value: -1: must be ...]`. */
export function invalid(kind: string, ref: ResourceRef, causes: StatusCause[]): ApiError {
  const list = causes.map((c) => `${c.field ? `${c.field}: ` : ''}${c.message ?? ''}`);
  const summary = list.length === 1 ? list[0] : `[${list.join(', ')}]`;
  const kindName = ref.group ? `${kind}.${ref.group}` : kind;
  return new ApiError(422, 'Invalid', `${kindName} "${ref.name ?? ''}" is invalid: ${summary}`, {
    ...detailsOf(ref, causes),
    kind,
  });
}

/** 400 BadRequest with a message saying what to fix. */
export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

/** 410 Expired: the resourceVersion (or continue token) is older than the kept history. */
export function expired(message: string): ApiError {
  return new ApiError(410, 'Expired', message);
}

/** 405 MethodNotAllowed. */
export function methodNotAllowed(verb: string, what: string): ApiError {
  return new ApiError(405, 'MethodNotAllowed', `${verb} is not supported on ${what}`);
}

/** 413 RequestEntityTooLarge (request bodies are limited to 3 MiB, as Kubernetes). */
export function requestEntityTooLarge(limitBytes: number): ApiError {
  return new ApiError(
    413,
    'RequestEntityTooLarge',
    `the request body exceeds the limit of ${limitBytes} bytes`,
  );
}

/**
 * 431 for a request line and headers over `limitBytes` (a long URL too): the code Go's
 * net/http, and so kube-apiserver, answers; Kubernetes has no reason for it (Unknown, "").
 */
export function requestHeaderFieldsTooLarge(limitBytes: number): ApiError {
  return new ApiError(
    431,
    StatusReason.Unknown,
    `the request line and headers exceed the limit of ${limitBytes} bytes (a long URL or query, or large headers)`,
  );
}

/**
 * 415 UnsupportedMediaType, naming what is accepted in kube-apiserver's words
 * (negotiation.NewUnsupportedMediaTypeError, which does not repeat the type it got: kubectl
 * names it itself, and matches this text to fall back from a strategic merge patch).
 */
export function unsupportedMediaType(_got: string, accepted: readonly string[]): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );
}

/**
 * 500 with reason Unknown (''): what kube-apiserver answers for an error that is not a
 * metav1.Status (responsewriters.ErrorToAPIStatus), its text as the message, e.g. the
 * field manager's `failed to create typed patch object (...)`. kubectl prints it as
 * `Error from server: <message>`.
 */
export function unknownError(message: string): ApiError {
  return new ApiError(500, StatusReason.Unknown, message);
}

/** 500 InternalError. */
export function internalError(message: string): ApiError {
  return new ApiError(500, 'InternalError', `Internal error occurred: ${message}`);
}

/**
 * The one mapping from any thrown value to an ApiError. Storage codes map as the
 * apiserver's storage layer interprets etcd failures:
 *   KeyNotFound → 404 NotFound, KeyExists → 409 AlreadyExists, Conflict → 409 Conflict,
 *   Compacted → 410 Expired, FutureRevision → 504 Timeout ("Too large resource version"),
 *   InvalidKey/InvalidValue/InvalidArgument → 400 BadRequest, Closed/Unavailable → 503.
 * Anything else becomes a 500 InternalError.
 */
export function toApiError(err: unknown, ref?: ResourceRef): ApiError {
  if (err instanceof ApiError) return err;
  const target: ResourceRef = ref ?? { group: '', resource: 'unknown' };
  if (isStorageError(err)) {
    switch (err.code) {
      case 'KeyNotFound':
        return notFound(target);
      case 'KeyExists':
        return alreadyExists(target);
      case 'Conflict':
        return conflict(target);
      case 'Compacted':
        return expired(`The resourceVersion for the provided request is too old: ${err.message}`);
      case 'FutureRevision':
        return new ApiError(504, 'Timeout', `Too large resource version: ${err.message}`, {
          retryAfterSeconds: 1,
        });
      case 'InvalidKey':
      case 'InvalidValue':
      case 'InvalidArgument':
        return badRequest(err.message);
      case 'Closed':
      case 'Unavailable':
        return new ApiError(503, 'ServiceUnavailable', `storage is unavailable: ${err.message}`, {
          retryAfterSeconds: 1,
        });
    }
  }
  return internalError(errorMessage(err));
}
