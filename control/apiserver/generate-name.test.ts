// Names the API server generates (apiserver's SimpleNameGenerator): the generateName base is
// cut to 58 characters before the 5-character suffix, so a generated name stays a valid
// 63-character DNS label; every controller's children (a ReplicaSet's pods, a Job's pods)
// are named this way, so a long owner name no longer gives pods names over 63.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resources } from '../../api/client/resource.js';
import type { KubeObject } from '../../api/object.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';

describe('generateName (API server)', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.stop());

  for (const length of [57, 58, 62, 71]) {
    it(`a ${length}-character generateName gives a name of at most 63`, async () => {
      const base = `${'a'.repeat(length - 1)}-`;
      const created: KubeObject = await api.client.create(resources.configmaps, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { generateName: base, namespace: 'default' },
      });
      const name = created.metadata?.name ?? '';
      const kept = base.slice(0, 58);
      assert.equal(name.length, kept.length + 5, name);
      assert.ok(name.startsWith(kept), name);
      assert.match(name.slice(kept.length), /^[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    });
  }

  it('a pod of a ReplicaSet whose name is 62 characters long gets a 63-character name', async () => {
    const rsName = `${'r'.repeat(51)}-5d8f7c9b4d`;
    assert.equal(rsName.length, 62);
    const pod: KubeObject = await api.client.create(resources.pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { generateName: `${rsName}-`, namespace: 'default' },
      spec: { containers: [{ name: 'app', image: 'spring-server:1.0' }] },
    });
    assert.equal(pod.metadata?.name?.length, 63, pod.metadata?.name);
  });
});
