/**
 * The CRI client's pure parts: endpoints as gRPC targets, gRPC errors as CriErrors and the
 * streaming server's final status as an exit code
 * (containerd.test.ts shows them against a real containerd).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { status } from '@grpc/grpc-js';
import { CriError } from '../errors.js';
import { criErrorOf, grpcTarget, socketPathOf } from './client.js';
import { exitCodeOfStatus } from './streams.js';

const SOCK = '/run/containerd/containerd.sock';
const grpcError = (code: status, details: string): Error =>
  Object.assign(new Error(`${code} ${status[code]}: ${details}`), { code, details });

describe('CRI client', () => {
  it('endpoints: unix:///path, unix:/path and /path; nothing else', () => {
    for (const e of [`unix://${SOCK}`, `unix:${SOCK}`, SOCK]) {
      assert.equal(grpcTarget(e), `unix://${SOCK}`, e);
      assert.equal(socketPathOf(e), SOCK, e);
    }
    assert.throws(() => grpcTarget('tcp://127.0.0.1:1234'), /only unix sockets/);
  });

  const cases: [status, string, string][] = [
    [status.NOT_FOUND, 'an error occurred when try to find container "x": not found', 'NotFound'],
    [status.INVALID_ARGUMENT, 'bad', 'InvalidArgument'],
    [status.ALREADY_EXISTS, 'exists', 'AlreadyExists'],
    [status.FAILED_PRECONDITION, 'not ready', 'FailedPrecondition'],
    [status.DEADLINE_EXCEEDED, 'Deadline exceeded', 'DeadlineExceeded'],
    [status.UNAVAILABLE, 'No connection established', 'Unavailable'],
    [status.UNIMPLEMENTED, 'method CheckpointContainer not implemented', 'Internal'],
    [status.PERMISSION_DENIED, 'no', 'Internal'],
    // containerd's UNKNOWN answers, told apart by their words as the kubelet does.
    [
      status.UNKNOWN,
      'failed to exec in container: timeout 1s exceeded: context deadline exceeded',
      'DeadlineExceeded',
    ],
    [
      status.UNKNOWN,
      'failed to set starting state for container "x": container is in CONTAINER_EXITED state',
      'FailedPrecondition',
    ],
    [status.UNKNOWN, 'failed to reserve container name "a": name "a" is reserved for "b"', 'AlreadyExists'],
    [status.UNKNOWN, 'failed to create containerd task: OCI runtime create failed', 'Internal'],
  ];
  for (const [code, details, want] of cases) {
    it(`${status[code]} "${details.slice(0, 40)}…" is ${want}`, () => {
      const err = criErrorOf(grpcError(code, details), 'SomeRpc', 'doing it', SOCK);
      assert.ok(err instanceof CriError);
      assert.equal(err.code, want);
      assert.ok(err.message.startsWith('doing it: '), err.message);
      assert.ok(err.message.includes(details), err.message);
    });
  }

  it('UNAVAILABLE names the socket; UNIMPLEMENTED names the RPC; a plain error is Internal', () => {
    assert.match(
      criErrorOf(grpcError(status.UNAVAILABLE, 'x'), 'Status', 'status', SOCK).message,
      /containerd\.sock/,
    );
    assert.match(
      criErrorOf(grpcError(status.UNIMPLEMENTED, 'x'), 'CheckpointContainer', 'cp', SOCK).message,
      /does not implement CheckpointContainer/,
    );
    const plain = criErrorOf(new Error('boom'), 'Status', 'status', SOCK);
    assert.equal(plain.code, 'Internal');
    const already = new CriError('NotFound', 'kept');
    assert.equal(criErrorOf(already, 'Status', 'status', SOCK), already);
  });
});

describe('CRI streaming status', () => {
  it('the v4 error channel: Success is 0, NonZeroExitCode is its cause, anything else rejects', () => {
    assert.equal(exitCodeOfStatus(''), 0);
    assert.equal(exitCodeOfStatus('{"metadata":{},"status":"Success"}'), 0);
    assert.equal(
      exitCodeOfStatus(
        '{"metadata":{},"status":"Failure","message":"command terminated with non-zero exit code","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"7"}]}}',
      ),
      7,
    );
    assert.throws(
      () => exitCodeOfStatus('{"status":"Failure","message":"container not found"}'),
      (err) => err instanceof CriError && /container not found/.test(err.message),
    );
    assert.throws(() => exitCodeOfStatus('not json'), CriError);
  });
});
