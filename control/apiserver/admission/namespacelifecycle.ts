/**
 * NamespaceLifecycle (plugin/pkg/admission/namespace/lifecycle): objects are written only
 * in namespaces that exist, nothing new is created in a namespace being terminated, and
 * the system namespaces cannot be deleted.
 *
 *   DELETE of namespace default, kube-system, kube-public (k8ts adds kube-node-lease)
 *       → 403 "this namespace may not be deleted"
 *   CREATE/UPDATE in a namespace that does not exist → 404 `namespaces "x" not found`
 *   CREATE (not of a subresource) in a terminating namespace → 403 "unable to create new content in namespace
 *       x because it is being terminated", with the NamespaceTerminating cause that
 *       controllers look for
 *
 * Runs in the admit phase: it needs the URL's namespace only (and a create's name for
 * its message).
 */
import type { KubeObject } from '../../../api/object.js';
import { newForbidden, notFound } from '../status.js';
import type { AdmissionPlugin, AdmissionRequest } from './interfaces.js';

/** Namespaces that exist from the start, as in every Kubernetes cluster; none may be deleted. */
export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'] as const;

/** What NamespaceLifecycle reads. */
export interface NamespaceLifecycleConfig {
  /**
   * The namespace `name`, or undefined when it does not exist. (The API server reads its
   * namespaces' watch cache, as the plugin reads its informer, and the store for a
   * namespace the cache has not seen yet.)
   */
  getNamespace(name: string): Promise<KubeObject | undefined>;
}

/** The NamespaceLifecycle plugin over `cfg` (see the file comment). */
export function namespaceLifecycle(cfg: NamespaceLifecycleConfig): AdmissionPlugin {
  return {
    name: 'NamespaceLifecycle',
    async admit(req: AdmissionRequest): Promise<void> {
      const r = req.resource;
      const isNamespace = r.group === '' && r.resource === 'namespaces';
      if (req.operation === 'DELETE') {
        if (isNamespace && req.subresource === undefined && isSystemNamespace(req.name))
          throw newForbidden(
            { group: '', resource: 'namespaces', name: req.name },
            'this namespace may not be deleted',
          );
        return;
      }
      if (!r.namespaced || req.namespace === undefined) return;
      const ns = await cfg.getNamespace(req.namespace);
      if (!ns) throw notFound({ group: '', resource: 'namespaces', name: req.namespace });
      // Bindings and evictions of what is there still work (the pods are going away anyway).
      if (req.operation === 'CREATE' && req.subresource === undefined && ns.metadata?.deletionTimestamp) {
        const name = req.body?.metadata?.name ?? req.body?.metadata?.generateName ?? '';
        throw newForbidden(
          { group: r.group, resource: r.resource, name },
          `unable to create new content in namespace ${req.namespace} because it is being terminated`,
          [
            {
              reason: 'NamespaceTerminating',
              message: `namespace ${req.namespace} is being terminated`,
              field: 'metadata.namespace',
            },
          ],
        );
      }
    },
  };
}

function isSystemNamespace(name: string): boolean {
  return (SYSTEM_NAMESPACES as readonly string[]).includes(name);
}
