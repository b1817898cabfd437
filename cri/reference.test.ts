import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isCriError } from './errors.js';
import { familiarName, familiarRepository, parseImageReference } from './reference.js';

const DIGEST = 'sha256:' + 'a'.repeat(64);

describe('parseImageReference', () => {
  const valid: [string, { domain: string; path: string; tag?: string; digest?: string }, string][] = [
    ['busybox', { domain: 'docker.io', path: 'library/busybox' }, 'busybox:latest'],
    [
      'spring-server:1.0',
      { domain: 'docker.io', path: 'library/spring-server', tag: '1.0' },
      'spring-server:1.0',
    ],
    ['k8ts/pause:1.0', { domain: 'docker.io', path: 'k8ts/pause', tag: '1.0' }, 'k8ts/pause:1.0'],
    ['docker.io/library/busybox:1', { domain: 'docker.io', path: 'library/busybox', tag: '1' }, 'busybox:1'],
    ['127.0.0.1:1/nope:1', { domain: '127.0.0.1:1', path: 'nope', tag: '1' }, '127.0.0.1:1/nope:1'],
    ['localhost/a/b', { domain: 'localhost', path: 'a/b' }, 'localhost/a/b:latest'],
    [
      'localhost:5000/a_b__c-d.e',
      { domain: 'localhost:5000', path: 'a_b__c-d.e' },
      'localhost:5000/a_b__c-d.e:latest',
    ],
    [
      `busybox@${DIGEST}`,
      { domain: 'docker.io', path: 'library/busybox', digest: DIGEST },
      `busybox@${DIGEST}`,
    ],
    [
      `reg.example:5000/x/y:t@${DIGEST}`,
      { domain: 'reg.example:5000', path: 'x/y', tag: 't', digest: DIGEST },
      `reg.example:5000/x/y:t@${DIGEST}`,
    ],
  ];
  for (const [ref, want, familiar] of valid) {
    it(`parses ${ref}`, () => {
      const got = parseImageReference(ref);
      assert.deepEqual(got, want);
      assert.equal(familiarName(got), familiar);
    });
  }

  const invalid: [string, RegExp][] = [
    ['', /empty/],
    ['Busybox', /lowercase/],
    ['busybox:', /bad tag/],
    ['busybox:a b', /bad tag/],
    ['busybox:-x', /bad tag/],
    ['bad//path', /bad path component/],
    ['-x', /bad path component/],
    ['x-', /bad path component/],
    ['busybox@sha256:1234', /bad digest/],
    [':tag', /no repository name/],
    ['reg:port/x', /bad registry/],
    ['INVALID/Ref', /lowercase/],
    ['a'.repeat(256), /longer than 255/],
  ];
  for (const [ref, why] of invalid) {
    it(`rejects ${JSON.stringify(ref.slice(0, 20))} as InvalidArgument`, () => {
      assert.throws(
        () => parseImageReference(ref),
        (err: unknown) => isCriError(err, 'InvalidArgument') && why.test(err.message),
      );
    });
  }

  it('gives the repository without tag', () => {
    assert.equal(familiarRepository(parseImageReference('docker.io/library/busybox:1')), 'busybox');
    assert.equal(familiarRepository(parseImageReference('127.0.0.1:1/nope:1')), '127.0.0.1:1/nope');
  });
});
