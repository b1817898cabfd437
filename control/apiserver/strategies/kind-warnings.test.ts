// The per-kind warnings of Kubernetes 1.32's strategies (WarningsOnCreate / WarningsOnUpdate
// of pkg/registry/...): which kinds warn, on which writes, with which paths. The pod-spec
// rules themselves are podspec/warnings.test.ts's; the Service's are here.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../api/object.js';
import { cronJobStrategy, jobStrategy } from './jobs.js';
import { daemonSetStrategy } from './daemonsets.js';
import { deploymentStrategy } from './deployments.js';
import { nodeStrategy } from './nodes.js';
import { persistentVolumeClaimStrategy } from './persistentvolumeclaims.js';
import { podStrategy } from './pods.js';
import { replicaSetStrategy } from './replicasets.js';
import { serviceAccountStrategy } from './serviceaccounts.js';
import { cidrWarnings, ipWarnings, serviceWarnings } from './service-warnings.js';
import { statefulSetStrategy } from './statefulsets.js';

const DUP_ENV = [
  { name: 'X', value: 'a' },
  { name: 'X', value: 'b' },
];
const template = (env: unknown = DUP_ENV) => ({
  metadata: { labels: { app: 'a' } },
  spec: { containers: [{ name: 'c', image: 'busybox', env }] },
});
const hides = (path: string) =>
  `${path}: hides previous definition of "X", which may be dropped when using apply`;

function withGeneration(obj: KubeObject, generation: number): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, generation } };
}

describe('workload warnings on create and update', () => {
  const deployment: KubeObject = {
    metadata: { name: 'web' },
    spec: { selector: { matchLabels: { app: 'a' } }, template: template() },
  };

  it('Deployment and ReplicaSet: name and template on create; template on update only when the generation moved', () => {
    for (const strategy of [deploymentStrategy, replicaSetStrategy]) {
      assert.deepEqual(strategy.warningsOnCreate!({ ...deployment, metadata: { name: 'Web' } }), [
        "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')]",
        hides('spec.template.spec.containers[0].env[1]'),
      ]);
      const old = withGeneration(deployment, 1);
      assert.deepEqual(strategy.warningsOnUpdate!(withGeneration(deployment, 1), old), []);
      assert.deepEqual(strategy.warningsOnUpdate!(withGeneration(deployment, 2), old), [
        hides('spec.template.spec.containers[0].env[1]'),
      ]);
    }
    // A Deployment's generation also moves with its annotations upstream (the strategy's
    // generationChanged, deployments.test.ts), and then it warns; a ReplicaSet's does not.
    const annotated = { ...deployment, metadata: { annotations: { a: 'b' } } };
    assert.equal(deploymentStrategy.generationChanged!(annotated, deployment), true);
    assert.equal(replicaSetStrategy.generationChanged?.(annotated, deployment) ?? false, false);
  });

  it('Pod: name and spec on create, nothing on update', () => {
    const pod: KubeObject = { metadata: { name: 'p' }, spec: template().spec };
    assert.deepEqual(podStrategy.warningsOnCreate!(pod), [hides('spec.containers[0].env[1]')]);
    assert.equal(podStrategy.warningsOnUpdate, undefined);
  });

  it('DaemonSet: no name warning; on update only when the template generation moved', () => {
    const ds: KubeObject = { metadata: { name: 'Ds' }, spec: { template: template() } };
    assert.deepEqual(daemonSetStrategy.warningsOnCreate!(ds), [
      hides('spec.template.spec.containers[0].env[1]'),
    ]);
    const gen = (n: string): KubeObject => ({
      ...ds,
      metadata: { annotations: { 'deprecated.daemonset.template.generation': n } },
    });
    assert.deepEqual(daemonSetStrategy.warningsOnUpdate!(gen('1'), gen('1')), []);
    assert.equal(daemonSetStrategy.warningsOnUpdate!(gen('2'), gen('1')).length, 1);
  });

  it('StatefulSet: template and claim templates, with upstream’s `Spec` in the update path', () => {
    const sts: KubeObject = {
      metadata: { name: 'db', generation: 1 },
      spec: {
        template: template(),
        volumeClaimTemplates: [{ spec: { resources: { requests: { storage: '1500m' } } } }],
      },
    };
    assert.deepEqual(statefulSetStrategy.warningsOnCreate!(sts), [
      hides('spec.template.spec.containers[0].env[1]'),
      'spec.volumeClaimTemplates[0].resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer',
    ]);
    assert.deepEqual(statefulSetStrategy.warningsOnUpdate!(sts, sts), [
      'spec.volumeClaimTemplates[0].Spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer',
    ]);
  });

  it('Job and CronJob: name, the Indexed soft limits and the job template; a kept TZ= schedule on update', () => {
    const job: KubeObject = {
      metadata: { name: 'j' },
      spec: { completionMode: 'Indexed', completions: 100_001, parallelism: 10_001, template: template() },
    };
    assert.deepEqual(jobStrategy.warningsOnCreate!(job), [
      'spec: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail',
      hides('spec.template.spec.containers[0].env[1]'),
    ]);
    assert.deepEqual(jobStrategy.warningsOnUpdate!(withGeneration(job, 1), withGeneration(job, 1)), []);
    const cron: KubeObject = {
      metadata: { name: 'c', generation: 1 },
      spec: { schedule: 'TZ=UTC 0 * * * *', jobTemplate: { spec: { template: template() } } },
    };
    assert.deepEqual(cronJobStrategy.warningsOnCreate!(cron), [
      hides('spec.jobTemplate.spec.template.spec.containers[0].env[1]'),
    ]);
    assert.deepEqual(cronJobStrategy.warningsOnUpdate!(cron, cron), [
      'cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details',
    ]);
  });
});

describe('Node, ServiceAccount and Service warnings', () => {
  it('Node: deprecated spec fields, on create and update', () => {
    const node: KubeObject = { metadata: { name: 'n' }, spec: { externalID: 'x', configSource: {} } };
    const want = [
      'spec.configSource: the feature is removed',
      'spec.externalID: this field is deprecated, and is unused by Kubernetes',
    ];
    assert.deepEqual(nodeStrategy.warningsOnCreate!(node), want);
    assert.deepEqual(nodeStrategy.warningsOnUpdate!(node, node), want);
  });

  it('PersistentVolumeClaim: the beta storage-class annotation and fractional bytes, on create and update', () => {
    const pvc: KubeObject = {
      metadata: { name: 'c', annotations: { 'volume.beta.kubernetes.io/storage-class': 'fast' } },
      spec: { resources: { requests: { storage: '1500m' } } },
    };
    const want = [
      'metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use "storageClassName" attribute instead',
      'spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer',
    ];
    assert.deepEqual(persistentVolumeClaimStrategy.warningsOnCreate!(pvc), want);
    assert.deepEqual(persistentVolumeClaimStrategy.warningsOnUpdate!(pvc, pvc), want);
  });

  it('ServiceAccount: the enforce-mountable-secrets annotation (deprecated in 1.32)', () => {
    const sa: KubeObject = {
      metadata: { name: 's', annotations: { 'kubernetes.io/enforce-mountable-secrets': 'true' } },
    };
    assert.deepEqual(serviceAccountStrategy.warningsOnCreate!(sa), [
      'metadata.annotations[kubernetes.io/enforce-mountable-secrets]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets',
    ]);
    assert.deepEqual(serviceAccountStrategy.warningsOnCreate!({ metadata: { name: 's' } }), []);
  });

  it('Service: topology hints annotation, non-canonical IPv6, externalIPs/externalName mismatches', () => {
    const svc: KubeObject = {
      metadata: { name: 's', annotations: { 'service.kubernetes.io/topology-aware-hints': 'auto' } },
      spec: {
        type: 'ExternalName',
        externalName: 'example.com',
        clusterIP: '',
        externalIPs: ['2001:DB8::1'],
      },
    };
    assert.deepEqual(serviceWarnings(svc), [
      'annotation service.kubernetes.io/topology-aware-hints is deprecated, please use service.kubernetes.io/topology-mode instead',
      'spec.externalIPs[0]: IPv6 address "2001:DB8::1" is not in RFC 5952 canonical format ("2001:db8::1"), which may cause controller apply-loops',
      'spec.externalIPs is ignored when spec.type is "ExternalName"',
    ]);
    assert.deepEqual(
      serviceWarnings({ metadata: { name: 's' }, spec: { type: 'ClusterIP', externalName: 'x' } }),
      ['spec.externalName is ignored when spec.type is not "ExternalName"'],
    );
  });

  it('IP and CIDR warnings with Go net/netip’s words', () => {
    assert.deepEqual(ipWarnings('spec.loadBalancerIP', '010.0.0.1'), [
      'spec.loadBalancerIP: IP address was accepted, but will be invalid in a future Kubernetes release: ParseAddr("010.0.0.1"): IPv4 field has octet with leading zero',
    ]);
    assert.deepEqual(ipWarnings('x', '10.0.0.1'), []);
    assert.deepEqual(ipWarnings('x', '2001:db8::1'), []);
    assert.deepEqual(cidrWarnings('spec.loadBalancerSourceRanges[0]', '10.0.0.0/08'), [
      'spec.loadBalancerSourceRanges[0]: IP prefix was accepted, but will be invalid in a future Kubernetes release: netip.ParsePrefix("10.0.0.0/08"): bad bits after slash: "08"',
    ]);
    assert.deepEqual(cidrWarnings('r', '2001:DB8::/64'), [
      'r: IPv6 prefix "2001:DB8::/64" is not in RFC 5952 canonical format ("2001:db8::/64"), which may cause controller apply-loops',
    ]);
    assert.deepEqual(cidrWarnings('r', '10.0.0.0/8'), []);
  });
});
