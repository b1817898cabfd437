// GO_FIELD_TYPES (go-types.ts) against the catalogue: every entry names a real field.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GO_FIELD_TYPES } from './go-types.js';
import { buildOpenAPIV2, modelDefinitionNames } from '../openapi/index.js';

describe('Go field types', () => {
  it('names a field of the catalog in every GO_FIELD_TYPES entry (a client-node upgrade that renames one fails here)', async () => {
    const [names, doc] = await Promise.all([modelDefinitionNames(), buildOpenAPIV2()]);
    for (const key of Object.keys(GO_FIELD_TYPES)) {
      const dot = key.indexOf('.');
      const def = names.get(key.slice(0, dot));
      assert.ok(def !== undefined, `${key}: no such model`);
      assert.ok(doc.definitions[def]?.properties?.[key.slice(dot + 1)], `${key}: no such field`);
    }
  });
});
