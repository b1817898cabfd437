/**
 * What a verb handler of this folder is given: the request, already authenticated and
 * authorized, with its resource's registry and the server's services (kube-apiserver's
 * `handlers.RequestScope`, together with the request it serves). index.ts builds one per
 * request and runs the chain; each verb's file reads only what it needs from it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KubeObject } from '../../../api/object.js';
import type { AdmissionChain, AdmissionRequest } from '../admission/index.js';
import type { UserInfo } from '../../../api/auth/user.js';
import type { NodeProxyDeps } from '../node-proxy.js';
import type { Registry, WriteOptions } from '../registry.js';
import type { ResourceRequest } from '../request.js';
import type { ResourceInfo } from '../resources.js';
import type { ApiError } from '../status.js';
import type { WriteCheck } from '../strategy.js';
import type { WatchCache } from '../watchcache/cache.js';
import type { ResponseForm } from './response.js';

/**
 * The RBAC escalation check of one write (the strategy's checkEscalation, given the
 * writer's authority by ApiServer.escalationCheck): called with the object about to be
 * written and, for an update, the stored one.
 * @throws ApiError 403 Forbidden naming the rules the user does not hold.
 */
export type EscalationCheck = WriteCheck;

/** What handlers use of the API server beyond the request's registry; one per server. */
export interface ServerServices {
  /** The admission plugins (admission/index.ts). */
  readonly admission: AdmissionChain;
  /** The agents' tunnels (pods/log reaches the kubelet through them). */
  readonly tunnels: NodeProxyDeps['tunnels'];
  /** The server's clock, when one was injected (Table ages, managedFields times). */
  readonly now: (() => Date) | undefined;
  /** Seconds: a watch without `timeoutSeconds` lasts between this and twice this (--min-request-timeout). */
  readonly minRequestTimeoutSeconds: number;
  /** The resource's watch cache, started on first use. */
  watchCache(r: ResourceInfo): Promise<WatchCache>;
  /**
   * Escalation prevention of a write (the resource strategy's checkEscalation: Roles,
   * ClusterRoles and their bindings); undefined when there is nothing to check (see
   * ApiServer.escalationCheck).
   * @throws ApiError 404 when a binding's role does not exist.
   */
  escalationCheck(
    rr: ResourceRequest,
    user: UserInfo,
    source: KubeObject | undefined,
  ): Promise<EscalationCheck | undefined>;
  /** Answers a SelfSubjectAccessReview, SubjectAccessReview, SelfSubjectRulesReview or SelfSubjectReview. */
  review(r: ResourceInfo, body: KubeObject, user: UserInfo): Promise<KubeObject>;
  /**
   * Answers a TokenRequest for ServiceAccount `namespace`/`name` (token-request.ts).
   * @throws ApiError as createToken; 404 when the server issues no tokens.
   */
  tokenRequest(namespace: string, name: string, body: KubeObject): Promise<KubeObject>;
  /**
   * Evicts pod `namespace`/`name` with a policy/v1 Eviction, honouring its
   * PodDisruptionBudget (eviction.ts evictPod); `dryRun` is the request's.
   * @throws ApiError as evictPod (429 when the budget refuses).
   */
  evict(namespace: string, name: string, body: KubeObject, dryRun: boolean): Promise<KubeObject>;
}

/** One resource request, as the verb handlers see it. */
export interface RequestScope {
  readonly server: ServerServices;
  /** The resolved request: resource, namespace, name, subresource, verb. */
  readonly rr: ResourceRequest;
  /** The registry of `rr.resource`. */
  readonly registry: Registry;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The URL's query parameters. */
  readonly query: URLSearchParams;
  /** The authenticated (possibly impersonated) user. */
  readonly user: UserInfo;
  /** `dryRun=All`: everything but the store write. */
  readonly dryRun: boolean;
  /** The request's time (the server's clock). */
  readonly now: Date;
  /**
   * The answer's negotiated form (negotiation.ts, from `Accept`; a Table's includeObject),
   * settled before the verb runs: a header nothing satisfies is a 406 that changes nothing.
   */
  readonly form: ResponseForm;
  /** `<group>/<version>` (`v1` for core) of the resource, as managedFields record it. */
  readonly groupVersion: string;
  /** Fields a write of the main resource may not set through managedFields (`status` when there is a status subresource). */
  readonly resetFields: readonly string[];
  /**
   * The options of every write but server-side apply: owned bodies, admission's validate
   * phase as the registry's `admit` hook, and managedFields recorded for the field
   * manager (`fieldManager`, else the User-Agent's program name).
   */
  readonly write: WriteOptions;
  /**
   * Adds a warning to the request's `Warning: 299` headers (the request's recorder: repeats
   * dropped, long lists truncated as kube-apiserver's). Also the registry's `warn` hook in
   * `write`.
   */
  readonly warn: (message: string) => void;
  /** Admission's validate phase on the object about to be stored (the registry's `admit` hook). */
  readonly validate: (obj: KubeObject, old: KubeObject | undefined) => Promise<void>;
  /**
   * Admission's admit phase for `operation` (a create's decoded `body`).
   * @throws the first plugin's refusal (an ApiError).
   */
  admit(operation: AdmissionRequest['operation'], body?: KubeObject): Promise<void>;
}

/** A verb's handler: answers the request on `scope.res`, or throws an ApiError. */
export type ResourceHandler = (scope: RequestScope) => Promise<void>;

/** Whether `err` is the 404 of the very object `rr` names (not of another object it refers to). */
export function isNotFoundOf(err: ApiError, rr: ResourceRequest): boolean {
  const d = err.details;
  return d?.name === rr.name && d?.kind === rr.resource.resource && (d?.group ?? '') === rr.resource.group;
}

/** Whether `rr` is of core Namespaces (whose create also makes the `default` ServiceAccount). */
export function isNamespaces(rr: ResourceRequest): boolean {
  return rr.resource.resource === 'namespaces' && rr.resource.group === '';
}
