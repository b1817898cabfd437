/**
 * Informer transforms: what an informer changes in each object before caching it
 * (SharedInformerOptions.transform, client-go's SetTransform).
 */
import type { KubeObject } from '../object.js';

/**
 * Drops `metadata.managedFields` (in place) and returns the object, as the transform
 * kube-controller-manager and kube-scheduler give their informers (kubernetes#118455,
 * #119556): neither reads them, and they are a third or more of a pod's JSON. Safe for
 * writes built from the cached copy: an update whose object has no managedFields keeps
 * the live ones (the field manager reads them from the stored object), and patches do not
 * carry them. Idempotent.
 */
export function stripManagedFields<T extends KubeObject>(obj: T): T {
  if (obj.metadata?.managedFields === undefined) return obj;
  // A new metadata object rather than `delete`, which would turn it into a slower and
  // larger dictionary-mode object in V8.
  const { managedFields: _dropped, ...metadata } = obj.metadata;
  obj.metadata = metadata;
  return obj;
}
