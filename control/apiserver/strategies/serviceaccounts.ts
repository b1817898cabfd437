/**
 * ServiceAccount (core/v1): Kubernetes' ValidateServiceAccount is ObjectMeta only (names are
 * DNS subdomains); secrets and imagePullSecrets are references, not checked here.
 */
import type { KubeObject } from '../../../api/object.js';
import { defineStrategy } from './meta.js';

/** The annotation that limits a ServiceAccount's pods to its listed secrets; deprecated in 1.32. */
export const ENFORCE_MOUNTABLE_SECRETS_ANNOTATION = 'kubernetes.io/enforce-mountable-secrets';

/**
 * The ServiceAccount strategy's warnings of 1.32 (create and update): the deprecated
 * enforce-mountable-secrets annotation.
 */
export function serviceAccountWarnings(obj: KubeObject): string[] {
  const annotations = obj.metadata?.annotations ?? {};
  if (!Object.hasOwn(annotations, ENFORCE_MOUNTABLE_SECRETS_ANNOTATION)) return [];
  return [
    `metadata.annotations[${ENFORCE_MOUNTABLE_SECRETS_ANNOTATION}]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets`,
  ];
}

/** The ServiceAccount strategy: no defaults, no status, no generation. */
export const serviceAccountStrategy = defineStrategy({
  namespaced: true,
  // Its storage.go sets ReturnDeletedObject: a DELETE answers with the object.
  returnDeletedObject: true,
  warningsOnCreate: serviceAccountWarnings,
  warningsOnUpdate: (obj) => serviceAccountWarnings(obj),
});
