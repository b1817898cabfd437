/**
 * The `coordination.k8s.io/v1` Lease as leader election reads and writes it, and the small
 * client interface it goes through (client-go `resourcelock.LeaseLock`).
 */
import type { KubeObject, ObjectMeta } from '../object.js';

/** LeaseSpec, wire form (times are MicroTime strings). */
export interface LeaseSpec {
  /** Who holds the lease; empty or absent: nobody (e.g. after a release). */
  holderIdentity?: string | null;
  /** How long, in whole seconds, others wait after the last renewal they saw before taking over. */
  leaseDurationSeconds?: number | null;
  /** MicroTime when the current holder acquired the lease. */
  acquireTime?: string | null;
  /** MicroTime of the holder's last renewal. */
  renewTime?: string | null;
  /** How many times the lease has changed holders. */
  leaseTransitions?: number | null;
  /** Coordinated leader election (alpha); kept as found, never set here. */
  strategy?: string | null;
  preferredHolder?: string | null;
}

/** A Lease object, wire form. */
export interface Lease extends KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta & { name: string; namespace: string };
  spec?: LeaseSpec;
}

/**
 * The Lease I/O leader election needs. Implementations return the object as the API
 * server stored it (with its new `metadata.resourceVersion`) and throw an error with a
 * numeric `.code` for API failures: 404 from get() when the Lease does not exist, 409 from
 * create() when it already exists and from update() when `metadata.resourceVersion` is
 * stale (someone else wrote first). Any other throw counts as a failed attempt.
 * `signal` aborts a request whose round has run out of time.
 */
export interface LeaseClient {
  get(namespace: string, name: string, signal?: AbortSignal): Promise<Lease>;
  create(lease: Lease, signal?: AbortSignal): Promise<Lease>;
  update(lease: Lease, signal?: AbortSignal): Promise<Lease>;
}

/** An API error as thrown by a LeaseClient: the HTTP status in `code`, the Status reason if known. */
export class LeaseApiError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly reason?: string,
  ) {
    super(message);
    this.name = 'LeaseApiError';
  }
}

/**
 * The HTTP status in the `.code` of an error thrown by a LeaseClient, if it has one.
 * Only 100–599 counts: a DOMException (an aborted fetch) has a small numeric `code` too.
 */
export function errorCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' && code >= 100 && code <= 599 ? code : undefined;
}

/** Whether `err` is a 404 Not Found. */
export function isNotFound(err: unknown): boolean {
  return errorCode(err) === 404;
}

/** Whether `err` is a 409 Conflict (stale resourceVersion, or already exists). */
export function isConflict(err: unknown): boolean {
  return errorCode(err) === 409;
}

/**
 * Formats `ms` (since the epoch) as a metav1.MicroTime: RFC 3339 in UTC with exactly six
 * fractional digits, e.g. `2026-01-01T00:00:00.123000Z` (a JS clock has ms precision).
 */
export function formatMicroTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * Parses an RFC 3339 time (any fraction length, `Z` or an offset) to ms since the epoch,
 * truncating below the millisecond; undefined when absent or unparseable.
 */
export function parseMicroTime(s: string | null | undefined): number | undefined {
  if (typeof s !== 'string' || s === '') return undefined;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : t;
}
