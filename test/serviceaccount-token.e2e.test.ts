// ServiceAccount tokens with the real kubectl against a real `k8ts server` (dist/cli.js,
// HTTPS, its signing key in DATA_DIR/tls): `kubectl create token` (TokenRequest) with
// --duration, --audience and --bound-object-kind/-name, the token used with
// `kubectl --token` (`auth whoami`, listing pods with and without a RoleBinding to the
// ServiceAccount), and a pod-bound token refused once its pod is deleted.
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { run, startK8tsServer, type CommandResult, type K8tsServer } from './support/k8ts-server.js';
import { untilTruthy } from './support/wait.js';

const DOMAIN = 'k8ts.test';
const ISSUER = `https://kubernetes.default.svc.${DOMAIN}`;
const ns = `sat-${process.pid}-${Date.now().toString(36)}`;

describe('ServiceAccount tokens with kubectl', { timeout: 300_000 }, () => {
  let k: K8tsServer;
  let tokenKubeconfig: string;
  /** kubectl with only a bearer token: the admin kubeconfig's cluster and CA, no client certificate. */
  const withToken = (token: string, ...args: string[]): Promise<CommandResult> =>
    run('kubectl', ['--kubeconfig', tokenKubeconfig, '--token', token, ...args]);
  const createToken = async (...args: string[]): Promise<string> => {
    const r = await k.kubectl('create', 'token', '-n', ns, ...args);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout.trim();
  };

  before(async () => {
    k = await startK8tsServer({ args: ['--cluster-domain', DOMAIN] });
    // The admin kubeconfig's cluster (server and CA) with a user that has no credential of its own.
    const admin = parseYaml(readFileSync(k.kubeconfig, 'utf8')) as {
      clusters: unknown[];
    };
    tokenKubeconfig = join(k.dataDir, 'token-kubeconfig.yaml');
    writeFileSync(
      tokenKubeconfig,
      toYaml({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: admin.clusters,
        users: [{ name: 'token', user: {} }],
        contexts: [
          {
            name: 'token',
            context: { cluster: (admin.clusters[0] as { name: string }).name, user: 'token' },
          },
        ],
        'current-context': 'token',
      }),
    );
    assert.equal((await k.kubectl('create', 'namespace', ns)).code, 0);
    // The namespace's default ServiceAccount (made by the serviceaccount controller or the
    // namespace's creation).
    await untilTruthy(
      'the default ServiceAccount',
      async () => (await k.kubectl('get', 'serviceaccount', 'default', '-n', ns)).code === 0,
      60_000,
      200,
    );
  });
  after(async () => {
    await k?.stop();
  });

  it('keeps its signing key in DATA_DIR/tls, owner-only', () => {
    assert.equal(statSync(join(k.dataDir, 'tls', 'service-account.key')).mode & 0o777, 0o600);
  });

  it('lists serviceaccounts/token in discovery', async () => {
    const r = await k.kubectl('get', '--raw', '/api/v1');
    const list = JSON.parse(r.stdout) as {
      resources: { name: string; kind: string; group?: string; verbs: string[] }[];
    };
    const token = list.resources.find((x) => x.name === 'serviceaccounts/token');
    assert.deepEqual(
      [token?.kind, token?.group, token?.verbs],
      ['TokenRequest', 'authentication.k8s.io', ['create']],
    );
  });

  it('kubectl create token issues a token that kubectl --token authenticates with', async () => {
    const token = await createToken('default');
    const claims = decodeJwt(token);
    assert.equal(claims.iss, ISSUER, 'the issuer follows --cluster-domain');
    const doc = JSON.parse((await k.kubectl('get', '--raw', '/.well-known/openid-configuration')).stdout) as {
      issuer: string;
      jwks_uri: string;
    };
    assert.equal(doc.issuer, ISSUER);
    assert.match(doc.jwks_uri, /^https:\/\/[^/]+:\d+\/openid\/v1\/jwks$/);
    const jwks = JSON.parse((await k.kubectl('get', '--raw', '/openid/v1/jwks')).stdout) as {
      keys: { kid: string }[];
    };
    assert.equal(jwks.keys[0]!.kid, decodeProtectedHeader(token).kid);
    assert.equal(claims.sub, `system:serviceaccount:${ns}:default`);
    assert.equal(claims.exp! - claims.iat!, 3600);
    const who = await withToken(token, 'auth', 'whoami', '-o', 'json');
    assert.equal(who.code, 0, who.stderr);
    const info = (JSON.parse(who.stdout) as { status: { userInfo: { username: string; groups: string[] } } })
      .status.userInfo;
    assert.equal(info.username, `system:serviceaccount:${ns}:default`);
    assert.deepEqual(info.groups, [
      'system:serviceaccounts',
      `system:serviceaccounts:${ns}`,
      'system:authenticated',
    ]);
  });

  it('kubectl create token honours --duration and --audience, and refuses under 10 minutes', async () => {
    const long = decodeJwt(await createToken('default', '--duration', '2h'));
    assert.equal(long.exp! - long.iat!, 7200);
    const vault = await createToken('default', '--audience', 'vault');
    assert.deepEqual(decodeJwt(vault).aud, ['vault']);
    const refused = await withToken(vault, 'auth', 'whoami');
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /Unauthorized/, "a token for another audience is not the API server's");
    const short = await k.kubectl('create', 'token', 'default', '-n', ns, '--duration', '5m');
    assert.notEqual(short.code, 0);
    assert.match(
      short.stderr,
      /spec\.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes/,
    );
    const missing = await k.kubectl('create', 'token', 'nope', '-n', ns);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /serviceaccounts "nope" not found/);
  });

  it('a RoleBinding to the ServiceAccount lets its token list pods; without it, 403', async () => {
    const token = await createToken('default');
    const before = await withToken(token, 'get', 'pods', '-n', ns);
    assert.notEqual(before.code, 0);
    assert.match(
      before.stderr,
      new RegExp(
        `User "system:serviceaccount:${ns}:default" cannot list resource "pods" in API group "" in the namespace "${ns}"`,
      ),
    );
    assert.equal(
      (await k.kubectl('create', 'role', 'pod-reader', '-n', ns, '--verb=get,list', '--resource=pods')).code,
      0,
    );
    const bind = await k.kubectl(
      'create',
      'rolebinding',
      'default-reads-pods',
      '-n',
      ns,
      '--role=pod-reader',
      `--serviceaccount=${ns}:default`,
    );
    assert.equal(bind.code, 0, bind.stderr);
    const after = await withToken(token, 'get', 'pods', '-n', ns);
    assert.equal(after.code, 0, after.stderr);
    const elsewhere = await withToken(token, 'get', 'pods', '-n', 'kube-system');
    assert.notEqual(elsewhere.code, 0);
    assert.match(elsewhere.stderr, /Forbidden|forbidden/);
  });

  it('a token bound to a pod stops working once the pod is deleted', async () => {
    const pod = await k.kubectlIn(
      toYaml({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'holder', namespace: ns },
        spec: { containers: [{ name: 'c', image: 'busybox' }] },
      }),
      'create',
      '-f',
      '-',
    );
    assert.equal(pod.code, 0, pod.stderr);
    const token = await createToken('default', '--bound-object-kind', 'Pod', '--bound-object-name', 'holder');
    const claims = decodeJwt(token) as { 'kubernetes.io': { pod: { name: string } } };
    assert.equal(claims['kubernetes.io'].pod.name, 'holder');
    const who = await withToken(token, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.extra}');
    assert.equal(who.code, 0, who.stderr);
    assert.match(who.stdout, /"authentication.kubernetes.io\/pod-name":\["holder"\]/);
    const gone = await k.kubectl(
      'create',
      'token',
      'default',
      '-n',
      ns,
      '--bound-object-kind',
      'Pod',
      '--bound-object-name',
      'gone',
    );
    assert.notEqual(gone.code, 0);
    assert.match(gone.stderr, /pods "gone" not found/);
    assert.equal(
      (await k.kubectl('delete', 'pod', 'holder', '-n', ns, '--grace-period=0', '--force')).code,
      0,
    );
    await untilTruthy(
      'the pod-bound token to be refused',
      async () => {
        const r = await withToken(token, 'auth', 'whoami');
        return r.code !== 0 && /Unauthorized/.test(r.stderr);
      },
      30_000,
      200,
    );
  });
});
