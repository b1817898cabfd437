/** Helpers the OpenAPI tests share: the client-node documentation, `$ref`s, the HTTP methods. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { parseModelDocs } from './models.js';

const MODELS_DIR = join(
  dirname(createRequire(import.meta.url).resolve('@kubernetes/client-node/package.json')),
  'dist/gen/models',
);

/** A field's description as the client-node `.d.ts` carries it. */
export function dtsDescription(model: string, field: string): string {
  const docs = parseModelDocs(readFileSync(join(MODELS_DIR, `${model}.d.ts`), 'utf8'));
  const d = docs.fields.get(field)?.description;
  assert.ok(d, `${model}.${field} has a description`);
  return d;
}

export function words(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

export const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Every `$ref` in `value`. */
export function refsIn(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) refsIn(v, out);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refsIn(v, out);
    }
  }
  return out;
}
