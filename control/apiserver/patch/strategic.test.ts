import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonObject } from './json.js';
import { SmpError, strategicMergePatch } from './strategic.js';
import { loadModels } from '../openapi/index.js';

// The patch schemas come from the client-node models the OpenAPI catalog loads.
await loadModels();

/** A Pod whose containers are given by name (`'a'`) or whole. */
function pod(spec: JsonObject): JsonObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec };
}

const names = (list: unknown): string[] => (list as { name: string }[]).map((c) => c.name);

interface Case {
  name: string;
  model?: string;
  original: JsonObject;
  patch: unknown;
  want: (result: JsonObject) => void;
}

const cases: Case[] = [
  {
    name: 'merges a container by name and keeps what the patch does not mention',
    original: pod({
      containers: [{ name: 'c', image: 'old', ports: [{ containerPort: 8080 }] }],
    }),
    patch: { spec: { containers: [{ name: 'c', image: 'new' }] } },
    want: (r) =>
      assert.deepEqual((r.spec as JsonObject).containers, [
        { name: 'c', image: 'new', ports: [{ containerPort: 8080 }] },
      ]),
  },
  {
    name: 'puts new items first, in patch order, without $setElementOrder (as Kubernetes)',
    original: pod({ containers: [{ name: 'a' }, { name: 'b' }] }),
    patch: { spec: { containers: [{ name: 'd' }, { name: 'c' }] } },
    want: (r) => assert.deepEqual(names((r.spec as JsonObject).containers), ['d', 'c', 'a', 'b']),
  },
  {
    name: 'keeps the server order of patched and unpatched items',
    original: pod({ containers: [{ name: 'a' }, { name: 'b', image: 'x' }, { name: 'c' }] }),
    patch: { spec: { containers: [{ name: 'b', image: 'y' }] } },
    want: (r) =>
      assert.deepEqual((r.spec as JsonObject).containers, [
        { name: 'a' },
        { name: 'b', image: 'y' },
        { name: 'c' },
      ]),
  },
  {
    name: 'orders by $setElementOrder, server-only items staying next to their neighbours',
    original: pod({
      containers: [{ name: '1' }, { name: '2' }, { name: '9' }, { name: '3' }, { name: '4' }],
    }),
    patch: {
      spec: { '$setElementOrder/containers': [{ name: '2' }, { name: '1' }, { name: '4' }, { name: '3' }] },
    },
    want: (r) => assert.deepEqual(names((r.spec as JsonObject).containers), ['2', '1', '9', '4', '3']),
  },
  {
    name: 'appends a new item where $setElementOrder puts it',
    original: pod({ containers: [{ name: 'a', image: 'x' }, { name: 'b' }] }),
    patch: {
      spec: {
        '$setElementOrder/containers': [{ name: 'a' }, { name: 'b' }, { name: 'c' }],
        containers: [{ name: 'c', image: 'z' }],
      },
    },
    want: (r) =>
      assert.deepEqual((r.spec as JsonObject).containers, [
        { name: 'a', image: 'x' },
        { name: 'b' },
        { name: 'c', image: 'z' },
      ]),
  },
  {
    // Bug fixed: new items were put after server-only ones; Kubernetes puts them in the
    // slot a deleted item frees (its slice aliasing), as kubectl apply's patch shows.
    name: 'deleting one item and adding another orders the new one where the deleted one was',
    original: pod({ containers: [{ name: 'a' }, { name: 'b', image: 'x' }, { name: 'd', image: 'y' }] }),
    patch: {
      spec: {
        '$setElementOrder/containers': [{ name: 'b' }, { name: 'c' }],
        containers: [{ name: 'c' }, { name: 'a', $patch: 'delete' }],
      },
    },
    want: (r) => assert.deepEqual(names((r.spec as JsonObject).containers), ['b', 'd', 'c']),
  },
  {
    name: '$patch: delete removes the item with that key',
    original: pod({ containers: [{ name: 'a' }, { name: 'b' }] }),
    patch: { spec: { containers: [{ name: 'a', $patch: 'delete' }] } },
    want: (r) => assert.deepEqual((r.spec as JsonObject).containers, [{ name: 'b' }]),
  },
  {
    name: '$patch: replace in a list replaces it with the other items',
    original: pod({ containers: [{ name: 'a', image: 'x' }, { name: 'b' }] }),
    patch: { spec: { containers: [{ $patch: 'replace' }, { name: 'c', image: 'y' }] } },
    want: (r) => assert.deepEqual((r.spec as JsonObject).containers, [{ name: 'c', image: 'y' }]),
  },
  {
    name: 'an empty list does not clear a merging list',
    original: pod({ containers: [{ name: 'a' }] }),
    patch: { spec: { containers: [] } },
    want: (r) => assert.deepEqual((r.spec as JsonObject).containers, [{ name: 'a' }]),
  },
  {
    name: 'merges env by name, updating and adding variables',
    original: pod({
      containers: [
        {
          name: 'c',
          env: [
            { name: 'A', value: '1' },
            { name: 'B', value: '2' },
          ],
        },
      ],
    }),
    patch: {
      spec: {
        containers: [
          {
            name: 'c',
            env: [
              { name: 'B', value: '3' },
              { name: 'C', value: '4' },
            ],
          },
        ],
      },
    },
    want: (r) =>
      assert.deepEqual(((r.spec as JsonObject).containers as JsonObject[])[0]!.env, [
        { name: 'A', value: '1' },
        { name: 'B', value: '3' },
        { name: 'C', value: '4' },
      ]),
  },
  {
    name: 'merges ports by containerPort',
    original: pod({ containers: [{ name: 'c', ports: [{ containerPort: 80, name: 'http' }] }] }),
    patch: { spec: { containers: [{ name: 'c', ports: [{ containerPort: 80, protocol: 'TCP' }] }] } },
    want: (r) =>
      assert.deepEqual(((r.spec as JsonObject).containers as JsonObject[])[0]!.ports, [
        { containerPort: 80, name: 'http', protocol: 'TCP' },
      ]),
  },
  {
    name: 'replaces lists without a strategy (args)',
    original: pod({ containers: [{ name: 'c', args: ['a', 'b'] }] }),
    patch: { spec: { containers: [{ name: 'c', args: ['z'] }] } },
    want: (r) => assert.deepEqual(((r.spec as JsonObject).containers as JsonObject[])[0]!.args, ['z']),
  },
  {
    name: 'null deletes a field; nulls inside new values are dropped',
    original: pod({ nodeName: 'n1', hostname: 'h' }),
    patch: {
      spec: { nodeName: null, missing: null, dnsConfig: { nameservers: ['1.1.1.1'], searches: null } },
    },
    want: (r) => assert.deepEqual(r.spec, { hostname: 'h', dnsConfig: { nameservers: ['1.1.1.1'] } }),
  },
  {
    name: 'merges maps key by key (labels)',
    original: { metadata: { name: 'p', labels: { a: '1', b: '2' } } },
    patch: { metadata: { labels: { b: null, c: '3' } } },
    want: (r) => assert.deepEqual((r.metadata as JsonObject).labels, { a: '1', c: '3' }),
  },
  {
    name: '$patch: replace on a map replaces it',
    original: { metadata: { name: 'p', labels: { a: '1' } } },
    patch: { metadata: { labels: { $patch: 'replace', z: '9' } } },
    want: (r) => assert.deepEqual((r.metadata as JsonObject).labels, { z: '9' }),
  },
  {
    name: '$patch: delete on a map empties it',
    original: { metadata: { name: 'p', labels: { a: '1' } } },
    patch: { metadata: { labels: { $patch: 'delete' } } },
    want: (r) => assert.deepEqual((r.metadata as JsonObject).labels, {}),
  },
  {
    name: 'merges primitive lists with strategy merge as sets (finalizers)',
    original: { metadata: { name: 'p', finalizers: ['a', 'b'] } },
    patch: { metadata: { finalizers: ['c', 'a'] } },
    want: (r) => assert.deepEqual((r.metadata as JsonObject).finalizers, ['c', 'a', 'b']),
  },
  {
    name: '$setElementOrder orders a primitive list',
    original: { metadata: { name: 'p', finalizers: ['a', 'b'] } },
    patch: { metadata: { '$setElementOrder/finalizers': ['a', 'b', 'c'], finalizers: ['c'] } },
    want: (r) => assert.deepEqual((r.metadata as JsonObject).finalizers, ['a', 'b', 'c']),
  },
  {
    name: '$deleteFromPrimitiveList removes values',
    original: { metadata: { name: 'p', finalizers: ['a', 'b', 'c'] } },
    patch: { metadata: { '$deleteFromPrimitiveList/finalizers': ['b', 'x'] } },
    want: (r) => assert.deepEqual((r.metadata as JsonObject).finalizers, ['a', 'c']),
  },
  {
    name: '$deleteFromPrimitiveList of a missing list adds nothing',
    original: { metadata: { name: 'p' } },
    patch: { metadata: { '$deleteFromPrimitiveList/finalizers': ['b'] } },
    want: (r) => assert.deepEqual(r.metadata, { name: 'p' }),
  },
  {
    name: '$retainKeys clears the keys it does not list (Deployment strategy)',
    model: 'V1Deployment',
    original: {
      spec: {
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      },
    },
    patch: { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate', rollingUpdate: null } } },
    want: (r) => assert.deepEqual((r.spec as JsonObject).strategy, { type: 'Recreate' }),
  },
  {
    name: '$retainKeys inside a volume switches its source',
    original: pod({
      volumes: [
        { name: 'v', emptyDir: {} },
        { name: 'w', emptyDir: {} },
      ],
    }),
    patch: {
      spec: {
        '$setElementOrder/volumes': [{ name: 'v' }, { name: 'w' }],
        volumes: [{ $retainKeys: ['configMap', 'name'], name: 'v', configMap: { name: 'cm' } }],
      },
    },
    want: (r) =>
      assert.deepEqual((r.spec as JsonObject).volumes, [
        { name: 'v', configMap: { name: 'cm' } },
        { name: 'w', emptyDir: {} },
      ]),
  },
  {
    name: 'merges ownerReferences by uid',
    original: { metadata: { ownerReferences: [{ uid: '1', name: 'a', kind: 'ReplicaSet' }] } },
    patch: { metadata: { ownerReferences: [{ uid: '1', controller: true }] } },
    want: (r) =>
      assert.deepEqual((r.metadata as JsonObject).ownerReferences, [
        { uid: '1', name: 'a', kind: 'ReplicaSet', controller: true },
      ]),
  },
  {
    name: 'falls back to merge-patch rules for an unknown model: lists replace, maps merge',
    model: 'V1NoSuchThing',
    original: { spec: { items: [{ name: 'a' }], nested: { x: 1, y: 2 } } },
    patch: { spec: { items: [{ name: 'b' }], nested: { y: null, z: 3 } } },
    want: (r) => assert.deepEqual(r.spec, { items: [{ name: 'b' }], nested: { x: 1, z: 3 } }),
  },
  {
    name: 'falls back to merge-patch rules for fields the model does not declare',
    original: pod({ extra: { list: [1, 2], keep: true } }),
    patch: { spec: { extra: { list: [3] } } },
    want: (r) => assert.deepEqual((r.spec as JsonObject).extra, { list: [3], keep: true }),
  },
  {
    name: 'a value of another type replaces the original',
    original: pod({ containers: [{ name: 'c', command: 'not-a-list' }] }),
    patch: { spec: { containers: [{ name: 'c', command: ['sh'] }] } },
    want: (r) => assert.deepEqual(((r.spec as JsonObject).containers as JsonObject[])[0]!.command, ['sh']),
  },
  {
    name: 'directives do not leak into new values',
    original: pod({}),
    patch: {
      spec: {
        '$setElementOrder/containers': [{ name: 'c' }],
        containers: [{ name: 'c', $retainKeys: ['name'], env: [{ name: 'x', $patch: 'delete' }] }],
      },
    },
    want: (r) => assert.deepEqual((r.spec as JsonObject).containers, [{ name: 'c', env: [] }]),
  },
];

interface ErrorCase {
  name: string;
  original: JsonObject;
  patch: string;
  code: 400 | 422;
  message: RegExp;
}

const errorCases: ErrorCase[] = [
  {
    name: 'a list item without its merge key',
    original: pod({ containers: [{ name: 'a' }] }),
    patch: JSON.stringify({ spec: { containers: [{ image: 'x' }] } }),
    code: 400,
    message: /^map: map\[image:x\] does not contain declared merge key: name$/,
  },
  {
    name: 'an unknown $patch directive',
    original: pod({ containers: [{ name: 'a' }] }),
    patch: JSON.stringify({ spec: { containers: [{ name: 'a', $patch: 'frobnicate' }] } }),
    code: 400,
    message: /^unknown patch type: frobnicate in map: map\[\$patch:frobnicate name:a\]$/,
  },
  {
    name: 'a $setElementOrder list that contradicts the patch list',
    original: pod({ containers: [{ name: 'a' }, { name: 'b' }] }),
    patch: JSON.stringify({
      spec: { '$setElementOrder/containers': [{ name: 'a' }], containers: [{ name: 'b' }] },
    }),
    code: 400,
    message: /^The order in patch list:/,
  },
  {
    name: 'a patch field not listed in $retainKeys',
    original: pod({ volumes: [{ name: 'v', emptyDir: {} }] }),
    patch: JSON.stringify({
      spec: { volumes: [{ $retainKeys: ['name'], name: 'v', hostPath: { path: '/' } }] },
    }),
    code: 400,
    message: /^invalid patch format of retainKeys$/,
  },
  {
    name: 'lists of lists',
    original: { metadata: { finalizers: [] } },
    patch: JSON.stringify({ metadata: { finalizers: [['b']] } }),
    code: 422,
    message: /lists of lists are not supported/,
  },
  {
    name: 'a body that is not JSON',
    original: pod({}),
    patch: '{"spec":',
    code: 400,
    message: /JSON/,
  },
  {
    name: 'a body that is not an object',
    original: pod({}),
    patch: '[1]',
    code: 400,
    message: /^json: cannot unmarshal array into Go value of type map\[string\]interface \{\}$/,
  },
];

describe('strategicMergePatch', () => {
  for (const c of cases) {
    it(c.name, () => {
      const before = structuredClone(c.original);
      const result = strategicMergePatch(c.original, JSON.stringify(c.patch), c.model ?? 'V1Pod');
      assert.deepEqual(c.original, before, 'the original is not modified');
      c.want(result);
    });
  }

  for (const c of errorCases) {
    it(`refuses ${c.name}`, () => {
      assert.throws(
        () => strategicMergePatch(c.original, c.patch, 'V1Pod'),
        (err: unknown) => err instanceof SmpError && err.code === c.code && c.message.test(err.message),
      );
    });
  }

  it('treats a null body as an empty patch', () => {
    assert.deepEqual(strategicMergePatch(pod({ nodeName: 'n' }), 'null', 'V1Pod'), pod({ nodeName: 'n' }));
  });
});
