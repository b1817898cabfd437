/**
 * Test harness of the CRD serving tests: raw HTTP calls to the in-process API server
 * (test/support/api.ts), a CRD to start from, and "create it and wait until it is served".
 *
 *   const api = await startTestApi();
 *   await establish(api, widgetCRD());
 *   const r = await call(api, 'POST', '/apis/example.com/v1/namespaces/default/widgets', widget('a'));
 */
import assert from 'node:assert/strict';
import type { TestApi } from '../../../test/support/api.js';
import { until } from '../../../test/support/wait.js';
import type { CustomResourceDefinition } from './types.js';

/** A decoded JSON answer (`body` undefined when it is not JSON). */
export interface Reply {
  status: number;
  headers: Headers;
  /** The decoded body; typed loosely on purpose: tests read whatever field they check. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
}

/** The `Warning` headers of a reply, one entry each (their text between the quotes). */
export function warnings(r: Reply): string[] {
  const raw = r.headers.get('warning');
  if (!raw) return [];
  return [...raw.matchAll(/299 - "((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!.replace(/\\(.)/g, '$1'));
}

/**
 * `method path` against `api` with `body` (an object is sent as JSON, a string as it is) of
 * `contentType` (default application/json).
 */
export async function call(
  api: TestApi,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<Reply> {
  const res = await fetch(api.url + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': contentType },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** The CRD path of `name`, or of the collection. */
export const crdPath = (name?: string): string =>
  `/apis/apiextensions.k8s.io/v1/customresourcedefinitions${name ? `/${name}` : ''}`;

/**
 * `widgets.example.com`: namespaced, short name `wd`, category `all` and `toys`; versions
 * v1 (storage) and v1beta1 (served), both with the status and scale subresources and
 * printer columns Size (.spec.size), Color (.spec.color), Ready (.status.ready) and Age
 * (.metadata.creationTimestamp, which upstream adds only when a CRD names no columns); the
 * schema: spec.size an integer >= 1 and required, spec.color `red` or `blue` (default red),
 * spec.replicas an integer, spec.labels a map of strings; status.ready, status.replicas.
 * `patch` is merged into the copy's spec shallowly.
 */
export function widgetCRD(patch: Partial<CustomResourceDefinition['spec']> = {}): CustomResourceDefinition {
  const schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        required: ['size'],
        properties: {
          size: { type: 'integer', minimum: 1 },
          color: { type: 'string', enum: ['red', 'blue'], default: 'red' },
          replicas: { type: 'integer' },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
        },
      },
      status: {
        type: 'object',
        properties: { ready: { type: 'boolean' }, replicas: { type: 'integer' } },
      },
    },
  };
  const version = (name: string, storage: boolean) => ({
    name,
    served: true,
    storage,
    schema: { openAPIV3Schema: structuredClone(schema) },
    subresources: {
      status: {},
      scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
    },
    additionalPrinterColumns: [
      { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
      { name: 'Color', type: 'string', jsonPath: '.spec.color' },
      { name: 'Ready', type: 'boolean', jsonPath: '.status.ready' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget', shortNames: ['wd'], categories: ['all', 'toys'] },
      versions: [version('v1', true), version('v1beta1', false)],
      ...patch,
    },
  };
}

/** A Widget named `name` in `default` with `spec` (default `{ size: 1 }`), of `version`. */
export function widget(
  name: string,
  spec: Record<string, unknown> = { size: 1 },
  version = 'v1',
): Record<string, unknown> {
  return {
    apiVersion: `example.com/${version}`,
    kind: 'Widget',
    metadata: { name, namespace: 'default' },
    spec,
  };
}

/**
 * Creates `crd` and waits (10 s) until it is Established and every served version answers
 * its discovery document. Fails the test when the create is refused.
 * @returns the CRD as stored then.
 */
export async function establish(
  api: TestApi,
  crd: CustomResourceDefinition,
): Promise<CustomResourceDefinition> {
  const created = await call(api, 'POST', crdPath(), crd);
  assert.equal(created.status, 201, created.text);
  const name = crd.metadata!.name!;
  const served = (crd.spec.versions ?? []).filter((v) => v.served).map((v) => v.name);
  return until(
    `CRD ${name} Established and served`,
    async () => {
      const got = await call(api, 'GET', crdPath(name));
      const established = (got.body as CustomResourceDefinition | undefined)?.status?.conditions?.some(
        (c) => c.type === 'Established' && c.status === 'True',
      );
      if (!established) return undefined;
      for (const v of served)
        if ((await call(api, 'GET', `/apis/${crd.spec.group}/${v}`)).status !== 200) return undefined;
      return got.body as CustomResourceDefinition;
    },
    10_000,
    20,
  );
}

/**
 * Deletes CRD `name` and waits (10 s) until it is gone (its cleanup finalizer has run).
 */
export async function removeCRD(api: TestApi, name: string): Promise<void> {
  const r = await call(api, 'DELETE', crdPath(name));
  assert.ok(r.status === 200 || r.status === 404, r.text);
  await until(
    `CRD ${name} gone`,
    async () => ((await call(api, 'GET', crdPath(name))).status === 404 ? true : undefined),
    10_000,
    20,
  );
}
