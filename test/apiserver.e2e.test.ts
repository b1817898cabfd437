// One file because one subject: the built `k8ts server` alone (no controllers) as clients meet it; its suites share its start-up and eventually().
// The API server as users meet it: a real `k8ts server --port 0 --disable-agent` (the
// built CLI), driven by the real kubectl binary, raw HTTP, and @kubernetes/client-node.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { checkServerIdentity, connect as tlsConnect, type PeerCertificate } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { startK8tsServer, type K8tsServer } from './support/k8ts-server.js';

/** These tests are about the API server alone: no controller or scheduler writes meanwhile. */
const API_SERVER_ONLY = ['--disable-controller-manager', '--disable-scheduler'];

const FIXTURE = fileURLToPath(new URL('../../shared/fixtures/spring-deployment.yaml', import.meta.url));

/** Polls `check` until it returns a value (not undefined) or the deadline passes. */
async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  deadlineMs = 15_000,
): Promise<T> {
  const until = Date.now() + deadlineMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('k8ts server with real kubectl', () => {
  let k: K8tsServer;
  before(async () => {
    k = await startK8tsServer({ args: API_SERVER_ONLY });
  });
  after(async () => {
    await k?.stop();
  });

  async function ok(...args: string[]): Promise<string> {
    const r = await k.kubectl(...args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed:\n${r.stderr}\n${r.stdout}`);
    return r.stdout;
  }

  it('serves health and the system namespaces with their default ServiceAccounts', async () => {
    for (const p of ['/healthz', '/livez', '/readyz']) {
      const r = await k.fetch(p);
      assert.equal(r.status, 200, p);
    }
    const out = await ok('get', 'namespaces', '-o', 'name');
    for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease'])
      assert.match(out, new RegExp(`^namespace/${ns}$`, 'm'));
    assert.match(
      await ok('get', 'serviceaccount', 'default', '-n', 'kube-system', '-o', 'name'),
      /^serviceaccount\/default$/m,
    );
  });

  it('serves default/kubernetes at the first service address, with this API server as its endpoint', async () => {
    // `kubectl get svc` as users see it: 443/TCP on 10.43.0.1, and kube-dns on 10.43.0.10.
    assert.match(
      await ok('get', 'service', 'kubernetes', '--no-headers'),
      /^kubernetes\s+ClusterIP\s+10\.43\.0\.1\s+<none>\s+443\/TCP\s/,
    );
    assert.match(
      await ok('get', 'service', 'kube-dns', '-n', 'kube-system', '--no-headers'),
      /^kube-dns\s+ClusterIP\s+10\.43\.0\.10\s+<none>\s+53\/UDP,53\/TCP\s/,
    );
    const port = Number(new URL(k.url).port);
    const slice = JSON.parse(await ok('get', 'endpointslices', 'kubernetes', '-o', 'json')) as {
      addressType: string;
      endpoints: { addresses: string[]; conditions: { ready: boolean } }[];
      ports: { name: string; port: number; protocol: string }[];
    };
    assert.equal(slice.addressType, 'IPv4');
    assert.equal(slice.endpoints.length, 1);
    assert.equal(slice.endpoints[0]!.conditions.ready, true);
    assert.deepEqual(slice.ports, [{ name: 'https', port, protocol: 'TCP' }]);
    const advertised = slice.endpoints[0]!.addresses[0]!;
    assert.match(
      await ok('get', 'endpoints', 'kubernetes', '--no-headers'),
      new RegExp(`${advertised}:${port}`),
    );
    // In-cluster clients verify the serving certificate against the clusterIP and the
    // Service's names: they are all in it, and so is the advertised address.
    const cert = await new Promise<PeerCertificate>((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
        resolve(socket.getPeerCertificate());
        socket.end();
      });
      socket.on('error', reject);
    });
    for (const name of [
      '10.43.0.1',
      advertised,
      'kubernetes',
      'kubernetes.default',
      'kubernetes.default.svc',
      'kubernetes.default.svc.cluster.local',
    ])
      assert.equal(checkServerIdentity(name, cert), undefined, `the serving certificate names ${name}`);
  });

  it('applies the user manifest unchanged, and a second apply is unchanged', async () => {
    assert.match(await ok('apply', '-f', FIXTURE), /deployment.apps\/spring-deployment created/);
    assert.match(await ok('apply', '-f', FIXTURE), /deployment.apps\/spring-deployment unchanged/);
    const d = JSON.parse(await ok('get', 'deploy', 'spring-deployment', '-o', 'json')) as {
      metadata: { generation: number; annotations: Record<string, string> };
      spec: {
        replicas: number;
        strategy: unknown;
        revisionHistoryLimit: number;
        progressDeadlineSeconds: number;
        template: { spec: Record<string, unknown> };
      };
    };
    assert.equal(d.spec.replicas, 5);
    assert.deepEqual(d.spec.strategy, {
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' },
    });
    assert.equal(d.spec.revisionHistoryLimit, 10);
    assert.equal(d.spec.progressDeadlineSeconds, 600);
    assert.equal(d.spec.template.spec.restartPolicy, 'Always');
    assert.equal(d.spec.template.spec.dnsPolicy, 'ClusterFirst');
    assert.equal(d.spec.template.spec.terminationGracePeriodSeconds, 30);
    assert.ok(d.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);
    assert.equal(d.metadata.generation, 1);
  });

  it('kubectl apply --validate=strict refuses unknown fields; --validate=false drops them', async () => {
    const manifest = (name: string) =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name },
        data: { a: 'b' },
        bogus: { x: 1 },
      });
    const strict = await k.kubectlIn(manifest('strict-cm'), 'apply', '-f', '-');
    assert.notEqual(strict.code, 0);
    assert.match(strict.stderr, /strict decoding error: unknown field "bogus"/);
    assert.equal((await k.kubectl('get', 'cm', 'strict-cm')).code, 1, 'nothing was created');
    const lax = await k.kubectlIn(manifest('lax-cm'), 'apply', '--validate=false', '-f', '-');
    assert.equal(lax.code, 0, lax.stderr);
    const stored = JSON.parse(await ok('get', 'cm', 'lax-cm', '-o', 'json')) as Record<string, unknown>;
    assert.equal(stored.bogus, undefined);
    assert.deepEqual(stored.data, { a: 'b' });
  });

  it('prints tables with the columns kubectl users know', async () => {
    const deploy = await ok('get', 'deploy');
    assert.match(deploy, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE$/m);
    assert.match(deploy, /^spring-deployment\s+0\/5\s+0\s+0\s+\d+s$/m);
    assert.match(
      await ok('get', 'deploy', '-o', 'wide'),
      /CONTAINERS\s+IMAGES\s+SELECTOR[\s\S]*spring-container\s+spring-server:1\.0\s+app=backend-app/,
    );
    // The fixture labels its pod template, not the Deployment: as on any cluster,
    // -l app=backend-app selects no Deployment and app!=backend-app selects it.
    assert.equal(
      await ok('get', 'deploy', '-l', 'app!=backend-app', '-o', 'name'),
      'deployment.apps/spring-deployment\n',
    );
    const none = await k.kubectl('get', 'deploy', '-l', 'app=backend-app');
    assert.equal(none.code, 0);
    assert.equal(none.stdout, '');
    assert.match(none.stderr, /No resources found in default namespace/);
    assert.match(await ok('get', 'deploy,rs,pods'), /deployment.apps\/spring-deployment/);
    assert.match(await ok('get', 'deploy', 'spring-deployment', '-o', 'yaml'), /^kind: Deployment$/m);
  });

  it('scales, labels, annotates and patches (strategic, merge, json)', async () => {
    assert.match(await ok('scale', 'deploy/spring-deployment', '--replicas=3'), /scaled/);
    assert.equal(await ok('get', 'deploy', 'spring-deployment', '-o', 'jsonpath={.spec.replicas}'), '3');
    await ok('label', 'deploy/spring-deployment', 'tier=backend');
    await ok('annotate', 'deploy/spring-deployment', 'owner=team-a');
    assert.match(await ok('get', 'deploy', '-l', 'tier=backend', '-o', 'name'), /spring-deployment/);
    await ok(
      'patch',
      'deploy/spring-deployment',
      '-p',
      '{"spec":{"template":{"spec":{"containers":[{"name":"spring-container","image":"spring-server:1.1"}]}}}}',
    );
    const c = JSON.parse(
      await ok('get', 'deploy', 'spring-deployment', '-o', 'jsonpath={.spec.template.spec.containers[0]}'),
    ) as {
      image: string;
      ports: { containerPort: number }[];
    };
    assert.equal(c.image, 'spring-server:1.1');
    assert.equal(c.ports[0]!.containerPort, 8080, 'a strategic merge keeps the other container fields');
    await ok(
      'patch',
      'deploy/spring-deployment',
      '--type=merge',
      '-p',
      '{"metadata":{"labels":{"tier":null}}}',
    );
    assert.equal(
      await ok('get', 'deploy', 'spring-deployment', '-o', 'jsonpath={.metadata.labels.tier}'),
      '',
    );
    await ok(
      'patch',
      'deploy/spring-deployment',
      '--type=json',
      '-p',
      '[{"op":"add","path":"/spec/minReadySeconds","value":5}]',
    );
    assert.equal(
      await ok('get', 'deploy', 'spring-deployment', '-o', 'jsonpath={.spec.minReadySeconds}'),
      '5',
    );
    // 1 at create; the scale, the annotation (a Deployment's annotations move its generation,
    // as upstream's PrepareForUpdate), the image and minReadySeconds; not the two label changes.
    assert.equal(
      await ok('get', 'deploy', 'spring-deployment', '-o', 'jsonpath={.metadata.generation}'),
      '5',
    );
  });

  it('api-resources, explain and server-side apply behave as against a real cluster', async () => {
    const resources = await ok('api-resources');
    assert.match(resources, /^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/m);
    assert.match(resources, /^pods\s+po\s+v1\s+true\s+Pod$/m);
    assert.match(resources, /^nodes\s+no\s+v1\s+false\s+Node$/m);
    assert.match(
      await ok('explain', 'deployment.spec.replicas'),
      /FIELD: replicas <integer>[\s\S]*Number of desired pods/,
    );

    const cm = (value: string) =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'ssa' },
        data: { key: value },
      });
    const first = await k.kubectlIn(cm('one'), 'apply', '--server-side', '-f', '-');
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /configmap\/ssa serverside-applied/);
    await k.kubectlIn(cm('two'), 'apply', '--server-side', '-f', '-');
    const applied = JSON.parse(await ok('get', 'cm', 'ssa', '-o', 'json', '--show-managed-fields')) as {
      data: Record<string, string>;
      metadata: { managedFields: { manager: string; operation: string }[] };
    };
    assert.deepEqual(applied.data, { key: 'two' });
    assert.ok(applied.metadata.managedFields.some((m) => m.manager === 'kubectl' && m.operation === 'Apply'));
    // Another manager changing an applied field conflicts unless forced.
    const conflict = await k.kubectlIn(
      cm('three'),
      'apply',
      '--server-side',
      '--field-manager=other',
      '-f',
      '-',
    );
    assert.notEqual(conflict.code, 0);
    assert.match(conflict.stderr, /conflict with "kubectl"/);
    const forced = await k.kubectlIn(
      cm('three'),
      'apply',
      '--server-side',
      '--field-manager=other',
      '--force-conflicts',
      '-f',
      '-',
    );
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(await ok('get', 'cm', 'ssa', '-o', 'jsonpath={.data.key}'), 'three');
  });

  it('get -w sees a concurrent change', async () => {
    // -v=6 logs each response as it arrives: the watch's "200 OK" line says it is open.
    const watching = k.kubectlStart('get', 'cm', '-w', '--request-timeout=8s', '-o', 'name', '-v=6');
    await eventually('the watch to start', async () =>
      /GET .*configmaps\?.*watch=true.* 200 OK/.test(watching.output().stderr) ? true : undefined,
    );
    await k.kubectlIn(
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"watched"},"data":{"a":"b"}}',
      'apply',
      '-f',
      '-',
    );
    await eventually('the watch to print the new ConfigMap', async () =>
      /configmap\/watched/.test(watching.output().stdout) ? true : undefined,
    );
    await watching.done;
  });

  it('delete -f removes what apply created', async () => {
    assert.match(await ok('delete', '-f', FIXTURE), /deployment.apps "spring-deployment" deleted/);
    const r = await k.kubectl('get', 'deploy', 'spring-deployment');
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /NotFound|not found/);
  });
});

describe('k8ts server answers bad requests with the Kubernetes status and writes nothing', () => {
  let k: K8tsServer;
  before(async () => {
    k = await startK8tsServer({ args: API_SERVER_ONLY });
  });
  after(async () => {
    await k?.stop();
  });

  const deployment = (patch: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) =>
    JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', ...patch },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'c', image: 'spring-server:1.0' }] },
        },
        ...spec,
      },
    });
  const deployments = '/apis/apps/v1/namespaces/default/deployments';
  const cases: {
    what: string;
    method: string;
    path: string;
    body?: string;
    type?: string;
    code: number;
    reason: string;
    field?: string;
  }[] = [
    {
      what: 'malformed YAML',
      method: 'POST',
      path: deployments,
      body: 'kind: [',
      type: 'application/yaml',
      code: 400,
      reason: 'BadRequest',
    },
    {
      what: 'malformed JSON',
      method: 'POST',
      path: deployments,
      body: '{"kind":',
      code: 400,
      reason: 'BadRequest',
    },
    {
      what: 'invalid name',
      method: 'POST',
      path: deployments,
      body: deployment({ name: 'Web_1' }),
      code: 422,
      reason: 'Invalid',
      field: 'metadata.name',
    },
    {
      what: 'missing name',
      method: 'POST',
      path: deployments,
      body: deployment({ name: undefined }),
      code: 422,
      reason: 'Invalid',
      field: 'metadata.name',
    },
    {
      what: 'missing image',
      method: 'POST',
      path: deployments,
      body: deployment(
        {},
        { template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c' }] } } },
      ),
      code: 422,
      reason: 'Invalid',
      field: 'spec.template.spec.containers[0].image',
    },
    {
      what: 'selector not matching template labels',
      method: 'POST',
      path: deployments,
      body: deployment({}, { selector: { matchLabels: { app: 'other' } } }),
      code: 422,
      reason: 'Invalid',
      field: 'spec.template.metadata.labels',
    },
    {
      what: 'negative replicas',
      method: 'POST',
      path: deployments,
      body: deployment({}, { replicas: -1 }),
      code: 422,
      reason: 'Invalid',
      field: 'spec.replicas',
    },
    {
      what: 'replicas of the wrong type',
      method: 'POST',
      path: deployments,
      body: deployment({}, { replicas: '3' }),
      code: 400,
      reason: 'BadRequest',
    },
    {
      what: 'a numeric name',
      method: 'POST',
      path: deployments,
      body: deployment({ name: 123 }),
      code: 400,
      reason: 'BadRequest',
    },
    {
      what: 'a label value that is not a string',
      method: 'POST',
      path: deployments,
      body: deployment({ labels: { a: 1 } }),
      code: 400,
      reason: 'BadRequest',
    },
    {
      what: 'stale resourceVersion',
      method: 'PUT',
      path: `${deployments}/existing`,
      body: deployment({ name: 'existing', resourceVersion: '1' }),
      code: 409,
      reason: 'Conflict',
    },
    {
      what: 'oversized body',
      method: 'POST',
      path: deployments,
      body: 'x'.repeat(3 * 1024 * 1024 + 1),
      code: 413,
      reason: 'RequestEntityTooLarge',
    },
    {
      what: 'unknown kind',
      method: 'POST',
      path: '/apis/apps/v1/namespaces/default/widgets',
      body: '{}',
      code: 404,
      reason: 'NotFound',
    },
    {
      what: 'wrong kind for the path',
      method: 'POST',
      path: '/api/v1/namespaces/default/configmaps',
      body: deployment(),
      code: 400,
      reason: 'BadRequest',
    },
    {
      what: 'unknown content type',
      method: 'POST',
      path: deployments,
      body: deployment(),
      type: 'text/plain',
      code: 415,
      reason: 'UnsupportedMediaType',
    },
    {
      what: 'wrong verb',
      method: 'PUT',
      path: deployments,
      body: deployment(),
      code: 405,
      reason: 'MethodNotAllowed',
    },
    {
      what: 'missing namespace',
      method: 'POST',
      path: '/apis/apps/v1/namespaces/nowhere/deployments',
      body: deployment(),
      code: 404,
      reason: 'NotFound',
    },
    {
      what: 'bad label selector',
      method: 'GET',
      path: `${deployments}?labelSelector=${encodeURIComponent('a in (')}`,
      code: 400,
      reason: 'BadRequest',
    },
    {
      what: 'unsupported field selector',
      method: 'GET',
      path: `${deployments}?fieldSelector=spec.bogus%3Dx`,
      code: 400,
      reason: 'BadRequest',
    },
    { what: 'unknown object', method: 'GET', path: `${deployments}/nope`, code: 404, reason: 'NotFound' },
  ];

  it('each bad request gets its code and reason, and the store revision does not move', async () => {
    const existing = await k.fetch(deployments, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: deployment({ name: 'existing' }),
    });
    assert.equal(existing.status, 201, await existing.text());
    const revision = async () =>
      (
        (await (await k.fetch(`/api/v1/namespaces`)).json()) as {
          metadata: { resourceVersion: string };
        }
      ).metadata.resourceVersion;
    const before = await revision();
    for (const c of cases) {
      const init: RequestInit = {
        method: c.method,
        headers: { 'Content-Type': c.type ?? 'application/json' },
      };
      if (c.body !== undefined) init.body = c.body;
      const r = await k.fetch(c.path, init);
      const status = (await r.json()) as {
        kind: string;
        code: number;
        reason: string;
        details?: { causes?: { field?: string }[] };
      };
      assert.equal(r.status, c.code, `${c.what}: ${JSON.stringify(status)}`);
      assert.equal(status.kind, 'Status', c.what);
      assert.equal(status.code, c.code, c.what);
      assert.equal(status.reason, c.reason, c.what);
      if (c.field)
        assert.ok(
          status.details?.causes?.some((x) => x.field === c.field),
          `${c.what}: ${JSON.stringify(status.details)}`,
        );
    }
    assert.equal(await revision(), before, 'no bad request wrote anything');
  });
});

describe('namespaces', () => {
  let k: K8tsServer;
  before(async () => {
    k = await startK8tsServer({ args: API_SERVER_ONLY });
  });
  after(async () => {
    await k?.stop();
  });

  async function ok(...args: string[]): Promise<string> {
    const r = await k.kubectl(...args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed:\n${r.stderr}\n${r.stdout}`);
    return r.stdout;
  }

  it('deleting a namespace marks it Terminating; creating in it is forbidden; system namespaces cannot be deleted', async () => {
    // A finalizer on one object keeps the namespace Terminating whether or not the
    // namespace controller runs (emptying it is the controller's job, tested with it).
    const apply = await k.kubectlIn(
      [
        '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"}}',
        '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"team","finalizers":["example.com/hold"]},"data":{"a":"b"}}',
      ].join('\n'),
      'apply',
      '-f',
      '-',
    );
    assert.equal(apply.code, 0, apply.stderr);
    assert.equal((await k.kubectl('get', 'sa', 'default', '-n', 'team')).code, 0);
    const del = await k.kubectl('delete', 'namespace', 'team', '--wait=false');
    assert.equal(del.code, 0, del.stderr);
    assert.match(await ok('get', 'namespace', 'team', '--no-headers'), /^team\s+Terminating\s/);
    const ns = JSON.parse(await ok('get', 'namespace', 'team', '-o', 'json')) as {
      metadata: { deletionTimestamp?: string };
      spec: { finalizers?: string[] };
    };
    assert.ok(ns.metadata.deletionTimestamp);
    assert.deepEqual(ns.spec.finalizers, ['kubernetes']);
    const create = await k.kubectl('create', 'configmap', 'late', '-n', 'team', '--from-literal=a=b');
    assert.notEqual(create.code, 0);
    assert.match(
      create.stderr,
      /configmaps "late" is forbidden: unable to create new content in namespace team because it is being terminated/,
    );
    await ok(
      'patch',
      'configmap',
      'c',
      '-n',
      'team',
      '--type=merge',
      '-p',
      '{"metadata":{"finalizers":null}}',
    );
    const sys = await k.kubectl('delete', 'namespace', 'kube-system');
    assert.notEqual(sys.code, 0);
    assert.match(sys.stderr, /this namespace may not be deleted/);
  });
});

describe('write semantics found in review', () => {
  let k: K8tsServer;
  before(async () => {
    k = await startK8tsServer({ args: API_SERVER_ONLY });
  });
  after(async () => {
    await k?.stop();
  });
  const cms = '/api/v1/namespaces/default/configmaps';
  const send = async (method: string, path: string, body?: unknown, type = 'application/json') => {
    const init: RequestInit = { method, headers: { 'Content-Type': type } };
    if (body !== undefined) init.body = JSON.stringify(body);
    const r = await k.fetch(path, init);
    return {
      status: r.status,
      body: (await r.json()) as {
        metadata?: { resourceVersion?: string; creationTimestamp?: string };
        items?: unknown[];
        reason?: string;
      },
    };
  };

  it('a dry-run delete deletes nothing', async () => {
    assert.equal((await send('POST', cms, { metadata: { name: 'keep' } })).status, 201);
    assert.equal((await send('DELETE', `${cms}/keep?dryRun=All`)).status, 200);
    assert.equal((await send('GET', `${cms}/keep`)).status, 200);
    const r = await k.kubectl('delete', 'cm', 'keep', '--dry-run=server');
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await send('GET', `${cms}/keep`)).status, 200);
  });

  it('a write that changes nothing keeps the resourceVersion', async () => {
    const created = await send('POST', cms, { metadata: { name: 'same', labels: { a: 'b' } } });
    const rv = created.body.metadata!.resourceVersion;
    const put = await send('PUT', `${cms}/same`, created.body);
    assert.equal(put.body.metadata!.resourceVersion, rv);
    const patched = await send('PATCH', `${cms}/same`, {}, 'application/merge-patch+json');
    assert.equal(patched.body.metadata!.resourceVersion, rv);
    const relabel = await k.kubectl('label', 'cm', 'same', 'a=b', '--overwrite');
    assert.equal(relabel.code, 0, relabel.stderr);
    assert.equal((await send('GET', `${cms}/same`)).body.metadata!.resourceVersion, rv);
  });

  it('a changed creationTimestamp is ignored, not refused', async () => {
    const created = await send('POST', cms, { metadata: { name: 'ts' } });
    const body = {
      ...created.body,
      metadata: { ...created.body.metadata, creationTimestamp: '2001-01-01T00:00:00Z' },
      data: { x: 'y' },
    };
    const put = await send('PUT', `${cms}/ts`, body);
    assert.equal(put.status, 200);
    assert.equal(put.body.metadata!.creationTimestamp, created.body.metadata!.creationTimestamp);
  });

  it('watching one object by name sees only that object', async () => {
    await send('POST', cms, { metadata: { name: 'other' } });
    const r = await k.fetch(`${cms}/same?watch=true&timeoutSeconds=1&resourceVersion=0`);
    const lines = (await r.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { object: { metadata: { name: string } } });
    assert.deepEqual(
      lines.map((l) => l.object.metadata.name),
      ['same'],
    );
  });

  it('a Scale without spec.replicas (as Go clients send 0) scales to zero', async () => {
    const d = await k.kubectlIn(
      JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'zero' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'zero' } },
          template: {
            metadata: { labels: { app: 'zero' } },
            spec: { containers: [{ name: 'c', image: 'spring-server:1.0' }] },
          },
        },
      }),
      'apply',
      '-f',
      '-',
    );
    assert.equal(d.code, 0, d.stderr);
    const r = await send('PUT', '/apis/apps/v1/namespaces/default/deployments/zero/scale', {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'zero', namespace: 'default' },
      spec: {},
    });
    assert.equal(r.status, 200);
    assert.equal(
      await (
        await k.kubectl('get', 'deploy', 'zero', '-o', 'jsonpath={.spec.replicas}')
      ).stdout,
      '0',
    );
  });

  it('deletecollection needs a namespace; PUT creates a missing Lease', async () => {
    assert.equal((await send('DELETE', '/api/v1/configmaps')).status, 405);
    assert.equal((await send('GET', cms)).body.items!.length >= 3, true);
    const lease = await send('PUT', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1', {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'n1' },
      spec: { holderIdentity: 'n1', leaseDurationSeconds: 40 },
    });
    assert.equal(lease.status, 201);
  });
});
