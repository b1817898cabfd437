// YAML request bodies as kube-apiserver reads them (YAML 1.1, go-yaml v2 under
// sigs.k8s.io/yaml): a merge key is resolved, and `release: yes` is a boolean, so a
// label value written that way is a 400 type error and nothing is stored.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApi, type TestApi } from '../../test/support/api.js';

describe('YAML bodies (API server)', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.stop());

  const post = async (body: string, type = 'application/yaml') => {
    const res = await fetch(`${api.url}/api/v1/namespaces/default/configmaps`, {
      method: 'POST',
      headers: { 'Content-Type': type },
      body,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('resolves a merge key', async () => {
    const doc = [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  name: merged',
      '  labels: &common {app: web, tier: front}',
      'data:',
      '  <<: *common',
      '  tier: back',
      '',
    ].join('\n');
    const res = await post(doc);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body['data'], { app: 'web', tier: 'back' });
  });

  it('refuses a label value `yes` (a YAML 1.1 boolean) with 400 and stores nothing', async () => {
    const doc =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yes-label\n  labels:\n    release: yes\n';
    const res = await post(doc);
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body['reason'], 'BadRequest');
    const get = await fetch(`${api.url}/api/v1/namespaces/default/configmaps/yes-label`);
    assert.equal(get.status, 404);
    // Quoted, it is the string it looks like.
    const quoted = await post(doc.replace('release: yes', 'release: "yes"'));
    assert.equal(quoted.status, 201, JSON.stringify(quoted.body));
  });
});
