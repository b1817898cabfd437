/**
 * The one place where Docker Engine errors (dockerode's: an HTTP status in `statusCode`,
 * docker's message in `json.message`, or a socket error `code`) become CriErrors.
 */
import { CriError, type CriErrorCode } from '../errors.js';

/** Socket errors that mean the engine is not there (down, restarting, wrong socket). */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOENT',
  'EACCES',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
]);

/** What a dockerode error tells. */
export interface DockerErrorInfo {
  statusCode?: number;
  /** Docker's own message (`No such container: ...`), else the error's message. */
  message: string;
  /** A socket error code (`ECONNREFUSED`, ...). */
  code?: string;
}

/** Reads statusCode, docker's message and the socket error code off anything thrown. */
export function dockerErrorInfo(err: unknown): DockerErrorInfo {
  if (!err || typeof err !== 'object') return { message: String(err) };
  const e = err as {
    statusCode?: unknown;
    json?: unknown;
    message?: unknown;
    code?: unknown;
    reason?: unknown;
  };
  const info: DockerErrorInfo = { message: typeof e.message === 'string' ? e.message : String(err) };
  if (typeof e.statusCode === 'number') info.statusCode = e.statusCode;
  if (typeof e.code === 'string') info.code = e.code;
  const json = e.json;
  if (json && typeof json === 'object' && typeof (json as { message?: unknown }).message === 'string') {
    info.message = (json as { message: string }).message;
  } else if (typeof json === 'string' && json.trim() !== '') {
    info.message = json.trim();
  }
  return info;
}

/** The CriError code of a Docker error: 404 NotFound, 409 conflict, 400 bad request, socket errors Unavailable. */
export function criCodeOf(info: DockerErrorInfo): CriErrorCode {
  if (info.code !== undefined && UNREACHABLE.has(info.code)) return 'Unavailable';
  switch (info.statusCode) {
    case 404:
      return 'NotFound';
    case 409:
      return /already in use|name .* is reserved/i.test(info.message)
        ? 'AlreadyExists'
        : 'FailedPrecondition';
    case 400:
      return 'InvalidArgument';
    case 403: // a network in use, an overlapping subnet
      return 'FailedPrecondition';
    case 503:
      return 'Unavailable';
    default:
      return 'Internal';
  }
}

/** The CriError for `err` thrown while doing `what` (e.g. `start container 3f2a...`). */
export function toCriError(err: unknown, what: string): CriError {
  if (err instanceof CriError) return err;
  const info = dockerErrorInfo(err);
  const code = criCodeOf(info);
  const detail =
    code === 'Unavailable' ? `docker is not reachable (${info.code ?? info.message})` : info.message;
  return new CriError(code, `${what}: ${detail}`, { cause: err });
}
