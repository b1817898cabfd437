// Protobuf request bodies from the real kubectl: `kubectl create configmap|secret|namespace|
// deployment|service|serviceaccount` send `application/vnd.kubernetes.protobuf` (client-go's
// typed clients; `kubectl expose`, `run` and `create -f` send JSON). Each object must be
// stored exactly as it is when the same object comes as JSON (`--dry-run=client -o json`
// piped to `kubectl create -f -`, into a twin namespace).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startK8tsServer, type K8tsServer } from './support/k8ts-server.js';

const TWIN = 'json-twin';

type Obj = Record<string, unknown> & { metadata: Record<string, unknown> };

describe('kubectl create with protobuf bodies', () => {
  let k: K8tsServer;
  let files: string;
  before(async () => {
    files = mkdtempSync(join(tmpdir(), 'k8ts-protobuf-e2e-'));
    k = await startK8tsServer({ args: ['--disable-controller-manager', '--disable-scheduler'] });
  });
  after(async () => {
    await k?.stop();
    if (files) rmSync(files, { recursive: true, force: true });
  });

  async function ok(...args: string[]): Promise<string> {
    const r = await k.kubectl(...args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed:\n${r.stderr}\n${r.stdout}`);
    return r.stdout;
  }

  /** Runs a kubectl command and checks that it really sent a protobuf body. */
  async function createWithProtobuf(...args: string[]): Promise<void> {
    const r = await k.kubectl(...args, '-v=8');
    assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed:\n${r.stderr.slice(-3000)}`);
    assert.match(r.stderr, /Content-Type: application\/vnd\.kubernetes\.protobuf/, args.join(' '));
  }

  /** The same command's object, sent as JSON into the twin namespace. */
  async function createWithJson(...args: string[]): Promise<void> {
    const json = await ok(...args, '-n', TWIN, '--dry-run=client', '-o', 'json');
    const r = await k.kubectlIn(json, 'create', '-f', '-', '-v=8');
    assert.equal(r.code, 0, `kubectl create -f - (${args.join(' ')}) failed:\n${r.stderr.slice(-3000)}`);
    assert.match(r.stderr, /Content-Type: application\/json/);
  }

  async function get(...args: string[]): Promise<Obj> {
    return JSON.parse(await ok('get', ...args, '-o', 'json')) as Obj;
  }

  /** An object without what the server assigns per object. */
  function normalized(o: Obj): Obj {
    const meta = { ...o.metadata };
    for (const f of ['uid', 'resourceVersion', 'creationTimestamp', 'namespace', 'managedFields'])
      delete meta[f];
    const out: Obj = { ...o, metadata: meta };
    // Addresses and ports the API server allocates differ between the two objects.
    const spec = o.spec as { clusterIP?: string; clusterIPs?: string[]; ports?: Obj[] } | undefined;
    if (spec?.clusterIP !== undefined) {
      const { clusterIP: _ip, clusterIPs: _ips, ...rest } = spec;
      out.spec = { ...rest, ports: rest.ports?.map(({ nodePort: _port, ...p }) => p) };
    }
    return out;
  }

  /** Creates with both encodings, asserts the stored objects agree, returns the protobuf one. */
  async function createBoth(resource: string, name: string, ...args: string[]): Promise<Obj> {
    await createWithProtobuf(...args);
    await createWithJson(...args);
    const viaProtobuf = await get(resource, name);
    assert.deepEqual(normalized(viaProtobuf), normalized(await get(resource, name, '-n', TWIN)));
    return viaProtobuf;
  }

  it('creates a namespace (and the twin namespace for the JSON comparisons)', async () => {
    await createWithProtobuf('create', 'namespace', 'n1');
    await createWithProtobuf('create', 'namespace', TWIN);
    assert.deepEqual(normalized(await get('namespace', 'n1')), {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'n1', labels: { 'kubernetes.io/metadata.name': 'n1' } },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    });
  });

  it('creates a configmap: literals (one holding JSON with a duplicate key), a binary file', async () => {
    const bin = join(files, 'blob.bin');
    writeFileSync(bin, Buffer.from([0, 1, 2, 0xfe, 0xff]));
    // fieldValidation=Strict (kubectl's default) must not look for duplicate JSON keys in a
    // protobuf body, nor in the JSON text of a value.
    const cm = await createBoth(
      'configmap',
      'c1',
      'create',
      'configmap',
      'c1',
      '--from-literal=a=b',
      '--from-literal=j={"x":1,"x":2}',
      `--from-file=${bin}`,
    );
    assert.deepEqual(normalized(cm), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c1' },
      data: { a: 'b', j: '{"x":1,"x":2}' },
      binaryData: { 'blob.bin': Buffer.from([0, 1, 2, 0xfe, 0xff]).toString('base64') },
    });
  });

  it('creates a generic secret: data is base64 of the bytes', async () => {
    const s = await createBoth('secret', 's1', 'create', 'secret', 'generic', 's1', '--from-literal=p=q');
    assert.deepEqual(normalized(s), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's1' },
      data: { p: Buffer.from('q').toString('base64') },
      type: 'Opaque',
    });
  });

  it('creates a deployment with its replicas and image', async () => {
    const d = (await createBoth(
      'deployment',
      'web',
      'create',
      'deployment',
      'web',
      '--image=spring-server:1.0',
      '--replicas=2',
      '--port=8080',
    )) as Obj & {
      spec: {
        replicas: number;
        selector: unknown;
        template: { spec: { containers: { name: string; image: string; ports: unknown }[] } };
      };
    };
    assert.equal(d.spec.replicas, 2);
    assert.deepEqual(d.spec.selector, { matchLabels: { app: 'web' } });
    const [c] = d.spec.template.spec.containers;
    assert.equal(c!.image, 'spring-server:1.0');
    assert.equal(c!.name, 'spring-server');
    assert.deepEqual(c!.ports, [{ containerPort: 8080, protocol: 'TCP' }]);
  });

  it('creates a NodePort service', async () => {
    const s = (await createBoth(
      'service',
      'web',
      'create',
      'service',
      'nodeport',
      'web',
      '--tcp=80:8080',
    )) as Obj & {
      spec: { type: string; ports: unknown; selector: unknown };
    };
    assert.equal(s.spec.type, 'NodePort');
    // The API server allocates the nodePort and the clusterIP, whichever the encoding.
    const [port] = s.spec.ports as { nodePort: number }[];
    assert.ok(port!.nodePort >= 30000 && port!.nodePort <= 32767, `nodePort ${port!.nodePort}`);
    assert.deepEqual(s.spec.ports, [
      { name: '80-8080', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: port!.nodePort },
    ]);
    assert.match((s.spec as { clusterIP?: string }).clusterIP ?? '', /^10\.43\.\d+\.\d+$/);
    assert.deepEqual(s.spec.selector, { app: 'web' });
  });

  it('creates a service account', async () => {
    const sa = await createBoth('serviceaccount', 'robot', 'create', 'serviceaccount', 'robot');
    assert.equal(sa.metadata.name, 'robot');
  });

  it('answers 400 to a malformed protobuf body and creates nothing', async () => {
    const headers = { 'Content-Type': 'application/vnd.kubernetes.protobuf' };
    const url = `${k.url}/api/v1/namespaces/default/configmaps`;
    const bodies = [
      Buffer.from('{"metadata":{"name":"x"}}'), // no k8s\0 prefix
      Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x0a, 0x09, 0x0a, 0x02, 0x76, 0x31, 0x12, 0x03, 0x46, 0x6f, 0x6f]), // kind Foo
      Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x0a, 0x50]), // truncated
    ];
    for (const body of bodies) {
      const r = await k.fetch(url, { method: 'POST', headers, body });
      assert.equal(r.status, 400);
      const status = (await r.json()) as { kind: string; reason: string; message: string };
      assert.equal(status.kind, 'Status');
      assert.equal(status.reason, 'BadRequest');
      assert.match(status.message, /could not be decoded as application\/vnd\.kubernetes\.protobuf/);
    }
    const list = JSON.parse(await ok('get', 'configmaps', '-n', 'default', '-o', 'json')) as { items: Obj[] };
    assert.ok(!list.items.some((i) => i.metadata.name === 'x'));
  });
});
