import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../api/object.js';
import {
  BOOTSTRAP_TOKEN_PATTERN,
  bootstrapTokenSecret,
  DEFAULT_NODE_TOKEN_GROUP,
  formatJoinToken,
  generateBootstrapToken,
  JoinTokenError,
  parseJoinToken,
} from '../../../api/auth/bootstrap-token.js';
import { authenticateBootstrapToken } from './bootstrap-token.js';

const HASH = 'ab'.repeat(32);

describe('join tokens', () => {
  it('generates kubeadm-shaped bootstrap tokens', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const t = generateBootstrapToken();
      assert.match(t.token, BOOTSTRAP_TOKEN_PATTERN);
      assert.equal(t.token, `${t.id}.${t.secret}`);
      seen.add(t.token);
    }
    assert.equal(seen.size, 20);
  });

  it('round-trips K10<hash>::<id>.<secret>', () => {
    const j = formatJoinToken(HASH, 'abcdef.0123456789abcdef');
    assert.equal(j, `K10${HASH}::abcdef.0123456789abcdef`);
    assert.deepEqual(parseJoinToken(`${j}\n`), {
      caHash: HASH,
      token: 'abcdef.0123456789abcdef',
      id: 'abcdef',
      secret: '0123456789abcdef',
    });
  });

  const bad: [string, string, RegExp][] = [
    ['a bare bootstrap token', 'abcdef.0123456789abcdef', /must be a join token K10<CA hash>::<id>.<secret>/],
    ['a short CA hash', `K10abc::abcdef.0123456789abcdef`, /must be a join token/],
    ['a malformed secret', `K10${HASH}::abcdef.short`, /after "::" must be/],
    ['upper case', `K10${HASH}::ABCDEF.0123456789abcdef`, /after "::" must be/],
    ['the old random token', `K10${'a'.repeat(48)}`, /must be a join token/],
  ];
  for (const [name, text, msg] of bad) {
    it(`refuses ${name}`, () =>
      assert.throws(
        () => parseJoinToken(text),
        (err: unknown) => err instanceof JoinTokenError && msg.test(err.message),
      ));
  }
});

describe('authenticateBootstrapToken', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const secret = (opts: Parameters<typeof bootstrapTokenSecret>[2] = {}) =>
    bootstrapTokenSecret('abcdef', '0123456789abcdef', { now, ...opts });

  it('authenticates the token of its Secret as system:bootstrap:<id> with its groups', () => {
    assert.deepEqual(authenticateBootstrapToken(secret(), 'abcdef', '0123456789abcdef', now), {
      name: 'system:bootstrap:abcdef',
      groups: ['system:bootstrappers', DEFAULT_NODE_TOKEN_GROUP, 'system:authenticated'],
    });
  });

  it('stores the Secret as kubeadm does', () => {
    const s = secret({ ttlSeconds: 3600, description: 'd' });
    assert.equal(s.metadata?.name, 'bootstrap-token-abcdef');
    assert.equal(s.metadata?.namespace, 'kube-system');
    assert.equal(s.type, 'bootstrap.kubernetes.io/token');
    const data = s.data as Record<string, string>;
    assert.equal(Buffer.from(data.expiration!, 'base64').toString(), '2026-01-01T01:00:00Z');
    assert.equal(Buffer.from(data['usage-bootstrap-authentication']!, 'base64').toString(), 'true');
  });

  const refused: [string, KubeObject | undefined, string, Date][] = [
    ['no Secret (deleted: revoked)', undefined, '0123456789abcdef', now],
    ['a wrong secret', secret(), '0123456789abcdeX', now],
    ['an expired token', secret({ ttlSeconds: 60 }), '0123456789abcdef', new Date(now.getTime() + 61_000)],
    ['a Secret of another type', { ...secret(), type: 'Opaque' }, '0123456789abcdef', now],
    [
      'a Secret being deleted',
      { ...secret(), metadata: { ...secret().metadata, deletionTimestamp: now.toISOString() } },
      '0123456789abcdef',
      now,
    ],
    [
      'a token not for authentication',
      {
        ...secret(),
        data: {
          ...(secret().data as object),
          'usage-bootstrap-authentication': Buffer.from('false').toString('base64'),
        },
      },
      '0123456789abcdef',
      now,
    ],
  ];
  for (const [name, s, token, at] of refused) {
    it(`refuses ${name}`, () => assert.equal(authenticateBootstrapToken(s, 'abcdef', token, at), undefined));
  }

  it('keeps only extra groups under system:bootstrappers:', () => {
    const s = secret({ groups: ['system:bootstrappers:x', 'system:masters'] });
    assert.deepEqual(authenticateBootstrapToken(s, 'abcdef', '0123456789abcdef', now)?.groups, [
      'system:bootstrappers',
      'system:bootstrappers:x',
      'system:authenticated',
    ]);
  });
});
