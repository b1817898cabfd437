// Reading the client-node models' documentation (models.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseModelDocs } from './index.js';

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
