import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { httpLeaseClient } from './http.js';
import type { Lease } from './lease.js';
import {
  errorCode,
  formatMicroTime,
  isConflict,
  isNotFound,
  LeaseApiError,
  parseMicroTime,
} from './lease.js';

describe('MicroTime', () => {
  const cases: Array<[string, number]> = [
    ['2026-01-01T00:00:00.000000Z', Date.UTC(2026, 0, 1)],
    ['2026-11-30T10:55:50.123000Z', Date.UTC(2026, 10, 30, 10, 55, 50, 123)],
  ];
  for (const [text, ms] of cases) {
    it(`formats and parses ${text}`, () => {
      assert.equal(formatMicroTime(ms), text);
      assert.equal(parseMicroTime(text), ms);
    });
  }
  it('parses other RFC 3339 forms and rejects garbage', () => {
    assert.equal(parseMicroTime('2026-01-01T01:00:00.123456+01:00'), Date.UTC(2026, 0, 1, 0, 0, 0, 123));
    assert.equal(parseMicroTime('2026-01-01T00:00:00Z'), Date.UTC(2026, 0, 1));
    assert.equal(parseMicroTime(''), undefined);
    assert.equal(parseMicroTime(null), undefined);
    assert.equal(parseMicroTime('yesterday'), undefined);
  });
  it('classifies errors by .code', () => {
    assert.equal(isNotFound(new LeaseApiError(404, 'x')), true);
    assert.equal(isConflict(Object.assign(new Error('x'), { code: 409 })), true);
    assert.equal(errorCode(Object.assign(new Error('x'), { code: 'ECONNREFUSED' })), undefined);
    assert.equal(errorCode(undefined), undefined);
  });
});

describe('httpLeaseClient', () => {
  const requests: Array<{ method: string; url: string; body: string }> = [];
  const answers: Array<{ status: number; body: string }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      requests.push({ method: req.method!, url: req.url!, body });
      const a = answers.shift() ?? { status: 500, body: 'no answer queued' };
      res.writeHead(a.status, { 'Content-Type': 'application/json' });
      res.end(a.body);
    });
  });
  let url = '';
  before(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const lease: Lease = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'le', namespace: 'kube-system', resourceVersion: '7' },
    spec: { holderIdentity: 'a' },
  };
  const status = (code: number, reason: string) =>
    JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code,
      reason,
      message: `${reason}!`,
    });

  const cases: Array<{
    name: string;
    call: (c: ReturnType<typeof httpLeaseClient>) => Promise<Lease>;
    answer: { status: number; body: string };
    method: string;
    path: string;
    sent?: Lease;
    code?: number;
    reason?: string;
  }> = [
    {
      name: 'get',
      call: (c) => c.get('kube-system', 'le'),
      answer: { status: 200, body: JSON.stringify(lease) },
      method: 'GET',
      path: '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/le',
    },
    {
      name: 'get of a missing Lease: 404 NotFound',
      call: (c) => c.get('kube-system', 'le'),
      answer: { status: 404, body: status(404, 'NotFound') },
      method: 'GET',
      path: '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/le',
      code: 404,
      reason: 'NotFound',
    },
    {
      name: 'create',
      call: (c) => c.create(lease),
      answer: { status: 201, body: JSON.stringify(lease) },
      method: 'POST',
      path: '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases',
      sent: lease,
    },
    {
      name: 'update with a stale resourceVersion: 409 Conflict',
      call: (c) => c.update(lease),
      answer: { status: 409, body: status(409, 'Conflict') },
      method: 'PUT',
      path: '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/le',
      sent: lease,
      code: 409,
      reason: 'Conflict',
    },
    {
      name: 'a non-Status error body keeps the HTTP status',
      call: (c) => c.update(lease),
      answer: { status: 503, body: 'overloaded' },
      method: 'PUT',
      path: '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/le',
      sent: lease,
      code: 503,
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      requests.length = 0;
      answers.push(c.answer);
      const p = c.call(httpLeaseClient(url));
      if (c.code === undefined) {
        assert.deepEqual(await p, lease);
      } else {
        await assert.rejects(p, (err: unknown) => {
          assert.ok(err instanceof LeaseApiError);
          assert.equal(err.code, c.code);
          assert.equal(err.reason, c.reason);
          return true;
        });
      }
      assert.equal(requests.length, 1);
      assert.equal(requests[0]!.method, c.method);
      assert.equal(requests[0]!.url, c.path);
      if (c.sent) assert.deepEqual(JSON.parse(requests[0]!.body), c.sent);
    });
  }

  it('an aborted signal aborts the request (no .code)', async () => {
    const ctl = new AbortController();
    ctl.abort();
    await assert.rejects(httpLeaseClient(url).get('kube-system', 'le', ctl.signal), (err: unknown) => {
      assert.equal(errorCode(err), undefined);
      return true;
    });
  });
});
