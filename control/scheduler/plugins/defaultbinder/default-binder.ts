/**
 * DefaultBinder (pkg/scheduler/framework/plugins/defaultbinder): binds a pod by POSTing a
 * v1 Binding to `pods/<name>/binding`; the API server sets `spec.nodeName` once and
 * answers 409 Conflict when the pod is already bound or is being deleted.
 */
import type { RestClient } from '../../../../api/client/rest.js';
import { resources } from '../../../../api/client/resource.js';
import type { KubeObject } from '../../../../api/object.js';
import type { Pod } from '../../../../api/types.js';
import type { CycleState } from '../../framework/cycle-state.js';
import type { BindPlugin } from '../../framework/interface.js';
import { Status } from '../../framework/status.js';

const SUCCESS = Status.success;

export const NAME = 'DefaultBinder';

/** The v1 Binding of `pod` to `nodeName`. */
export function bindingFor(pod: Pod, nodeName: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Binding',
    metadata: {
      name: pod.metadata.name!,
      namespace: pod.metadata.namespace!,
      ...(pod.metadata.uid ? { uid: pod.metadata.uid } : {}),
    },
    target: { apiVersion: 'v1', kind: 'Node', name: nodeName },
  };
}

export class DefaultBinder implements BindPlugin {
  readonly name = NAME;

  constructor(private readonly client: RestClient) {}

  async bind(_state: CycleState, pod: Pod, nodeName: string): Promise<Status> {
    try {
      await this.client.create(resources.pods, bindingFor(pod, nodeName), { subresource: 'binding' });
      return SUCCESS;
    } catch (err) {
      return Status.error(err);
    }
  }
}
