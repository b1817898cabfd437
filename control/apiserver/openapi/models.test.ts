// Reading the client-node models' documentation (models.ts).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import {
  modelAttributeTypeMap,
  modelDefinitionNames,
  parseModelAttributes,
  parseModelDocs,
} from './index.js';

describe('parseModelDocs', () => {
  it('reads class and field descriptions, unescapes them, and marks fields without ? required', () => {
    const docs = parseModelDocs(
      [
        '/**',
        ' * Kubernetes (license header)',
        ' */',
        "import { V1LabelSelector } from '../models/V1LabelSelector.js';",
        '/**',
        '* Thing is a thing.',
        '*/',
        'export declare class V1Thing {',
        '    /**',
        '    * Labels of the thing\\\'s \\"owner\\" (a \\\\ b).',
        '    */',
        "    'labels'?: {",
        '        [key: string]: string;',
        '    };',
        "    'selector': V1LabelSelector;",
        '    /**',
        '    * Count.',
        '    */',
        "    'count'?: number;",
        '}',
      ].join('\n'),
    );
    assert.equal(docs.description, 'Thing is a thing.');
    assert.deepEqual(docs.fields.get('labels'), {
      description: 'Labels of the thing\'s "owner" (a \\ b).',
      required: false,
    });
    assert.deepEqual(docs.fields.get('selector'), { description: undefined, required: true });
    assert.deepEqual(docs.fields.get('count'), { description: 'Count.', required: false });
  });
});

describe('parseModelAttributes', () => {
  const dir = join(
    dirname(createRequire(import.meta.url).resolve('@kubernetes/client-node/package.json')),
    'dist/gen/models',
  );

  it("reads every catalogued model's attribute type map as its module's getAttributeTypeMap() returns it", async () => {
    const models = [...(await modelDefinitionNames()).keys()];
    assert.ok(models.length > 300, `${models.length} models`);
    for (const model of models) {
      const file = join(dir, `${model}.js`);
      const mod = (await import(pathToFileURL(file).href)) as Record<
        string,
        { getAttributeTypeMap(): unknown }
      >;
      const imported = mod[model]!.getAttributeTypeMap();
      assert.deepEqual(parseModelAttributes(readFileSync(file, 'utf8'), model), imported, model);
      // What the catalog loaded (from the text) is what the module says.
      assert.deepEqual(modelAttributeTypeMap(model), imported, model);
    }
  });

  it('is undefined for a module of another shape (then the module is imported)', () => {
    const js = [
      'export class V1Thing extends V1Base {',
      '    static getAttributeTypeMap() {',
      '        return super.getAttributeTypeMap().concat(V1Thing.attributeTypeMap);',
      '    }',
      '}',
      'V1Thing.attributeTypeMap = [',
      '    { "name": "a", "baseName": "a", "type": "string", "format": "" }',
      '];',
    ].join('\n');
    assert.equal(parseModelAttributes(js, 'V1Thing'), undefined);
    assert.equal(parseModelAttributes('export class V1Other {}', 'V1Other'), undefined);
  });
});
