import assert from 'node:assert/strict';
import { it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { RESOURCES, findKind, findResource, groupVersion, storageKey, storagePrefix } from './resources.js';

it('names every resource with a client-node model (the OpenAPI schema source)', () => {
  for (const r of RESOURCES) {
    const model = (k8s as unknown as Record<string, { getAttributeTypeMap?: () => unknown }>)[r.model];
    assert.ok(model?.getAttributeTypeMap, `${groupVersion(r)} ${r.kind}: no client-node model ${r.model}`);
  }
});

it('has no two resources with the same group, version and name, nor clashing short names', () => {
  const seen = new Set<string>();
  for (const r of RESOURCES) {
    const id = `${r.group}/${r.version}/${r.resource}`;
    assert.ok(!seen.has(id), id);
    seen.add(id);
  }
  // One resource served in two versions (autoscaling/v2 and v1 HPAs) has its short names once.
  const byResource = new Map(
    RESOURCES.filter((r) => r.group !== 'events.k8s.io').map((r) => [
      `${r.group}/${r.resource}`,
      r.shortNames,
    ]),
  );
  const shorts = [...byResource.values()].flat();
  assert.equal(new Set(shorts).size, shorts.length);
});

it('serves the short names kubectl users type', () => {
  const byShort = (s: string) => RESOURCES.find((r) => r.shortNames.includes(s))?.resource;
  const cases: [string, string][] = [
    ['po', 'pods'],
    ['deploy', 'deployments'],
    ['svc', 'services'],
    ['rs', 'replicasets'],
    ['ns', 'namespaces'],
    ['no', 'nodes'],
    ['cm', 'configmaps'],
    ['ep', 'endpoints'],
  ];
  for (const [short, resource] of cases) assert.equal(byShort(short), resource, short);
});

it('lays out storage keys as /registry/<resource>/<namespace>/<name>', () => {
  const deploy = findResource('apps', 'v1', 'deployments')!;
  assert.equal(storageKey(deploy, 'default', 'web'), '/registry/deployments/default/web');
  assert.equal(storagePrefix(deploy, 'default'), '/registry/deployments/default/');
  assert.equal(storagePrefix(deploy), '/registry/deployments/');
  const node = findKind('v1', 'Node')!;
  assert.equal(storageKey(node, undefined, 'n1'), '/registry/nodes/n1');
  const ev = findResource('events.k8s.io', 'v1', 'events')!;
  assert.notEqual(storagePrefix(ev), storagePrefix(findResource('', 'v1', 'events')!));
});
