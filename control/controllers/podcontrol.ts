/**
 * PodControl: how workload controllers create, delete and patch the pods they own, with
 * the events Kubernetes records for each (pkg/controller RealPodControl and
 * GetPodFromTemplate). Controllers take the interface so a test can put a failing one in.
 */
import type { EventRecorder } from '../../api/client/events.js';
import { ApiStatusError, isNotFound } from '../../api/client/errors.js';
import { resources } from '../../api/client/resource.js';
import type { RestClient } from '../../api/client/rest.js';
import type { KubeObject, OwnerReference } from '../../api/object.js';
import type { Pod, PodTemplateSpec } from '../../api/types.js';
import { errorMessage } from '../../api/errors.js';

/** Event reasons, as Kubernetes' pkg/controller names them. */
export const FAILED_CREATE_POD_REASON = 'FailedCreate';
export const SUCCESSFUL_CREATE_POD_REASON = 'SuccessfulCreate';
export const FAILED_DELETE_POD_REASON = 'FailedDelete';
export const SUCCESSFUL_DELETE_POD_REASON = 'SuccessfulDelete';

/** The StatusCause type the API server gives a create refused in a terminating namespace (v1.NamespaceTerminatingCause). */
export const NAMESPACE_TERMINATING_CAUSE = 'NamespaceTerminating';

/** What a workload controller does to its pods. */
export interface PodControl {
  /**
   * Creates a pod from `template` in `namespace`, owned by `owner` through `controllerRef`,
   * and records SuccessfulCreate ("Created pod: NAME") or FailedCreate ("Error creating: ERR")
   * on the owner. Resolves with the created pod.
   * @throws the API error when the create fails; Error when the template has no labels.
   */
  createPods(
    namespace: string,
    template: PodTemplateSpec,
    owner: KubeObject,
    controllerRef: OwnerReference,
  ): Promise<Pod>;
  /**
   * Deletes a pod with its default grace period and records SuccessfulDelete ("Deleted
   * pod: NAME") or FailedDelete ("Error deleting: ERR") on the owner.
   * @throws the API error (a NotFound is thrown as is, without an event).
   */
  deletePod(namespace: string, name: string, owner: KubeObject): Promise<void>;
  /** Applies a strategic merge patch to a pod (adoption and release). @throws the API error. */
  patchPod(namespace: string, name: string, patch: unknown): Promise<Pod>;
}

/**
 * A pod stamped out of `template` for `owner` (GetPodFromTemplate): the template's labels,
 * annotations and finalizers (copied), `generateName: "<owner name>-"`, the controllerRef
 * as its only ownerReference, and a deep copy of the template's spec. No namespace and no
 * name: the API server fills the name from generateName.
 */
export function getPodFromTemplate(
  template: PodTemplateSpec,
  owner: KubeObject,
  controllerRef: OwnerReference | undefined,
): Pod {
  const meta = template.metadata ?? {};
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: podsPrefix(owner.metadata?.name ?? ''),
      // Empty maps are left out, as Go's omitempty leaves them out of Kubernetes' pods.
      ...(meta.labels && Object.keys(meta.labels).length > 0 ? { labels: { ...meta.labels } } : {}),
      ...(meta.annotations && Object.keys(meta.annotations).length > 0
        ? { annotations: { ...meta.annotations } }
        : {}),
      ...(meta.finalizers?.length ? { finalizers: [...meta.finalizers] } : {}),
      ...(controllerRef ? { ownerReferences: [{ ...controllerRef }] } : {}),
    },
    spec: structuredClone(template.spec),
  };
  return pod;
}

/**
 * The generateName of an owner's pods: `<name>-` (getPodsPrefix). Owner names are DNS
 * subdomains, so the prefix is a valid name prefix; the API server shortens it if the
 * generated name would be too long.
 */
export function podsPrefix(ownerName: string): string {
  return `${ownerName}-`;
}

/** True when `err` is an API error carrying a StatusCause of `type` (apierrors.HasStatusCause). */
export function hasStatusCause(err: unknown, type: string): boolean {
  return err instanceof ApiStatusError && (err.status.details?.causes ?? []).some((c) => c.reason === type);
}

/** Settings of RealPodControl. */
export interface RealPodControlOptions {
  client: RestClient;
  /** Where SuccessfulCreate/FailedCreate/SuccessfulDelete/FailedDelete go (the owner's controller component). */
  recorder: EventRecorder;
}

/** PodControl through the API server (RealPodControl). */
export class RealPodControl implements PodControl {
  private readonly client: RestClient;
  private readonly recorder: EventRecorder;

  constructor(opts: RealPodControlOptions) {
    this.client = opts.client;
    this.recorder = opts.recorder;
  }

  async createPods(
    namespace: string,
    template: PodTemplateSpec,
    owner: KubeObject,
    controllerRef: OwnerReference,
  ): Promise<Pod> {
    const pod = getPodFromTemplate(template, owner, controllerRef);
    // A pod without labels could never be matched back to its owner's selector.
    if (Object.keys(pod.metadata.labels ?? {}).length === 0)
      throw new Error('unable to create pods, no labels');
    let created: Pod;
    try {
      created = await this.client.create<Pod>(resources.pods, pod, { namespace });
    } catch (err) {
      // Every create in a terminating namespace fails the same way; no event for each.
      if (!hasStatusCause(err, NAMESPACE_TERMINATING_CAUSE))
        this.recorder.event(
          owner,
          'Warning',
          FAILED_CREATE_POD_REASON,
          `Error creating: ${errorMessage(err)}`,
        );
      throw err;
    }
    this.recorder.event(
      owner,
      'Normal',
      SUCCESSFUL_CREATE_POD_REASON,
      `Created pod: ${created.metadata.name ?? ''}`,
    );
    return created;
  }

  async deletePod(namespace: string, name: string, owner: KubeObject): Promise<void> {
    try {
      await this.client.delete(resources.pods, namespace, name);
    } catch (err) {
      if (isNotFound(err)) throw err;
      this.recorder.event(owner, 'Warning', FAILED_DELETE_POD_REASON, `Error deleting: ${errorMessage(err)}`);
      throw new Error(`unable to delete pods: ${errorMessage(err)}`, { cause: err });
    }
    this.recorder.event(owner, 'Normal', SUCCESSFUL_DELETE_POD_REASON, `Deleted pod: ${name}`);
  }

  patchPod(namespace: string, name: string, patch: unknown): Promise<Pod> {
    return this.client.patch<Pod>(resources.pods, namespace, name, 'strategic', patch);
  }
}
