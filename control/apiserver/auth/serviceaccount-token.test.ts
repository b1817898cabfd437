// ServiceAccountTokens alone: issuing, verifying (time injected), the bound objects' checks,
// and tokens that must not authenticate (another issuer, alg none, HS256 keyed with the
// public key, a cut signature, missing private claims).
import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { decodeJwt, SignJWT, UnsecuredJWT } from 'jose';
import type { KubeObject } from '../../../api/object.js';
import { defaultIssuer, ServiceAccountTokens } from './serviceaccount-token.js';
import type { BoundObjectGetter } from './serviceaccount-claims.js';

const { privateKey: KEY } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
const ISSUER = defaultIssuer();
const T0 = Date.parse('2026-03-01T12:00:00Z');

const obj = (kind: string, name: string, uid: string, extra: Partial<KubeObject> = {}): KubeObject => ({
  kind,
  apiVersion: 'v1',
  metadata: { name, namespace: 'team', uid },
  ...extra,
});

/** Tokens over a mutable set of objects and a mutable clock. */
function setup() {
  const objects = new Map<string, KubeObject>();
  const put = (o: KubeObject) => objects.set(`${o.kind}/${o.metadata!.name}`, o);
  const getter: BoundObjectGetter = {
    serviceAccount: (_ns, name) => Promise.resolve(objects.get(`ServiceAccount/${name}`)),
    pod: (_ns, name) => Promise.resolve(objects.get(`Pod/${name}`)),
    secret: (_ns, name) => Promise.resolve(objects.get(`Secret/${name}`)),
    node: (name) => Promise.resolve(objects.get(`Node/${name}`)),
  };
  const clock = { now: T0 };
  const tokens = new ServiceAccountTokens({
    key: KEY,
    issuer: ISSUER,
    getter,
    now: () => new Date(clock.now),
  });
  const sa = obj('ServiceAccount', 'app', 'sa-1');
  const pod = obj('Pod', 'web', 'pod-1', { spec: { serviceAccountName: 'app', nodeName: 'n1' } });
  put(sa);
  put(pod);
  return { tokens, clock, put, objects, sa, pod };
}

describe('ServiceAccountTokens', () => {
  it('uses the issuer as the default API audience and a kid from the public key', () => {
    const { tokens } = setup();
    assert.equal(ISSUER, 'https://kubernetes.default.svc.cluster.local');
    assert.equal(defaultIssuer('corp.example'), 'https://kubernetes.default.svc.corp.example');
    assert.deepEqual(tokens.audiences, [ISSUER]);
    assert.match(tokens.keyId, /^[A-Za-z0-9_-]{43}$/);
  });

  it('accepts a token until exp plus the 60 s leeway, and not before nbf minus it', async () => {
    const { tokens, clock, sa } = setup();
    const token = await tokens.issue({ serviceAccount: sa }, 600, [ISSUER]);
    assert.equal(decodeJwt(token).exp, T0 / 1000 + 600);
    const at = async (ms: number) => {
      clock.now = ms;
      return tokens.authenticate(token);
    };
    assert.ok(await at(T0 - 59_000).then((r) => r && 'user' in r), 'nbf leeway');
    assert.deepEqual(await at(T0 - 61_000), { error: 'service account token could not be validated' });
    assert.ok(await at(T0 + 659_000).then((r) => r && 'user' in r), 'exp leeway');
    assert.deepEqual(await at(T0 + 661_000), { error: 'service account token has expired' });
  });

  it('checks the ServiceAccount and the bound pod by name and uid', async () => {
    const { tokens, put, objects, sa, pod, clock } = setup();
    const podToken = await tokens.issue({ serviceAccount: sa, pod }, 3600, [ISSUER]);
    const r = await tokens.authenticate(podToken);
    assert.ok(r && 'user' in r);
    assert.equal(r.user.name, 'system:serviceaccount:team:app');
    assert.equal(r.user.uid, 'sa-1');
    assert.deepEqual(r.audiences, [ISSUER]);
    // In graceful deletion, still good until a minute after its deletionTimestamp.
    put(
      obj('Pod', 'web', 'pod-1', {
        metadata: { name: 'web', uid: 'pod-1', deletionTimestamp: new Date(T0).toISOString() },
      }),
    );
    clock.now = T0 + 59_000;
    assert.ok(await tokens.authenticate(podToken).then((x) => x && 'user' in x));
    clock.now = T0 + 61_000;
    const invalidated = { error: 'service account token has been invalidated' };
    assert.deepEqual(await tokens.authenticate(podToken), invalidated);
    clock.now = T0;
    put(obj('Pod', 'web', 'pod-2'));
    assert.deepEqual(await tokens.authenticate(podToken), invalidated, 'recreated pod');
    objects.delete('Pod/web');
    assert.deepEqual(await tokens.authenticate(podToken), invalidated, 'deleted pod');
    const saToken = await tokens.issue({ serviceAccount: sa }, 3600, [ISSUER]);
    put(obj('ServiceAccount', 'app', 'sa-2'));
    assert.deepEqual(await tokens.authenticate(saToken), invalidated, 'recreated ServiceAccount');
  });

  it('checks the Node of a node-bound token, not that of a pod-bound one', async () => {
    const { tokens, put, objects, sa, pod } = setup();
    const node = obj('Node', 'n1', 'node-1');
    put(node);
    const nodeToken = await tokens.issue({ serviceAccount: sa, node }, 3600, [ISSUER]);
    const podToken = await tokens.issue({ serviceAccount: sa, pod, node }, 3600, [ISSUER]);
    const r = await tokens.authenticate(nodeToken);
    assert.ok(r && 'user' in r);
    assert.deepEqual(r.user.extra?.['authentication.kubernetes.io/node-uid'], ['node-1']);
    assert.equal(r.user.extra?.['authentication.kubernetes.io/pod-name'], undefined);
    objects.delete('Node/n1');
    assert.deepEqual(await tokens.authenticate(nodeToken), {
      error: 'service account token has been invalidated',
    });
    assert.ok(await tokens.authenticate(podToken).then((x) => x && 'user' in x), 'its pod still exists');
  });

  it('answers for the requested audiences only', async () => {
    const { tokens, sa } = setup();
    const token = await tokens.issue({ serviceAccount: sa }, 3600, ['vault', 'api']);
    assert.deepEqual(await tokens.authenticate(token), {
      error: `token audiences ["vault" "api"] is invalid for the target audiences ["${ISSUER}"]`,
    });
    const r = await tokens.authenticate(token, ['api', 'other']);
    assert.ok(r && 'user' in r);
    assert.deepEqual(r.audiences, ['api']);
  });

  it('leaves tokens of other issuers to other authenticators and refuses forged ones', async () => {
    const { tokens, sa } = setup();
    const good = await tokens.issue({ serviceAccount: sa }, 3600, [ISSUER]);
    const claims = decodeJwt(good);
    assert.equal(await tokens.authenticate('abcdef.0123456789abcdef'), undefined, 'not a JWT');
    const foreign = await new SignJWT({ ...claims, iss: 'https://elsewhere' })
      .setProtectedHeader({ alg: 'RS256' })
      .sign(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);
    assert.equal(await tokens.authenticate(foreign), undefined, 'another issuer');
    const none = new UnsecuredJWT(claims).encode();
    assert.deepEqual(await tokens.authenticate(none), {
      error: 'service account token could not be validated',
    });
    const hmac = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(createPublicKey(KEY).export({ type: 'spki', format: 'pem' }) as string));
    assert.deepEqual(await tokens.authenticate(hmac), {
      error: 'service account token could not be validated',
    });
    const [h, p, s] = good.split('.');
    const flipped = `${h}.${p}.${s!.startsWith('A') ? 'B' : 'A'}${s!.slice(1)}`;
    assert.deepEqual(await tokens.authenticate(flipped), { error: 'invalid signature' });
    const bare = await new SignJWT({ ...claims, 'kubernetes.io': undefined })
      .setProtectedHeader({ alg: 'RS256' })
      .sign(createPrivateKey(KEY));
    assert.deepEqual(await tokens.authenticate(bare), {
      error: 'service account token claims could not be validated',
    });
  });

  it('publishes the key as a JWKS and an OIDC discovery document', async () => {
    const { tokens } = setup();
    const { keys } = await tokens.jwks();
    assert.equal(keys.length, 1);
    assert.deepEqual(
      [keys[0]!.kty, keys[0]!.alg, keys[0]!.use, keys[0]!.kid],
      ['RSA', 'RS256', 'sig', tokens.keyId],
    );
    assert.equal(keys[0]!.d, undefined, 'no private part');
    assert.deepEqual(tokens.openIDConfiguration('https://10.0.0.1:6443/openid/v1/jwks'), {
      issuer: ISSUER,
      jwks_uri: 'https://10.0.0.1:6443/openid/v1/jwks',
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
    });
  });
});
