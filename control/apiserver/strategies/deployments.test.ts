import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { KubeObject } from '../../../api/object.js';
import { MemoryStore } from '../../storage/memory.js';
import { Registry } from '../registry.js';
import { findResource } from '../resources.js';
import { strategyFor } from './index.js';
import { assertErrors, create, created, modified, update, updateStatus, type Json } from './testing.js';

/** The shared fixture, read from `../shared/fixtures/` beside the repository (fixtures/README.md). */
const FIXTURE = fileURLToPath(new URL('../../../../shared/fixtures/spring-deployment.yaml', import.meta.url));
const fixture = (): KubeObject => parse(readFileSync(FIXTURE, 'utf8')) as KubeObject;

/**
 * What `kubectl get deploy spring-deployment -o yaml` shows on a real cluster right after
 * `kubectl apply`, without what the registry adds (uid, resourceVersion, generation,
 * creationTimestamp), the deployment controller's revision annotation and status, and the
 * `creationTimestamp: null` that Go's serializer writes into template metadata.
 */
const EXPECTED = parse(`
apiVersion: apps/v1
kind: Deployment
metadata:
  name: spring-deployment
  namespace: default
spec:
  progressDeadlineSeconds: 600
  replicas: 5
  revisionHistoryLimit: 10
  selector:
    matchLabels:
      app: backend-app
  strategy:
    rollingUpdate:
      maxSurge: 25%
      maxUnavailable: 25%
    type: RollingUpdate
  template:
    metadata:
      labels:
        app: backend-app
    spec:
      containers:
      - image: spring-server:1.0
        imagePullPolicy: IfNotPresent
        name: spring-container
        ports:
        - containerPort: 8080
          protocol: TCP
        resources: {}
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
      dnsPolicy: ClusterFirst
      restartPolicy: Always
      schedulerName: default-scheduler
      securityContext: {}
      terminationGracePeriodSeconds: 30
status: {}
`) as KubeObject;

const D = 'apps/v1/deployments';

describe('deployments: defaults', () => {
  it('defaults the spring-deployment fixture to what kubectl shows', () => {
    const { obj, errs } = create(D, fixture());
    assert.deepEqual(errs, []);
    assert.deepEqual(obj, EXPECTED);
  });

  it('is idempotent', () => {
    const obj = created(D, fixture());
    const again = structuredClone(obj);
    strategyFor(findResource('apps', 'v1', 'deployments')!).defaults(again);
    assert.deepEqual(again, obj);
  });

  it('keeps what the user set (replicas 0, Recreate, explicit surge)', () => {
    const obj = created(
      D,
      modified(fixture(), (d) => {
        const spec = d.spec as Record<string, unknown>;
        spec.replicas = 0;
        spec.strategy = { type: 'Recreate' };
        spec.revisionHistoryLimit = 0;
      }),
    );
    const spec = obj.spec as Record<string, unknown>;
    assert.equal(spec.replicas, 0);
    assert.deepEqual(spec.strategy, { type: 'Recreate' });
    assert.equal(spec.revisionHistoryLimit, 0);
  });

  it('defaults replicas to 1 and pull policy Always for :latest and untagged images', () => {
    const obj = created(
      D,
      modified(fixture(), (d) => {
        const spec = d.spec as {
          replicas?: number;
          template: { spec: { containers: Record<string, unknown>[] } };
        };
        delete spec.replicas;
        spec.template.spec.containers = [
          { name: 'a', image: 'nginx' },
          { name: 'b', image: 'nginx:latest' },
          { name: 'c', image: 'registry.local:5000/nginx' },
          {
            name: 'd',
            image: 'nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
          },
          { name: 'e', image: 'nginx:1.25' },
        ];
      }),
    );
    const spec = obj.spec as {
      replicas: number;
      template: { spec: { containers: { imagePullPolicy: string }[] } };
    };
    assert.equal(spec.replicas, 1);
    assert.deepEqual(
      spec.template.spec.containers.map((c) => c.imagePullPolicy),
      ['Always', 'Always', 'Always', 'IfNotPresent', 'IfNotPresent'],
    );
  });
});

type Patch = (d: Json) => void;

/** Each bad Deployment: how it differs from the fixture, and the errors it must give. */
const BAD: [string, Patch, [string, string][]][] = [
  ['negative replicas', (d) => (d.spec.replicas = -1), [['spec.replicas', 'Invalid']]],
  [
    'missing selector',
    (d) => delete d.spec.selector,
    [
      ['spec.selector', 'Required'],
      ['spec.template.metadata.labels', 'Invalid'],
    ],
  ],
  ['empty selector', (d) => (d.spec.selector = {}), [['spec.selector', 'Invalid']]],
  [
    'selector not matching template labels',
    (d) => (d.spec.selector.matchLabels.app = 'other'),
    [['spec.template.metadata.labels', 'Invalid']],
  ],
  [
    'bad selector operator',
    (d) => (d.spec.selector = { matchExpressions: [{ key: 'app', operator: 'Near', values: ['x'] }] }),
    [
      ['spec.selector.matchExpressions[0].operator', 'Invalid'],
      ['spec.selector', 'Invalid'],
    ],
  ],
  ['bad label key', (d) => (d.metadata.labels = { 'bad key': 'x' }), [['metadata.labels', 'Invalid']]],
  [
    'bad label value',
    (d) => (d.metadata.labels = { app: 'no spaces allowed' }),
    [['metadata.labels', 'Invalid']],
  ],
  [
    'bad template label value',
    (d) => (d.spec.template.metadata.labels.tier = '-x-'),
    [['spec.template.metadata.labels', 'Invalid']],
  ],
  [
    'bad annotation key',
    (d) => (d.metadata.annotations = { 'a/b/c': 'x' }),
    [['metadata.annotations', 'Invalid']],
  ],
  [
    'two controller owner references',
    (d) =>
      (d.metadata.ownerReferences = [
        { apiVersion: 'v1', kind: 'A', name: 'a', uid: '1', controller: true },
        { apiVersion: 'v1', kind: 'B', name: 'b', uid: '2', controller: true },
      ]),
    [['metadata.ownerReferences', 'Invalid']],
  ],
  [
    'unqualified finalizer',
    (d) => (d.metadata.finalizers = ['cleanup']),
    [['metadata.finalizers', 'Invalid']],
  ],
  [
    'no containers',
    (d) => (d.spec.template.spec.containers = []),
    [['spec.template.spec.containers', 'Required']],
  ],
  [
    'missing image',
    (d) => delete d.spec.template.spec.containers[0].image,
    [['spec.template.spec.containers[0].image', 'Required']],
  ],
  [
    'invalid container name',
    (d) => (d.spec.template.spec.containers[0].name = 'Spring_Container'),
    [['spec.template.spec.containers[0].name', 'Invalid']],
  ],
  [
    'duplicate container names',
    (d) => d.spec.template.spec.containers.push({ name: 'spring-container', image: 'x:1' }),
    [['spec.template.spec.containers[1].name', 'Duplicate']],
  ],
  [
    'container port 0',
    (d) => (d.spec.template.spec.containers[0].ports[0].containerPort = 0),
    [['spec.template.spec.containers[0].ports[0].containerPort', 'Required']],
  ],
  [
    'container port 70000',
    (d) => (d.spec.template.spec.containers[0].ports[0].containerPort = 70000),
    [['spec.template.spec.containers[0].ports[0].containerPort', 'Invalid']],
  ],
  [
    'bad port name',
    (d) => (d.spec.template.spec.containers[0].ports[0].name = 'HTTP_port'),
    [['spec.template.spec.containers[0].ports[0].name', 'Invalid']],
  ],
  [
    'duplicate port names',
    (d) =>
      (d.spec.template.spec.containers[0].ports = [
        { containerPort: 80, name: 'http' },
        { containerPort: 81, name: 'http' },
      ]),
    [['spec.template.spec.containers[0].ports[1].name', 'Duplicate']],
  ],
  [
    'bad protocol',
    (d) => (d.spec.template.spec.containers[0].ports[0].protocol = 'ICMP'),
    [['spec.template.spec.containers[0].ports[0].protocol', 'NotSupported']],
  ],
  [
    'bad hostPort',
    (d) => (d.spec.template.spec.containers[0].ports[0].hostPort = 65536),
    [['spec.template.spec.containers[0].ports[0].hostPort', 'Invalid']],
  ],
  [
    'env without name, env with both value and valueFrom',
    (d) =>
      (d.spec.template.spec.containers[0].env = [
        { value: 'x' },
        { name: 'A=B', value: 'x', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      ]),
    [
      ['spec.template.spec.containers[0].env[0].name', 'Required'],
      ['spec.template.spec.containers[0].env[1].name', 'Invalid'],
      ['spec.template.spec.containers[0].env[1].valueFrom', 'Invalid'],
    ],
  ],
  [
    'env fieldRef to an unknown field',
    (d) =>
      (d.spec.template.spec.containers[0].env = [
        { name: 'X', valueFrom: { fieldRef: { fieldPath: 'spec.foo' } } },
      ]),
    [['spec.template.spec.containers[0].env[0].valueFrom.fieldRef.fieldPath', 'NotSupported']],
  ],
  [
    'request above limit',
    (d) => (d.spec.template.spec.containers[0].resources = { requests: { cpu: '2' }, limits: { cpu: '1' } }),
    [['spec.template.spec.containers[0].resources.requests', 'Invalid']],
  ],
  [
    'negative and malformed quantities',
    (d) => (d.spec.template.spec.containers[0].resources = { limits: { cpu: '-1', memory: '1 Gi' } }),
    [
      ['spec.template.spec.containers[0].resources.limits[cpu]', 'Invalid'],
      ['spec.template.spec.containers[0].resources.limits[memory]', 'Invalid'],
    ],
  ],
  [
    'unknown resource name',
    (d) => (d.spec.template.spec.containers[0].resources = { limits: { gpu: '1' } }),
    // validateContainerResourceName: not a standard resource, nor one for containers.
    [
      ['spec.template.spec.containers[0].resources.limits[gpu]', 'Invalid'],
      ['spec.template.spec.containers[0].resources.limits[gpu]', 'Invalid'],
    ],
  ],
  [
    'restartPolicy Never in a template',
    (d) => (d.spec.template.spec.restartPolicy = 'Never'),
    [['spec.template.spec.restartPolicy', 'NotSupported']],
  ],
  [
    'activeDeadlineSeconds in a template',
    (d) => (d.spec.template.spec.activeDeadlineSeconds = 10),
    [['spec.template.spec.activeDeadlineSeconds', 'Forbidden']],
  ],
  [
    'bad imagePullPolicy',
    (d) => (d.spec.template.spec.containers[0].imagePullPolicy = 'Sometimes'),
    [['spec.template.spec.containers[0].imagePullPolicy', 'NotSupported']],
  ],
  [
    'probe without handler, liveness successThreshold 2',
    (d) => (d.spec.template.spec.containers[0].livenessProbe = { successThreshold: 2 }),
    [
      ['spec.template.spec.containers[0].livenessProbe', 'Required'],
      ['spec.template.spec.containers[0].livenessProbe.successThreshold', 'Invalid'],
    ],
  ],
  [
    'probe with two handlers and a bad port',
    (d) =>
      (d.spec.template.spec.containers[0].readinessProbe = {
        httpGet: { port: 0 },
        tcpSocket: { port: 'http' },
      }),
    [
      ['spec.template.spec.containers[0].readinessProbe.httpGet.port', 'Invalid'],
      ['spec.template.spec.containers[0].readinessProbe.tcpSocket', 'Forbidden'],
    ],
  ],
  [
    'volume mount of an unknown volume, duplicate volume',
    (d) => {
      d.spec.template.spec.volumes = [
        { name: 'data', emptyDir: {} },
        { name: 'data', emptyDir: {} },
      ];
      d.spec.template.spec.containers[0].volumeMounts = [{ name: 'cache', mountPath: '/cache' }];
    },
    [
      ['spec.template.spec.volumes[1].name', 'Duplicate'],
      ['spec.template.spec.containers[0].volumeMounts[0].name', 'Invalid'],
    ],
  ],
  [
    'volume with two sources',
    (d) => (d.spec.template.spec.volumes = [{ name: 'v', emptyDir: {}, hostPath: { path: '/x' } }]),
    [['spec.template.spec.volumes[0].emptyDir', 'Forbidden']],
  ],
  [
    'toleration with a bad operator',
    (d) => (d.spec.template.spec.tolerations = [{ key: 'k', operator: 'Maybe', effect: 'NoSchedule' }]),
    [['spec.template.spec.tolerations[0].operator', 'NotSupported']],
  ],
  [
    'maxSurge and maxUnavailable both 0',
    (d) =>
      (d.spec.strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: '0%' } }),
    [['spec.strategy.rollingUpdate.maxUnavailable', 'Invalid']],
  ],
  [
    'bad percentages',
    (d) => (d.spec.strategy = { rollingUpdate: { maxSurge: '5 %', maxUnavailable: '150%' } }),
    [
      ['spec.strategy.rollingUpdate.maxSurge', 'Invalid'],
      ['spec.strategy.rollingUpdate.maxUnavailable', 'Invalid'],
    ],
  ],
  [
    'negative maxSurge',
    (d) => (d.spec.strategy = { rollingUpdate: { maxSurge: -1 } }),
    [['spec.strategy.rollingUpdate.maxSurge', 'Invalid']],
  ],
  [
    'Recreate with rollingUpdate',
    (d) => (d.spec.strategy = { type: 'Recreate', rollingUpdate: { maxSurge: 1 } }),
    [['spec.strategy.rollingUpdate', 'Forbidden']],
  ],
  [
    'unknown strategy type',
    (d) => (d.spec.strategy = { type: 'BlueGreen' }),
    [['spec.strategy.type', 'NotSupported']],
  ],
  [
    'progress deadline not above minReadySeconds',
    (d) => {
      d.spec.minReadySeconds = 600;
      d.spec.progressDeadlineSeconds = 600;
    },
    [['spec.progressDeadlineSeconds', 'Invalid']],
  ],
  [
    'negative revisionHistoryLimit',
    (d) => (d.spec.revisionHistoryLimit = -1),
    [['spec.revisionHistoryLimit', 'Invalid']],
  ],
];

describe('deployments: validation', () => {
  for (const [name, patch, expected] of BAD) {
    it(`rejects: ${name}`, () => {
      const { errs } = create(D, modified(fixture(), patch));
      assert.ok(errs.length > 0, 'expected errors');
      assertErrors(errs, expected);
    });
  }

  it('reports both a missing selector and the unmatched template, as Kubernetes', () => {
    const { errs } = create(
      D,
      modified(fixture(), (d) => delete d.spec.selector),
    );
    assertErrors(errs, [
      ['spec.selector', 'Required'],
      ['spec.template.metadata.labels', 'Invalid'],
    ]);
  });

  it("uses Kubernetes' messages", () => {
    const { errs } = create(
      D,
      modified(fixture(), (d) => (d.spec.selector.matchLabels.app = 'other')),
    );
    assert.equal(errs[0]!.message, '`selector` does not match template `labels`');
    const zero = create(
      D,
      modified(fixture(), (d) => (d.spec.strategy = { rollingUpdate: { maxSurge: 0, maxUnavailable: 0 } })),
    );
    assert.equal(zero.errs[0]!.message, 'may not be 0 when `maxSurge` is 0');
  });
});

describe('deployments: update and status', () => {
  it('forbids changing the selector (apps/v1)', () => {
    const old = created(D, fixture());
    const next = modified(old, (d) => {
      d.spec.selector.matchLabels.app = 'new';
      d.spec.template.metadata.labels.app = 'new';
    });
    const { errs } = update(D, old, next);
    assertErrors(errs, [['spec.selector', 'Invalid']]);
    assert.equal(errs.find((e) => e.field === 'spec.selector')!.message, 'field is immutable');
  });

  it('keeps status on update and spec and labels on a status write', () => {
    const old = created(D, fixture());
    old.status = { replicas: 5, readyReplicas: 5, availableReplicas: 5, updatedReplicas: 5 };
    const next = modified(old, (d) => {
      d.spec.replicas = 3;
      d.status = { replicas: 99 };
    });
    assert.deepEqual(update(D, old, next).obj.status, old.status);
    const statusWrite = modified(old, (d) => {
      d.spec.replicas = 1;
      d.metadata.labels = { sneaky: 'yes' };
      d.status = { replicas: 3, readyReplicas: 3, availableReplicas: 2, observedGeneration: 2 };
    });
    const { obj, errs } = updateStatus(D, old, statusWrite);
    assert.deepEqual(errs, []);
    assert.equal((obj.spec as { replicas: number }).replicas, 5);
    assert.equal(obj.metadata?.labels, undefined);
    assert.deepEqual(obj.status, {
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 2,
      observedGeneration: 2,
    });
  });

  it('rejects inconsistent status counters', () => {
    const old = created(D, fixture());
    const { errs } = updateStatus(
      D,
      old,
      modified(
        old,
        (d) => (d.status = { replicas: 1, readyReplicas: 2, availableReplicas: 3, unavailableReplicas: -1 }),
      ),
    );
    // availableReplicas: greater than replicas, and greater than readyReplicas.
    assertErrors(errs, [
      ['status.readyReplicas', 'Invalid'],
      ['status.availableReplicas', 'Invalid'],
      ['status.availableReplicas', 'Invalid'],
      ['status.unavailableReplicas', 'Invalid'],
    ]);
  });

  it('through the registry: generation 1 on create, bumped by spec and annotation changes only', async () => {
    const resource = findResource('apps', 'v1', 'deployments')!;
    const registry = new Registry({ store: new MemoryStore(), resource, strategy: strategyFor(resource) });
    const stored = await registry.create('default', fixture());
    assert.equal(stored.metadata?.generation, 1);
    assert.deepEqual(stored.spec, EXPECTED.spec);
    assert.deepEqual(stored.status, {});
    const labelled = await registry.update(
      'default',
      'spring-deployment',
      modified(stored, (d) => (d.metadata!.labels = { team: 'a' })),
    );
    assert.equal(labelled.metadata?.generation, 1);
    const scaled = await registry.update(
      'default',
      'spring-deployment',
      modified(labelled, (d) => ((d.spec as { replicas: number }).replicas = 2)),
    );
    assert.equal(scaled.metadata?.generation, 2);
    // Annotations are copied to the ReplicaSets, so upstream's PrepareForUpdate bumps the
    // generation for them too (an empty map and none are the same).
    const annotated = await registry.update(
      'default',
      'spring-deployment',
      modified(scaled, (d) => (d.metadata!.annotations = { note: 'x' })),
    );
    assert.equal(annotated.metadata?.generation, 3);
    const again = await registry.update(
      'default',
      'spring-deployment',
      modified(annotated, () => {}),
    );
    assert.equal(again.metadata?.generation, 3);
    const emptied = await registry.update(
      'default',
      'spring-deployment',
      modified(again, (d) => (d.metadata!.annotations = { note: '' })),
    );
    assert.equal(emptied.metadata?.generation, 4);
    const cleared = await registry.update(
      'default',
      'spring-deployment',
      modified(emptied, (d) => (d.metadata!.annotations = {})),
    );
    assert.equal(cleared.metadata?.generation, 5);
    const none = await registry.update(
      'default',
      'spring-deployment',
      modified(cleared, (d) => delete d.metadata!.annotations),
    );
    assert.equal(none.metadata?.generation, 5);
  });
});
