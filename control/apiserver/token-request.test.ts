// The TokenRequest API, service account token authentication, TokenReview and the OIDC
// discovery documents, on the real secure ApiServer in process (real HTTPS, real client
// certificates, a real RSA signing key), with an injected clock for expiry.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { configuredFetch } from '../../api/client/fetch.js';
import { signLeaf, type KeyPair } from '../../api/tls/certs.js';
import type { KubeObject } from '../../api/object.js';
import { MemoryStore } from '../storage/memory.js';
import type { ApiServer } from './server.js';
import { startSecureApiServer } from './auth/testing.js';

const ISSUER = 'https://kubernetes.default.svc.cluster.local';
const { privateKey: KEY } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});

describe('service account tokens', () => {
  const store = new MemoryStore();
  let server: ApiServer;
  let url: string;
  let ca: KeyPair;
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const as = async (user: string, groups: string[]) => {
    const { cert, key } = await signLeaf(ca, { usage: 'client', user, groups });
    return configuredFetch({ ca: ca.cert, cert, key: key! });
  };
  let admin: Awaited<ReturnType<typeof as>>;
  const bearer = (token: string) => configuredFetch({ ca: ca.cert, token });
  const post = (f: typeof admin, path: string, body: unknown) =>
    f(`${url}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
  const tokenPath = (ns: string, sa: string) => `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`;
  const request = (spec: Record<string, unknown> = {}) => ({
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec,
  });
  const create = async (path: string, body: KubeObject) => {
    const r = await post(admin, path, body);
    assert.equal(r.status, 201, await r.clone().text());
    return (await r.json()) as KubeObject;
  };
  let sa: KubeObject;
  let pod: KubeObject;

  before(async () => {
    ({ ca, server, url } = await startSecureApiServer(store, {
      serviceAccountTokens: { key: KEY },
      now: () => new Date(clock),
    }));
    admin = await as('root', ['system:masters']);
    sa = await create('/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'builder' } });
    await create('/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'other' } });
    await create('/api/v1/nodes', { metadata: { name: 'n1' } });
    pod = await create('/api/v1/namespaces/default/pods', {
      metadata: { name: 'web' },
      spec: { serviceAccountName: 'builder', nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] },
    });
    await create('/api/v1/namespaces/default/pods', {
      metadata: { name: 'elsewhere' },
      spec: { serviceAccountName: 'builder', nodeName: 'n2', containers: [{ name: 'c', image: 'busybox' }] },
    });
  });
  after(async () => {
    await server.stop();
    await store.close();
  });

  it('issues a token with upstream claims, verifiable with the served JWKS', async () => {
    const tr = await create(tokenPath('default', 'builder'), request() as KubeObject);
    const status = tr.status as { token: string; expirationTimestamp: string };
    const spec = tr.spec as { audiences: string[]; expirationSeconds: number };
    assert.deepEqual(spec.audiences, [ISSUER]);
    assert.equal(spec.expirationSeconds, 3600);
    assert.equal(status.expirationTimestamp, '2026-01-01T01:00:00Z');
    assert.equal(tr.metadata?.name, 'builder');
    const header = decodeProtectedHeader(status.token);
    assert.equal(header.alg, 'RS256');
    const jwks = (await (await admin(`${url}/openid/v1/jwks`)).json()) as { keys: { kid: string }[] };
    assert.equal(jwks.keys[0]!.kid, header.kid);
    const { payload } = await jwtVerify(status.token, createLocalJWKSet(jwks as never), {
      issuer: ISSUER,
      audience: ISSUER,
      currentDate: new Date(clock),
    });
    const t = clock / 1000;
    assert.equal(payload.sub, 'system:serviceaccount:default:builder');
    assert.deepEqual([payload.iat, payload.nbf, payload.exp], [t, t, t + 3600]);
    assert.match(String(payload.jti), /^[0-9a-f-]{36}$/);
    assert.deepEqual(payload['kubernetes.io'], {
      namespace: 'default',
      serviceaccount: { name: 'builder', uid: sa.metadata!.uid },
    });
  });

  it('binds a token to a pod and its node, with the requested audiences and duration', async () => {
    const tr = await create(
      tokenPath('default', 'builder'),
      request({
        audiences: ['vault'],
        expirationSeconds: 7200,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web', uid: pod.metadata!.uid },
      }) as KubeObject,
    );
    const claims = decodeJwt((tr.status as { token: string }).token);
    assert.deepEqual(claims.aud, ['vault']);
    assert.equal(claims.exp! - claims.iat!, 7200);
    const k = claims['kubernetes.io'] as Record<string, { name: string }>;
    assert.equal(k.pod!.name, 'web');
    assert.equal(k.node!.name, 'n1');
  });

  it('extends a pod-bound 3607 s token for the API audiences to a year, warning after the 3607 s', async () => {
    const ask = async (spec: Record<string, unknown>) => {
      const tr = await create(
        tokenPath('default', 'builder'),
        request({ boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web' }, ...spec }) as KubeObject,
      );
      return { tr, claims: decodeJwt((tr.status as { token: string }).token) };
    };
    const { tr, claims } = await ask({ expirationSeconds: 3607 });
    const t = clock / 1000;
    assert.equal(claims.exp, t + 365 * 24 * 3600);
    assert.equal((claims['kubernetes.io'] as { warnafter: number }).warnafter, t + 3607);
    assert.equal((tr.status as { expirationTimestamp: string }).expirationTimestamp, '2026-01-01T01:00:07Z');
    assert.equal((tr.spec as { expirationSeconds: number }).expirationSeconds, 3607);
    for (const spec of [{ expirationSeconds: 3608 }, { expirationSeconds: 3607, audiences: ['vault'] }]) {
      const other = await ask(spec);
      assert.equal(other.claims.exp! - other.claims.iat!, spec.expirationSeconds, JSON.stringify(spec));
      assert.equal((other.claims['kubernetes.io'] as { warnafter?: number }).warnafter, undefined);
    }
    const unbound = decodeJwt(
      (
        (await create(tokenPath('default', 'builder'), request({ expirationSeconds: 3607 }) as KubeObject))
          .status as {
          token: string;
        }
      ).token,
    );
    assert.equal(unbound.exp! - unbound.iat!, 3607, 'not bound to a pod: not extended');
  });

  it('refuses bad TokenRequests and writes nothing', async () => {
    const rev = await store.currentRevision();
    const cases: [string, string, unknown, number, string, RegExp][] = [
      [
        'expiry under 10 minutes',
        tokenPath('default', 'builder'),
        request({ expirationSeconds: 599 }),
        422,
        'Invalid',
        /^TokenRequest\.authentication\.k8s\.io "" is invalid: spec\.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes$/,
      ],
      [
        'missing SA',
        tokenPath('default', 'nope'),
        request(),
        404,
        'NotFound',
        /^serviceaccounts "nope" not found$/,
      ],
      [
        'missing bound pod',
        tokenPath('default', 'builder'),
        request({ boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'gone' } }),
        404,
        'NotFound',
        /^pods "gone" not found$/,
      ],
      [
        'bound pod uid differs',
        tokenPath('default', 'builder'),
        request({ boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web', uid: 'x-1' } }),
        409,
        'Conflict',
        /the UID in the bound object reference \(x-1\) does not match the UID in record/,
      ],
      [
        'pod of another SA',
        tokenPath('default', 'other'),
        request({ boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web' } }),
        400,
        'BadRequest',
        /^cannot bind token for serviceaccount "other" to pod running with different serviceaccount name\.$/,
      ],
      [
        'bound to a ConfigMap',
        tokenPath('default', 'builder'),
        request({ boundObjectRef: { kind: 'ConfigMap', apiVersion: 'v1', name: 'x' } }),
        400,
        'BadRequest',
        /^cannot bind token for object of type \/v1, Kind=ConfigMap$/,
      ],
    ];
    for (const [what, path, body, code, reason, message] of cases) {
      const r = await post(admin, path, body);
      const st = (await r.json()) as { code: number; reason: string; message: string; details?: unknown };
      assert.equal(r.status, code, what);
      assert.equal(st.reason, reason, what);
      assert.match(st.message, message, what);
    }
    const invalid = (await (
      await post(admin, tokenPath('default', 'builder'), request({ expirationSeconds: 10 }))
    ).json()) as { details: { causes: { field: string }[] } };
    assert.equal(invalid.details.causes[0]!.field, 'spec.expirationSeconds');
    assert.equal(await store.currentRevision(), rev, 'nothing written');
  });

  it('lets a node create tokens only bound to its own pods, for their ServiceAccounts', async () => {
    const node = await as('system:node:n1', ['system:nodes']);
    const bound = (name: string, uid: string | undefined) =>
      request({ boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name, ...(uid ? { uid } : {}) } });
    const ok = await post(node, tokenPath('default', 'builder'), bound('web', pod.metadata!.uid));
    assert.equal(ok.status, 201, await ok.text());
    const refused: [string, string, unknown, RegExp][] = [
      ['not bound', 'builder', request(), /node requested token not bound to a pod$/],
      [
        'no uid',
        'builder',
        bound('web', undefined),
        /node requested token with a pod binding without a uid$/,
      ],
      [
        'pod elsewhere',
        'builder',
        bound('elsewhere', 'u'),
        /the UID in the bound object reference \(u\) does not match/,
      ],
      [
        'SA no pod on n1 uses',
        'other',
        bound('web', pod.metadata!.uid),
        /no relationship found between node 'n1'/,
      ],
    ];
    for (const [what, name, body, message] of refused) {
      const r = await post(node, tokenPath('default', name), body);
      const st = (await r.json()) as { message: string };
      assert.equal(r.status, 403, what);
      assert.match(st.message, message, what);
    }
    const elsewhere = (await (
      await admin(`${url}/api/v1/namespaces/default/pods/elsewhere`)
    ).json()) as KubeObject;
    const r = await post(node, tokenPath('default', 'builder'), bound('elsewhere', elsewhere.metadata!.uid!));
    assert.equal(r.status, 403);
    assert.match(
      ((await r.json()) as { message: string }).message,
      /node requested token bound to a pod scheduled on a different node$/,
    );
    const read = await node(`${url}/api/v1/namespaces/default/serviceaccounts/builder`);
    assert.equal(read.status, 403, 'a node may not read ServiceAccounts');
  });

  it('authenticates its tokens as the ServiceAccount, with the pod in extra', async () => {
    const tr = await create(
      tokenPath('default', 'builder'),
      request({ boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web' } }) as KubeObject,
    );
    const token = (tr.status as { token: string }).token;
    const who = await post(bearer(token), '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'SelfSubjectReview',
    });
    assert.equal(who.status, 201);
    const info = ((await who.json()) as { status: { userInfo: Record<string, unknown> } }).status.userInfo;
    assert.equal(info.username, 'system:serviceaccount:default:builder');
    assert.equal(info.uid, sa.metadata!.uid);
    assert.deepEqual(info.groups, [
      'system:serviceaccounts',
      'system:serviceaccounts:default',
      'system:authenticated',
    ]);
    const extra = info.extra as Record<string, string[]>;
    assert.deepEqual(extra['authentication.kubernetes.io/pod-name'], ['web']);
    assert.deepEqual(extra['authentication.kubernetes.io/pod-uid'], [pod.metadata!.uid]);
    assert.deepEqual(extra['authentication.kubernetes.io/node-name'], ['n1']);
    assert.match(extra['authentication.kubernetes.io/credential-id']![0]!, /^JTI=/);
  });

  it('answers malformed, forged, foreign-audience and expired tokens a bare 401', async () => {
    const good = (
      (await create(tokenPath('default', 'builder'), request() as KubeObject)).status as { token: string }
    ).token;
    const [h, p] = good.split('.');
    const { privateKey: otherKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const forged = await new SignJWT(decodeJwt(good))
      .setProtectedHeader({ alg: 'RS256', kid: decodeProtectedHeader(good).kid! })
      .sign(otherKey);
    const vault = (
      (await create(tokenPath('default', 'builder'), request({ audiences: ['vault'] }) as KubeObject))
        .status as { token: string }
    ).token;
    for (const [what, token] of [
      ['garbage', 'not-a-token'],
      ['JWT-shaped garbage', 'eyJhbGciOiJSUzI1NiJ9.e30.c2ln'],
      ['cut signature', `${h}.${p}.`],
      ['other key', forged],
      ['other audience', vault],
    ] as const) {
      const r = await bearer(token)(`${url}/api/v1/namespaces/default/pods`);
      assert.equal(r.status, 401, what);
      const st = (await r.json()) as Record<string, unknown>;
      assert.equal(st.message, 'Unauthorized', what);
      assert.equal(st.reason, 'Unauthorized', what);
      assert.equal(st.details, undefined, what);
    }
    assert.equal(
      (await bearer(good)(`${url}/api/v1/namespaces/default/pods`)).status,
      403,
      'valid: RBAC decides',
    );
    const saved = clock;
    clock += (3600 + 61) * 1000;
    try {
      assert.equal((await bearer(good)(`${url}/api/v1/namespaces/default/pods`)).status, 401, 'expired');
    } finally {
      clock = saved;
    }
  });

  it('lets a RoleBinding to the ServiceAccount grant its token access', async () => {
    const token = (
      (await create(tokenPath('default', 'builder'), request() as KubeObject)).status as { token: string }
    ).token;
    const list = () => bearer(token)(`${url}/api/v1/namespaces/default/pods`);
    assert.equal((await list()).status, 403);
    await create('/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', {
      metadata: { name: 'pod-reader' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }],
    } as KubeObject);
    await create('/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
      metadata: { name: 'builder-reads-pods' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'builder', namespace: 'default' }],
    } as KubeObject);
    const r = await list();
    assert.equal(r.status, 200);
    assert.ok(((await r.json()) as { items: KubeObject[] }).items.some((p) => p.metadata?.name === 'web'));
    assert.equal((await bearer(token)(`${url}/api/v1/namespaces/kube-system/pods`)).status, 403);
  });

  it('stops accepting a token once its pod or ServiceAccount is gone or replaced', async () => {
    const core = (resource: string) => server.registry('', 'v1', resource);
    await create('/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'shortlived' } });
    const mkPod = () =>
      create('/api/v1/namespaces/default/pods', {
        metadata: { name: 'tmp' },
        spec: { serviceAccountName: 'shortlived', containers: [{ name: 'c', image: 'busybox' }] },
      });
    await mkPod();
    const issue = async (bound: boolean) =>
      (
        (
          await create(
            tokenPath('default', 'shortlived'),
            request(
              bound ? { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'tmp' } } : {},
            ) as KubeObject,
          )
        ).status as { token: string }
      ).token;
    const podToken = await issue(true);
    const saToken = await issue(false);
    const whoami = async (token: string) =>
      (
        await post(bearer(token), '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'SelfSubjectReview',
        })
      ).status;
    assert.equal(await whoami(podToken), 201);
    await core('pods').delete('default', 'tmp', { gracePeriodSeconds: 0 });
    await untilStatus(() => whoami(podToken), 401);
    await mkPod(); // same name, new uid
    assert.equal(await whoami(podToken), 401, 'a new pod of the same name');
    assert.equal(await whoami(saToken), 201);
    await core('serviceaccounts').delete('default', 'shortlived', {});
    await create('/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'shortlived' } });
    await untilStatus(() => whoami(saToken), 401);
  });

  it('binds a token to a Node, good while that Node exists', async () => {
    const node = await create('/api/v1/nodes', { metadata: { name: 'n9' } });
    const tr = await create(
      tokenPath('default', 'builder'),
      request({ boundObjectRef: { apiVersion: 'v1', kind: 'Node', name: 'n9' } }) as KubeObject,
    );
    const token = (tr.status as { token: string }).token;
    assert.deepEqual(decodeJwt(token)['kubernetes.io'], {
      namespace: 'default',
      serviceaccount: { name: 'builder', uid: sa.metadata!.uid },
      node: { name: 'n9', uid: node.metadata!.uid },
    });
    const whoami = async () =>
      (
        await post(bearer(token), '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'SelfSubjectReview',
        })
      ).status;
    assert.equal(await whoami(), 201);
    const missing = await post(
      admin,
      tokenPath('default', 'builder'),
      request({ boundObjectRef: { apiVersion: 'v1', kind: 'Node', name: 'nope' } }),
    );
    assert.equal(missing.status, 404);
    assert.equal(((await missing.json()) as { message: string }).message, 'nodes "nope" not found');
    await server.registry('', 'v1', 'nodes').delete(undefined, 'n9', {});
    await untilStatus(whoami, 401);
  });

  it('answers TokenReviews', async () => {
    const token = (
      (await create(tokenPath('default', 'builder'), request() as KubeObject)).status as { token: string }
    ).token;
    const review = async (spec: Record<string, unknown>) => {
      const r = await post(admin, '/apis/authentication.k8s.io/v1/tokenreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec,
      });
      return {
        code: r.status,
        body: (await r.json()) as { status: Record<string, unknown>; message?: string },
      };
    };
    const ok = await review({ token });
    assert.equal(ok.code, 201);
    assert.equal(ok.body.status.authenticated, true);
    assert.deepEqual(ok.body.status.audiences, [ISSUER]);
    assert.equal(
      (ok.body.status.user as { username: string }).username,
      'system:serviceaccount:default:builder',
    );
    const other = await review({ token, audiences: ['vault'] });
    assert.equal(other.body.status.authenticated, false);
    assert.match(
      String(other.body.status.error),
      /token audiences \["https:\/\/kubernetes.default.svc.cluster.local"\] is invalid/,
    );
    const bad = await review({ token: 'nope' });
    assert.equal(bad.body.status.authenticated, false);
    const missing = await review({});
    assert.equal(missing.code, 400);
    assert.equal(missing.body.message, 'token is required for TokenReview in authentication');
    // A server delegating authentication to this one needs system:auth-delegator.
    const asSA = () =>
      post(bearer(token), '/apis/authentication.k8s.io/v1/tokenreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token },
      });
    assert.equal((await asSA()).status, 403);
    await create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: 'builder-delegates' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' },
      subjects: [{ kind: 'ServiceAccount', name: 'builder', namespace: 'default' }],
    } as KubeObject);
    const delegated = await asSA();
    assert.equal(delegated.status, 201);
    assert.equal(
      ((await delegated.json()) as { status: { authenticated: boolean } }).status.authenticated,
      true,
    );
  });

  it('serves the OIDC discovery documents to service accounts', async () => {
    const token = (
      (await create(tokenPath('default', 'builder'), request() as KubeObject)).status as { token: string }
    ).token;
    const r = await bearer(token)(`${url}/.well-known/openid-configuration`);
    assert.equal(r.status, 200);
    const doc = (await r.json()) as Record<string, unknown>;
    assert.equal(doc.issuer, ISSUER);
    assert.equal(doc.jwks_uri, `${url}/openid/v1/jwks`);
    assert.deepEqual(doc.id_token_signing_alg_values_supported, ['RS256']);
    const jwks = await bearer(token)(String(doc.jwks_uri));
    assert.equal(jwks.status, 200);
    assert.equal(jwks.headers.get('content-type'), 'application/jwk-set+json');
    const key = ((await jwks.json()) as { keys: Record<string, string>[] }).keys[0]!;
    assert.deepEqual([key.kty, key.alg, key.use], ['RSA', 'RS256', 'sig']);
    assert.equal((await configuredFetch({ ca: ca.cert })(`${url}/openid/v1/jwks`)).status, 401, 'anonymous');
  });
});

/** Polls `get` until it answers `want` (the watch cache sees a delete shortly after it is stored); 10 s deadline. */
async function untilStatus(get: () => Promise<number>, want: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  let last = await get();
  while (last !== want) {
    if (Date.now() > deadline) assert.fail(`status ${last}, want ${want}`);
    await new Promise((r) => setTimeout(r, 20));
    last = await get();
  }
}
