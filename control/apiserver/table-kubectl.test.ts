/**
 * Real kubectl against a tiny HTTP server that answers discovery and two lists with
 * toTable(): what `kubectl get` prints is what k8ts users will see. The server's clock
 * is fixed, so ages are stable.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../api/object.js';
import { findResource, type ResourceInfo } from './resources.js';
import { ApiError } from './status.js';
import {
  TABLE_CONTENT_TYPE,
  negotiateTable,
  parseIncludeObject,
  tableWatchTransformer,
  toTable,
} from './table.js';

const NOW = new Date('2026-11-30T12:00:00Z');
const ago = (ms: number): string => new Date(NOW.getTime() - ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const M = 60_000;
const H = 60 * M;

const PODS: KubeObject[] = [
  {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'spring-server-5d8f7-abcde',
      namespace: 'default',
      resourceVersion: '40',
      creationTimestamp: ago(3 * H + 10 * M),
    },
    spec: { nodeName: 'node-1', containers: [{ name: 'app', image: 'spring-server:1.0' }] },
    status: {
      phase: 'Running',
      podIP: '10.244.1.5',
      podIPs: [{ ip: '10.244.1.5' }],
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: [
        {
          name: 'app',
          ready: true,
          restartCount: 1,
          state: { running: { startedAt: ago(5 * M) } },
          lastState: { terminated: { exitCode: 143, reason: 'Error', finishedAt: ago(5 * M) } },
        },
      ],
    },
  },
  {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'spring-server-5d8f7-fghij',
      namespace: 'default',
      resourceVersion: '41',
      creationTimestamp: ago(2 * M),
    },
    spec: { containers: [{ name: 'app', image: 'spring-server:1.0' }] },
    status: { phase: 'Pending' },
  },
  {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'crasher',
      namespace: 'default',
      resourceVersion: '42',
      creationTimestamp: ago(10 * M),
    },
    spec: { nodeName: 'node-2', containers: [{ name: 'app', image: 'crash:1' }] },
    status: {
      phase: 'Running',
      podIPs: [{ ip: '10.244.2.9' }],
      containerStatuses: [
        {
          name: 'app',
          ready: false,
          restartCount: 6,
          state: { waiting: { reason: 'CrashLoopBackOff' } },
          lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: ago(45_000) } },
        },
      ],
    },
  },
];

const NODES: KubeObject[] = [
  {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: 'node-1',
      resourceVersion: '7',
      creationTimestamp: ago(50 * H),
      labels: { 'node-role.kubernetes.io/control-plane': '' },
    },
    status: {
      conditions: [{ type: 'Ready', status: 'True' }],
      addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
      nodeInfo: {
        kubeletVersion: 'v1.32.0-k8ts',
        osImage: 'Debian GNU/Linux 12 (bookworm)',
        kernelVersion: '6.1.0-18-amd64',
        containerRuntimeVersion: 'docker://20.10.24',
      },
    },
  },
  {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'node-2', resourceVersion: '8', creationTimestamp: ago(20 * M) },
    spec: { unschedulable: true },
    status: {
      conditions: [{ type: 'Ready', status: 'Unknown' }],
      nodeInfo: { kubeletVersion: 'v1.32.0-k8ts' },
    },
  },
];

/** The events of a pod watch: the pending pod starts running, the crashing one is deleted. */
const WATCH_EVENTS: [string, KubeObject][] = [
  [
    'MODIFIED',
    {
      ...PODS[1],
      metadata: { ...PODS[1].metadata, resourceVersion: '43' },
      spec: { ...(PODS[1].spec as object), nodeName: 'node-1' },
      status: {
        phase: 'Running',
        podIPs: [{ ip: '10.244.1.6' }],
        containerStatuses: [
          { name: 'app', ready: true, restartCount: 0, state: { running: { startedAt: ago(M) } } },
        ],
      },
    },
  ],
  [
    'DELETED',
    { ...PODS[2], metadata: { ...PODS[2].metadata, resourceVersion: '44', deletionTimestamp: ago(0) } },
  ],
];

const API_RESOURCES = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: 'v1',
  resources: [
    {
      name: 'pods',
      singularName: 'pod',
      namespaced: true,
      kind: 'Pod',
      verbs: ['get', 'list', 'watch'],
      shortNames: ['po'],
      categories: ['all'],
    },
    {
      name: 'nodes',
      singularName: 'node',
      namespaced: false,
      kind: 'Node',
      verbs: ['get', 'list', 'watch'],
      shortNames: ['no'],
    },
  ],
};

interface Seen {
  path: string;
  query: URLSearchParams;
  accept: string;
}

/** Just enough API server for `kubectl get pods|nodes`. */
function startServer(seen: Seen[]): Promise<http.Server> {
  const lists: Record<string, { resource: ResourceInfo; items: KubeObject[]; rv: string }> = {
    '/api/v1/namespaces/default/pods': { resource: findResource('', 'v1', 'pods')!, items: PODS, rv: '42' },
    '/api/v1/nodes': { resource: findResource('', 'v1', 'nodes')!, items: NODES, rv: '42' },
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const accept = req.headers.accept ?? '';
    seen.push({ path: url.pathname, query: url.searchParams, accept });
    const send = (code: number, body: unknown): void => {
      res.writeHead(code, { 'Content-Type': TABLE_CONTENT_TYPE });
      res.end(JSON.stringify(body));
    };
    try {
      switch (url.pathname) {
        case '/version':
          return send(200, { major: '1', minor: '32', gitVersion: 'v1.32.0-k8ts' });
        case '/api':
          return send(200, {
            kind: 'APIVersions',
            versions: ['v1'],
            serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1' }],
          });
        case '/apis':
          return send(200, { kind: 'APIGroupList', apiVersion: 'v1', groups: [] });
        case '/api/v1':
          return send(200, API_RESOURCES);
      }
      const list = lists[url.pathname];
      if (!list)
        return send(404, {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'NotFound',
          code: 404,
        });
      const version = negotiateTable(accept);
      if (!version) {
        return send(200, {
          kind: `${list.resource.kind}List`,
          apiVersion: 'v1',
          metadata: { resourceVersion: list.rv },
          items: list.items,
        });
      }
      const includeObject = parseIncludeObject(url.searchParams.get('includeObject'));
      if (url.searchParams.get('watch') === 'true') {
        // Two events, then the end of the stream (which ends `kubectl get -w`).
        const transform = tableWatchTransformer(list.resource, { includeObject, version, now: () => NOW });
        res.writeHead(200, { 'Content-Type': TABLE_CONTENT_TYPE });
        for (const [type, obj] of WATCH_EVENTS)
          res.write(JSON.stringify({ type, object: transform(obj) }) + '\n');
        res.end();
        return;
      }
      send(
        200,
        toTable(list.resource, list.items, {
          includeObject,
          now: NOW,
          version,
          listMeta: { resourceVersion: list.rv },
        }),
      );
    } catch (e) {
      if (e instanceof ApiError) send(e.code, e.toStatus());
      else send(500, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: String(e), code: 500 });
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** The printed table, split into cells on runs of 2+ spaces (kubectl pads columns with 3). */
function parse(stdout: string): string[][] {
  return stdout
    .trimEnd()
    .split('\n')
    .map((line) => line.trim().split(/ {2,}/));
}

describe('kubectl get against Table answers', { timeout: 120_000 }, () => {
  const seen: Seen[] = [];
  let server: http.Server;
  let dir: string;
  let kubeconfig: string;

  before(async () => {
    server = await startServer(seen);
    dir = await mkdtemp(join(tmpdir(), 'k8ts-table-kubectl-'));
    kubeconfig = join(dir, 'kubeconfig.yaml');
    const { port } = server.address() as AddressInfo;
    await writeFile(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: k8ts, cluster: {server: "http://127.0.0.1:' + port + '"}}]',
        'users: [{name: admin, user: {}}]',
        'contexts: [{name: k8ts, context: {cluster: k8ts, user: admin, namespace: default}}]',
        'current-context: k8ts',
        '',
      ].join('\n'),
    );
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  function kubectl(...args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        'kubectl',
        ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args],
        { timeout: 30_000, env: { ...process.env, KUBECONFIG: kubeconfig } },
        (err, stdout, stderr) =>
          err ? reject(new Error(`kubectl ${args.join(' ')}: ${err.message}\n${stderr}`)) : resolve(stdout),
      );
    });
  }

  it('kubectl get pods prints the server columns and cells', async () => {
    assert.deepEqual(parse(await kubectl('get', 'pods')), [
      ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'],
      ['spring-server-5d8f7-abcde', '1/1', 'Running', '1 (5m ago)', '3h10m'],
      ['spring-server-5d8f7-fghij', '0/1', 'Pending', '0', '2m'],
      ['crasher', '0/1', 'CrashLoopBackOff', '6 (45s ago)', '10m'],
    ]);
    // What kubectl asked: a Table (v1, then v1beta1, then plain JSON), 500 at a time, no includeObject.
    const list = seen.filter((s) => s.path === '/api/v1/namespaces/default/pods').at(-1)!;
    assert.equal(
      list.accept,
      'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json',
    );
    assert.equal(list.query.get('limit'), '500');
    assert.equal(list.query.get('includeObject'), null);
  });

  it('kubectl get pods -o wide adds the priority-1 columns', async () => {
    assert.deepEqual(parse(await kubectl('get', 'pods', '-o', 'wide')), [
      ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES'],
      [
        'spring-server-5d8f7-abcde',
        '1/1',
        'Running',
        '1 (5m ago)',
        '3h10m',
        '10.244.1.5',
        'node-1',
        '<none>',
        '<none>',
      ],
      ['spring-server-5d8f7-fghij', '0/1', 'Pending', '0', '2m', '<none>', '<none>', '<none>', '<none>'],
      [
        'crasher',
        '0/1',
        'CrashLoopBackOff',
        '6 (45s ago)',
        '10m',
        '10.244.2.9',
        'node-2',
        '<none>',
        '<none>',
      ],
    ]);
  });

  it('kubectl get pods --show-labels and --sort-by read the row objects', async () => {
    const labelled = parse(await kubectl('get', 'pods', '--show-labels'));
    assert.deepEqual(labelled[0], ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'LABELS']);
    assert.equal(labelled[1][5], '<none>');
    const sorted = parse(await kubectl('get', 'pods', '--sort-by=.metadata.name'));
    assert.deepEqual(
      sorted.slice(1).map((r) => r[0]),
      ['crasher', 'spring-server-5d8f7-abcde', 'spring-server-5d8f7-fghij'],
    );
    assert.equal(
      seen
        .filter((s) => s.path.endsWith('/pods'))
        .at(-1)!
        .query.get('includeObject'),
      'Object',
    );
  });

  it('kubectl get pods -w prints the list, then one row per watch event', async () => {
    assert.deepEqual(parse(await kubectl('get', 'pods', '--watch', '--output-watch-events')), [
      ['EVENT', 'NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'],
      ['ADDED', 'spring-server-5d8f7-abcde', '1/1', 'Running', '1 (5m ago)', '3h10m'],
      ['ADDED', 'spring-server-5d8f7-fghij', '0/1', 'Pending', '0', '2m'],
      ['ADDED', 'crasher', '0/1', 'CrashLoopBackOff', '6 (45s ago)', '10m'],
      ['MODIFIED', 'spring-server-5d8f7-fghij', '1/1', 'Running', '0', '2m'],
      ['DELETED', 'crasher', '0/1', 'Terminating', '6 (45s ago)', '10m'],
    ]);
    const watch = seen.filter((s) => s.query.get('watch') === 'true').at(-1)!;
    assert.equal(watch.path, '/api/v1/namespaces/default/pods');
    assert.equal(watch.query.get('resourceVersion'), '42');
    assert.equal(negotiateTable(watch.accept), 'v1');
  });

  it('kubectl get nodes prints STATUS, ROLES and VERSION', async () => {
    assert.deepEqual(parse(await kubectl('get', 'nodes')), [
      ['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION'],
      ['node-1', 'Ready', 'control-plane', '2d2h', 'v1.32.0-k8ts'],
      ['node-2', 'NotReady,SchedulingDisabled', '<none>', '20m', 'v1.32.0-k8ts'],
    ]);
    assert.deepEqual(parse(await kubectl('get', 'nodes', '-o', 'wide'))[1], [
      'node-1',
      'Ready',
      'control-plane',
      '2d2h',
      'v1.32.0-k8ts',
      '127.0.0.1',
      '<none>',
      'Debian GNU/Linux 12 (bookworm)',
      '6.1.0-18-amd64',
      'docker://20.10.24',
    ]);
  });
});
