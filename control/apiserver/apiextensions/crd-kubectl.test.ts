// Real kubectl (/usr/bin/kubectl 1.32) against CustomResourceDefinitions on the in-process
// API server (issue 18 item 8): a CRD with two versions, the status and scale subresources
// and printer columns, driven as a user drives it — apply, api-resources, get (columns, short
// name, category, -o yaml, another version), explain (OpenAPI v3 and v2), patch (merge, json,
// status), scale, apply --server-side, get --watch, delete.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kubeconfig } from '../../main.js';
import { startTestApi, type TestApi } from '../../../test/support/api.js';
import { until } from '../../../test/support/wait.js';

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    shortNames: [wd]
    categories: [toys]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Color, type: string, jsonPath: .spec.color}
    - {name: Ready, type: boolean, jsonPath: .status.ready}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        description: A Widget is a thing with a size.
        properties:
          spec:
            type: object
            description: What the widget should be.
            required: [size]
            properties:
              size: {type: integer, minimum: 1, description: How big the widget is.}
              color: {type: string, enum: [red, blue], default: red, description: Its colour.}
              replicas: {type: integer}
          status:
            type: object
            properties:
              ready: {type: boolean}
              replicas: {type: integer}
  - name: v1beta1
    served: true
    storage: false
    subresources:
      status: {}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              color: {type: string}
              replicas: {type: integer}
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
`;

const widget = (name: string, spec: string) => `apiVersion: example.com/v1
kind: Widget
metadata:
  name: ${name}
  namespace: default
spec:
${spec}
`;

/** The rows of a `kubectl get` table: cells split on runs of two or more spaces. */
function rows(out: string): string[][] {
  return out
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s{2,}/));
}

describe('CustomResourceDefinitions with real kubectl', () => {
  let api: TestApi;
  let dir: string;
  before(async () => {
    api = await startTestApi();
    dir = mkdtempSync(join(tmpdir(), 'k8ts-crd-kubectl-'));
    writeFileSync(join(dir, 'kubeconfig'), kubeconfig(api.url), { mode: 0o600 });
  });
  after(async () => {
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function ok(...args: string[]): Promise<string> {
    const r = await api.kubectl(...args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed:\n${r.stderr}\n${r.stdout}`);
    return r.stdout;
  }
  async function okIn(stdin: string, ...args: string[]): Promise<string> {
    const r = await api.kubectlIn(stdin, ...args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed:\n${r.stderr}\n${r.stdout}`);
    return r.stdout;
  }

  it('applies the CRD, which becomes Established, and api-resources lists it', async () => {
    assert.match(
      await okIn(CRD, 'apply', '-f', '-'),
      /^customresourcedefinition\.apiextensions\.k8s\.io\/widgets\.example\.com created$/m,
    );
    assert.match(
      await ok('wait', '--for=condition=Established', 'crd/widgets.example.com', '--timeout=10s'),
      /condition met/,
    );
    // kubectl's discovery cache may be a moment behind the CRD: api-resources reads it fresh.
    const out = await until(
      'api-resources to list widgets',
      async () => {
        const r = await api.kubectl('api-resources', '--api-group=example.com');
        return r.code === 0 && r.stdout.includes('widgets') ? r.stdout : undefined;
      },
      10_000,
      200,
    );
    const [header, row] = rows(out);
    assert.deepEqual(header, ['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND']);
    assert.deepEqual(row, ['widgets', 'wd', 'example.com/v1', 'true', 'Widget']);
    assert.deepEqual(rows(await ok('api-resources', '--categories=toys', '-o', 'name')), [
      ['widgets.example.com'],
    ]);
  });

  it('applies a Widget and prints it with the printer columns, by plural, short name and category', async () => {
    assert.match(
      await okIn(widget('w1', '  size: 2'), 'apply', '-f', '-'),
      /^widget\.example\.com\/w1 created$/m,
    );
    for (const what of ['widgets', 'wd', 'widget.example.com', 'toys']) {
      const t = rows(await ok('get', what));
      assert.deepEqual(t[0], ['NAME', 'SIZE', 'COLOR', 'READY', 'AGE'], what);
      assert.deepEqual(t[1]!.slice(0, 3), ['w1', '2', 'red'], what);
      assert.match(t[1]![3]!, /^\d+s$/, `${what}: READY is empty, AGE follows`);
    }
    const beta = rows(await ok('get', 'widgets.v1beta1.example.com'));
    assert.deepEqual(beta[0], ['NAME', 'SIZE']);
    assert.deepEqual(beta[1], ['w1', '2']);
  });

  it('gets the object as YAML, in either version', async () => {
    const yaml = await ok('get', 'widget', 'w1', '-o', 'yaml');
    assert.match(yaml, /^apiVersion: example\.com\/v1$/m);
    assert.match(yaml, /^kind: Widget$/m);
    assert.match(yaml, /^ {2}size: 2$/m);
    assert.match(yaml, /^ {2}color: red$/m, 'the schema default is stored');
    assert.match(yaml, /kubectl\.kubernetes\.io\/last-applied-configuration/);
    assert.equal(
      await ok('get', 'widgets.v1beta1.example.com', 'w1', '-o', 'jsonpath={.apiVersion}'),
      'example.com/v1beta1',
    );
  });

  it('explains the schema from OpenAPI v3 and v2', async () => {
    const v3 = await ok('explain', 'widgets.spec');
    assert.match(v3, /^GROUP:\s+example\.com$/m);
    assert.match(v3, /^KIND:\s+Widget$/m);
    assert.match(v3, /^VERSION:\s+v1$/m);
    assert.match(v3, /What the widget should be\./);
    assert.match(v3, /^ {2}size\s+<integer> -required-$/m);
    assert.match(v3, /How big the widget is\./);
    assert.match(v3, /^ {2}color\s+<string>$/m);
    const v2 = await ok('explain', 'widget.spec.size', '--output=plaintext-openapiv2');
    assert.match(v2, /^KIND:\s+Widget$/m);
    assert.match(v2, /^FIELD:\s+size <integer>$/m);
    assert.match(v2, /How big the widget is\./);
    const beta = await ok('explain', 'widgets', '--api-version=example.com/v1beta1');
    assert.match(beta, /^VERSION:\s+v1beta1$/m);
  });

  it('patches with --type merge and json, and the status subresource; strategic merge is refused', async () => {
    assert.match(
      await ok('patch', 'widget', 'w1', '--type', 'merge', '-p', '{"spec":{"size":3}}'),
      /^widget\.example\.com\/w1 patched$/m,
    );
    assert.match(
      await ok(
        'patch',
        'widget',
        'w1',
        '--type',
        'json',
        '-p',
        '[{"op":"replace","path":"/spec/color","value":"blue"}]',
      ),
      /^widget\.example\.com\/w1 patched$/m,
    );
    assert.match(
      await ok(
        'patch',
        'widget',
        'w1',
        '--subresource=status',
        '--type',
        'merge',
        '-p',
        '{"status":{"ready":true}}',
      ),
      /^widget\.example\.com\/w1 patched$/m,
    );
    assert.deepEqual(rows(await ok('get', 'wd', 'w1'))[1]!.slice(0, 4), ['w1', '3', 'blue', 'true']);
    const smp = await api.kubectl('patch', 'widget', 'w1', '-p', '{"spec":{"size":4}}');
    assert.notEqual(smp.code, 0);
    assert.match(
      smp.stderr,
      /the body of the request was in an unknown format - accepted media types include: application\/json-patch\+json, application\/merge-patch\+json, application\/apply-patch\+yaml/,
    );
    const bad = await api.kubectl(
      'patch',
      'widget',
      'w1',
      '--type',
      'merge',
      '-p',
      '{"spec":{"size":0,"color":"green"}}',
    );
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /The Widget "w1" is invalid: /);
    assert.match(
      bad.stderr,
      /spec\.size: Invalid value: 0: spec\.size in body should be greater than or equal to 1/,
    );
    assert.match(bad.stderr, /spec\.color: Unsupported value: "green": supported values: "red", "blue"/);
  });

  it('scales through the scale subresource', async () => {
    assert.match(await ok('scale', 'widget', 'w1', '--replicas=3'), /^widget\.example\.com\/w1 scaled$/m);
    assert.equal(await ok('get', 'widget', 'w1', '-o', 'jsonpath={.spec.replicas}'), '3');
  });

  it('applies again client-side and server-side', async () => {
    assert.match(
      await okIn(widget('w1', '  size: 5\n  color: blue'), 'apply', '-f', '-'),
      /^widget\.example\.com\/w1 configured$/m,
    );
    assert.equal(await ok('get', 'widget', 'w1', '-o', 'jsonpath={.spec.size}'), '5');
    assert.match(
      await okIn(widget('w2', '  size: 6'), 'apply', '--server-side', '-f', '-'),
      /^widget\.example\.com\/w2 serverside-applied$/m,
    );
    const managers = await ok(
      'get',
      'widget',
      'w2',
      '--show-managed-fields',
      '-o',
      'jsonpath={.metadata.managedFields[*].manager}',
    );
    assert.equal(managers, 'kubectl');
    // kubectl moves the client-side apply's fields to its server-side manager first (csaupgrade).
    assert.match(
      await okIn(widget('w1', '  size: 7\n  color: blue'), 'apply', '--server-side', '-f', '-'),
      /^widget\.example\.com\/w1 serverside-applied$/m,
    );
    const conflict = await api.kubectlIn(
      widget('w1', '  size: 8\n  color: blue'),
      'apply',
      '--server-side',
      '--field-manager=other',
      '-f',
      '-',
    );
    assert.notEqual(conflict.code, 0, 'spec.size is owned by kubectl');
    // The same color is shared ownership, not a conflict; the other size is.
    assert.match(conflict.stderr, /Apply failed with 1 conflict: conflict with "kubectl": \.spec\.size\n/);
    assert.equal(await ok('get', 'widget', 'w1', '-o', 'jsonpath={.spec.size}'), '7');
  });

  it('refuses an invalid Widget with every failing field, and stores nothing', async () => {
    const r = await api.kubectlIn(widget('bad', '  color: pink'), 'apply', '-f', '-');
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /The Widget "bad" is invalid: /);
    assert.match(r.stderr, /spec\.size: Required value/);
    assert.match(r.stderr, /spec\.color: Unsupported value: "pink"/);
    const get = await api.kubectl('get', 'widget', 'bad');
    assert.match(get.stderr, /widgets\.example\.com "bad" not found/);
  });

  it('watches: get --watch prints the table, then each change', async () => {
    const child = spawn(
      'kubectl',
      [
        '--kubeconfig',
        join(dir, 'kubeconfig'),
        '--cache-dir',
        join(dir, 'cache'),
        'get',
        'widgets',
        '--watch',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
    try {
      await until('the first table', () => (/^w2\s/m.test(out) ? true : undefined), 10_000, 50);
      const first = rows(out);
      assert.deepEqual(first[0], ['NAME', 'SIZE', 'COLOR', 'READY', 'AGE']);
      assert.deepEqual(
        first.slice(1).map((r) => r[0]),
        ['w1', 'w2'],
      );
      await ok('patch', 'widget', 'w2', '--type', 'merge', '-p', '{"spec":{"size":8}}');
      await until('the change', () => (/^w2\s+8\s/m.test(out) ? true : undefined), 10_000, 50);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('deletes a Widget, then the CRD with its remaining objects', async () => {
    assert.match(await ok('delete', 'widget', 'w2'), /^widget\.example\.com "w2" deleted$/m);
    assert.match(
      await ok('delete', 'crd', 'widgets.example.com', '--timeout=20s'),
      /^customresourcedefinition\.apiextensions\.k8s\.io "widgets\.example\.com" deleted$/m,
    );
    const crd = await api.kubectl('get', 'crd', 'widgets.example.com');
    assert.match(crd.stderr, /not found/);
    // kubectl's cached discovery still names widgets: the list is upstream's plain 404.
    const stale = await api.kubectl('get', 'widgets');
    assert.notEqual(stale.code, 0);
    assert.match(
      stale.stderr,
      /Error from server \(NotFound\): Unable to list "example\.com\/v1, Resource=widgets": the server could not find the requested resource/,
    );
    // api-resources reads discovery afresh: the group is gone, and so is the resource type.
    assert.equal((await ok('api-resources', '--api-group=example.com', '--no-headers')).trim(), '');
    const gone = await api.kubectl('get', 'widgets');
    assert.match(gone.stderr, /the server doesn't have a resource type "widgets"/);
    assert.equal((await api.store.list('/registry/example.com/widgets/')).items.length, 0);
  });
});
