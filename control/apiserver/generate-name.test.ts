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

  it('names the generated name when it is invalid, as the name is generated before validation (Store.Create)', async () => {
    const res = await fetch(`${api.url}/api/v1/namespaces/default/configmaps`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { generateName: 'GG' },
        data: { 'bad key': 'x' },
      }),
    });
    assert.equal(res.status, 422);
    const status = (await res.json()) as {
      message: string;
      details: { name: string; causes: { field: string; message: string }[] };
    };
    const name = status.details.name;
    assert.match(name, /^GG[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    const dns =
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    // ValidateObjectMeta's generateName and name errors first, then the kind's own.
    assert.deepEqual(
      status.details.causes.map((c) => c.field),
      ['metadata.generateName', 'metadata.name', 'data[bad key]'],
    );
    assert.equal(status.details.causes[0]!.message, `Invalid value: "GG": ${dns}`);
    assert.equal(status.details.causes[1]!.message, `Invalid value: "${name}": ${dns}`);
    assert.ok(status.message.startsWith(`ConfigMap "${name}" is invalid: [`), status.message);
  });

  it('checks a generateName also when a name is given', async () => {
    const res = await fetch(`${api.url}/api/v1/namespaces/default/configmaps`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'ok', generateName: 'Bad' },
      }),
    });
    assert.equal(res.status, 422);
    const status = (await res.json()) as { details: { causes: { field: string }[] } };
    assert.deepEqual(
      status.details.causes.map((c) => c.field),
      ['metadata.generateName'],
    );
  });
});
