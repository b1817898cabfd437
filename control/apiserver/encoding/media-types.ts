/** Media types of the API that more than one part of the API server names. */

/**
 * The request bodies a PATCH accepts — JSON patch, merge patch, strategic merge patch,
 * server-side apply — in the order Kubernetes lists them (in a 415, and in OpenAPI).
 */
export const PATCH_CONTENT_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
] as const;
export type PatchContentType = (typeof PATCH_CONTENT_TYPES)[number];
