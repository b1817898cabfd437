/**
 * ServiceAccount (core/v1): Kubernetes' ValidateServiceAccount is ObjectMeta only (names are
 * DNS subdomains); secrets and imagePullSecrets are references, not checked here.
 */
import { defineStrategy } from './meta.js';

/** The ServiceAccount strategy: no defaults, no status, no generation. */
export const serviceAccountStrategy = defineStrategy({ namespaced: true });
