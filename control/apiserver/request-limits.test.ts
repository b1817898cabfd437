// Malformed and oversized requests, sent as an attacker would (raw sockets where a client
// library would refuse to): each answers a 4xx metav1.Status, writes nothing and keeps
// the server's memory bounded.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { resources } from '../../api/client/resource.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';
import { MAX_BODY_BYTES, MAX_JSON_NESTING_DEPTH } from './request.js';

interface Answer {
  code: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

describe('request limits (API server)', () => {
  let api: TestApi;
  let port: number;
  before(async () => {
    api = await startTestApi();
    port = Number(new URL(api.url).port);
  });
  after(() => api.stop());

  /** One HTTP/1.1 request whose body is written in `chunks` (chunked transfer encoding). */
  const chunked = (path: string, chunks: Iterable<Buffer>): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, method: 'POST', path, headers: { 'Content-Type': 'application/json' } },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (body += d));
          res.on('end', () => resolve({ code: res.statusCode ?? 0, headers: res.headers, body }));
        },
      );
      req.on('error', reject);
      const it = chunks[Symbol.iterator]();
      const pump = (): void => {
        for (;;) {
          const next = it.next();
          if (next.done) {
            req.end();
            return;
          }
          if (!req.write(next.value)) {
            req.once('drain', pump);
            return;
          }
        }
      };
      pump();
    });

  /** Writes `raw` on a plain socket and reads the whole answer (the server closes it or answers once). */
  const raw = (text: string): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let data = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => {
        data += d;
        const end = data.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = /content-length: (\d+)/i.exec(data.slice(0, end));
        if (length && data.length >= end + 4 + Number(length[1])) socket.end();
      });
      socket.on('error', reject);
      socket.on('close', () => {
        const end = data.indexOf('\r\n\r\n');
        const head = data.slice(0, end < 0 ? data.length : end).split('\r\n');
        const headers: Answer['headers'] = {};
        for (const line of head.slice(1)) {
          const i = line.indexOf(':');
          headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
        }
        resolve({
          code: Number(head[0]?.split(' ')[1] ?? 0),
          headers,
          body: end < 0 ? '' : data.slice(end + 4),
        });
      });
      socket.write(text);
    });

  const status = (a: Answer) =>
    JSON.parse(a.body) as { kind: string; code: number; reason: string; message: string };
  const configMaps = async () =>
    (await api.client.list(resources.configmaps, { namespace: 'default' })).items;

  it('answers a chunked body over the limit 413 with a Status, and writes nothing', async () => {
    const head = Buffer.from('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"k":"');
    const filler = Buffer.alloc(64 * 1024, 'a');
    const chunks = function* () {
      yield head;
      for (let sent = 0; sent <= MAX_BODY_BYTES + filler.length; sent += filler.length) yield filler;
      yield Buffer.from('"}}');
    };
    const a = await chunked('/api/v1/namespaces/default/configmaps', chunks());
    assert.equal(a.code, 413);
    const s = status(a);
    assert.equal(s.kind, 'Status');
    assert.equal(s.code, 413);
    assert.equal(s.reason, 'RequestEntityTooLarge');
    assert.deepEqual(await configMaps(), []);
  });

  it(`answers JSON nested deeper than ${MAX_JSON_NESTING_DEPTH} levels 400, bounded in memory`, async () => {
    const depth = 100_000;
    const body = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep","annotations":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
    const before = process.memoryUsage().rss;
    for (const path of ['/api/v1/namespaces/default/configmaps']) {
      const a = await chunked(path, [Buffer.from(body)]);
      assert.equal(a.code, 400, a.body);
      const s = status(a);
      assert.equal(s.reason, 'BadRequest');
      assert.match(s.message, /exceeded max depth/);
    }
    // A patch body too, and YAML.
    await api.client.create(resources.configmaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'shallow', namespace: 'default' },
    });
    for (const [type, text] of [
      ['application/merge-patch+json', `{"data":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`],
      [
        'application/yaml',
        `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep-yaml, annotations: ${'['.repeat(depth)}${']'.repeat(depth)}}\n`,
      ],
      // A quote in a plain scalar (`it's`) must not hide the brackets after it from the check.
      [
        'application/yaml',
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: it's\ndata:\n  x: ${'['.repeat(depth)}${']'.repeat(depth)}\n`,
      ],
      // Block sequences nested on one line: two bytes a level, no bracket at all.
      [
        'application/yaml',
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dash\ndata:\n  x:\n    ${'- '.repeat(depth)}x\n`,
      ],
      [
        'application/apply-patch+yaml',
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: it's\ndata:\n  x: ${'['.repeat(depth)}${']'.repeat(depth)}\n`,
      ],
    ] as const) {
      const patch = type !== 'application/yaml';
      const query = type === 'application/apply-patch+yaml' ? '?fieldManager=test' : '';
      const res = await fetch(
        `${api.url}/api/v1/namespaces/default/configmaps${patch ? '/shallow' : ''}${query}`,
        {
          method: patch ? 'PATCH' : 'POST',
          headers: { 'Content-Type': type },
          body: text,
        },
      );
      const s = (await res.json()) as { code: number; reason: string; message: string };
      assert.equal(res.status, 400, `${type}: ${s.message}`);
      assert.equal(s.reason, 'BadRequest');
      assert.match(s.message, /exceeded max depth/);
    }
    // Not the ~250 MB the unbounded parse took.
    assert.ok(process.memoryUsage().rss - before < 100 * 1024 * 1024, 'memory stays bounded');
    assert.deepEqual(
      (await configMaps()).map((c) => c.metadata?.name),
      ['shallow'],
    );
  });

  it('still accepts JSON nested up to the limit', async () => {
    // Deep but legal: an unknown field is dropped (fieldValidation Warn), the object is stored.
    const depth = MAX_JSON_NESTING_DEPTH - 10;
    const body = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"nested"},"x":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const a = await chunked('/api/v1/namespaces/default/configmaps', [Buffer.from(body)]);
    assert.equal(a.code, 201, a.body);
  });

  it('answers a malformed percent-escape in the path 400 with a Status', async () => {
    for (const path of [
      '/api/v1/namespaces/%E0%A4%A/configmaps',
      '/api/v1/namespaces/default/configmaps/%zz',
      '/api/v1/namespaces/default/configmaps/%',
    ]) {
      const a = await raw(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      assert.equal(a.code, 400, `${path}: ${a.body}`);
      const s = status(a);
      assert.equal(s.kind, 'Status');
      assert.equal(s.reason, 'BadRequest');
    }
  });

  it("answers an over-long URL or over-long headers 431 (as Go's net/http) with a Status", async () => {
    const url = await raw(
      `GET /api/v1/namespaces/default/configmaps?labelSelector=${'a'.repeat(64 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    );
    const header = await raw(
      `GET /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(64 * 1024)}\r\n\r\n`,
    );
    for (const a of [url, header]) {
      assert.equal(a.code, 431, a.body);
      assert.equal(a.headers['content-type'], 'application/json');
      assert.equal(status(a).kind, 'Status');
      assert.equal(status(a).code, 431);
    }
  });

  it('answers a request target that is no URL 400, and keeps serving', async () => {
    for (const target of ['http://[', '//[/api/v1/namespaces']) {
      const a = await raw(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      assert.equal(a.code, 400, `${target}: ${a.body}`);
      assert.equal(status(a).reason, 'BadRequest');
      const upgrade = await raw(
        `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
      );
      assert.equal(upgrade.code, 400, `upgrade ${target}: ${upgrade.body}`);
    }
    assert.equal((await fetch(`${api.url}/healthz`)).status, 200);
  });
});
