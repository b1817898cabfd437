import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isNotFound } from '../../api/client/errors.js';
import { EventRecorder } from '../../api/client/events.js';
import { resources } from '../../api/client/resource.js';
import type { KubeObject, OwnerReference } from '../../api/object.js';
import type { CoreEvent, Pod, PodTemplateSpec } from '../../api/types.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';
import { getPodFromTemplate, hasStatusCause, podsPrefix, RealPodControl } from './podcontrol.js';
import { ApiStatusError } from '../../api/client/errors.js';

const owner: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name: 'web', namespace: 'default', uid: 'rs-uid-1' },
};
const ref: OwnerReference = {
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  name: 'web',
  uid: 'rs-uid-1',
  controller: true,
  blockOwnerDeletion: true,
};
const template: PodTemplateSpec = {
  metadata: {
    labels: { app: 'web' },
    annotations: { note: 'x' },
    finalizers: ['example.com/keep'],
    name: 'ignored',
  },
  spec: { containers: [{ name: 'c', image: 'nginx:1', ports: [{ containerPort: 80 }] }] },
};

describe('getPodFromTemplate', () => {
  it('copies labels, annotations, finalizers and spec, and sets generateName and the controllerRef', () => {
    const pod = getPodFromTemplate(template, owner, ref);
    assert.deepEqual(pod.metadata, {
      generateName: 'web-',
      labels: { app: 'web' },
      annotations: { note: 'x' },
      finalizers: ['example.com/keep'],
      ownerReferences: [ref],
    });
    assert.deepEqual(pod.spec, template.spec);
    // Copies, not aliases of the (cached) template.
    const labels: Record<string, string> = pod.metadata.labels!;
    labels.extra = '1';
    pod.spec.containers[0]!.ports![0]!.containerPort = 81;
    pod.metadata.ownerReferences![0]!.name = 'changed';
    assert.deepEqual(template.metadata?.labels, { app: 'web' });
    assert.equal(template.spec.containers[0]!.ports![0]!.containerPort, 80);
    assert.equal(ref.name, 'web');
  });

  it('leaves out finalizers and ownerReferences when there are none', () => {
    const pod = getPodFromTemplate({ spec: { containers: [] } }, owner, undefined);
    assert.deepEqual(pod.metadata, { generateName: 'web-' });
  });

  it('prefixes with the owner name and a dash', () => {
    assert.equal(podsPrefix('frontend-7d9f'), 'frontend-7d9f-');
  });
});

describe('hasStatusCause', () => {
  it('finds a cause by type', () => {
    const err = new ApiStatusError({
      code: 403,
      reason: 'Forbidden',
      details: { causes: [{ reason: 'NamespaceTerminating', message: 'ns is terminating' }] },
    });
    assert.equal(hasStatusCause(err, 'NamespaceTerminating'), true);
    assert.equal(hasStatusCause(err, 'Other'), false);
    assert.equal(hasStatusCause(new Error('x'), 'NamespaceTerminating'), false);
  });
});

describe('RealPodControl against the API server', () => {
  let api: TestApi;
  let recorder: EventRecorder;
  let control: RealPodControl;
  before(async () => {
    api = await startTestApi();
    recorder = new EventRecorder({ client: api.client, component: 'replicaset-controller' });
    control = new RealPodControl({ client: api.client, recorder });
  });
  after(async () => {
    await recorder.flush();
    await api.stop();
  });

  async function events(reason: string): Promise<CoreEvent[]> {
    await recorder.flush();
    const list = await api.client.list<CoreEvent>(resources.events, { namespace: 'default' });
    return list.items.filter((e) => e.reason === reason);
  }

  it('creates a pod named after the owner and records SuccessfulCreate', async () => {
    const { finalizers: _f, ...meta } = template.metadata!;
    const created = await control.createPods('default', { ...template, metadata: meta }, owner, ref);
    assert.match(created.metadata.name!, /^web-[a-z0-9]{5}$/);
    assert.deepEqual(created.metadata.ownerReferences, [ref]);
    assert.equal(created.metadata.labels?.app, 'web');
    const evs = await events('SuccessfulCreate');
    assert.deepEqual(
      evs.map((e) => [e.type, e.message, e.involvedObject.kind, e.involvedObject.name]),
      [['Normal', `Created pod: ${created.metadata.name}`, 'ReplicaSet', 'web']],
    );
  });

  it('refuses a template without labels, creating nothing', async () => {
    const before = await api.client.list<Pod>(resources.pods, { namespace: 'default' });
    await assert.rejects(
      control.createPods('default', { spec: template.spec }, owner, ref),
      /unable to create pods, no labels/,
    );
    const after = await api.client.list<Pod>(resources.pods, { namespace: 'default' });
    assert.equal(after.items.length, before.items.length);
  });

  it('records FailedCreate with the server error when the create is refused', async () => {
    const bad: PodTemplateSpec = { metadata: { labels: { app: 'web' } }, spec: { containers: [] } };
    const err = await control.createPods('default', bad, owner, ref).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof ApiStatusError, String(err));
    const evs = await events('FailedCreate');
    assert.equal(evs.length, 1);
    assert.equal(evs[0]!.type, 'Warning');
    assert.equal(evs[0]!.message, `Error creating: ${err.message}`);
  });

  it('deletes a pod and records SuccessfulDelete; a missing pod throws NotFound without an event', async () => {
    const pod = await control.createPods(
      'default',
      { ...template, metadata: { labels: { app: 'del' } } },
      owner,
      ref,
    );
    await control.deletePod('default', pod.metadata.name!, owner);
    await assert.rejects(api.client.get(resources.pods, 'default', pod.metadata.name!), (e) => isNotFound(e));
    const evs = await events('SuccessfulDelete');
    assert.deepEqual(
      evs.map((e) => e.message),
      [`Deleted pod: ${pod.metadata.name}`],
    );
    await assert.rejects(control.deletePod('default', 'no-such-pod', owner), (e) => isNotFound(e));
    assert.equal((await events('FailedDelete')).length, 0);
  });

  it('patches a pod with a strategic merge patch', async () => {
    const pod = await control.createPods(
      'default',
      { ...template, metadata: { labels: { app: 'p' } } },
      owner,
      ref,
    );
    const patched = await control.patchPod('default', pod.metadata.name!, {
      metadata: { labels: { extra: 'y' } },
    });
    assert.deepEqual(patched.metadata.labels, { app: 'p', extra: 'y' });
  });
});
