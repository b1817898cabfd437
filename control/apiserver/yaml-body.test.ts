// YAML request bodies as kube-apiserver reads them (YAML 1.1, go-yaml v2 under
// sigs.k8s.io/yaml): a merge key is resolved, and `release: yes` is a boolean, so a
// label value written that way is a 400 type error and nothing is stored. Repeated keys:
// the last wins, and fieldValidation reports them as the serializer's strict YAML pass
// (yaml.YAMLToJSONStrict) words them: a warning each under Warn, a 400 under Strict; for
// server-side apply, the apply patcher's UnmarshalStrict. Only a stream's first document
// is read.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestApi, type TestApi } from '../../test/support/api.js';

describe('YAML bodies (API server)', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.stop());

  const CMS = '/api/v1/namespaces/default/configmaps';
  const post = async (body: string, type = 'application/yaml', query = '') => {
    const res = await fetch(`${api.url}${CMS}${query}`, {
      method: 'POST',
      headers: { 'Content-Type': type },
      body,
    });
    return {
      status: res.status,
      warning: res.headers.get('warning'),
      body: (await res.json()) as Record<string, unknown>,
    };
  };
  const apply = async (name: string, body: string, query = '') => {
    const res = await fetch(`${api.url}${CMS}/${name}?fieldManager=t${query}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
      body,
    });
    return {
      status: res.status,
      warning: res.headers.get('warning'),
      body: (await res.json()) as Record<string, unknown>,
    };
  };
  const warningOf = (text: string) => `299 - "${text.replace(/"/g, '\\"')}"`;

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
    // go-yaml v2's strict pass counts a key the merge already set.
    assert.equal(res.warning, warningOf('line 8: key "tier" already set in map'));
  });

  const dup = (name: string) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: one\n  a: two\n`;

  it('takes the last of repeated keys, quietly under Ignore', async () => {
    const res = await post(dup('dup-ignore'), 'application/yaml', '?fieldValidation=Ignore');
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body['data'], { a: 'two' });
    assert.equal(res.warning, null);
  });

  it('warns of repeated keys under Warn (the default)', async () => {
    const res = await post(dup('dup-warn'));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body['data'], { a: 'two' });
    assert.equal(res.warning, warningOf('line 7: key "a" already set in map'));
  });

  it('refuses repeated keys under Strict, and stores nothing', async () => {
    const res = await post(dup('dup-strict'), 'application/yaml', '?fieldValidation=Strict');
    assert.equal(res.status, 400);
    assert.equal(res.body['reason'], 'BadRequest');
    assert.equal(
      res.body['message'],
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: yaml: unmarshal errors:\n  line 7: key "a" already set in map',
    );
    assert.equal((await fetch(`${api.url}${CMS}/dup-strict`)).status, 404);
  });

  it('server-side apply: a warning under Warn, a 400 under Strict, for YAML and JSON bodies', async () => {
    const warned = await apply('ap-dup', dup('ap-dup'));
    assert.equal(warned.status, 201, JSON.stringify(warned.body));
    assert.deepEqual(warned.body['data'], { a: 'two' });
    assert.equal(warned.warning, warningOf('line 7: key "a" already set in map'));
    const strict = await apply('ap-dup', dup('ap-dup'), '&fieldValidation=Strict');
    assert.equal(strict.status, 400);
    assert.equal(
      strict.body['message'],
      'error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key "a" already set in map',
    );
    const json =
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ap-dup"},"data":{"a":"x","a":"y"}}';
    const jsonWarned = await apply('ap-dup', json);
    assert.equal(jsonWarned.status, 200, JSON.stringify(jsonWarned.body));
    assert.deepEqual(jsonWarned.body['data'], { a: 'y' });
    assert.equal(jsonWarned.warning, warningOf('line 1: key "a" already set in map'));
    const ignored = await apply('ap-dup', json, '&fieldValidation=Ignore');
    assert.equal(ignored.status, 200);
    assert.equal(ignored.warning, null);
  });

  it('reads only the first document of a multi-document body', async () => {
    const doc = [
      '---',
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: {name: multi1}',
      '---',
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: {name: multi2}',
      '',
    ].join('\n');
    const res = await post(doc);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal((res.body['metadata'] as { name: string }).name, 'multi1');
    assert.equal((await fetch(`${api.url}${CMS}/multi2`)).status, 404);
  });

  it('reads 0o17 as the integer 15 (strconv.ParseInt base 0), so a data value written so is a 400', async () => {
    const res = await post('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: octal}\ndata:\n  k: 0o17\n');
    assert.equal(res.status, 400);
    assert.equal(
      res.body['message'],
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string',
    );
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

  it("refuses a YAML body sent as JSON (kubectl create --raw) in the create handler's words", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'k8ts-raw-'));
    try {
      const file = join(dir, 'cm.yaml');
      writeFileSync(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: raw1\n');
      const r = await api.kubectl('create', '--raw', CMS, '-f', file);
      assert.notEqual(r.code, 0);
      assert.equal(
        r.stderr.trim(),
        "Error from server (BadRequest): the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character 'a' looking for beginning of value (61706956657273696f6e3a2076310a6b696e643a20436f6e6669674d6170 ...)",
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const empty = await post('', 'application/json');
    assert.equal(
      empty.body['message'],
      "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)",
    );
  });
});
