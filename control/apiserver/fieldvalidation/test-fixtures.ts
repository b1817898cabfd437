/**
 * What the field validation tests share: the spring Deployment fixture, a typical stored
 * Deployment, places in them, and the schemas loaded (and timed) once per test file.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parse as parseYaml } from 'yaml';
import { loadFieldSchemas } from './index.js';
import { typicalDeployment as typicalDeploymentOf } from './testing.js';

export type Json = Record<string, unknown>;

export const SPRING = parseYaml(
  readFileSync(new URL('../../../../shared/fixtures/spring-deployment.yaml', import.meta.url), 'utf8'),
) as Json;

export function clone<T>(v: T): T {
  return structuredClone(v);
}

/** `at(obj, 'spec', 'template', 'spec', 'containers', 0)`: the value at that place (it must exist). */
export function at(obj: unknown, ...path: (string | number)[]): Json {
  let v = obj;
  for (const p of path) v = (v as Record<string | number, unknown>)[p];
  assert.ok(v !== null && typeof v === 'object', `${path.join('.')} exists`);
  return v as Json;
}

export const container = (o: Json, i = 0) => at(o, 'spec', 'template', 'spec', 'containers', i);
export const podSpec = (o: Json) => at(o, 'spec', 'template', 'spec');

/** SPRING as the store holds it after a few writes (testing.ts). */

export const typicalDeployment = (): Json => typicalDeploymentOf(SPRING);

/** A `before` hook: loads the schemas and reports how long it took. */
export async function loadSchemasTimed(): Promise<void> {
  const t0 = performance.now();
  await loadFieldSchemas();
  console.log(`# loadFieldSchemas (OpenAPI catalog included): ${(performance.now() - t0).toFixed(0)} ms`);
}
