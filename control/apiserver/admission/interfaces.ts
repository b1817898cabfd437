/**
 * What an admission plugin sees and answers (k8s.io/apiserver/pkg/admission's Attributes,
 * MutationInterface and ValidationInterface, reduced to what k8ts' plugins use).
 *
 * A request meets admission twice, after authentication and authorization:
 *
 *   admit(request)    before the registry: the verb, the resource and the names of the
 *                     URL, and for a create the decoded body (NamespaceLifecycle: does the
 *                     namespace exist, is it terminating, may it be deleted).
 *   validate(attrs)   inside the registry, just before the write: the object as it will
 *                     be stored (defaulted and valid) and the stored one it replaces; run
 *                     again on each retry of a read-modify-write (NodeRestriction,
 *                     PodSecurity).
 *
 * Both refuse by throwing an ApiError (usually 403 Forbidden in admission.NewForbidden's
 * words) and then nothing is written. They may add warnings (HTTP `Warning` headers,
 * printed by kubectl) and audit annotations (kube-apiserver puts them in the audit event;
 * k8ts logs them on the request's line) through the AdmissionRecorder.
 */
import type { KubeObject } from '../../../api/object.js';
import type { ResourceInfo } from '../resources.js';
import type { UserInfo } from '../../../api/auth/user.js';

/** admission.Operation (CONNECT has no plugin that cares in k8ts). */
export type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

/** The request as the admit phase sees it: no object has been read or built yet. */
export interface AdmissionRequest {
  readonly operation: Operation;
  readonly resource: ResourceInfo;
  readonly subresource: string | undefined;
  /** The namespace of the URL (undefined: cluster-scoped, or all namespaces). */
  readonly namespace: string | undefined;
  /** The name in the URL; for a create, the body's name ('' with generateName). */
  readonly name: string;
  /** CREATE: the decoded body (before defaults). Otherwise undefined. */
  readonly body: KubeObject | undefined;
  readonly user: UserInfo;
  readonly dryRun: boolean;
}

/** The write as the validate phase sees it. */
export interface AdmissionAttributes extends Omit<AdmissionRequest, 'body' | 'operation'> {
  readonly operation: 'CREATE' | 'UPDATE';
  /** The object about to be stored (defaulted, valid; a create's generated name is set). Read-only. */
  readonly object: KubeObject;
  /** UPDATE: the stored object it replaces. */
  readonly oldObject: KubeObject | undefined;
}

/** What plugins add to the answer of an admitted request. */
export interface AdmissionRecorder {
  /** A warning for the client: one `Warning: 299 - "<message>"` header. */
  warn(message: string): void;
  /** An audit annotation (`<plugin prefix>/<key>`), logged with the request. Later values of a key win. */
  annotate(key: string, value: string): void;
}

/** One admission plugin: a name (kube-apiserver's) and the phases it takes part in. */
export interface AdmissionPlugin {
  readonly name: string;
  /** @throws ApiError to refuse the request. */
  admit?(request: AdmissionRequest, out: AdmissionRecorder): void | Promise<void>;
  /** @throws ApiError to refuse the write. */
  validate?(attrs: AdmissionAttributes, out: AdmissionRecorder): void | Promise<void>;
}
