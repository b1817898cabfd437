// Serving the documents (index.ts): the cost of building them, Accept and ?hash= handling, and the real kubectl reading them.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { acceptsGzip, CompressedDocument, type DocumentResponse } from '../document-response.js';
import {
  CONTENT_TYPE_OPENAPI_V2_PROTOBUF,
  CONTENT_TYPE_OPENAPI_V2_PROTOBUF_RESPONSE,
  CONTENT_TYPE_OPENAPI_V3_PROTOBUF,
  openAPIResponse,
  openAPIV2,
  openAPIV3,
  openAPIV3Paths,
  warmOpenAPI,
} from './index.js';
import type { OpenAPIV3Index } from './index.js';
import { kubectlFor, startDocsServer } from '../../../test/support/docs-server.js';
import type { DocsServer, Kubectl, RecordedRequest } from '../../../test/support/docs-server.js';
import { dtsDescription, words } from './testing.js';

// Runs first, while nothing is built yet.
describe('startup cost', () => {
  it('builds and serializes every document once', async (t) => {
    global.gc?.();
    const heap0 = process.memoryUsage().heapUsed;
    const t0 = performance.now();
    await warmOpenAPI();
    const ms = performance.now() - t0;
    global.gc?.();
    const heapMB = (process.memoryUsage().heapUsed - heap0) / 1e6;
    const v2 = await openAPIV2();
    const v3 = await Promise.all(openAPIV3Paths().map((p) => openAPIV3(p)));
    const v3Bytes = v3.reduce((n, d) => n + (d?.body.length ?? 0), 0);
    t.diagnostic(
      `openapi: built in ${ms.toFixed(0)} ms, heap +${heapMB.toFixed(1)} MB; ` +
        `v2 ${(v2.body.length / 1024).toFixed(0)} KiB, v3 ${v3.length} documents ${(v3Bytes / 1024).toFixed(0)} KiB`,
    );
    // A second call is served from the cache: the very same documents, not rebuilt ones.
    await warmOpenAPI();
    assert.equal(await openAPIV2(), v2, 'v2 rebuilt');
    const again = await Promise.all(openAPIV3Paths().map((p) => openAPIV3(p)));
    again.forEach((d, i) => assert.equal(d, v3[i], `${openAPIV3Paths()[i]} rebuilt`));
  });
});

describe('openAPIResponse', () => {
  const kubectlV2Accept = CONTENT_TYPE_OPENAPI_V2_PROTOBUF;

  it('keeps the JSON documents gzip-compressed, and sends them so to a client that accepts gzip', async () => {
    const v2 = await openAPIV2();
    const v3 = (await openAPIV3('apis/apps/v1'))!;
    for (const doc of [v2, v3]) {
      assert.ok(doc instanceof CompressedDocument);
      assert.ok(doc.gzip.length * 4 < doc.body.length, `${doc.gzip.length} of ${doc.body.length} bytes`);
    }
    for (const [path, doc] of [
      ['/openapi/v2', v2],
      ['/openapi/v3/apis/apps/v1', v3],
    ] as const) {
      // What Go's net/http sends unasked: gzip, the JSON's ETag, Vary naming both.
      const gz = (await openAPIResponse({ path, accept: 'application/json', acceptEncoding: 'gzip' }))!;
      assert.equal(gz.status, 200);
      assert.equal(gz.headers['Content-Encoding'], 'gzip');
      assert.equal(gz.headers['Vary'], 'Accept, Accept-Encoding');
      assert.equal(gz.headers['ETag'], `"${doc.etag}"`);
      assert.equal(gunzipSync(gz.body).toString(), doc.body);
      // No Accept-Encoding, or gzip refused: the JSON itself.
      for (const acceptEncoding of [undefined, 'identity', 'gzip;q=0, br']) {
        const plain = (await openAPIResponse({ path, accept: 'application/json', acceptEncoding }))!;
        assert.equal(plain.headers['Content-Encoding'], undefined, String(acceptEncoding));
        assert.equal(plain.body, doc.body);
      }
      const notModified = (await openAPIResponse({
        path,
        acceptEncoding: 'gzip',
        ifNoneMatch: `"${doc.etag}"`,
      }))!;
      assert.equal(notModified.status, 304);
      assert.equal(notModified.body, '');
      assert.equal(notModified.headers['Content-Encoding'], undefined);
    }
  });

  it('reads Accept-Encoding as net/http clients send it', () => {
    for (const yes of ['gzip', 'gzip, deflate, br', 'br;q=1.0, gzip;q=0.8', '*', 'x-gzip', 'GZIP'])
      assert.equal(acceptsGzip(yes), true, yes);
    for (const no of [undefined, '', 'identity', 'br', 'gzip;q=0', 'deflate, gzip;q=0.0'])
      assert.equal(acceptsGzip(no), false, String(no));
  });

  it('serves v2 as JSON, and as protobuf to client-go (more in v2-protobuf.test.ts)', async () => {
    const json = (await openAPIResponse({ path: '/openapi/v2', accept: 'application/json' }))!;
    assert.equal(json.status, 200);
    assert.equal(json.headers['Content-Type'], 'application/json');
    assert.equal(json.body, (await openAPIV2()).body);
    assert.equal((await openAPIResponse({ path: '/openapi/v2' }))!.status, 200);
    const proto = (await openAPIResponse({ path: '/openapi/v2', accept: kubectlV2Accept }))!;
    assert.equal(proto.status, 200);
    assert.equal(proto.headers['Content-Type'], CONTENT_TYPE_OPENAPI_V2_PROTOBUF_RESPONSE);
    const neither = (await openAPIResponse({ path: '/openapi/v2', accept: 'application/yaml' }))!;
    assert.equal(neither.status, 406);
    assert.equal((JSON.parse(neither.body.toString()) as { reason: string }).reason, 'NotAcceptable');
  });

  it('serves the v3 index and documents, honouring ?hash= as kube-openapi does', async () => {
    const indexRes = (await openAPIResponse({ path: '/openapi/v3', accept: 'application/json, */*' }))!;
    assert.equal(indexRes.status, 200);
    const url = new URL(
      (JSON.parse(indexRes.body.toString()) as OpenAPIV3Index).paths['apis/apps/v1']!.serverRelativeURL,
      'http://x',
    );

    const current = (await openAPIResponse({
      path: url.pathname,
      query: url.search,
      accept: 'application/json',
    }))!;
    assert.equal(current.status, 200);
    assert.equal(current.headers['Cache-Control'], 'public, immutable');
    assert.equal(current.headers['ETag'], `"${url.searchParams.get('hash')}"`);

    const stale = (await openAPIResponse({
      path: url.pathname,
      query: '?hash=0123',
      accept: 'application/json',
    }))!;
    assert.equal(stale.status, 301);
    assert.equal(stale.headers['Location'], `${url.pathname}${url.search}`);

    const unhashed = (await openAPIResponse({ path: url.pathname, accept: 'application/json' }))!;
    assert.equal(unhashed.status, 200);
    assert.equal(unhashed.headers['Cache-Control'], undefined);

    const cachedByClient = (await openAPIResponse({
      path: url.pathname,
      accept: 'application/json',
      ifNoneMatch: current.headers['ETag'],
    }))!;
    assert.equal(cachedByClient.status, 304);

    const cases: [string, string | undefined, number | undefined][] = [
      ['/openapi/v3/apis/networking.k8s.io/v1', 'application/json', 404],
      ['/openapi/v3/api/v1', CONTENT_TYPE_OPENAPI_V3_PROTOBUF, 406],
      ['/openapi/v3/api/v1/', undefined, 200],
      ['/openapi/v4', undefined, undefined],
      ['/api/v1', undefined, undefined],
    ];
    for (const [path, accept, status] of cases) {
      const res: DocumentResponse<string | Buffer> | undefined = await openAPIResponse({ path, accept });
      assert.equal(res?.status, status, path);
    }
  });
});

// ---------------------------------------------------------------------------------------
// Real kubectl

const SPRING = '/work/shared/fixtures/spring-deployment.yaml';

/** A Deployment as the store would hold it after `kubectl apply` of an older spring-deployment.yaml. */
function appliedSpring(image: string): Record<string, unknown> {
  const spec = {
    replicas: 5,
    selector: { matchLabels: { app: 'backend-app' } },
    template: {
      metadata: { labels: { app: 'backend-app' } },
      spec: {
        containers: [
          {
            name: 'spring-container',
            image,
            imagePullPolicy: 'IfNotPresent',
            ports: [{ containerPort: 8080 }],
          },
        ],
      },
    },
  };
  const lastApplied = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { annotations: {}, name: 'spring-deployment', namespace: 'default' },
    spec,
  };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'spring-deployment',
      namespace: 'default',
      uid: '6b1f0f6e-0000-4000-8000-000000000001',
      resourceVersion: '42',
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(lastApplied) },
    },
    spec,
  };
}

function json(status: number, body: unknown): DocumentResponse {
  return { status, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
}

function status(code: number, reason: string, message: string): DocumentResponse {
  return json(code, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    reason,
    message,
    code,
  });
}

const BAD_MANIFEST = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: bad
spec:
  foo: 1
  selector:
    matchLabels: {app: bad}
  template:
    metadata:
      labels: {app: bad}
    spec:
      containers: [{name: c, image: busybox}]
`;

describe('real kubectl', { timeout: 180_000 }, () => {
  let server: DocsServer;
  let kubectl: Kubectl;
  let existing: Record<string, unknown> | undefined;
  let badManifest: string;

  /** Fakes just enough of the deployments endpoints for create and apply. */
  function handle(req: RecordedRequest): DocumentResponse | undefined {
    const collection = '/apis/apps/v1/namespaces/default/deployments';
    if (req.path === `${collection}/spring-deployment`) {
      if (req.method === 'GET') {
        return existing
          ? json(200, existing)
          : status(404, 'NotFound', 'deployments.apps "spring-deployment" not found');
      }
      if (req.method === 'PATCH') return json(200, existing);
    }
    if (req.path === collection && req.method === 'POST') {
      // What a strict server says about the unknown field.
      if (req.query.get('fieldValidation') === 'Strict' && /"foo"/.test(req.body)) {
        return status(
          400,
          'BadRequest',
          'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.foo"',
        );
      }
      return json(201, JSON.parse(req.body));
    }
    return undefined;
  }

  before(async () => {
    server = await startDocsServer({ handle });
    kubectl = await kubectlFor(server.url);
    badManifest = join(kubectl.dir, 'bad.yaml');
    await writeFile(badManifest, BAD_MANIFEST);
  });
  after(async () => {
    await kubectl.cleanup();
    await server.close();
  });

  function since(n: number): RecordedRequest[] {
    return server.requests.slice(n);
  }

  it('kubectl explain deployment.spec.replicas prints the field type and the real description', async () => {
    const r = await kubectl.run(['explain', 'deployment.spec.replicas']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^GROUP:\s+apps\nKIND:\s+Deployment\nVERSION:\s+v1\n/);
    assert.match(r.stdout, /^FIELD: replicas <integer>$/m);
    const description = r.stdout.split('DESCRIPTION:')[1] ?? '';
    assert.equal(words(description), words(dtsDescription('V1DeploymentSpec', 'replicas')));
  });

  it('kubectl explain pods.spec.containers lists the container fields, name required', async () => {
    const r = await kubectl.run(['explain', 'pods.spec.containers']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^KIND:\s+Pod\nVERSION:\s+v1\n/);
    assert.match(r.stdout, /^FIELD: containers <\[\]Container>$/m);
    assert.match(r.stdout, /^ {2}name\t<string> -required-$/m);
    assert.match(r.stdout, /^ {2}image\t<string>$/m);
    assert.match(r.stdout, /^ {2}ports\t<\[\]ContainerPort>$/m);
    assert.match(r.stdout, /^ {2}resources\t<ResourceRequirements>$/m);
  });

  const fieldTypes: [string, string][] = [
    ['deployment.spec.strategy.rollingUpdate.maxSurge', 'maxSurge <IntOrString>'],
    ['pods.spec.containers.resources.limits', 'limits <map[string]Quantity>'],
    ['deployments.metadata.creationTimestamp', 'creationTimestamp <string>'],
    ['deployment.spec.template', 'template <PodTemplateSpec>'],
    ['services.spec.ports.targetPort', 'targetPort <IntOrString>'],
    ['configmaps.data', 'data <map[string]string>'],
    ['leases.spec.renewTime', 'renewTime <string>'],
    ['endpointslices.endpoints.targetRef', 'targetRef <ObjectReference>'],
    ['rs.spec.selector.matchExpressions', 'matchExpressions <[]LabelSelectorRequirement>'],
    ['nodes.status.capacity', 'capacity <map[string]Quantity>'],
  ];
  for (const [path, field] of fieldTypes) {
    it(`kubectl explain ${path} → FIELD: ${field}`, async () => {
      const r = await kubectl.run(['explain', path]);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.stdout.includes(`FIELD: ${field}\n`), r.stdout);
    });
  }

  it('kubectl explain tells the two Event kinds apart and walks a kind recursively', async () => {
    const events = await kubectl.run(['explain', 'events', '--api-version=events.k8s.io/v1']);
    assert.equal(events.code, 0, events.stderr);
    assert.match(events.stdout, /^GROUP:\s+events\.k8s\.io\nKIND:\s+Event\n/);
    assert.match(events.stdout, /^ {2}eventTime\t<string> -required-$/m);
    const recursive = await kubectl.run(['explain', 'deployment', '--recursive']);
    assert.equal(recursive.code, 0, recursive.stderr);
    assert.match(recursive.stdout, /^ {4}replicas\t<integer>$/m);
  });

  it('kubectl apply --dry-run=client --validate=strict uses OpenAPI v3 and never v2', async () => {
    existing = undefined;
    const n = server.requests.length;
    const r = await kubectl.run([
      'apply',
      '--dry-run=client',
      '--validate=strict',
      '-f',
      SPRING,
      '-o',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as {
      metadata: { annotations: Record<string, string> };
      spec: { replicas: number };
    };
    assert.equal(out.spec.replicas, 5);
    assert.ok(out.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);
    const paths = since(n).map((q) => q.path);
    assert.ok(paths.includes('/openapi/v3/apis/apps/v1'), `${paths}`);
    assert.ok(!paths.includes('/openapi/v2'), `${paths}`);
    assert.ok(!since(n).some((q) => q.method !== 'GET'), 'nothing written');
  });

  it('kubectl create --validate=strict leaves unknown fields to the server (fieldValidation=Strict)', async () => {
    // kubectl found `fieldValidation` on the PATCH operation, so it skips client-side
    // validation: a client dry run cannot notice spec.foo ...
    const dry = await kubectl.run([
      'create',
      '--dry-run=client',
      '--validate=strict',
      '-f',
      badManifest,
      '-o',
      'name',
    ]);
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(dry.stdout.trim(), 'deployment.apps/bad');
    // ... and a real create asks the server to be strict, and shows what it answers.
    const n = server.requests.length;
    const r = await kubectl.run(['create', '--validate=strict', '-f', badManifest]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /strict decoding error: unknown field "spec\.foo"/);
    const post = since(n).find((q) => q.method === 'POST');
    assert.equal(post?.query.get('fieldValidation'), 'Strict');
    assert.equal(post?.query.get('fieldManager'), 'kubectl-create');
  });

  it('kubectl apply of a changed manifest sends a strategic merge patch computed from v3', async () => {
    existing = appliedSpring('spring-server:0.9');
    const n = server.requests.length;
    const r = await kubectl.run(['apply', '--validate=strict', '-v=5', '-f', SPRING]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /deployment\.apps\/spring-deployment configured/);
    // Any problem with the v3 patch metadata shows up as a warning (then v2, then builtins).
    assert.doesNotMatch(r.stderr, /warning|OpenAPI V3 path does not/i);
    const patch = since(n).find((q) => q.method === 'PATCH');
    assert.ok(patch, 'a PATCH was sent');
    assert.equal(patch.contentType, 'application/strategic-merge-patch+json');
    assert.equal(patch.query.get('fieldValidation'), 'Strict');
    const body = JSON.parse(patch.body) as {
      spec: { template: { spec: Record<string, unknown> } };
    };
    // Merging containers by name (x-kubernetes-patch-merge-key) is what produces these keys.
    assert.deepEqual(body.spec.template.spec['$setElementOrder/containers'], [{ name: 'spring-container' }]);
    assert.deepEqual(body.spec.template.spec['containers'], [
      { image: 'spring-server:1.0', name: 'spring-container' },
    ]);
    assert.ok(!since(n).some((q) => q.path === '/openapi/v2'));
  });
});

/** Removes the `fieldValidation` query parameter from every operation of a v3 document. */
function withoutFieldValidation(doc: { paths: unknown }): void {
  const paths = doc.paths as Record<string, Record<string, { parameters?: { name: string }[] }>>;
  for (const item of Object.values(paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (method !== 'parameters' && op.parameters) {
        op.parameters = op.parameters.filter((p) => p.name !== 'fieldValidation');
      }
    }
  }
}

describe(
  'real kubectl, with fieldValidation removed from the v3 documents: client-side validation from v2',
  { timeout: 60_000 },
  () => {
    // v3's PATCH without fieldValidation is a definite "unsupported" (kubectl's fallback
    // verifier does not ask v2 then), so kubectl validates on the client, against the
    // definitions of /openapi/v2 — which it only reads as protobuf (kube-openapi's proto models).
    let server: DocsServer;
    let kubectl: Kubectl;
    before(async () => {
      server = await startDocsServer({
        rewriteOpenAPIV3: (doc) => withoutFieldValidation(doc as { paths: unknown }),
      });
      kubectl = await kubectlFor(server.url);
      await writeFile(join(kubectl.dir, 'bad.yaml'), BAD_MANIFEST);
      await writeFile(
        join(kubectl.dir, 'string-replicas.yaml'),
        BAD_MANIFEST.replace('  foo: 1\n', '  replicas: "2"\n'),
      );
      await writeFile(join(kubectl.dir, 'good.yaml'), BAD_MANIFEST.replace('  foo: 1\n', ''));
    });
    after(async () => {
      await kubectl.cleanup();
      await server.close();
    });

    const cases: [file: string, error: RegExp | undefined][] = [
      ['bad.yaml', /unknown field "foo" in io\.k8s\.api\.apps\.v1\.DeploymentSpec/],
      [
        'string-replicas.yaml',
        /invalid type for io\.k8s\.api\.apps\.v1\.DeploymentSpec\.replicas: got "string", expected "integer"/,
      ],
      ['good.yaml', undefined],
    ];
    for (const [file, error] of cases) {
      it(`kubectl validates ${file} on the client against the v2 (protobuf) definitions`, async () => {
        const n = server.requests.length;
        const r = await kubectl.run([
          'create',
          '--dry-run=client',
          '--validate=strict',
          '-f',
          join(kubectl.dir, file),
        ]);
        if (error) {
          assert.equal(r.code, 1, r.stdout);
          assert.match(r.stderr, /error validating data/);
          assert.match(r.stderr, error);
        } else {
          assert.equal(r.code, 0, r.stderr);
          assert.equal(r.stdout.trim(), 'deployment.apps/bad created (dry run)');
        }
        const v2 = requestsSince(server, n).find((q) => q.path === '/openapi/v2');
        assert.equal(v2?.status, 200);
      });
    }
  },
);

function requestsSince(server: DocsServer, n: number): RecordedRequest[] {
  return server.requests.slice(n);
}
