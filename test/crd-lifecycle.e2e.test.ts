// The life of a CustomResourceDefinition's objects on a real `k8ts server`, seen from
// @kubernetes/client-node as a user sees it: deleting the CRD deletes its custom resources
// first (the customresourcecleanup.apiextensions.k8s.io finalizer, waiting on a resource's
// own finalizer, refusing new ones meanwhile) and only then the CRD; and a custom resource
// outlives a restart of the control process over the same data dir as a ConfigMap does
// (same uid, resourceVersion, spec and status; revisions carry on).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { startK8tsServer, type K8tsServer } from './support/k8ts-server.js';
import { until, untilTruthy } from './support/wait.js';

const GROUP = 'lifecycle.k8ts.io';
const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';
const HOLD = `${GROUP}/hold`;

interface Gadget extends k8s.KubernetesObject {
  spec?: { size?: number };
  status?: { phase?: string };
}

/** A namespaced CRD `<plural>.lifecycle.k8ts.io` with one version, v1, and the status subresource. */
const crdFor = (plural: string, kind: string): k8s.V1CustomResourceDefinition => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${plural}.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural, singular: kind.toLowerCase(), kind },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', properties: { size: { type: 'integer' } } },
              status: { type: 'object', properties: { phase: { type: 'string' } } },
            },
          },
        },
      },
    ],
  },
});

const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

/** Resolves with the ApiException `call` rejects with; fails the test when it resolves. */
async function rejection(what: string, call: Promise<unknown>): Promise<k8s.ApiException<string>> {
  return call.then(
    () => assert.fail(`${what} succeeded`),
    (err: unknown) => {
      if (!(err instanceof k8s.ApiException)) throw err;
      return err as k8s.ApiException<string>;
    },
  );
}

/** The clients of one server process (its kubeconfig is rewritten, with a new port, at each start). */
function clients(k: K8tsServer) {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(k.kubeconfig);
  return {
    core: kc.makeApiClient(k8s.CoreV1Api),
    custom: kc.makeApiClient(k8s.CustomObjectsApi),
    ext: kc.makeApiClient(k8s.ApiextensionsV1Api),
  };
}

/** Creates the CRD and resolves once its resources are served. */
async function establish(c: ReturnType<typeof clients>, crd: k8s.V1CustomResourceDefinition): Promise<void> {
  await c.ext.createCustomResourceDefinition({ body: crd });
  await until(
    `${crd.metadata!.name} to be served`,
    async () => {
      await c.custom.listClusterCustomObject({ group: GROUP, version: 'v1', plural: crd.spec.names.plural });
      return true;
    },
    30_000,
  );
}

describe('CustomResourceDefinition lifecycle', { timeout: 300_000 }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'k8ts-crd-lifecycle-'));
  let k: K8tsServer | undefined;
  let c: ReturnType<typeof clients>;

  before(async () => {
    k = await startK8tsServer({ dataDir, fromSource: true, readyTimeoutMs: 60_000 });
    c = clients(k);
    for (const name of ['lc-a', 'lc-b']) await c.core.createNamespace({ body: { metadata: { name } } });
  });
  after(async () => {
    await k?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('deleting a CRD deletes its custom resources, waiting on their finalizers, and then itself', async () => {
    const plural = 'gadgets';
    const crd = crdFor(plural, 'Gadget');
    await establish(c, crd);
    const gadget = (namespace: string, name: string, finalizers?: string[]) =>
      c.custom.createNamespacedCustomObject({
        group: GROUP,
        version: 'v1',
        namespace,
        plural,
        body: {
          apiVersion: `${GROUP}/v1`,
          kind: 'Gadget',
          metadata: { name, ...(finalizers ? { finalizers } : {}) },
          spec: { size: 1 },
        },
      });
    for (const name of ['g1', 'g2']) await gadget('lc-a', name);
    await gadget('lc-b', 'g3');
    await gadget('lc-b', 'held', [HOLD]);
    const stored = (await c.ext.readCustomResourceDefinition({ name: crd.metadata!.name! })).metadata;
    // As upstream's CRD REST Delete: the finalizer comes with the first delete, not on create.
    assert.equal(stored?.finalizers, undefined);

    await c.ext.deleteCustomResourceDefinition({ name: crd.metadata!.name! });
    const list = async () =>
      (
        (await c.custom.listClusterCustomObject({ group: GROUP, version: 'v1', plural })) as {
          items: Gadget[];
        }
      ).items;
    // The others go; `held` stays Terminating on its own finalizer, and so does the CRD.
    const remaining = await untilTruthy(
      'every gadget but held to be deleted',
      async () => {
        const items = await list();
        return items.length === 1 && items[0]!.metadata?.deletionTimestamp !== undefined && items;
      },
      30_000,
    );
    assert.equal(remaining[0]!.metadata?.name, 'held');
    const terminating = await untilTruthy(
      'the CRD to say its instances are being deleted',
      async () => {
        const got = await c.ext.readCustomResourceDefinition({ name: crd.metadata!.name! });
        const cond = got.status?.conditions?.find((x) => x.type === 'Terminating');
        return cond?.status === 'True' && got;
      },
      30_000,
    );
    assert.ok(terminating.metadata?.deletionTimestamp);
    assert.deepEqual(terminating.metadata?.finalizers, [CLEANUP_FINALIZER]);
    const cond = terminating.status!.conditions!.find((x) => x.type === 'Terminating')!;
    assert.deepEqual(
      [cond.reason, cond.message],
      ['InstanceDeletionInProgress', 'CustomResource deletion is in progress'],
    );
    const refused = await rejection('a create while the CRD is terminating', gadget('lc-a', 'late'));
    assert.equal(refused.code, 405);
    assert.match(String(refused.body), /create not allowed while custom resource definition is terminating/);

    // Our finalizer released: the last gadget goes, then the CRD.
    await c.custom.patchNamespacedCustomObject(
      {
        group: GROUP,
        version: 'v1',
        namespace: 'lc-b',
        plural,
        name: 'held',
        body: { metadata: { finalizers: null } },
      },
      mergePatch,
    );
    await untilTruthy(
      'the CRD to be deleted',
      async () =>
        (
          await rejection(
            'reading the CRD',
            c.ext.readCustomResourceDefinition({ name: crd.metadata!.name! }),
          )
        ).code === 404,
      30_000,
    );
    const unserved = await rejection('listing gadgets', list());
    assert.equal(unserved.code, 404);
    await untilTruthy(
      'discovery to drop the group',
      async () => !(await k!.kubectlOk('api-resources', '--api-group', GROUP)).includes(plural),
      30_000,
    );
    // Nothing of the old objects is left in the store: the same CRD again serves none.
    await establish(c, crd);
    assert.deepEqual(await list(), []);
  });

  it('a custom resource outlives a restart of the control process, as a ConfigMap does', async () => {
    const plural = 'things';
    await establish(c, crdFor(plural, 'Thing'));
    const ref = { group: GROUP, version: 'v1', namespace: 'lc-a', plural, name: 'kept' };
    await c.custom.createNamespacedCustomObject({
      ...ref,
      body: { apiVersion: `${GROUP}/v1`, kind: 'Thing', metadata: { name: 'kept' }, spec: { size: 3 } },
    });
    await c.custom.patchNamespacedCustomObjectStatus(
      { ...ref, body: { status: { phase: 'Ready' } } },
      mergePatch,
    );
    const thing = (await c.custom.getNamespacedCustomObject(ref)) as Gadget;
    const cm = await c.core.createNamespacedConfigMap({
      namespace: 'lc-a',
      body: { metadata: { name: 'kept' }, data: { size: '3' } },
    });

    await k!.stop();
    k = await startK8tsServer({ dataDir, fromSource: true, readyTimeoutMs: 60_000 });
    c = clients(k);

    // Served again from the stored CRD, with nothing created anew.
    const again = (await until(
      'things to be served after the restart',
      async () => (await c.custom.getNamespacedCustomObject(ref)) as Gadget,
      30_000,
    ))!;
    const essentials = (o: Gadget | k8s.V1ConfigMap) => {
      const { uid, resourceVersion, generation, creationTimestamp } = o.metadata ?? {};
      return { uid, resourceVersion, generation, creationTimestamp: String(creationTimestamp) };
    };
    assert.deepEqual(essentials(again), essentials(thing));
    assert.deepEqual([again.spec, again.status], [{ size: 3 }, { phase: 'Ready' }]);
    const cmAgain = await c.core.readNamespacedConfigMap({ namespace: 'lc-a', name: 'kept' });
    assert.deepEqual(essentials(cmAgain), essentials(cm));
    assert.deepEqual(cmAgain.data, { size: '3' });
    // Revisions carry on from the stored ones.
    const changed = (await c.custom.patchNamespacedCustomObject(
      { ...ref, body: { spec: { size: 4 } } },
      mergePatch,
    )) as Gadget;
    assert.ok(
      Number(changed.metadata!.resourceVersion) > Number(cmAgain.metadata!.resourceVersion),
      `resourceVersion ${changed.metadata!.resourceVersion} after ${cmAgain.metadata!.resourceVersion}`,
    );
    assert.equal(changed.metadata?.generation, (thing.metadata!.generation ?? 0) + 1);
  });
});
