import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApi, type TestApi } from '../../../test/support/api.js';

const revision = (name: string, data: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name,
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'web', uid: 'u-1', controller: true },
      ],
    },
    ...(data === undefined ? {} : { data }),
    revision: 1,
    ...extra,
  });

describe('ControllerRevision (apps/v1) through kubectl', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.stop());

  it('is created and listed as NAME CONTROLLER REVISION AGE', async () => {
    const r = await api.kubectlIn(revision('web-5d8f', { spec: { template: {} } }), 'create', '-f', '-');
    assert.equal(r.code, 0, r.stderr);
    const get = await api.kubectl('get', 'controllerrevisions');
    assert.equal(get.code, 0, get.stderr);
    const [header, row] = get.stdout.trim().split('\n');
    assert.deepEqual(header!.split(/\s+/), ['NAME', 'CONTROLLER', 'REVISION', 'AGE']);
    assert.deepEqual(row!.split(/\s+/).slice(0, 3), ['web-5d8f', 'daemonset.apps/web', '1']);
  });

  it('refuses a revision without data (422, data is mandatory) and stores nothing', async () => {
    const r = await api.kubectlIn(revision('empty', undefined), 'create', '-f', '-');
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /data: Required value: data is mandatory/);
    const get = await api.kubectl('get', 'controllerrevision', 'empty');
    assert.match(get.stderr, /NotFound|not found/);
  });

  it('keeps data immutable and lets revision change', async () => {
    const bad = await api.kubectl(
      'patch',
      'controllerrevision',
      'web-5d8f',
      '--type',
      'merge',
      '-p',
      '{"data":{"spec":{"x":1}}}',
    );
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /data: Invalid value: .*field is immutable/);
    const ok = await api.kubectl(
      'patch',
      'controllerrevision',
      'web-5d8f',
      '--type',
      'merge',
      '-p',
      '{"revision":3}',
    );
    assert.equal(ok.code, 0, ok.stderr);
    const got = await api.kubectl(
      'get',
      'controllerrevision',
      'web-5d8f',
      '-o',
      'jsonpath={.revision} {.data}',
    );
    assert.equal(got.stdout, '3 {"spec":{"template":{}}}');
  });

  it('is known to kubectl explain (the data field is an embedded object)', async () => {
    const r = await api.kubectl('explain', 'controllerrevision.data');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /KIND:\s+ControllerRevision/);
  });
});
