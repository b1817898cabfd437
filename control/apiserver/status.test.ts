import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StorageError, type StorageErrorCode } from '../storage/errors.js';
import { ApiError, conflict, invalid, notFound, toApiError } from './status.js';

const deploy = { group: 'apps', resource: 'deployments', name: 'web' };

describe('toApiError maps storage failures to Kubernetes statuses', () => {
  const cases: [StorageErrorCode, number, string, RegExp][] = [
    ['KeyNotFound', 404, 'NotFound', /^deployments\.apps "web" not found$/],
    ['KeyExists', 409, 'AlreadyExists', /^deployments\.apps "web" already exists$/],
    [
      'Conflict',
      409,
      'Conflict',
      /^Operation cannot be fulfilled on deployments\.apps "web": the object has been modified/,
    ],
    ['Compacted', 410, 'Expired', /too old/],
    ['FutureRevision', 504, 'Timeout', /Too large resource version/],
    ['InvalidKey', 400, 'BadRequest', /boom/],
    ['InvalidValue', 400, 'BadRequest', /boom/],
    ['InvalidArgument', 400, 'BadRequest', /boom/],
    ['Unavailable', 503, 'ServiceUnavailable', /storage is unavailable/],
    ['Closed', 503, 'ServiceUnavailable', /storage is unavailable/],
  ];
  for (const [code, http, reason, message] of cases) {
    it(`${code} → ${http} ${reason}`, () => {
      const e = toApiError(new StorageError(code, 'boom'), deploy);
      assert.equal(e.code, http);
      assert.equal(e.reason, reason);
      assert.match(e.message, message);
      const s = e.toStatus();
      assert.equal(s.kind, 'Status');
      assert.equal(s.apiVersion, 'v1');
      assert.equal(s.status, 'Failure');
      assert.equal(s.code, http);
    });
  }

  it('passes ApiErrors through and turns anything else into a 500 InternalError', () => {
    const e = notFound(deploy);
    assert.equal(toApiError(e), e);
    const internal = toApiError(new TypeError('x is undefined'));
    assert.equal(internal.code, 500);
    assert.equal(internal.reason, 'InternalError');
    assert.equal(internal.message, 'Internal error occurred: x is undefined');
  });
});

describe('Status bodies', () => {
  it('NotFound names the resource like Kubernetes, core resources without a group', () => {
    assert.deepEqual(notFound({ group: '', resource: 'pods', name: 'p' }).toStatus(), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'pods "p" not found',
      reason: 'NotFound',
      details: { name: 'p', kind: 'pods' },
      code: 404,
    });
  });

  it('Invalid lists every cause with its field', () => {
    const e = invalid('Deployment', deploy, [
      {
        reason: 'FieldValueInvalid',
        field: 'spec.replicas',
        message: 'Invalid value: -1: must be greater than or equal to 0',
      },
      { reason: 'FieldValueRequired', field: 'spec.selector', message: 'Required value' },
    ]);
    assert.equal(e.code, 422);
    assert.equal(
      e.message,
      'Deployment.apps "web" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.selector: Required value]',
    );
    assert.equal(e.toStatus().details?.causes?.length, 2);
    assert.equal(e.toStatus().details?.kind, 'Deployment');
  });

  it('Conflict accepts a specific explanation', () => {
    assert.ok(conflict(deploy, 'x') instanceof ApiError);
    assert.match(conflict(deploy, 'x').message, /: x$/);
  });
});
