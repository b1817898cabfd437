/**
 * A small REST client for the Kubernetes API (client-go's rest.RESTClient plus the typed
 * verbs of its dynamic client): JSON over node:http/https with a keep-alive agent,
 * `metav1.Status` errors as `ApiStatusError`, per-request timeouts, and watches as async
 * iterables of events.
 *
 * Connection settings take the shape a kubeconfig gives (server, CA, bearer token, client
 * certificate and key), so TLS and authentication need no API change when the server
 * gains them.
 *
 * Why one file of some 600 lines: every verb and the watch go through the same
 * connection state (agent, headers, base path, deadlines) and the same
 * request/response path (`open`, Status decoding, timeouts); split by verb, each part would
 * need that private state handed to it, as client-go keeps rest.Request in one file too.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import type { IncomingMessage } from 'node:http';
import { createSecureContext, type SecureContext } from 'node:tls';
import { urlToHttpOptions } from 'node:url';
import type { KubeList, KubeObject } from '../object.js';
import type { FieldSelector } from '../meta/fields.js';
import type { LabelSelector } from '../meta/labels.js';
import { ConnectingAgent, type Connect } from './connect.js';
import { ApiStatusError, RequestTimeoutError } from './errors.js';
import type { Status } from './errors.js';
import { loadKubeconfig } from './kubeconfig.js';
import type { KubeconfigOptions } from './kubeconfig.js';
import { resourcePath } from './resource.js';
import type { ResourceRef } from './resource.js';
import { decodeWatchStream } from './watch.js';
import type { WatchEvent, WatchStream } from './watch.js';

/** How to reach and authenticate to an API server; PEM material is given as text, not paths. */
export interface RestClientConfig {
  /** Base URL, `http://127.0.0.1:6443` or `https://host:6443` (a path prefix is kept). */
  server: string;
  /**
   * Other API servers of the same cluster (same CA, the same credential works on each),
   * moved to in turn when the current one stops answering: see RestClient's failover.
   * Default none: every request goes to `server`.
   */
  alternateServers?: readonly string[];
  /**
   * Opens each connection instead of dialing `server` over TCP (and TLS): the requests are
   * plain HTTP/1.1 over what it returns, and `ca`, `cert`, `key`, `secureContext`,
   * `insecureSkipTLSVerify` and `tlsServerName` are not used (the connection says who the
   * client is: the control process's in-process connections, ApiServer.inProcessConnector).
   * `server` is still the URL requests name (its path prefix kept) and that `server`
   * reports. Not with `alternateServers` (one server: the one `connect` reaches).
   */
  connect?: Connect;
  /** Bearer token, sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** PEM CA bundle that signed the server's certificate (default: Node's trusted roots). */
  ca?: string;
  /** PEM client certificate (with `key`) for TLS client authentication. */
  cert?: string;
  /** PEM private key of `cert`. */
  key?: string;
  /**
   * The TLS context of every connection (tls.createSecureContext with the CA, certificate
   * and key), for several clients to share one: many clients in one process (hollow nodes)
   * keep one context between them. `ca`, `cert` and `key` still say what it holds (a cert
   * without key is refused as without it). Default: one made from `ca`, `cert` and `key`
   * when the client is constructed, for all its connections; Node's agent would make one
   * per connection, parsing the key and certificates each time (3.4 % of the control
   * process in bench:scale's rollout, where the controllers open connections in bursts).
   */
  secureContext?: SecureContext;
  /** Skip verification of the server's certificate (kubeconfig `insecure-skip-tls-verify`). */
  insecureSkipTLSVerify?: boolean;
  /** Name to verify the server's certificate against instead of the URL's host (`tls-server-name`). */
  tlsServerName?: string;
  /** `User-Agent` header; default `k8ts-client`. */
  userAgent?: string;
  /** Deadline of a non-watch request, milliseconds, from sending to the end of the body; default 30 000. */
  timeoutMs?: number;
  /**
   * A fence: once this signal aborts, every request of the client still in flight is
   * aborted (its watch ended) and every later one rejects at once with the signal's
   * reason, before anything is sent. The controller manager's and the scheduler's clients
   * are fenced by their leadership term (control/main.ts), so that work still running
   * after the Lease was lost (a reconcile creating pods in slow-start batches) cannot write
   * beside the next leader's, as kube-controller-manager and kube-scheduler exit when they
   * lose their Lease. Default none.
   */
  fence?: AbortSignal;
  /**
   * How long an idle pooled connection is kept, milliseconds; default 4 000 (see
   * IDLE_SOCKET_TIMEOUT_MS). Longer keeps one connection open between requests a few
   * seconds apart (a hollow node's heartbeats) instead of a TLS handshake for each; it
   * must stay below the server's keep-alive timeout (k8ts: 60 s).
   */
  idleTimeoutMs?: number;
  /**
   * At most this many connections to each API server at once for requests other than
   * watches (the agent's maxSockets); a request beyond them waits, first come first served,
   * for one to be free, its deadline already running, and rejects at that deadline (or its
   * abort) while still waiting. Watches have connections of their own, outside the bound:
   * each holds one for as long as it is open, and a client with more watches than
   * connections (the controller manager's informers) would otherwise have none left for
   * requests. Many clients in one process (hollow nodes) bound their connections so:
   * without it every concurrent request opens a connection of its own, as many as a node
   * has pod status writes in flight when the server is slow, or a controller has pod
   * creates or deletes in a burst. Default: no limit (Node's agent).
   */
  maxConnections?: number;
}

/** Patch flavours, as `kubectl patch --type` names them (`apply` is server-side apply). */
export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

/** A label selector as the `?labelSelector=` string or a parsed selector (sent in canonical form). */
export type LabelSelectorInput = string | LabelSelector;
/** A field selector as the `?fieldSelector=` string or a parsed selector. */
export type FieldSelectorInput = string | FieldSelector;

/** Options every call takes. */
export interface CallOptions {
  /** Aborts the request; the call then rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Options of `list` (metav1.ListOptions). */
export interface ListOptions extends CallOptions {
  /** Namespace to list in; omitted: all namespaces (for namespaced resources). */
  namespace?: string;
  labelSelector?: LabelSelectorInput;
  fieldSelector?: FieldSelectorInput;
  /** Page size (objects); the response's `metadata.continue` fetches the next page. */
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
}

/** Options of `watch` (metav1.ListOptions with `watch=true`). */
export interface WatchOptions extends CallOptions {
  namespace?: string;
  labelSelector?: LabelSelectorInput;
  fieldSelector?: FieldSelectorInput;
  /** Start after this resourceVersion; omitted or '0': the current state first, as ADDED events. */
  resourceVersion?: string;
  /** Ask for BOOKMARK events (progress notifications carrying only a resourceVersion). */
  allowWatchBookmarks?: boolean;
  /**
   * The server ends the watch after this many seconds. The client also gives up (the
   * iteration throws RequestTimeoutError) if the stream is still open 30 s after that,
   * which catches connections that died without a reset.
   */
  timeoutSeconds?: number;
  sendInitialEvents?: boolean;
}

/** Options of writes (create, update, patch). */
export interface WriteOptions extends CallOptions {
  /** The field manager recorded in managedFields (required for `apply` patches). */
  fieldManager?: string;
  /** Validate and admit, but do not persist (`dryRun=All`). */
  dryRun?: boolean;
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
}

/** Options of `create`. */
export interface CreateOptions extends WriteOptions {
  /** Namespace to create in; default: the object's `metadata.namespace`. */
  namespace?: string;
  /**
   * POST to a subresource of the object named by `metadata.name` instead of the
   * collection: `binding` (a Binding to pods/<name>/binding), `eviction`.
   */
  subresource?: string;
}

/** Options of `update`. */
export interface UpdateOptions extends WriteOptions {
  /** PUT a subresource (`status`, `scale`). */
  subresource?: string;
}

/** Options of `patch`. */
export interface PatchOptions extends WriteOptions {
  /** Server-side apply only: take ownership of conflicting fields. */
  force?: boolean;
  subresource?: string;
}

/** Options of `delete` (metav1.DeleteOptions). */
export interface DeleteOptions extends CallOptions {
  /** Seconds before the object is deleted (pods: default from the pod spec; 0 = immediately). */
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  /** Delete only if the object still has this uid / resourceVersion (else 409 Conflict). */
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

/** Options of `request`. */
export interface RequestOptions extends CallOptions {
  query?: URLSearchParams | Record<string, string | undefined>;
  /** Sent as JSON unless it is a string. */
  body?: unknown;
  contentType?: string;
  accept?: string;
  /** Overrides the client's `timeoutMs`. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/**
 * How long an idle pooled connection is kept (ms): less than kube-apiserver's and k8ts'
 * idle timeouts (60 s and more), and less than Node's own servers' 5 s default, so that the
 * client, never the server, closes an idle connection.
 */
const IDLE_SOCKET_TIMEOUT_MS = 4_000;

/** How long after its `timeoutSeconds` a watch may stay open before the client gives up on it. */
const WATCH_GRACE_MS = 30_000;

/**
 * Node's error codes that say the server did not answer (the connection was refused,
 * broken or never made), as opposed to an answer: the ones after which a client with
 * several API servers moves to the next. (client-go's IsConnectionReset /
 * IsProbableEOF, and net.OpError's dial errors.)
 */
const UNANSWERED = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

/** Whether `err` says the server did not answer (see UNANSWERED; a request timeout too). */
export function isServerUnanswered(err: unknown): boolean {
  if (err instanceof RequestTimeoutError) return true;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && UNANSWERED.has(code);
}

/** One API server a client may talk to: its URL and what every request to it needs. */
interface Endpoint {
  readonly server: string;
  readonly base: URL;
  /** The connection part of every request's options (protocol, host, port, auth), from `base`. */
  readonly target: http.RequestOptions;
  /** `base`'s path without trailing slashes, prefixed to every request path. */
  readonly basePath: string;
}

/**
 * @param plain the requests go over plain HTTP whatever the scheme (RestClientConfig.connect).
 * @throws TypeError for a server URL that is not http(s).
 */
function endpointOf(server: string, plain = false): Endpoint {
  let base: URL;
  try {
    base = new URL(server);
  } catch {
    throw new TypeError(`server ${JSON.stringify(server)} is not a URL`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:')
    throw new TypeError(`server ${server}: only http:// and https:// are supported`);
  const { protocol, hostname, port, auth } = urlToHttpOptions(base);
  return {
    server,
    base,
    target: { protocol: plain ? 'http:' : protocol, hostname, port, ...(auth !== undefined ? { auth } : {}) },
    basePath: base.pathname.replace(/\/+$/, ''),
  };
}

/**
 * Talks to one API server.
 *
 *   const c = RestClient.fromKubeconfig(path);
 *   const pod = await c.get<Pod>(resources.pods, 'default', 'web-0');
 *   for await (const ev of await c.watch(resources.pods, { namespace: 'default', resourceVersion }))
 *
 * Every call rejects with `ApiStatusError` when the server answers non-2xx (its
 * metav1.Status parsed), with `RequestTimeoutError` when it does not finish within the
 * timeout, with Node's own error (`code` ECONNREFUSED, ECONNRESET, ...) when the
 * connection fails, and with the signal's reason when aborted. Namespaced verbs on one
 * object throw a TypeError without a namespace. Connections are kept alive; call
 * `close()` to release them.
 *
 * Failover, with `alternateServers` (a cluster of several API servers over one store, as
 * k3s agents' client-side load balancer fails over between servers): requests go to the
 * current server, first `server`. When it does not answer (isServerUnanswered: refused,
 * reset, unreachable, timed out; also a watch stream broken so), the client moves to the
 * next server in turn for every later request, and ends its other watches on the one it
 * left, so that informers resume from their resourceVersion on the new one at once, as
 * every API server of the cluster serves the same revisions. A request that was refused
 * (nothing was sent) is sent again to the next server, each server tried once; any other
 * request is retried so only when it is a GET (client-go retries only reads after a
 * reset): a write whose connection broke may have been done, so it rejects and its caller
 * decides. An answer, even 5xx, is an answer: the client stays.
 */
export class RestClient {
  private readonly endpoints: readonly Endpoint[];
  /** Index in `endpoints` of the server requests go to now. */
  private current = 0;
  /** Open watches per endpoint index, ended when the client leaves that server. */
  private readonly watchesOn = new Map<number, Set<() => void>>();
  private readonly transport: typeof http | typeof https;
  private readonly agent: http.Agent;
  /** The agent of watches: `agent` itself unless maxConnections bounds it (see there). */
  private readonly watchAgent: http.Agent;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly tlsServerName: string | undefined;
  private readonly fence: AbortSignal | undefined;

  /**
   * @throws TypeError for a server URL that is not http(s), servers of different schemes,
   *   or a certificate without key.
   */
  constructor(config: RestClientConfig) {
    this.endpoints = [config.server, ...(config.alternateServers ?? [])]
      .filter((s, i, all) => all.indexOf(s) === i)
      .map((s) => endpointOf(s, config.connect !== undefined));
    if (config.connect && this.endpoints.length > 1)
      throw new TypeError('a client with connect has one server: no alternateServers');
    const base = this.endpoints[0]!.base;
    if (this.endpoints.some((e) => e.base.protocol !== base.protocol))
      throw new TypeError('all API servers of a client must be http://, or all https://');
    if ((config.cert === undefined) !== (config.key === undefined))
      throw new TypeError('a client certificate needs its key (cert and key go together)');
    if (
      config.maxConnections !== undefined &&
      !(Number.isSafeInteger(config.maxConnections) && config.maxConnections >= 1)
    )
      throw new TypeError(
        `maxConnections must be a whole number of at least 1, got ${config.maxConnections}`,
      );
    this.timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.tlsServerName = config.connect ? undefined : config.tlsServerName;
    this.fence = config.fence;
    const connect = config.connect;
    const tls = base.protocol === 'https:' && !connect;
    this.transport = tls ? https : http;
    // Idle pooled sockets are closed after IDLE_SOCKET_TIMEOUT_MS, before the server would
    // close them (its keep-alive timeout is longer): reusing a socket the server is closing
    // at that instant fails the request with "socket hang up". (Node's agent sets no idle
    // timeout of its own when its `timeout` is 0, whatever the server's Keep-Alive hint
    // says.) A socket in use is not affected: only the agent's free sockets are destroyed on
    // timeout, and this client bounds requests with its own timers.
    const idleTimeoutMs = config.idleTimeoutMs ?? IDLE_SOCKET_TIMEOUT_MS;
    const secureContext = tls
      ? (config.secureContext ??
        createSecureContext({
          ...(config.ca !== undefined ? { ca: config.ca } : {}),
          ...(config.cert !== undefined ? { cert: config.cert, key: config.key } : {}),
        }))
      : undefined;
    const newAgent = (maxSockets: number | undefined): http.Agent => {
      const pool = {
        keepAlive: true,
        timeout: idleTimeoutMs,
        ...(maxSockets !== undefined ? { maxSockets } : {}),
      };
      if (connect) return new ConnectingAgent(pool, connect);
      return tls
        ? new https.Agent({
            ...pool,
            secureContext,
            rejectUnauthorized: config.insecureSkipTLSVerify !== true,
          })
        : new http.Agent(pool);
    };
    this.agent = newAgent(config.maxConnections);
    this.watchAgent = config.maxConnections !== undefined ? newAgent(undefined) : this.agent;
    this.headers = {
      'User-Agent': config.userAgent ?? 'k8ts-client',
      ...(config.token !== undefined ? { Authorization: `Bearer ${config.token}` } : {}),
    };
  }

  /** The base URL requests go to now (`server` until the client fails over). */
  get server(): string {
    return this.endpoints[this.current]!.server;
  }

  /** Every API server this client may use, `server` first as configured. */
  get servers(): readonly string[] {
    return this.endpoints.map((e) => e.server);
  }

  /**
   * Moves to the next server after `failed` (an endpoint index) did not answer, unless an
   * earlier failure moved already; ends the watches still open on `failed`.
   */
  private failOver(failed: number): void {
    if (this.endpoints.length < 2 || this.current !== failed) return;
    this.current = (failed + 1) % this.endpoints.length;
    const open = this.watchesOn.get(failed);
    this.watchesOn.delete(failed);
    for (const end of open ?? []) end();
  }

  /**
   * A client for the current (or named) context of the kubeconfig at `path`.
   * @throws KubeconfigError (see loadKubeconfig), TypeError (see the constructor).
   */
  static fromKubeconfig(path: string, opts: KubeconfigOptions & { userAgent?: string } = {}): RestClient {
    const { config } = loadKubeconfig(path, opts);
    return new RestClient({
      ...config,
      ...(opts.userAgent !== undefined ? { userAgent: opts.userAgent } : {}),
    });
  }

  /** GET one object (or a subresource of it, e.g. `status`, `scale`). */
  get<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
    opts: CallOptions & { subresource?: string } = {},
  ): Promise<T> {
    return this.request<T>('GET', this.objectPath(ref, namespace, name, opts.subresource), opts);
  }

  /** LIST a collection (one page when `limit` is set; follow `metadata.continue` for the rest). */
  list<T extends KubeObject = KubeObject>(ref: ResourceRef, opts: ListOptions = {}): Promise<KubeList<T>> {
    return this.request<KubeList<T>>('GET', resourcePath(ref, opts.namespace), {
      ...(opts.signal ? { signal: opts.signal } : {}),
      query: {
        labelSelector: selectorString(opts.labelSelector),
        fieldSelector: selectorString(opts.fieldSelector),
        limit: opts.limit !== undefined ? String(opts.limit) : undefined,
        continue: opts.continue,
        resourceVersion: opts.resourceVersion,
        resourceVersionMatch: opts.resourceVersionMatch,
      },
    });
  }

  /** POST a new object (its namespace from `opts.namespace` or its metadata), or to a subresource. */
  create<T extends KubeObject = KubeObject>(ref: ResourceRef, obj: T, opts: CreateOptions = {}): Promise<T> {
    const namespace = opts.namespace ?? obj.metadata?.namespace;
    const path =
      opts.subresource !== undefined
        ? this.objectPath(ref, namespace, requireName(obj), opts.subresource)
        : this.collectionPath(ref, namespace);
    return this.request<T>('POST', path, { ...writeRequest(opts), body: obj });
  }

  /** PUT an object (replace); `metadata.resourceVersion` makes it a compare-and-swap (409 Conflict when stale). */
  update<T extends KubeObject = KubeObject>(ref: ResourceRef, obj: T, opts: UpdateOptions = {}): Promise<T> {
    const path = this.objectPath(ref, obj.metadata?.namespace, requireName(obj), opts.subresource);
    return this.request<T>('PUT', path, { ...writeRequest(opts), body: obj });
  }

  /** PUT the `status` subresource (only status changes are kept by the server). */
  updateStatus<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    obj: T,
    opts: WriteOptions = {},
  ): Promise<T> {
    return this.update(ref, obj, { ...opts, subresource: 'status' });
  }

  /**
   * PATCH an object: `json` (RFC 6902 operations array), `merge` (RFC 7386), `strategic`
   * (strategic merge patch), `apply` (server-side apply; `fieldManager` required).
   * @throws TypeError for an apply patch without fieldManager.
   */
  patch<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
    type: PatchType,
    patch: unknown,
    opts: PatchOptions = {},
  ): Promise<T> {
    if (type === 'apply' && !opts.fieldManager) throw new TypeError('an apply patch needs a fieldManager');
    const req = writeRequest(opts);
    if (opts.force) req.query.force = 'true';
    return this.request<T>('PATCH', this.objectPath(ref, namespace, name, opts.subresource), {
      ...req,
      body: patch,
      contentType: PATCH_CONTENT_TYPES[type],
    });
  }

  /**
   * DELETE an object. Resolves with what the server returns: the object (still present
   * with a deletionTimestamp while finalizers or a grace period hold it, or its last
   * state) or a Success Status.
   */
  delete<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
    opts: DeleteOptions = {},
  ): Promise<T | Status> {
    const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
    if (opts.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = opts.gracePeriodSeconds;
    if (opts.propagationPolicy !== undefined) body.propagationPolicy = opts.propagationPolicy;
    if (opts.preconditions !== undefined) body.preconditions = opts.preconditions;
    if (opts.dryRun) body.dryRun = ['All'];
    return this.request<T | Status>('DELETE', this.objectPath(ref, namespace, name), {
      ...(opts.signal ? { signal: opts.signal } : {}),
      body,
    });
  }

  /**
   * Opens a watch. Resolves once the server has answered 200 (rejects with ApiStatusError
   * otherwise, e.g. 410 for a too-old resourceVersion); iterate the stream for events —
   * ERROR events are yielded as they come, not thrown. The stream ends when the server
   * ends it (`timeoutSeconds`), on `stop()`, or on `opts.signal`.
   */
  async watch<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    watchOpts: WatchOptions = {},
  ): Promise<WatchStream<T>> {
    const signal = this.fenced(watchOpts.signal);
    const opts = { ...watchOpts, ...(signal ? { signal } : {}) };
    const path = resourcePath(ref, opts.namespace);
    const query = {
      watch: 'true',
      labelSelector: selectorString(opts.labelSelector),
      fieldSelector: selectorString(opts.fieldSelector),
      resourceVersion: opts.resourceVersion,
      allowWatchBookmarks: opts.allowWatchBookmarks ? 'true' : undefined,
      timeoutSeconds: opts.timeoutSeconds !== undefined ? String(opts.timeoutSeconds) : undefined,
      sendInitialEvents: opts.sendInitialEvents ? 'true' : undefined,
    };
    const guardMs =
      opts.timeoutSeconds !== undefined ? opts.timeoutSeconds * 1000 + WATCH_GRACE_MS : undefined;
    const { req, res, endpoint } = await this.open('GET', path, {
      query,
      ...(opts.signal ? { signal: opts.signal } : {}),
      headerTimeoutMs: this.timeoutMs,
      watch: true,
    });
    if (res.statusCode !== 200) {
      const body = await readBody(res);
      throw ApiStatusError.fromResponse(res.statusCode ?? 500, body);
    }
    let stopped = false;
    let guard: NodeJS.Timeout | undefined;
    // Ended when the client fails over from this server: the consumer sees the stream
    // break (ECONNRESET) and watches again, on the next server.
    const leave = () => {
      if (!stopped)
        res.destroy(
          Object.assign(new Error(`left API server ${this.endpoints[endpoint]!.server}`), {
            code: 'ECONNRESET',
          }),
        );
    };
    let watches = this.watchesOn.get(endpoint);
    if (!watches) this.watchesOn.set(endpoint, (watches = new Set()));
    watches.add(leave);
    const finish = () => {
      stopped = true;
      clearTimeout(guard);
      opts.signal?.removeEventListener('abort', stop);
      this.watchesOn.get(endpoint)?.delete(leave);
    };
    const stop = () => {
      if (stopped) return;
      finish();
      res.destroy();
      req.destroy();
    };
    opts.signal?.addEventListener('abort', stop, { once: true });
    if (guardMs !== undefined) {
      guard = setTimeout(() => {
        if (!stopped) res.destroy(new RequestTimeoutError('WATCH', path, guardMs));
      }, guardMs);
      guard.unref();
    }
    const failOver = (i: number) => this.failOver(i);
    const events = async function* (): AsyncGenerator<WatchEvent<T>, void, undefined> {
      try {
        yield* decodeWatchStream<T>(res);
        // The server ended the stream: the connection goes back to the pool.
        finish();
      } catch (err) {
        const wasStopped = stopped;
        stop();
        if (wasStopped) return;
        // A stream the server broke off says it went away (kill -9 resets its connections).
        if (isServerUnanswered(err)) failOver(endpoint);
        throw err;
      } finally {
        // An early `break` by the consumer: close the connection.
        stop();
      }
    };
    let iterated = false;
    return {
      stop,
      [Symbol.asyncIterator]() {
        if (iterated) throw new Error('a watch stream can be iterated once');
        iterated = true;
        return events();
      },
    };
  }

  /**
   * Any JSON request, for paths the typed verbs do not cover (`/version`, discovery).
   * Resolves with the parsed body (`{}` for an empty one).
   */
  async request<T>(method: string, path: string, requestOpts: RequestOptions = {}): Promise<T> {
    const signal = this.fenced(requestOpts.signal);
    const opts = { ...requestOpts, ...(signal ? { signal } : {}) };
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const { res, endpoint } = await this.open(method, path, { ...opts, deadlineMs: timeoutMs });
    let body: string;
    try {
      body = await readBody(res);
    } catch (err) {
      // The server went away (or stalled past the deadline) in the middle of its answer.
      if (!opts.signal?.aborted && isServerUnanswered(err)) this.failOver(endpoint);
      throw err;
    }
    const code = res.statusCode ?? 500;
    if (code < 200 || code >= 300) throw ApiStatusError.fromResponse(code, body);
    if (body.trim() === '') return {} as T;
    try {
      return JSON.parse(body) as T;
    } catch {
      throw ApiStatusError.fromResponse(
        500,
        `${method} ${path}: the response is not JSON: ${body.slice(0, 200)}`,
      );
    }
  }

  /** A call's signal, aborted also when the client's fence is (see RestClientConfig.fence). */
  private fenced(signal: AbortSignal | undefined): AbortSignal | undefined {
    if (!this.fence) return signal;
    return signal ? AbortSignal.any([signal, this.fence]) : this.fence;
  }

  /** Releases the kept-alive connections; open watches are closed too. */
  close(): void {
    this.agent.destroy();
    this.watchAgent.destroy();
  }

  private collectionPath(ref: ResourceRef, namespace: string | undefined): string {
    if (ref.namespaced && namespace === undefined)
      throw new TypeError(`${ref.resource} are namespaced: a namespace is required`);
    return resourcePath(ref, namespace);
  }

  private objectPath(
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
    subresource?: string,
  ): string {
    if (ref.namespaced && namespace === undefined)
      throw new TypeError(`${ref.resource} are namespaced: a namespace is required`);
    if (name === '') throw new TypeError('an object name is required');
    return resourcePath(ref, namespace, name, subresource);
  }

  /**
   * The path (with query) a request goes to, as the WHATWG URL of `base` with `path`
   * appended and `query` set would have it. Plain paths skip building that URL (it costs
   * more than the rest of a request's set-up); anything the URL would rewrite (dot
   * segments, characters it escapes, a base with its own query) still goes through it.
   */
  private url(
    endpoint: Endpoint,
    path: string,
    query: RequestOptions['query'],
  ): { pathname: string; path: string } {
    const joined = `${endpoint.basePath}${path}`;
    if (endpoint.base.search !== '' || !PLAIN_PATH.test(joined) || DOT_SEGMENT.test(joined)) {
      const url = new URL(endpoint.base.toString());
      url.pathname = joined;
      if (query instanceof URLSearchParams) url.search = query.toString();
      else if (query) {
        for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, v);
      }
      return { pathname: url.pathname, path: `${url.pathname}${url.search}` };
    }
    let search: string;
    if (query instanceof URLSearchParams) search = query.toString();
    else {
      const params = new URLSearchParams();
      if (query) for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, v);
      search = params.toString();
    }
    return { pathname: joined, path: search === '' ? joined : `${joined}?${search}` };
  }

  /**
   * Sends a request to the current server and resolves with the response once its headers
   * are in, failing over as the class comment says; `endpoint` is the index of the server
   * that answered. With `deadlineMs`, the whole exchange (including reading the body) must
   * finish in time; with `headerTimeoutMs`, only the headers must.
   */
  private async open(
    method: string,
    path: string,
    opts: RequestOptions & { deadlineMs?: number; headerTimeoutMs?: number; watch?: boolean },
  ): Promise<{ req: http.ClientRequest; res: IncomingMessage; endpoint: number }> {
    for (let tried = 1; ; tried++) {
      const endpoint = this.current;
      try {
        return { ...(await this.openOn(endpoint, method, path, opts)), endpoint };
      } catch (err) {
        if (opts.signal?.aborted || !isServerUnanswered(err)) throw err;
        this.failOver(endpoint);
        const unsent = (err as NodeJS.ErrnoException).code === 'ECONNREFUSED';
        if (tried >= this.endpoints.length || !(unsent || method === 'GET')) throw err;
      }
    }
  }

  private openOn(
    endpoint: number,
    method: string,
    path: string,
    opts: RequestOptions & { deadlineMs?: number; headerTimeoutMs?: number; watch?: boolean },
  ): Promise<{ req: http.ClientRequest; res: IncomingMessage }> {
    const to = this.endpoints[endpoint]!;
    const url = this.url(to, path, opts.query);
    const headers: Record<string, string> = { ...this.headers, Accept: opts.accept ?? 'application/json' };
    let payload: string | undefined;
    if (opts.body !== undefined) {
      payload = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      headers['Content-Type'] = opts.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    const signal = opts.signal;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const req = this.transport.request({
        ...to.target,
        path: url.path,
        method,
        headers,
        agent: opts.watch ? this.watchAgent : this.agent,
        ...(this.tlsServerName !== undefined ? { servername: this.tlsServerName } : {}),
      });
      const limitMs = opts.deadlineMs ?? opts.headerTimeoutMs;
      let response: IncomingMessage | undefined;
      const fail = (err: Error) => {
        req.destroy(err);
        response?.destroy(err);
        // A request still waiting for a connection (maxConnections) reports the error of
        // its destroy() only once one is free: the caller is told now.
        if (!response) {
          cleanup();
          reject(err);
        }
      };
      let timer: NodeJS.Timeout | undefined;
      if (limitMs !== undefined) {
        timer = setTimeout(() => fail(new RequestTimeoutError(method, url.pathname, limitMs)), limitMs);
        timer.unref();
      }
      const onAbort = () => fail(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      signal?.addEventListener('abort', onAbort, { once: true });
      const cleanup = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      req.on('error', (err) => {
        cleanup();
        reject(err);
      });
      req.once('response', (res) => {
        response = res;
        // Whoever reads the body sees its errors; this only keeps an unread one from
        // becoming an uncaught exception.
        res.on('error', () => {});
        // With a deadline, the timer and the abort listener stay until the body is read.
        if (opts.deadlineMs === undefined) cleanup();
        else res.once('close', cleanup);
        resolve({ req, res });
      });
      req.end(payload);
    });
  }
}

function selectorString(s: LabelSelectorInput | FieldSelectorInput | undefined): string | undefined {
  if (s === undefined) return undefined;
  const text = typeof s === 'string' ? s : s.toString();
  return text === '' ? undefined : text;
}

function requireName(obj: KubeObject): string {
  const name = obj.metadata?.name;
  if (!name) throw new TypeError('the object has no metadata.name');
  return name;
}

function writeRequest(opts: WriteOptions): {
  query: Record<string, string | undefined>;
  signal?: AbortSignal;
} {
  return {
    query: {
      fieldManager: opts.fieldManager,
      dryRun: opts.dryRun ? 'All' : undefined,
      fieldValidation: opts.fieldValidation,
    },
    ...(opts.signal ? { signal: opts.signal } : {}),
  };
}

/** A path the URL parser keeps as it is: a leading slash and characters it does not escape. */
const PLAIN_PATH = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/;
/** A segment starting with a dot (or an escaped one) may be a dot segment the URL resolves. */
const DOT_SEGMENT = /\/(\.|%2e)/i;

/**
 * The whole body of a response as UTF-8, read through 'data' events (cheaper than an async
 * iterator per response). Rejects with the response's error, or with a premature-close
 * error when it closes before its end (as the stream iterator does).
 */
function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    if (res.errored) {
      reject(res.errored);
      return;
    }
    if (res.destroyed) {
      reject(prematureClose());
      return;
    }
    const chunks: Buffer[] = [];
    let ended = false;
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.once('end', () => {
      ended = true;
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    res.once('error', reject);
    res.once('close', () => {
      if (!ended) reject(prematureClose());
    });
  });
}

/** The error an interrupted response gives, as Node's stream utilities name it. */
function prematureClose(): Error {
  return Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}
