// The pod-spec warnings of Kubernetes 1.32 (pkg/api/pod/warnings.go), case by case with
// upstream's exact wording and field paths: each case is a pod template (paths from
// spec.template) unless it says Pod.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../../api/object.js';
import { defaultPodTemplate } from './index.js';
import {
  claimSpecWarnings,
  podNameWarnings,
  podTemplateWarnings,
  podWarnings,
  workloadNameWarnings,
} from './warnings.js';

type Json = Record<string, unknown>;

/** The warnings of a defaulted template with `spec` (and `metadata`), at spec.template. */
function templateWarnings(spec: Json, metadata: Json = {}): string[] {
  const template: Json = { metadata, spec };
  defaultPodTemplate(template);
  return podTemplateWarnings('spec.template', template);
}

const c = (extra: Json = {}): Json => ({ name: 'c', image: 'busybox', ...extra });

interface Case {
  name: string;
  spec: Json;
  metadata?: Json;
  expected: string[];
}

const cases: Case[] = [
  {
    name: 'nothing questionable',
    spec: { containers: [c({ env: [{ name: 'a' }, { name: 'b' }] })] },
    expected: [],
  },
  {
    name: 'duplicate env (the issue)',
    spec: {
      containers: [
        c({
          env: [
            { name: 'X', value: 'a' },
            { name: 'X', value: 'b' },
          ],
        }),
      ],
    },
    expected: [
      'spec.template.spec.containers[0].env[1]: hides previous definition of "X", which may be dropped when using apply',
    ],
  },
  {
    name: 'duplicate env that only extends the earlier value is fine',
    spec: {
      containers: [
        c({
          env: [
            { name: 'X', value: 'a' },
            { name: 'X', value: '$(X)-b' },
          ],
        }),
      ],
    },
    expected: [],
  },
  {
    name: 'duplicate env referring only to itself, or from valueFrom',
    spec: {
      containers: [
        c({
          env: [
            { name: 'X', value: 'a' },
            { name: 'X', value: '$(X)' },
            { name: 'X', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          ],
        }),
      ],
    },
    expected: [
      'spec.template.spec.containers[0].env[1]: hides previous definition of "X", which may be dropped when using apply',
      'spec.template.spec.containers[0].env[2]: hides previous definition of "X", which may be dropped when using apply',
    ],
  },
  {
    name: 'duplicate env in an init container',
    spec: {
      initContainers: [c({ name: 'i', env: [{ name: 'A' }, { name: 'A' }] })],
      containers: [c()],
    },
    expected: [
      'spec.template.spec.initContainers[0].env[1]: hides previous definition of "A", which may be dropped when using apply',
    ],
  },
  {
    name: 'duplicate containerPort across containers',
    spec: {
      containers: [c({ ports: [{ containerPort: 80 }] }), c({ name: 'd', ports: [{ containerPort: 80 }] })],
    },
    expected: [
      'spec.template.spec.containers[1].ports[0]: duplicate port definition with spec.template.spec.containers[0].ports[0]',
    ],
  },
  {
    name: 'the same port name in two containers, and in a sidecar; not in a plain init container',
    spec: {
      initContainers: [
        c({ name: 'init', ports: [{ containerPort: 9000, name: 'metrics' }] }),
        c({ name: 'side', restartPolicy: 'Always', ports: [{ containerPort: 9001, name: 'http' }] }),
      ],
      containers: [
        c({
          ports: [
            { containerPort: 80, name: 'http' },
            { containerPort: 81, name: 'metrics' },
          ],
        }),
        c({ name: 'd', ports: [{ containerPort: 8080, name: 'metrics' }] }),
      ],
    },
    expected: [
      'spec.template.spec.containers[0].ports[0]: duplicate port name "http" with spec.template.spec.initContainers[1].ports[0], services and probes that select ports by name will use spec.template.spec.initContainers[1].ports[0]',
      'spec.template.spec.containers[1].ports[0]: duplicate port name "metrics" with spec.template.spec.containers[0].ports[1], services and probes that select ports by name will use spec.template.spec.containers[0].ports[1]',
    ],
  },
  {
    name: 'same port twice in one container, and another protocol is no duplicate',
    spec: {
      containers: [
        c({
          ports: [
            { containerPort: 53, protocol: 'UDP' },
            { containerPort: 53, protocol: 'TCP' },
            { containerPort: 53, protocol: 'UDP' },
          ],
        }),
      ],
    },
    expected: [
      'spec.template.spec.containers[0].ports[2]: duplicate port definition with spec.template.spec.containers[0].ports[0]',
    ],
  },
  {
    name: 'overlapping and dangerously ambiguous host ports',
    spec: {
      containers: [
        c({
          ports: [
            { containerPort: 80, hostPort: 80 },
            { containerPort: 80 },
            { containerPort: 80, hostPort: 80, hostIP: '10.0.0.1' },
          ],
        }),
      ],
    },
    expected: [
      'spec.template.spec.containers[0].ports[1]: overlapping port definition with spec.template.spec.containers[0].ports[0]',
      'spec.template.spec.containers[0].ports[2]: dangerously ambiguous port definition with spec.template.spec.containers[0].ports[0]',
      'spec.template.spec.containers[0].ports[2]: overlapping port definition with spec.template.spec.containers[0].ports[1]',
    ],
  },
  {
    name: 'hostIP without hostPort',
    spec: { containers: [c({ ports: [{ name: 'web', containerPort: 80, hostIP: '10.0.0.1' }] })] },
    expected: [
      'spec.template.spec.containers[0].ports[0]: hostIP set without hostPort: {Name:web HostPort:0 ContainerPort:80 Protocol:TCP HostIP:10.0.0.1}',
    ],
  },
  {
    name: 'fractional memory and ephemeral storage',
    spec: {
      containers: [
        c({
          resources: {
            limits: { memory: '0.5', 'ephemeral-storage': '4m' },
            requests: { memory: '100m', cpu: '100m', 'ephemeral-storage': '4m' },
          },
        }),
      ],
      overhead: { memory: '1500m', 'ephemeral-storage': '1Gi' },
    },
    expected: [
      'spec.template.spec.overhead[memory]: fractional byte value "1500m" is invalid, must be an integer',
      'spec.template.spec.containers[0].resources.limits[memory]: fractional byte value "500m" is invalid, must be an integer',
      'spec.template.spec.containers[0].resources.requests[memory]: fractional byte value "100m" is invalid, must be an integer',
      'spec.template.spec.containers[0].resources.limits[ephemeral-storage]: fractional byte value "4m" is invalid, must be an integer',
      'spec.template.spec.containers[0].resources.requests[ephemeral-storage]: fractional byte value "4m" is invalid, must be an integer',
    ],
  },
  {
    name: 'deprecated node labels in nodeSelector, affinity and topology',
    spec: {
      containers: [c()],
      nodeSelector: { 'beta.kubernetes.io/arch': 'amd64', 'kubernetes.io/os': 'linux' },
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'beta.kubernetes.io/os', operator: 'Exists' }] }],
          },
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 1,
              preference: {
                matchExpressions: [{ key: 'failure-domain.beta.kubernetes.io/zone', operator: 'Exists' }],
              },
            },
          ],
        },
      },
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: 'beta.kubernetes.io/instance-type',
          whenUnsatisfiable: 'DoNotSchedule',
          labelSelector: { matchLabels: { app: 'a' } },
        },
        { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule' },
      ],
    },
    expected: [
      'spec.template.spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead',
      'spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key: beta.kubernetes.io/os is deprecated since v1.14; use "kubernetes.io/os" instead',
      'spec.template.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].key: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
      'spec.template.spec.topologySpreadConstraints[0].topologyKey: beta.kubernetes.io/instance-type is deprecated since v1.17; use "node.kubernetes.io/instance-type" instead',
      'spec.template.spec.topologySpreadConstraints[1].labelSelector: a null labelSelector results in matching no pod',
    ],
  },
  {
    name: 'deprecated annotations, seccomp and AppArmor annotations without the fields',
    metadata: {
      annotations: {
        'scheduler.alpha.kubernetes.io/critical-pod': '',
        'security.alpha.kubernetes.io/sysctls': 'a=b',
        'seccomp.security.alpha.kubernetes.io/pod': 'runtime/default',
        'container.seccomp.security.alpha.kubernetes.io/c': 'runtime/default',
        'container.apparmor.security.beta.kubernetes.io/c': 'runtime/default',
      },
    },
    spec: { containers: [c()] },
    expected: [
      'spec.template.metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: non-functional in v1.16+; use the "priorityClassName" field instead',
      'spec.template.metadata.annotations[security.alpha.kubernetes.io/sysctls]: non-functional in v1.11+; use the "sysctls" field instead',
      'spec.template.metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the "seccompProfile" field instead',
      'spec.template.metadata.annotations[container.seccomp.security.alpha.kubernetes.io/c]: non-functional in v1.27+; use the "seccompProfile" field instead',
      'spec.template.metadata.annotations[container.apparmor.security.beta.kubernetes.io/c]: deprecated since v1.30; use the "appArmorProfile" field instead',
    ],
  },
  {
    name: 'seccomp and AppArmor annotations with their fields are fine',
    metadata: {
      annotations: {
        'seccomp.security.alpha.kubernetes.io/pod': 'runtime/default',
        'container.apparmor.security.beta.kubernetes.io/c': 'runtime/default',
      },
    },
    spec: {
      securityContext: {
        seccompProfile: { type: 'RuntimeDefault' },
        appArmorProfile: { type: 'RuntimeDefault' },
      },
      containers: [c()],
    },
    expected: [],
  },
  {
    name: 'deprecated volume plugins and an ephemeral claim with fractional bytes',
    spec: {
      containers: [c()],
      volumes: [
        { name: 'a', gitRepo: { repository: 'r' } },
        { name: 'b', rbd: { monitors: ['m'], image: 'i' } },
        {
          name: 'e',
          ephemeral: {
            volumeClaimTemplate: {
              spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '100m' } } },
            },
          },
        },
      ],
    },
    expected: [
      'spec.template.spec.volumes[0].gitRepo: deprecated in v1.11',
      'spec.template.spec.volumes[1].rbd: deprecated in v1.28, non-functional in v1.31+',
      'spec.template.spec.volumes[2].ephemeral.volumeClaimTemplate.spec.resources.requests[storage]: fractional byte value "100m" is invalid, must be an integer',
    ],
  },
  {
    name: 'overlapping paths in configMap and secret volumes',
    spec: {
      containers: [c()],
      volumes: [
        {
          name: 'Test',
          configMap: {
            name: 'foo',
            items: [
              { key: 'foo', path: 'test' },
              { key: 'bar', path: 'test/app' },
            ],
          },
        },
        {
          name: 's',
          secret: {
            secretName: 'sec',
            items: [
              { key: 'a', path: 'x/' },
              { key: 'b', path: 'x' },
            ],
          },
        },
      ],
    },
    expected: [
      'volume "Test" (ConfigMap "foo"): overlapping paths: "test/app" with "test"',
      'volume "s" (Secret "sec"): overlapping paths: "x" with "x"',
    ],
  },
  {
    name: 'overlapping paths across the sources of a projected volume, and an empty source',
    spec: {
      containers: [c()],
      volumes: [
        {
          name: 'foo',
          projected: {
            sources: [
              { configMap: { name: 'Test', items: [{ key: 'foo', path: 'test' }] } },
              { serviceAccountToken: { path: 'test/file' } },
              {},
            ],
          },
        },
      ],
    },
    expected: [
      'volume "foo" (Projected): overlapping paths: "test/file" (ServiceAccountToken) with "test" (ConfigMap "Test")',
      'volume "foo" (Projected) has no sources provided',
    ],
  },
  {
    name: 'the kube-api-access projected volume has no overlaps',
    spec: {
      containers: [c()],
      volumes: [
        {
          name: 'kube-api-access-x',
          projected: {
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
              {
                downwardAPI: {
                  items: [
                    { path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } },
                  ],
                },
              },
            ],
          },
        },
      ],
    },
    expected: [],
  },
  {
    name: 'duplicate hostAliases and imagePullSecrets, an empty pull secret',
    spec: {
      containers: [c()],
      hostAliases: [{ ip: '1.1.1.1' }, { ip: '1.1.1.1' }],
      imagePullSecrets: [{ name: 'a' }, { name: 'a' }, { name: '' }],
    },
    expected: [
      'spec.template.spec.hostAliases[1].ip: duplicate ip "1.1.1.1"',
      'spec.template.spec.imagePullSecrets[1].name: duplicate name "a"',
      'spec.template.spec.imagePullSecrets[2].name: invalid empty name ""',
    ],
  },
  {
    name: 'negative grace period and pod affinity terms without selectors',
    spec: {
      containers: [c()],
      terminationGracePeriodSeconds: -1,
      affinity: {
        podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'k' }] },
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 1, podAffinityTerm: { topologyKey: 'k' } },
          ],
        },
      },
    },
    expected: [
      'spec.template.spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1',
      'spec.template.spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector: a null labelSelector results in matching no pod',
      'spec.template.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector: a null labelSelector results in matching no pod',
    ],
  },
];

describe('pod template warnings (pkg/api/pod/warnings.go, 1.32)', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      assert.deepEqual(templateWarnings(tc.spec, tc.metadata), tc.expected);
    });
  }

  it('a Pod: paths from spec, and no AppArmor annotation warning (upstream gives that in its version skew)', () => {
    const pod: KubeObject = {
      metadata: {
        name: 'p',
        annotations: { 'container.apparmor.security.beta.kubernetes.io/c': 'unconfined' },
      },
      spec: { containers: [c({ env: [{ name: 'X' }, { name: 'X' }] })] },
    };
    assert.deepEqual(podWarnings(pod), [
      'spec.containers[0].env[1]: hides previous definition of "X", which may be dropped when using apply',
    ]);
  });

  it('a job template path nests under the job spec', () => {
    const template = { spec: { containers: [c({ env: [{ name: 'X' }, { name: 'X' }] })] } };
    assert.deepEqual(podTemplateWarnings('spec.jobTemplate.spec.template', template), [
      'spec.jobTemplate.spec.template.spec.containers[0].env[1]: hides previous definition of "X", which may be dropped when using apply',
    ]);
  });
});

describe('claim spec, name warnings', () => {
  it('claimSpecWarnings: fractional storage requests and limits; whole bytes are fine', () => {
    assert.deepEqual(
      claimSpecWarnings('spec', {
        resources: { requests: { storage: '1500m' }, limits: { storage: '0.5' } },
      }),
      [
        'spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer',
        'spec.resources.limits[storage]: fractional byte value "500m" is invalid, must be an integer',
      ],
    );
    assert.deepEqual(claimSpecWarnings('spec', { resources: { requests: { storage: '1Gi' } } }), []);
  });

  it('names that are not DNS labels, for Pods and for workloads', () => {
    const label =
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    assert.deepEqual(podNameWarnings('nginx.1'), [
      "metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]",
    ]);
    assert.deepEqual(workloadNameWarnings('Web'), [
      `metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [${label}]`,
    ]);
    assert.deepEqual(workloadNameWarnings('web'), []);
  });
});
