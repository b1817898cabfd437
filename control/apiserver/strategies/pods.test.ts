/**
 * The Pod strategy's defaults, validation, update, status and field-selector cases. Why one
 * file of about 620 lines: it is one table-driven suite of one strategy (strategies/pods.ts
 * with podspec/), each describe one phase of the strategy, as upstream keeps validation_test.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import type { KubeObject } from '../../../api/object.js';
import {
  assertErrors,
  create,
  created,
  modified,
  strategy,
  update,
  updateStatus,
  type Json,
} from './testing.js';
import { podStrategyWith } from './pods.js';

const P = 'v1/pods';

const nginx = (): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
  spec: { containers: [{ name: 'nginx', image: 'nginx:1.25', ports: [{ containerPort: 80 }] }] },
});

/**
 * `kubectl get pod web -o yaml` right after creation, without the registry's metadata and
 * the ServiceAccount admission's projected token volume (not added by k8ts).
 */
const EXPECTED = parse(`
apiVersion: v1
kind: Pod
metadata:
  labels:
    app: web
  name: web
  namespace: default
spec:
  containers:
  - image: nginx:1.25
    imagePullPolicy: IfNotPresent
    name: nginx
    ports:
    - containerPort: 80
      protocol: TCP
    resources: {}
    terminationMessagePath: /dev/termination-log
    terminationMessagePolicy: File
  dnsPolicy: ClusterFirst
  enableServiceLinks: true
  preemptionPolicy: PreemptLowerPriority
  priority: 0
  restartPolicy: Always
  schedulerName: default-scheduler
  securityContext: {}
  serviceAccount: default
  serviceAccountName: default
  terminationGracePeriodSeconds: 30
  tolerations:
  - effect: NoExecute
    key: node.kubernetes.io/not-ready
    operator: Exists
    tolerationSeconds: 300
  - effect: NoExecute
    key: node.kubernetes.io/unreachable
    operator: Exists
    tolerationSeconds: 300
status:
  phase: Pending
  qosClass: BestEffort
`) as KubeObject;

describe('pods: create', () => {
  it('defaults a pod as a real cluster shows it', () => {
    const { obj, errs } = create(P, nginx());
    assert.deepEqual(errs, []);
    assert.deepEqual(obj, EXPECTED);
  });

  it('defaults probes, handlers, volumes, env fieldRefs and quantities', () => {
    const obj = created(
      P,
      modified(nginx(), (p) => {
        const c = p.spec.containers[0];
        c.livenessProbe = { httpGet: { port: 80 } };
        c.readinessProbe = { grpc: { port: 9000 }, periodSeconds: 5 };
        c.lifecycle = { preStop: { httpGet: { port: 'http' } } };
        c.env = [{ name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }];
        c.resources = { limits: { cpu: 0.5, memory: '1.5Gi' }, requests: { cpu: '0.0001' } };
        c.volumeMounts = [{ name: 'cfg', mountPath: '/etc/cfg' }];
        p.spec.volumes = [
          { name: 'cfg', configMap: { name: 'cfg' } },
          { name: 'tmp' },
          { name: 'sec', secret: { secretName: 's' } },
          { name: 'host', hostPath: { path: '/var' } },
        ];
      }),
    ) as Json;
    const c = obj.spec.containers[0];
    assert.deepEqual(c.livenessProbe, {
      httpGet: { port: 80, path: '/', scheme: 'HTTP' },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
    assert.deepEqual(c.readinessProbe, {
      grpc: { port: 9000, service: '' },
      timeoutSeconds: 1,
      periodSeconds: 5,
      successThreshold: 1,
      failureThreshold: 3,
    });
    assert.deepEqual(c.lifecycle.preStop.httpGet, { port: 'http', path: '/', scheme: 'HTTP' });
    assert.equal(c.env[0].valueFrom.fieldRef.apiVersion, 'v1');
    // Requests default to limits for a Pod; quantities are stored canonically, rounded up to milli.
    assert.deepEqual(c.resources, {
      limits: { cpu: '500m', memory: '1536Mi' },
      requests: { cpu: '1m', memory: '1536Mi' },
    });
    assert.deepEqual(obj.spec.volumes, [
      { name: 'cfg', configMap: { name: 'cfg', defaultMode: 420 } },
      { name: 'tmp', emptyDir: {} },
      { name: 'sec', secret: { secretName: 's', defaultMode: 420 } },
      { name: 'host', hostPath: { path: '/var', type: '' } },
    ]);
  });

  it('defaults hostPorts to containerPorts with hostNetwork', () => {
    const obj = created(
      P,
      modified(nginx(), (p) => (p.spec.hostNetwork = true)),
    ) as Json;
    assert.equal(obj.spec.containers[0].ports[0].hostPort, 80);
  });

  it('keeps existing tolerations, service account and priority class', () => {
    const obj = created(
      P,
      modified(nginx(), (p) => {
        p.spec.tolerations = [{ operator: 'Exists' }];
        p.spec.serviceAccountName = 'builder';
        p.spec.priorityClassName = 'system-node-critical';
      }),
    ) as Json;
    assert.deepEqual(obj.spec.tolerations, [{ operator: 'Exists' }]);
    assert.equal(obj.spec.serviceAccount, 'builder');
    assert.equal(obj.spec.priority, 2000001000);
  });

  const TOLERATION_CASES: [string, Json[] | undefined, Json[]][] = [
    [
      'no tolerations: both added with the configured seconds',
      undefined,
      [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 7,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 9,
        },
      ],
    ],
    [
      'an unreachable toleration of its own: only not-ready added',
      [
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 2,
        },
      ],
      [
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 2,
        },
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 7,
        },
      ],
    ],
    [
      'a NoSchedule toleration does not count',
      [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoSchedule' }],
      [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoSchedule' },
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 7,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 9,
        },
      ],
    ],
  ];
  for (const [name, given, want] of TOLERATION_CASES) {
    it(`DefaultTolerationSeconds with configured seconds: ${name}`, () => {
      const s = podStrategyWith({
        defaultNotReadyTolerationSeconds: 7,
        defaultUnreachableTolerationSeconds: 9,
      });
      const obj = modified(nginx(), (p) => {
        if (given) p.spec.tolerations = given;
      });
      s.prepareForCreate(obj);
      assert.deepEqual((obj as Json).spec.tolerations, want);
    });
  }

  const QOS: [string, Json, string][] = [
    ['no resources', {}, 'BestEffort'],
    ['limits only (requests default to them)', { limits: { cpu: '1', memory: '1Gi' } }, 'Guaranteed'],
    [
      'equal requests and limits',
      { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1000m', memory: '1Gi' } },
      'Guaranteed',
    ],
    [
      'requests below limits',
      { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m' } },
      'Burstable',
    ],
    ['only a cpu request', { requests: { cpu: '100m' } }, 'Burstable'],
  ];
  for (const [name, resources, qos] of QOS) {
    it(`computes qosClass ${qos}: ${name}`, () => {
      const obj = created(
        P,
        modified(nginx(), (p) => (p.spec.containers[0].resources = resources)),
      ) as Json;
      assert.equal(obj.status.qosClass, qos);
    });
  }

  it('starts scheduling-gated pods with the SchedulingGated condition', () => {
    const obj = created(
      P,
      modified(nginx(), (p) => (p.spec.schedulingGates = [{ name: 'example.com/wait' }])),
    ) as Json;
    assert.equal(obj.status.conditions[0].reason, 'SchedulingGated');
  });

  it('ignores a status sent on create', () => {
    const obj = created(
      P,
      modified(nginx(), (p) => (p.status = { phase: 'Running', podIP: '10.0.0.1' })),
    ) as Json;
    assert.deepEqual(obj.status, { phase: 'Pending', qosClass: 'BestEffort' });
  });
});

const BAD: [string, (p: Json) => void, [string, string][]][] = [
  [
    'image with whitespace',
    (p) => (p.spec.containers[0].image = ' nginx'),
    [['spec.containers[0].image', 'Invalid']],
  ],
  ['missing image', (p) => (p.spec.containers[0].image = ''), [['spec.containers[0].image', 'Required']]],
  [
    'duplicate names across init and regular containers',
    (p) => (p.spec.initContainers = [{ name: 'nginx', image: 'busybox' }]),
    [['spec.initContainers[0].name', 'Duplicate']],
  ],
  [
    'init container probe without restartPolicy Always',
    (p) =>
      (p.spec.initContainers = [
        { name: 'init', image: 'busybox', readinessProbe: { exec: { command: ['true'] } } },
      ]),
    [['spec.initContainers[0].readinessProbe', 'Forbidden']],
  ],
  [
    'container restartPolicy on a regular container',
    (p) => (p.spec.containers[0].restartPolicy = 'Always'),
    [['spec.containers[0].restartPolicy', 'Forbidden']],
  ],
  [
    'ephemeral containers on create',
    (p) => (p.spec.ephemeralContainers = [{ name: 'debug', image: 'busybox' }]),
    [['spec.ephemeralContainers', 'Forbidden']],
  ],
  [
    'nodeName with scheduling gates',
    (p) => {
      p.spec.nodeName = 'node-1';
      p.spec.schedulingGates = [{ name: 'gate' }];
    },
    [['spec.nodeName', 'Forbidden']],
  ],
  [
    'bad restartPolicy',
    (p) => (p.spec.restartPolicy = 'Sometimes'),
    [['spec.restartPolicy', 'NotSupported']],
  ],
  ['dnsPolicy None without dnsConfig', (p) => (p.spec.dnsPolicy = 'None'), [['spec.dnsConfig', 'Required']]],
  [
    'dnsPolicy None without a nameserver',
    (p) => {
      p.spec.dnsPolicy = 'None';
      p.spec.dnsConfig = { searches: ['a.example'] };
    },
    [['spec.dnsConfig.nameservers', 'Required']],
  ],
  [
    'dnsConfig: four nameservers, one not an IP',
    (p) => (p.spec.dnsConfig = { nameservers: ['1.1.1.1', '1.1.1.2', '1.1.1.3', 'dns.example'] }),
    [
      ['spec.dnsConfig.nameservers', 'Invalid'],
      ['spec.dnsConfig.nameservers[3]', 'Invalid'],
    ],
  ],
  [
    'dnsConfig: 33 searches, one not a DNS name, an option without a name',
    (p) =>
      (p.spec.dnsConfig = {
        searches: [...Array.from({ length: 32 }, (_, i) => `d${i}.example.`), 'Bad_Name'],
        options: [{ name: 'ndots', value: '2' }, { value: '1' }],
      }),
    [
      ['spec.dnsConfig.searches', 'Invalid'],
      ['spec.dnsConfig.searches[32]', 'Invalid'],
      ['spec.dnsConfig.options[1]', 'Required'],
    ],
  ],
  [
    'dnsConfig: a search list over 2048 characters',
    (p) =>
      (p.spec.dnsConfig = {
        searches: Array.from(
          { length: 9 },
          (_, i) => `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(50)}${i}`,
        ),
      }),
    [['spec.dnsConfig.searches', 'Invalid']],
  ],
  [
    'activeDeadlineSeconds 0',
    (p) => (p.spec.activeDeadlineSeconds = 0),
    [['spec.activeDeadlineSeconds', 'Invalid']],
  ],
  [
    'bad serviceAccountName',
    (p) => (p.spec.serviceAccountName = 'Not_Valid'),
    [['spec.serviceAccountName', 'Invalid']],
  ],
  [
    'bad nodeSelector',
    (p) => (p.spec.nodeSelector = { 'k/': 'v' }),
    // IsQualifiedName: the name part is empty, and so does not match the pattern either.
    [
      ['spec.nodeSelector', 'Invalid'],
      ['spec.nodeSelector', 'Invalid'],
    ],
  ],
  ['bad hostname', (p) => (p.spec.hostname = 'a.b'), [['spec.hostname', 'Invalid']]],
  [
    'hostNetwork with a different hostPort',
    (p) => {
      p.spec.hostNetwork = true;
      p.spec.containers[0].ports[0].hostPort = 8080;
    },
    [['spec.containers[0].ports[0].containerPort', 'Invalid']],
  ],
  [
    'the same hostPort twice',
    (p) => {
      p.spec.containers[0].ports = [
        { containerPort: 80, hostPort: 8080 },
        { containerPort: 81, hostPort: 8080 },
      ];
    },
    [['spec.containers[0].ports[1].hostPort', 'Duplicate']],
  ],
  [
    'tolerationSeconds without NoExecute',
    (p) =>
      (p.spec.tolerations = [{ key: 'k', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 5 }]),
    [['spec.tolerations[0].effect', 'Invalid']],
  ],
  [
    'empty toleration key with Equal',
    (p) => (p.spec.tolerations = [{ operator: 'Equal', value: 'x' }]),
    [['spec.tolerations[0].operator', 'Invalid']],
  ],
  [
    'extended resource request without limit',
    (p) => (p.spec.containers[0].resources = { requests: { 'example.com/gpu': '1' } }),
    [['spec.containers[0].resources.limits', 'Required']],
  ],
  [
    'fractional extended resource',
    (p) => (p.spec.containers[0].resources = { limits: { 'example.com/gpu': '500m' } }),
    // A pod's requests default to its limits (SetDefaults_Pod), so both are not integers.
    [
      ['spec.containers[0].resources.limits[example.com/gpu]', 'Invalid'],
      ['spec.containers[0].resources.requests[example.com/gpu]', 'Invalid'],
    ],
  ],
  [
    'secret volume without secretName, bad defaultMode, absolute item path',
    (p) =>
      (p.spec.volumes = [
        { name: 's', secret: { defaultMode: 1000, items: [{ key: 'k', path: '/etc/x' }] } },
      ]),
    [
      ['spec.volumes[0].secret.secretName', 'Required'],
      ['spec.volumes[0].secret.defaultMode', 'Invalid'],
      ['spec.volumes[0].secret.items[0].path', 'Invalid'],
    ],
  ],
  [
    'volume mount with .. in subPath, duplicate mount path',
    (p) => {
      p.spec.volumes = [{ name: 'v' }];
      p.spec.containers[0].volumeMounts = [
        { name: 'v', mountPath: '/a', subPath: '../etc' },
        { name: 'v', mountPath: '/a' },
      ];
    },
    [
      ['spec.containers[0].volumeMounts[0].subPath', 'Invalid'],
      ['spec.containers[0].volumeMounts[1].mountPath', 'Invalid'],
    ],
  ],
  [
    'envFrom with neither source',
    (p) => (p.spec.containers[0].envFrom = [{ prefix: 'X_' }]),
    [['spec.containers[0].envFrom', 'Invalid']],
  ],
  [
    'exec probe without command',
    (p) => (p.spec.containers[0].startupProbe = { exec: {} }),
    [['spec.containers[0].startupProbe.exec.command', 'Required']],
  ],
];

describe('pods: validation', () => {
  for (const [name, patch, expected] of BAD) {
    it(`rejects: ${name}`, () => {
      const { errs } = create(P, modified(nginx(), patch));
      assert.ok(errs.length > 0, 'expected errors');
      assertErrors(errs, expected);
    });
  }
});

describe('pods: update', () => {
  const old = (): KubeObject => created(P, nginx());
  const OK: [string, (p: Json) => void][] = [
    ['a new image', (p) => (p.spec.containers[0].image = 'nginx:1.26')],
    ['new labels', (p) => (p.metadata.labels = { app: 'web', v: '2' })],
    ['an added toleration', (p) => p.spec.tolerations.push({ key: 'k', operator: 'Exists' })],
    ['a changed tolerationSeconds', (p) => (p.spec.tolerations[0].tolerationSeconds = 60)],
    ['activeDeadlineSeconds set', (p) => (p.spec.activeDeadlineSeconds = 100)],
    ['nodeName set by binding', (p) => (p.spec.nodeName = 'node-1')],
  ];
  for (const [name, patch] of OK) {
    it(`allows ${name}`, () => assert.deepEqual(update(P, old(), modified(old(), patch)).errs, []));
  }

  const FORBIDDEN: [string, (p: Json) => void, [string, string][]][] = [
    ['a changed port', (p) => (p.spec.containers[0].ports[0].containerPort = 81), [['spec', 'Forbidden']]],
    [
      'an added container',
      (p) => p.spec.containers.push({ name: 'b', image: 'b:1' }),
      [['spec.containers', 'Forbidden']],
    ],
    ['a removed toleration', (p) => p.spec.tolerations.pop(), [['spec.tolerations', 'Forbidden']]],
    [
      'a raised activeDeadlineSeconds',
      (p) => (p.spec.activeDeadlineSeconds = 50),
      [['spec.activeDeadlineSeconds', 'Invalid']],
    ],
  ];
  for (const [name, patch, expected] of FORBIDDEN) {
    it(`forbids ${name}`, () => {
      const before = modified(old(), (p) => (p.spec.activeDeadlineSeconds = 10));
      assertErrors(update(P, before, modified(before, patch)).errs, expected);
    });
  }

  it('forbids moving a bound pod to another node', () => {
    const bound = modified(old(), (p) => (p.spec.nodeName = 'node-1'));
    const { errs } = update(
      P,
      bound,
      modified(bound, (p) => (p.spec.nodeName = 'node-2')),
    );
    assertErrors(errs, [['spec', 'Forbidden']]);
    assert.match(
      errs[0]!.message,
      /^pod updates may not change fields other than `spec.containers\[\*\].image`/,
    );
  });

  it('keeps the status of a main-resource update', () => {
    const running = modified(old(), (p) => (p.status = { phase: 'Running', qosClass: 'BestEffort' }));
    const { obj } = update(
      P,
      running,
      modified(running, (p) => (p.status = { phase: 'Failed' })),
    );
    assert.deepEqual(obj.status, { phase: 'Running', qosClass: 'BestEffort' });
  });
});

describe('pods: status', () => {
  const bound = (): KubeObject => modified(created(P, nginx()), (p) => (p.spec.nodeName = 'node-1'));

  it('keeps spec and ownerReferences, backfills qosClass, mirrors podIP into podIPs', () => {
    const old = modified(
      bound(),
      (p) =>
        (p.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u' }]),
    );
    const write = modified(old, (p) => {
      p.spec.containers[0].image = 'evil';
      delete p.metadata.ownerReferences;
      p.status = { phase: 'Running', podIP: '10.1.0.5', hostIP: '127.0.0.2' };
    });
    const { obj, errs } = updateStatus(P, old, write);
    assert.deepEqual(errs, []);
    const o = obj as Json;
    assert.equal(o.spec.containers[0].image, 'nginx:1.25');
    assert.equal(o.metadata.ownerReferences[0].name, 'rs');
    assert.deepEqual(o.status, {
      phase: 'Running',
      podIP: '10.1.0.5',
      podIPs: [{ ip: '10.1.0.5' }],
      hostIP: '127.0.0.2',
      hostIPs: [{ ip: '127.0.0.2' }],
      qosClass: 'BestEffort',
    });
  });

  const BAD_STATUS: [string, (p: Json) => void, [string, string][]][] = [
    ['a bad pod IP', (p) => (p.status.podIPs = [{ ip: '10.1.0.256' }]), [['status.podIPs[0]', 'Invalid']]],
    [
      'two IPs of one family',
      (p) => (p.status.podIPs = [{ ip: '10.1.0.5' }, { ip: '10.1.0.6' }]),
      [['status.podIPs', 'Invalid']],
    ],
    [
      'a bad nominatedNodeName',
      (p) => (p.status.nominatedNodeName = 'Node_1'),
      [['status.nominatedNodeName', 'Invalid']],
    ],
    [
      'a bad custom condition type',
      (p) => (p.status.conditions = [{ type: 'bad type', status: 'True' }]),
      [['status.conditions[0].type', 'Invalid']],
    ],
  ];
  for (const [name, patch, expected] of BAD_STATUS) {
    it(`rejects ${name}`, () => {
      const old = bound();
      assertErrors(updateStatus(P, old, modified(old, patch)).errs, expected);
    });
  }

  it('forbids restarting a terminated container of a restartPolicy Never pod', () => {
    const old = modified(bound(), (p) => {
      p.spec.restartPolicy = 'Never';
      p.status.containerStatuses = [{ name: 'nginx', state: { terminated: { exitCode: 1 } } }];
    });
    const write = modified(
      old,
      (p) => (p.status.containerStatuses = [{ name: 'nginx', state: { running: {} } }]),
    );
    assertErrors(updateStatus(P, old, write).errs, [['status.containerStatuses[0].state', 'Forbidden']]);
  });
});

describe('pods: field selectors', () => {
  it('exposes the fields Kubernetes selects pods by', () => {
    const pod = modified(created(P, nginx()), (p) => {
      p.spec.nodeName = 'node-1';
      p.status.podIPs = [{ ip: '10.1.0.5' }];
    });
    assert.deepEqual(strategy(P).selectableFields(pod), {
      'metadata.name': 'web',
      'metadata.namespace': 'default',
      'spec.nodeName': 'node-1',
      'spec.restartPolicy': 'Always',
      'spec.schedulerName': 'default-scheduler',
      'spec.serviceAccountName': 'default',
      'spec.hostNetwork': 'false',
      'status.phase': 'Pending',
      'status.podIP': '10.1.0.5',
      'status.nominatedNodeName': '',
    });
  });

  it('has no generation fields (Kubernetes 1.32)', () => {
    assert.deepEqual(strategy(P).generationFields, []);
  });
});
