// The definition names of the catalogue (catalogue.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { definitionName, modelDefinitionNames } from './index.js';
import { RESOURCES } from '../resources.js';

describe('definition names', () => {
  const cases: [string, string, string][] = [
    ['V1Deployment', 'apps', 'io.k8s.api.apps.v1.Deployment'],
    ['V1ObjectMeta', 'apps', 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'],
    ['V1LabelSelector', 'apps', 'io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector'],
    ['V1PodTemplateSpec', 'apps', 'io.k8s.api.core.v1.PodTemplateSpec'],
    ['V1ObjectReference', 'discovery', 'io.k8s.api.core.v1.ObjectReference'],
    ['CoreV1Event', 'core', 'io.k8s.api.core.v1.Event'],
    ['EventsV1Event', 'events', 'io.k8s.api.events.v1.Event'],
    ['DiscoveryV1EndpointPort', 'discovery', 'io.k8s.api.discovery.v1.EndpointPort'],
    ['CoreV1EndpointPort', 'core', 'io.k8s.api.core.v1.EndpointPort'],
    ['V1Scale', 'apps', 'io.k8s.api.autoscaling.v1.Scale'],
    ['V1Eviction', 'core', 'io.k8s.api.policy.v1.Eviction'],
    ['V1LeaseSpec', 'coordination', 'io.k8s.api.coordination.v1.LeaseSpec'],
    ['V2HorizontalPodAutoscaler', 'autoscaling', 'io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler'],
    ['V1beta1Foo', 'x', 'io.k8s.api.x.v1beta1.Foo'],
  ];
  for (const [model, inherited, expected] of cases) {
    it(`${model} (reached from ${inherited}) → ${expected}`, () =>
      assert.equal(definitionName(model, inherited), expected));
  }

  it('rejects what is not a model name', () => assert.throws(() => definitionName('Date', 'core')));

  it('names the models the documents reach as Kubernetes does', async () => {
    const names = await modelDefinitionNames();
    const expected: Record<string, string> = {
      V1Pod: 'io.k8s.api.core.v1.Pod',
      V1PodSpec: 'io.k8s.api.core.v1.PodSpec',
      V1Container: 'io.k8s.api.core.v1.Container',
      V1ResourceRequirements: 'io.k8s.api.core.v1.ResourceRequirements',
      V1DeploymentStrategy: 'io.k8s.api.apps.v1.DeploymentStrategy',
      V1RollingUpdateDeployment: 'io.k8s.api.apps.v1.RollingUpdateDeployment',
      V1PodTemplateSpec: 'io.k8s.api.core.v1.PodTemplateSpec',
      V1Endpoint: 'io.k8s.api.discovery.v1.Endpoint',
      V1EndpointConditions: 'io.k8s.api.discovery.v1.EndpointConditions',
      V1EndpointSubset: 'io.k8s.api.core.v1.EndpointSubset',
      V1EventSource: 'io.k8s.api.core.v1.EventSource',
      EventsV1EventSeries: 'io.k8s.api.events.v1.EventSeries',
      V1ScaleSpec: 'io.k8s.api.autoscaling.v1.ScaleSpec',
      V1DeleteOptions: 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions',
      V1Preconditions: 'io.k8s.apimachinery.pkg.apis.meta.v1.Preconditions',
      V1OwnerReference: 'io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference',
      V1Condition: 'io.k8s.apimachinery.pkg.apis.meta.v1.Condition',
    };
    for (const [model, name] of Object.entries(expected)) assert.equal(names.get(model), name, model);
    for (const r of RESOURCES)
      assert.ok(names.has(r.model) && (!r.verbs.includes('list') || names.has(`${r.model}List`)), r.model);
    assert.equal(
      names.get('V1SelfSubjectAccessReview'),
      'io.k8s.api.authorization.v1.SelfSubjectAccessReview',
    );
    assert.equal(names.get('V1ClusterRoleBinding'), 'io.k8s.api.rbac.v1.ClusterRoleBinding');
  });
});
