import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resources } from '../../api/client/resource.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';

describe('API server request metrics', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.stop());

  it('counts requests by verb, resource and code, and times them', async () => {
    const cm = (name: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: 'default' },
    });
    for (const name of ['a', 'b', 'c']) await api.client.create(resources.configmaps, cm(name));
    await assert.rejects(api.client.create(resources.configmaps, cm('a')));
    await api.client.get(resources.configmaps, 'default', 'b');
    const text = await (await fetch(`${api.url}/metrics`)).text();
    const value = (series: string): number => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      assert.ok(line, `no ${series} in\n${text.slice(0, 2000)}`);
      return Number(line.slice(series.length + 1));
    };
    assert.equal(value('apiserver_request_total{verb="create",resource="configmaps",code="201"}'), 3);
    assert.equal(value('apiserver_request_total{verb="create",resource="configmaps",code="409"}'), 1);
    assert.equal(value('apiserver_request_total{verb="get",resource="configmaps",code="200"}'), 1);
    assert.equal(value('apiserver_request_duration_seconds_count{verb="create",resource="configmaps"}'), 4);
    assert.equal(
      value('apiserver_request_duration_seconds_bucket{le="+Inf",verb="create",resource="configmaps"}'),
      4,
    );
  });
});
