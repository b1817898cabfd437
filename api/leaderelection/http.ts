/**
 * A LeaseClient over plain `fetch` against the API server, for use until the shared REST
 * client (api/client/) can back leader election instead.
 */
import type { ConfiguredFetch } from '../client/fetch.js';
import type { Lease, LeaseClient } from './lease.js';
import { LeaseApiError } from './lease.js';

/** Options of httpLeaseClient(). */
export interface HttpLeaseClientOptions {
  /** Extra request headers (e.g. `Authorization: Bearer …`). */
  headers?: Record<string, string>;
  /** Per-request timeout, ms (default 10 000); a timed-out request throws without `.code`. */
  timeoutMs?: number;
  /** The fetch to use (default the global one); api/client/fetch.ts `configuredFetch` for TLS and credentials. */
  fetch?: ConfiguredFetch;
}

/**
 * A LeaseClient for the API server at `serverUrl` (e.g. `http://127.0.0.1:6443`), using
 * `/apis/coordination.k8s.io/v1/namespaces/{ns}/leases[/{name}]`: GET, POST, PUT with
 * JSON bodies. A non-2xx answer throws a LeaseApiError whose `code` is the HTTP status
 * (the metav1.Status `code` when the body is one) and `reason` the Status reason; network
 * failures and timeouts throw the fetch error (no `code`).
 */
export function httpLeaseClient(serverUrl: string, opts: HttpLeaseClientOptions = {}): LeaseClient {
  const base = serverUrl.replace(/\/+$/, '');
  const path = (namespace: string, name?: string) =>
    `${base}/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases` +
    (name === undefined ? '' : `/${encodeURIComponent(name)}`);

  const request = async (
    method: 'GET' | 'POST' | 'PUT',
    url: string,
    body: Lease | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Lease> => {
    const timeout = AbortSignal.timeout(opts.timeoutMs ?? 10_000);
    const res = await (opts.fetch ?? fetch)(url, {
      method,
      headers: {
        Accept: 'application/json',
        ...(body ? { 'Content-Type': 'application/json' } : {}),
        ...opts.headers,
      },
      body: body ? JSON.stringify(body) : undefined,
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const status = (parsed ?? {}) as { kind?: string; code?: unknown; reason?: unknown; message?: unknown };
      const isStatus = status.kind === 'Status';
      throw new LeaseApiError(
        isStatus && typeof status.code === 'number' ? status.code : res.status,
        isStatus && typeof status.message === 'string'
          ? status.message
          : `${method} ${url}: HTTP ${res.status} ${text.slice(0, 200)}`,
        isStatus && typeof status.reason === 'string' ? status.reason : undefined,
      );
    }
    if (typeof parsed !== 'object' || parsed === null) {
      throw new Error(`${method} ${url}: expected a Lease, got ${text.slice(0, 200)}`);
    }
    return parsed as Lease;
  };

  return {
    get: (namespace, name, signal) => request('GET', path(namespace, name), undefined, signal),
    create: (lease, signal) => request('POST', path(lease.metadata.namespace), lease, signal),
    update: (lease, signal) =>
      request('PUT', path(lease.metadata.namespace, lease.metadata.name), lease, signal),
  };
}
