// One file (1,100 lines): every printer of tables/registry.ts is checked here against kubectl's columns, table-driven, with the Table envelope they share.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../api/object.js';
import { RESOURCES, findResource, type ResourceInfo } from './resources.js';
import { ApiError } from './status.js';
import {
  humanDuration,
  negotiateTable,
  parseIncludeObject,
  tableColumns,
  tableWatchTransformer,
  toTable,
  wantsTable,
  type PartialObjectMetadata,
  type TableCell,
} from './table.js';

const NOW = new Date('2026-11-30T12:00:00Z');
const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

/** An RFC 3339 time `ms` before NOW. */
function ago(ms: number): string {
  return new Date(NOW.getTime() - ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function res(group: string, resource: string): ResourceInfo {
  const r = findResource(group, 'v1', resource);
  assert.ok(r, `${group}/${resource} is served`);
  return r;
}

/** The cells of one object's row, by upper-cased column name, as kubectl would head them. */
function cellsOf(resource: ResourceInfo, obj: KubeObject): Record<string, TableCell> {
  const table = toTable(resource, [obj], { includeObject: 'None', now: NOW });
  const cols = table.columnDefinitions ?? [];
  const cells = table.rows[0].cells;
  assert.equal(cells.length, cols.length, 'one cell per column');
  return Object.fromEntries(cols.map((c, i) => [c.name.toUpperCase(), cells[i]]));
}

function check(resource: ResourceInfo, obj: KubeObject, want: Record<string, TableCell>): void {
  const got = cellsOf(resource, obj);
  for (const [col, value] of Object.entries(want)) assert.deepEqual(got[col], value, `column ${col}`);
}

describe('humanDuration (duration.HumanDuration)', () => {
  const cases: [number, string][] = [
    [-2 * S, '<invalid>'],
    [-1999, '0s'],
    [-1 * S, '0s'],
    [0, '0s'],
    [999, '0s'],
    [5 * S, '5s'],
    [119 * S, '119s'],
    [2 * M, '2m'],
    [2 * M + 3 * S, '2m3s'],
    [9 * M + 59 * S, '9m59s'],
    [10 * M, '10m'],
    [10 * M + 59 * S, '10m'],
    [179 * M + 59 * S, '179m'],
    [3 * H, '3h'],
    [3 * H + 4 * M, '3h4m'],
    [7 * H + 59 * M + 59 * S, '7h59m'],
    [8 * H, '8h'],
    [47 * H + 59 * M, '47h'],
    [48 * H, '2d'],
    [2 * D + 5 * H, '2d5h'],
    [7 * D + 23 * H + 59 * M, '7d23h'],
    [8 * D, '8d'],
    [90 * D, '90d'],
    [729 * D + 23 * H, '729d'],
    [730 * D, '2y'],
    [3 * 365 * D + 120 * D, '3y120d'],
    [8 * 365 * D - H, '7y364d'],
    [8 * 365 * D, '8y'],
    [10 * 365 * D + 100 * D, '10y'],
  ];
  for (const [ms, want] of cases) {
    it(`${ms} ms → ${want}`, () => assert.equal(humanDuration(ms), want));
  }
});

describe('pod rows', () => {
  const pods = res('', 'pods');
  const running = { state: { running: { startedAt: ago(2 * H) } }, ready: true, started: true };
  const pod = (
    name: string,
    extra: Partial<KubeObject> & { status?: object; spec?: object },
  ): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', creationTimestamp: ago(3 * H + 10 * M), ...extra.metadata },
    spec: { containers: [{ name: 'app', image: 'spring-server:1.0' }], ...extra.spec },
    status: extra.status ?? {},
  });

  const cases: { name: string; obj: KubeObject; want: Record<string, TableCell> }[] = [
    {
      name: 'a Running spring-server pod with one restart',
      obj: pod('spring-server-5d8f7-abcde', {
        spec: { nodeName: 'node-1' },
        status: {
          phase: 'Running',
          podIP: '10.244.1.5',
          podIPs: [{ ip: '10.244.1.5' }],
          conditions: [{ type: 'Ready', status: 'True' }],
          containerStatuses: [
            {
              name: 'app',
              ...running,
              restartCount: 1,
              lastState: { terminated: { exitCode: 143, reason: 'Error', finishedAt: ago(5 * M) } },
            },
          ],
        },
      }),
      want: {
        NAME: 'spring-server-5d8f7-abcde',
        READY: '1/1',
        STATUS: 'Running',
        RESTARTS: '1 (5m ago)',
        AGE: '3h10m',
        IP: '10.244.1.5',
        NODE: 'node-1',
        'NOMINATED NODE': '<none>',
        'READINESS GATES': '<none>',
      },
    },
    {
      name: 'a pending pod not yet scheduled',
      obj: pod('pending', { status: { phase: 'Pending' } }),
      want: { READY: '0/1', STATUS: 'Pending', RESTARTS: '0', IP: '<none>', NODE: '<none>' },
    },
    {
      name: 'a scheduled pod whose container is being created',
      obj: pod('creating', {
        spec: { nodeName: 'node-1' },
        status: {
          phase: 'Pending',
          containerStatuses: [
            {
              name: 'app',
              ready: false,
              restartCount: 0,
              state: { waiting: { reason: 'ContainerCreating' } },
            },
          ],
        },
      }),
      want: { READY: '0/1', STATUS: 'ContainerCreating', NODE: 'node-1' },
    },
    {
      name: 'a CrashLoopBackOff pod',
      obj: pod('crasher', {
        status: {
          phase: 'Running',
          containerStatuses: [
            {
              name: 'app',
              ready: false,
              restartCount: 5,
              state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 2m40s' } },
              lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: ago(30 * S) } },
            },
          ],
        },
      }),
      want: { READY: '0/1', STATUS: 'CrashLoopBackOff', RESTARTS: '5 (30s ago)' },
    },
    {
      name: 'an ImagePullBackOff pod',
      obj: pod('nopull', {
        status: {
          phase: 'Pending',
          containerStatuses: [
            { name: 'app', ready: false, state: { waiting: { reason: 'ImagePullBackOff' } } },
          ],
        },
      }),
      want: { STATUS: 'ImagePullBackOff', RESTARTS: '0' },
    },
    {
      name: 'an ErrImageNeverPull pod',
      obj: pod('never', {
        status: {
          phase: 'Pending',
          containerStatuses: [
            { name: 'app', ready: false, state: { waiting: { reason: 'ErrImageNeverPull' } } },
          ],
        },
      }),
      want: { STATUS: 'ErrImageNeverPull' },
    },
    {
      name: 'a terminating pod',
      obj: pod('going', {
        metadata: { deletionTimestamp: ago(-30 * S), deletionGracePeriodSeconds: 30 },
        status: { phase: 'Running', containerStatuses: [{ name: 'app', ...running }] },
      }),
      want: { READY: '1/1', STATUS: 'Terminating' },
    },
    {
      name: 'a pod being deleted from a lost node',
      obj: pod('lost', {
        metadata: { deletionTimestamp: ago(M) },
        status: { phase: 'Running', reason: 'NodeLost', containerStatuses: [{ name: 'app', ...running }] },
      }),
      want: { STATUS: 'Unknown' },
    },
    {
      name: 'a completed pod being deleted reads Completed, not Terminating (since v1.31)',
      obj: pod('done-deleting', {
        metadata: { deletionTimestamp: ago(M), finalizers: ['example.com/keep'] },
        status: {
          phase: 'Succeeded',
          containerStatuses: [
            { name: 'app', ready: false, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
          ],
        },
      }),
      want: { READY: '0/1', STATUS: 'Completed' },
    },
    {
      name: 'a completed pod',
      obj: pod('job-xyz', {
        status: {
          phase: 'Succeeded',
          containerStatuses: [
            { name: 'app', ready: false, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
          ],
        },
      }),
      want: { READY: '0/1', STATUS: 'Completed', RESTARTS: '0' },
    },
    {
      name: 'a failed pod',
      obj: pod('failed', {
        status: {
          phase: 'Failed',
          containerStatuses: [
            { name: 'app', ready: false, state: { terminated: { exitCode: 1, reason: 'Error' } } },
          ],
        },
      }),
      want: { STATUS: 'Error' },
    },
    {
      name: 'a container killed by a signal, without reason',
      obj: pod('signalled', {
        status: {
          phase: 'Running',
          containerStatuses: [
            { name: 'app', ready: false, state: { terminated: { exitCode: 137, signal: 9 } } },
          ],
        },
      }),
      want: { STATUS: 'Signal:9' },
    },
    {
      name: 'a container that exited without reason',
      obj: pod('exited', {
        status: {
          phase: 'Running',
          containerStatuses: [{ name: 'app', ready: false, state: { terminated: { exitCode: 137 } } }],
        },
      }),
      want: { STATUS: 'ExitCode:137' },
    },
    {
      name: 'an evicted pod',
      obj: pod('evicted', { status: { phase: 'Failed', reason: 'Evicted', message: 'low on memory' } }),
      want: { STATUS: 'Evicted', READY: '0/1' },
    },
    {
      name: 'the second of two init containers running',
      obj: pod('init-running', {
        spec: { initContainers: [{ name: 'migrate' }, { name: 'warm' }] },
        status: {
          phase: 'Pending',
          initContainerStatuses: [
            { name: 'migrate', ready: true, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
            { name: 'warm', ready: false, state: { running: { startedAt: ago(M) } } },
          ],
          containerStatuses: [
            { name: 'app', ready: false, state: { waiting: { reason: 'PodInitializing' } } },
          ],
        },
      }),
      want: { READY: '0/1', STATUS: 'Init:1/2', RESTARTS: '0' },
    },
    {
      name: 'an init container in CrashLoopBackOff counts its restarts',
      obj: pod('init-crash', {
        spec: { initContainers: [{ name: 'migrate' }] },
        status: {
          phase: 'Pending',
          initContainerStatuses: [
            {
              name: 'migrate',
              ready: false,
              restartCount: 3,
              state: { waiting: { reason: 'CrashLoopBackOff' } },
              lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: ago(20 * S) } },
            },
          ],
          containerStatuses: [
            { name: 'app', ready: false, state: { waiting: { reason: 'PodInitializing' } } },
          ],
        },
      }),
      want: { STATUS: 'Init:CrashLoopBackOff', RESTARTS: '3 (20s ago)' },
    },
    {
      name: 'a failed init container',
      obj: pod('init-error', {
        spec: { initContainers: [{ name: 'migrate' }] },
        status: {
          phase: 'Pending',
          initContainerStatuses: [
            { name: 'migrate', ready: false, state: { terminated: { exitCode: 2, reason: 'Error' } } },
          ],
        },
      }),
      want: { STATUS: 'Init:Error' },
    },
    {
      name: 'a started sidecar counts as a container',
      obj: pod('with-sidecar', {
        spec: { initContainers: [{ name: 'proxy', restartPolicy: 'Always' }] },
        status: {
          phase: 'Running',
          conditions: [
            { type: 'Initialized', status: 'True' },
            { type: 'Ready', status: 'True' },
          ],
          initContainerStatuses: [{ name: 'proxy', ...running, restartCount: 2 }],
          containerStatuses: [{ name: 'app', ...running }],
        },
      }),
      want: { READY: '2/2', STATUS: 'Running', RESTARTS: '2' },
    },
    {
      name: 'a completed container next to a running one, pod Ready',
      obj: pod('partly-done', {
        spec: { containers: [{ name: 'once' }, { name: 'server' }] },
        status: {
          phase: 'Running',
          conditions: [{ type: 'Ready', status: 'True' }],
          containerStatuses: [
            { name: 'once', ready: false, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
            { name: 'server', ...running },
          ],
        },
      }),
      want: { READY: '1/2', STATUS: 'Running' },
    },
    {
      name: 'a completed container next to a running one, pod not Ready',
      obj: pod('partly-done-unready', {
        spec: { containers: [{ name: 'once' }, { name: 'server' }] },
        status: {
          phase: 'Running',
          conditions: [{ type: 'Ready', status: 'False' }],
          containerStatuses: [
            { name: 'once', ready: false, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
            { name: 'server', ...running },
          ],
        },
      }),
      want: { READY: '1/2', STATUS: 'NotReady' },
    },
    {
      name: 'a pod held by a scheduling gate',
      obj: pod('gated', {
        status: {
          phase: 'Pending',
          conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }],
        },
      }),
      want: { STATUS: 'SchedulingGated' },
    },
    {
      name: 'readiness gates, a nominated node and podIP without podIPs',
      obj: pod('gates', {
        spec: {
          nodeName: 'node-2',
          readinessGates: [{ conditionType: 'example.com/lb' }, { conditionType: 'example.com/dns' }],
        },
        status: {
          phase: 'Running',
          podIP: '10.244.2.7',
          nominatedNodeName: 'node-3',
          conditions: [
            { type: 'example.com/lb', status: 'True' },
            { type: 'example.com/dns', status: 'False' },
          ],
          containerStatuses: [{ name: 'app', ...running }],
        },
      }),
      want: { IP: '10.244.2.7', NODE: 'node-2', 'NOMINATED NODE': 'node-3', 'READINESS GATES': '1/2' },
    },
    {
      name: 'a pod without creationTimestamp',
      obj: { metadata: { name: 'bare' } },
      want: { NAME: 'bare', READY: '0/0', STATUS: '', RESTARTS: '0', AGE: '<unknown>' },
    },
  ];
  for (const c of cases) it(c.name, () => check(pods, c.obj, c.want));

  it('marks rows of finished pods Completed, as Kubernetes', () => {
    const table = toTable(
      pods,
      [pod('a', { status: { phase: 'Succeeded' } }), pod('b', { status: { phase: 'Failed' } }), pod('c', {})],
      { includeObject: 'None', now: NOW },
    );
    assert.deepEqual(
      table.rows.map((r) => r.conditions?.[0]?.reason),
      ['Succeeded', 'Failed', undefined],
    );
    assert.equal(table.rows[0].conditions?.[0]?.type, 'Completed');
  });
});

describe('workload rows', () => {
  const template = {
    metadata: { labels: { app: 'spring-server' } },
    spec: {
      containers: [
        { name: 'app', image: 'spring-server:1.0' },
        { name: 'log', image: 'fluent-bit:3' },
      ],
    },
  };
  it('a deployment with 3 of 5 ready', () =>
    check(
      res('apps', 'deployments'),
      {
        metadata: { name: 'spring-deployment', creationTimestamp: ago(2 * D + 5 * H + 10 * M) },
        spec: { replicas: 5, selector: { matchLabels: { app: 'spring-server' } }, template },
        status: { replicas: 5, readyReplicas: 3, updatedReplicas: 5, availableReplicas: 3 },
      },
      {
        NAME: 'spring-deployment',
        READY: '3/5',
        'UP-TO-DATE': 5,
        AVAILABLE: 3,
        AGE: '2d5h',
        CONTAINERS: 'app,log',
        IMAGES: 'spring-server:1.0,fluent-bit:3',
        SELECTOR: 'app=spring-server',
      },
    ));
  it('a new deployment without status, with set-based selector', () =>
    check(
      res('apps', 'deployments'),
      {
        metadata: { name: 'fresh', creationTimestamp: ago(4 * S) },
        spec: {
          selector: {
            matchLabels: { tier: 'web' },
            matchExpressions: [
              { key: 'env', operator: 'In', values: ['prod', 'canary'] },
              { key: 'legacy', operator: 'DoesNotExist' },
            ],
          },
          template,
        },
      },
      {
        READY: '0/1',
        'UP-TO-DATE': 0,
        AVAILABLE: 0,
        AGE: '4s',
        SELECTOR: 'env in (canary,prod),!legacy,tier=web',
      },
    ));
  it('a replica set', () =>
    check(
      res('apps', 'replicasets'),
      {
        metadata: { name: 'spring-deployment-5d8f7', creationTimestamp: ago(90 * D) },
        spec: {
          replicas: 5,
          selector: { matchLabels: { app: 'spring-server', 'pod-template-hash': '5d8f7' } },
          template,
        },
        status: { replicas: 5, readyReplicas: 3 },
      },
      {
        DESIRED: 5,
        CURRENT: 5,
        READY: 3,
        AGE: '90d',
        CONTAINERS: 'app,log',
        SELECTOR: 'app=spring-server,pod-template-hash=5d8f7',
      },
    ));
  it('a replica set scaled to zero, empty selector', () =>
    check(
      res('apps', 'replicasets'),
      {
        metadata: { name: 'old', creationTimestamp: ago(3 * 365 * D + 120 * D) },
        spec: { replicas: 0, selector: {} },
      },
      { DESIRED: 0, CURRENT: 0, READY: 0, AGE: '3y120d', CONTAINERS: '', IMAGES: '', SELECTOR: '<none>' },
    ));
});

describe('service rows', () => {
  const services = res('', 'services');
  const svc = (name: string, spec: object, status: object = {}): KubeObject => ({
    metadata: { name, creationTimestamp: ago(10 * M) },
    spec,
    status,
  });
  const cases: { name: string; obj: KubeObject; want: Record<string, TableCell> }[] = [
    {
      name: 'a NodePort service',
      obj: svc('spring-service', {
        type: 'NodePort',
        clusterIP: '10.96.0.10',
        clusterIPs: ['10.96.0.10'],
        selector: { app: 'spring-server' },
        ports: [{ port: 80, targetPort: 8080, nodePort: 30080, protocol: 'TCP' }],
      }),
      want: {
        NAME: 'spring-service',
        TYPE: 'NodePort',
        'CLUSTER-IP': '10.96.0.10',
        'EXTERNAL-IP': '<none>',
        'PORT(S)': '80:30080/TCP',
        AGE: '10m',
        SELECTOR: 'app=spring-server',
      },
    },
    {
      name: 'a ClusterIP service with two ports and external IPs',
      obj: svc('api', {
        type: 'ClusterIP',
        clusterIPs: ['10.96.3.4'],
        externalIPs: ['192.0.2.1', '192.0.2.2'],
        ports: [
          { port: 80, protocol: 'TCP' },
          { port: 53, protocol: 'UDP' },
        ],
      }),
      want: {
        'CLUSTER-IP': '10.96.3.4',
        'EXTERNAL-IP': '192.0.2.1,192.0.2.2',
        'PORT(S)': '80/TCP,53/UDP',
        SELECTOR: '<none>',
      },
    },
    {
      name: 'a headless service without ports',
      obj: svc('headless', { type: 'ClusterIP', clusterIP: 'None', clusterIPs: ['None'] }),
      want: { 'CLUSTER-IP': 'None', 'PORT(S)': '<none>' },
    },
    {
      name: 'a LoadBalancer waiting for an address',
      obj: svc('lb', {
        type: 'LoadBalancer',
        clusterIPs: ['10.96.0.20'],
        ports: [{ port: 443, nodePort: 31443 }],
      }),
      want: { 'EXTERNAL-IP': '<pending>', 'PORT(S)': '443:31443/TCP' },
    },
    {
      name: 'a LoadBalancer with ingress (never clipped: the server renders wide)',
      obj: svc(
        'lb2',
        { type: 'LoadBalancer', clusterIPs: ['10.96.0.21'], externalIPs: ['192.0.2.9'] },
        {
          loadBalancer: {
            ingress: [{ hostname: 'a-very-long-hostname.example.com' }, { ip: '198.51.100.7' }],
          },
        },
      ),
      want: { 'EXTERNAL-IP': '198.51.100.7,a-very-long-hostname.example.com,192.0.2.9' },
    },
    {
      name: 'an ExternalName service',
      obj: svc('db', { type: 'ExternalName', externalName: 'db.example.com' }),
      want: { TYPE: 'ExternalName', 'CLUSTER-IP': '<none>', 'EXTERNAL-IP': 'db.example.com' },
    },
  ];
  for (const c of cases) it(c.name, () => check(services, c.obj, c.want));
});

describe('node rows', () => {
  const nodes = res('', 'nodes');
  const status = (ready: string | undefined) => ({
    conditions:
      ready === undefined
        ? []
        : [
            { type: 'MemoryPressure', status: 'False' },
            { type: 'Ready', status: ready },
          ],
    addresses: [
      { type: 'InternalIP', address: '127.0.0.2' },
      { type: 'Hostname', address: 'node-1' },
    ],
    nodeInfo: {
      kubeletVersion: 'v1.32.0-k8ts',
      osImage: 'Debian GNU/Linux 12 (bookworm)',
      kernelVersion: '6.1.0-18-amd64',
      containerRuntimeVersion: 'docker://20.10.24',
    },
  });
  it('a Ready control-plane node', () =>
    check(
      nodes,
      {
        metadata: {
          name: 'node-1',
          creationTimestamp: ago(8 * D),
          labels: { 'node-role.kubernetes.io/control-plane': '', 'kubernetes.io/hostname': 'node-1' },
        },
        status: status('True'),
      },
      {
        NAME: 'node-1',
        STATUS: 'Ready',
        ROLES: 'control-plane',
        AGE: '8d',
        VERSION: 'v1.32.0-k8ts',
        'INTERNAL-IP': '127.0.0.2',
        'EXTERNAL-IP': '<none>',
        'OS-IMAGE': 'Debian GNU/Linux 12 (bookworm)',
        'KERNEL-VERSION': '6.1.0-18-amd64',
        'CONTAINER-RUNTIME': 'docker://20.10.24',
      },
    ));
  it('a cordoned NotReady node with several roles', () =>
    check(
      nodes,
      {
        metadata: {
          name: 'node-2',
          creationTimestamp: ago(H),
          labels: {
            'node-role.kubernetes.io/worker': 'true',
            'kubernetes.io/role': 'edge',
            'node-role.kubernetes.io/': '',
          },
        },
        spec: { unschedulable: true },
        status: status('False'),
      },
      { STATUS: 'NotReady,SchedulingDisabled', ROLES: 'edge,worker', AGE: '60m' },
    ));
  it('a node whose Ready condition is Unknown reads NotReady', () =>
    check(
      nodes,
      { metadata: { name: 'n' }, status: status('Unknown') },
      { STATUS: 'NotReady', ROLES: '<none>' },
    ));
  it('a node without a Ready condition reads Unknown', () =>
    check(
      nodes,
      { metadata: { name: 'n' } },
      {
        STATUS: 'Unknown',
        VERSION: '',
        'INTERNAL-IP': '<none>',
        'OS-IMAGE': '<unknown>',
        'CONTAINER-RUNTIME': '<unknown>',
      },
    ));
});

describe('other core and discovery rows', () => {
  it('namespaces', () => {
    check(
      res('', 'namespaces'),
      { metadata: { name: 'default', creationTimestamp: ago(D) }, status: { phase: 'Active' } },
      {
        NAME: 'default',
        STATUS: 'Active',
        AGE: '24h',
      },
    );
    check(
      res('', 'namespaces'),
      { metadata: { name: 'old' }, status: { phase: 'Terminating' } },
      { STATUS: 'Terminating' },
    );
  });
  it('endpoints: the first three, then + N more...', () => {
    const ips = ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5'];
    check(
      res('', 'endpoints'),
      {
        metadata: { name: 'spring-service', creationTimestamp: ago(5 * M) },
        subsets: [{ addresses: ips.map((ip) => ({ ip })), ports: [{ port: 8080, protocol: 'TCP' }] }],
      },
      { ENDPOINTS: '10.0.0.1:8080,10.0.0.2:8080,10.0.0.3:8080 + 2 more...', AGE: '5m' },
    );
  });
  it('endpoints: few, headless, IPv6, none', () => {
    const ep = res('', 'endpoints');
    check(
      ep,
      { metadata: { name: 'a' }, subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }] },
      {
        ENDPOINTS: '10.0.0.1:80',
      },
    );
    check(
      ep,
      { metadata: { name: 'b' }, subsets: [{ addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }] }] },
      {
        ENDPOINTS: '10.0.0.1,10.0.0.2',
      },
    );
    check(
      ep,
      { metadata: { name: 'c' }, subsets: [{ addresses: [{ ip: 'fd00::1' }], ports: [{ port: 80 }] }] },
      {
        ENDPOINTS: '[fd00::1]:80',
      },
    );
    check(ep, { metadata: { name: 'd' } }, { ENDPOINTS: '<none>' });
    check(
      ep,
      {
        metadata: { name: 'e' },
        subsets: [{ notReadyAddresses: [{ ip: '10.0.0.9' }], ports: [{ port: 80 }] }],
      },
      {
        ENDPOINTS: '',
      },
    );
  });
  it('endpointslices', () => {
    const es = res('discovery.k8s.io', 'endpointslices');
    check(
      es,
      {
        metadata: { name: 'spring-service-x7k2p', creationTimestamp: ago(5 * M) },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        endpoints: ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4'].map((a) => ({ addresses: [a] })),
      },
      { ADDRESSTYPE: 'IPv4', PORTS: '8080', ENDPOINTS: '10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...', AGE: '5m' },
    );
    check(
      es,
      { metadata: { name: 'empty' }, addressType: 'IPv4', ports: [{ name: 'http' }, {}] },
      {
        PORTS: 'http,*',
        ENDPOINTS: '<unset>',
      },
    );
  });
  it('configmaps, secrets, serviceaccounts, leases', () => {
    check(
      res('', 'configmaps'),
      { metadata: { name: 'cfg' }, data: { a: '1', b: '2' }, binaryData: { c: 'AA==' } },
      {
        DATA: 3,
      },
    );
    check(res('', 'configmaps'), { metadata: { name: 'empty' } }, { DATA: 0 });
    check(
      res('', 'secrets'),
      { metadata: { name: 's', creationTimestamp: ago(2 * H) }, type: 'Opaque', data: { u: 'YQ==' } },
      {
        TYPE: 'Opaque',
        DATA: 1,
        AGE: '120m',
      },
    );
    check(res('', 'serviceaccounts'), { metadata: { name: 'default' } }, { SECRETS: 0 });
    check(
      res('', 'serviceaccounts'),
      { metadata: { name: 'builder' }, secrets: [{ name: 'token' }] },
      { SECRETS: 1 },
    );
    check(
      res('coordination.k8s.io', 'leases'),
      {
        metadata: { name: 'node-1', namespace: 'kube-node-lease' },
        spec: { holderIdentity: 'node-1', leaseDurationSeconds: 40 },
      },
      { NAME: 'node-1', HOLDER: 'node-1' },
    );
    check(res('coordination.k8s.io', 'leases'), { metadata: { name: 'free' }, spec: {} }, { HOLDER: '' });
  });
});

describe('event rows', () => {
  it('a core/v1 event', () =>
    check(
      res('', 'events'),
      {
        metadata: { name: 'spring-server-abcde.17a1b2c3' },
        involvedObject: { kind: 'Pod', name: 'spring-server-abcde', fieldPath: 'spec.containers{app}' },
        reason: 'BackOff',
        message: 'Back-off restarting failed container app\n',
        type: 'Warning',
        count: 7,
        firstTimestamp: ago(10 * M),
        lastTimestamp: ago(30 * S),
        source: { component: 'kubelet', host: 'node-1' },
      },
      {
        'LAST SEEN': '30s',
        TYPE: 'Warning',
        REASON: 'BackOff',
        OBJECT: 'pod/spring-server-abcde',
        SUBOBJECT: 'spec.containers{app}',
        SOURCE: 'kubelet, node-1',
        MESSAGE: 'Back-off restarting failed container app',
        'FIRST SEEN': '10m',
        COUNT: 7,
        NAME: 'spring-server-abcde.17a1b2c3',
      },
    ));
  it('a new-style event: eventTime, series, reporting controller', () =>
    check(
      res('', 'events'),
      {
        metadata: { name: 'e2' },
        involvedObject: { kind: 'Node', name: 'node-1' },
        reason: 'NodeReady',
        type: 'Normal',
        eventTime: '2026-11-30T11:55:00.000000Z',
        series: { count: 4, lastObservedTime: '2026-11-30T11:59:00.000000Z' },
        reportingComponent: 'k8ts-nodelifecycle',
      },
      {
        'LAST SEEN': '60s',
        'FIRST SEEN': '5m',
        COUNT: 4,
        SOURCE: 'k8ts-nodelifecycle',
        OBJECT: 'node/node-1',
      },
    ));
  it('an event happening once without count or timestamps', () =>
    check(
      res('', 'events'),
      { metadata: { name: 'e3' }, involvedObject: { kind: 'Namespace' } },
      {
        'LAST SEEN': '<unknown>',
        COUNT: 1,
        OBJECT: 'namespace',
      },
    ));
  it('an events.k8s.io/v1 event prints as its core/v1 twin', () =>
    check(
      findResource('events.k8s.io', 'v1', 'events')!,
      {
        metadata: { name: 'e4' },
        regarding: { kind: 'Deployment', name: 'spring-deployment' },
        note: 'Scaled up replica set spring-deployment-5d8f7 to 5',
        reason: 'ScalingReplicaSet',
        type: 'Normal',
        eventTime: ago(2 * M),
        reportingController: 'deployment-controller',
        reportingInstance: 'k8ts-control',
      },
      {
        'LAST SEEN': '2m',
        OBJECT: 'deployment/spring-deployment',
        MESSAGE: 'Scaled up replica set spring-deployment-5d8f7 to 5',
        SOURCE: 'deployment-controller, k8ts-control',
        COUNT: 1,
      },
    ));
});

describe('columns', () => {
  const names = (group: string, resource: string, wide: boolean) =>
    tableColumns({ group, resource })
      .filter((c) => wide || c.priority === 0)
      .map((c) => c.name.toUpperCase())
      .join(' ');
  const cases: [string, string, string, string][] = [
    ['', 'pods', 'NAME READY STATUS RESTARTS AGE', 'IP NODE NOMINATED NODE READINESS GATES'],
    ['apps', 'deployments', 'NAME READY UP-TO-DATE AVAILABLE AGE', 'CONTAINERS IMAGES SELECTOR'],
    ['apps', 'replicasets', 'NAME DESIRED CURRENT READY AGE', 'CONTAINERS IMAGES SELECTOR'],
    ['', 'services', 'NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE', 'SELECTOR'],
    [
      '',
      'nodes',
      'NAME STATUS ROLES AGE VERSION',
      'INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION CONTAINER-RUNTIME',
    ],
    ['', 'namespaces', 'NAME STATUS AGE', ''],
    ['', 'endpoints', 'NAME ENDPOINTS AGE', ''],
    ['discovery.k8s.io', 'endpointslices', 'NAME ADDRESSTYPE PORTS ENDPOINTS AGE', ''],
    ['', 'configmaps', 'NAME DATA AGE', ''],
    ['', 'secrets', 'NAME TYPE DATA AGE', ''],
    ['', 'serviceaccounts', 'NAME SECRETS AGE', ''],
    ['', 'events', 'LAST SEEN TYPE REASON OBJECT MESSAGE', 'SUBOBJECT SOURCE FIRST SEEN COUNT NAME'],
    ['coordination.k8s.io', 'leases', 'NAME HOLDER AGE', ''],
    ['example.com', 'widgets', 'NAME CREATED AT', ''],
  ];
  for (const [group, resource, normal, wideOnly] of cases) {
    it(`${group || 'core'}/${resource}: ${normal}`, () => {
      assert.equal(names(group, resource, false), normal);
      const wideCols = tableColumns({ group, resource })
        .filter((c) => c.priority === 1)
        .map((c) => c.name.toUpperCase())
        .join(' ');
      assert.equal(wideCols, wideOnly);
    });
  }

  it('gives every served resource a row with one cell per column, even for an empty object', () => {
    for (const r of RESOURCES) {
      const table = toTable(r, [{}, { metadata: { name: 'x' } }], { includeObject: 'None', now: NOW });
      for (const row of table.rows)
        assert.equal(row.cells.length, table.columnDefinitions?.length, r.resource);
      assert.equal(table.columnDefinitions?.filter((c) => c.format === 'name').length, 1, r.resource);
    }
  });

  it('falls back to Kubernetes default table: NAME, CREATED AT as an RFC 3339 time', () => {
    const widgets: ResourceInfo = {
      ...res('', 'configmaps'),
      group: 'example.com',
      resource: 'widgets',
      kind: 'Widget',
    };
    const table = toTable(
      widgets,
      [{ metadata: { name: 'w', creationTimestamp: '2026-01-02T03:04:05Z' } }, {}],
      {
        includeObject: 'None',
        now: NOW,
      },
    );
    assert.equal(table.columnDefinitions?.[1].type, 'date');
    assert.deepEqual(
      table.rows.map((r) => r.cells),
      [
        ['w', '2026-01-02T03:04:05Z'],
        ['', '0001-01-01T00:00:00Z'],
      ],
    );
  });
});

describe('toTable', () => {
  const pods = res('', 'pods');
  const obj: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default', resourceVersion: '17', labels: { app: 'x' }, uid: 'u-1' },
    spec: { containers: [{ name: 'c' }] },
    status: { phase: 'Pending' },
  };

  it('answers a list as a meta.k8s.io/v1 Table with the list metadata and PartialObjectMetadata rows', () => {
    const table = toTable(pods, [obj], {
      includeObject: 'Metadata',
      now: NOW,
      listMeta: { resourceVersion: '42', continue: 'abc', remainingItemCount: 3 },
    });
    assert.equal(table.apiVersion, 'meta.k8s.io/v1');
    assert.equal(table.kind, 'Table');
    assert.deepEqual(table.metadata, { resourceVersion: '42', continue: 'abc', remainingItemCount: 3 });
    assert.equal(table.columnDefinitions?.length, 9);
    assert.deepEqual(table.columnDefinitions?.[0], {
      name: 'Name',
      type: 'string',
      format: 'name',
      description: table.columnDefinitions?.[0].description,
      priority: 0,
    });
    const partial = table.rows[0].object as PartialObjectMetadata;
    assert.deepEqual(partial, {
      apiVersion: 'meta.k8s.io/v1',
      kind: 'PartialObjectMetadata',
      metadata: obj.metadata,
    });
  });

  it('gives a single object its own resourceVersion and leaves empty list fields out', () => {
    assert.deepEqual(toTable(pods, [obj], { includeObject: 'Metadata', now: NOW }).metadata, {
      resourceVersion: '17',
    });
    assert.deepEqual(
      toTable(pods, [], { includeObject: 'Metadata', now: NOW, listMeta: { resourceVersion: '9' } }).metadata,
      {
        resourceVersion: '9',
      },
    );
    assert.deepEqual(toTable(pods, [], { includeObject: 'Metadata', now: NOW }).rows, []);
  });

  it('carries the whole object with includeObject=Object, and nothing with None', () => {
    const bare = { ...obj };
    delete bare.apiVersion;
    delete bare.kind;
    const full = toTable(pods, [bare], { includeObject: 'Object', now: NOW }).rows[0].object as KubeObject;
    assert.equal(full.apiVersion, 'v1');
    assert.equal(full.kind, 'Pod');
    assert.deepEqual(full.spec, obj.spec);
    const deploy = toTable(res('apps', 'deployments'), [{ metadata: { name: 'd' } }], {
      includeObject: 'Object',
      now: NOW,
    });
    assert.equal((deploy.rows[0].object as KubeObject).apiVersion, 'apps/v1');
    assert.equal(toTable(pods, [obj], { includeObject: 'None', now: NOW }).rows[0].object, null);
  });

  it('answers meta.k8s.io/v1beta1 when asked, rows included', () => {
    const table = toTable(pods, [obj], { includeObject: 'Metadata', now: NOW, version: 'v1beta1' });
    assert.equal(table.apiVersion, 'meta.k8s.io/v1beta1');
    assert.equal((table.rows[0].object as PartialObjectMetadata).apiVersion, 'meta.k8s.io/v1beta1');
  });

  it('serializes to JSON with every column field present', () => {
    const json = JSON.parse(JSON.stringify(toTable(pods, [obj], { includeObject: 'None', now: NOW })));
    for (const c of json.columnDefinitions)
      assert.deepEqual(Object.keys(c).sort(), ['description', 'format', 'name', 'priority', 'type']);
    assert.equal(json.rows[0].object, null);
  });
});

describe('includeObject', () => {
  const cases: [string | undefined, string][] = [
    [undefined, 'Metadata'],
    ['', 'Metadata'],
    ['Metadata', 'Metadata'],
    ['Object', 'Object'],
    ['None', 'None'],
  ];
  for (const [value, want] of cases)
    it(`${JSON.stringify(value)} → ${want}`, () => assert.equal(parseIncludeObject(value), want));
  it('refuses anything else with 400 BadRequest', () => {
    assert.throws(
      () => parseIncludeObject('object'),
      (e: unknown) =>
        e instanceof ApiError && e.code === 400 && e.message === 'unrecognized includeObject value: "object"',
    );
  });
});

describe('Accept negotiation', () => {
  const KUBECTL =
    'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
  const cases: [string | undefined, string | undefined][] = [
    [KUBECTL, 'v1'],
    ['application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json', 'v1beta1'],
    ['application/json;as=Table;v=v1;g=meta.k8s.io', 'v1'],
    ['application/json; g=meta.k8s.io; v=v1beta1; as=Table', 'v1beta1'],
    [
      'application/json;as=Table;v=v1beta1;g=meta.k8s.io, application/json;as=Table;v=v1;g=meta.k8s.io',
      'v1beta1',
    ],
    ['application/json;q=0.5,application/json;as=Table;v=v1;g=meta.k8s.io', 'v1'],
    ['application/json;as=Table;v=v1;g=meta.k8s.io;q=0,application/json', undefined],
    ['application/json,application/json;as=Table;v=v1;g=meta.k8s.io', undefined],
    ['application/json;as=Table;v=v2;g=meta.k8s.io,application/json', undefined],
    [
      'application/json;as=Table;v=v1;g=example.com,application/json;as=Table;v=v1beta1;g=meta.k8s.io',
      'v1beta1',
    ],
    ['text/html,application/json;as=Table;v=v1;g=meta.k8s.io', 'v1'],
    [
      'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json',
      undefined,
    ],
    ['application/json, */*', undefined],
    ['*/*', undefined],
    ['application/vnd.kubernetes.protobuf,application/json', undefined],
    ['', undefined],
    [undefined, undefined],
  ];
  for (const [accept, want] of cases) {
    it(`${accept === undefined ? '(no header)' : JSON.stringify(accept)} → ${want ?? 'no table'}`, () => {
      assert.equal(negotiateTable(accept), want);
      assert.equal(wantsTable(accept), want !== undefined);
    });
  }
});

describe('watch', () => {
  it('sends column definitions with the first event only, each event one row with its resourceVersion', () => {
    let t = NOW.getTime();
    const transform = tableWatchTransformer(res('', 'pods'), {
      includeObject: 'Metadata',
      now: () => new Date(t),
    });
    const created = ago(0);
    const first = transform({ metadata: { name: 'a', resourceVersion: '5', creationTimestamp: created } });
    t += 3 * M;
    const second = transform({ metadata: { name: 'a', resourceVersion: '6', creationTimestamp: created } });
    assert.equal(first.columnDefinitions?.length, 9);
    assert.equal(second.columnDefinitions, null);
    assert.deepEqual(
      [first, second].map((x) => [x.metadata.resourceVersion, x.rows.length, x.rows[0].cells[4]]),
      [
        ['5', 1, '0s'],
        ['6', 1, '3m'],
      ],
    );
    assert.equal((second.rows[0].object as PartialObjectMetadata).kind, 'PartialObjectMetadata');
  });
});
