// A controller written with @kubernetes/client-node, unchanged, reconciling a custom
// resource of a real `k8ts server`: a CustomResourceDefinition `widgets.example.k8ts.io`
// (spec.replicas, the status and scale subresources) and, in this process, an informer on
// widgets through CustomObjectsApi whose reconcile keeps `spec.replicas` ConfigMaps owned
// by each Widget and writes the Widget's status through /status. Checked: the informer's
// add/update/delete; status and spec kept apart by the subresource; the garbage collector
// following ownerReferences to a Widget (Background, Foreground, Orphan); and RBAC on
// widgets for a ServiceAccount token that may only get and list them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { startK8tsServer, type K8tsServer } from './support/k8ts-server.js';
import { until, untilTruthy } from './support/wait.js';

const GROUP = 'example.k8ts.io';
const VERSION = 'v1';
const PLURAL = 'widgets';
const WIDGET_LABEL = `${GROUP}/widget`;
const ns = `crd-ctl-${process.pid}`;
/** The garbage collector reads discovery every 30 s, so a new CRD's owners are followed within that. */
const GC_DEADLINE_MS = 120_000;

interface Widget extends k8s.KubernetesObject {
  spec: { replicas: number; color?: string };
  status?: { replicas?: number; observedGeneration?: number };
}

const widgetCRD: k8s.V1CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${PLURAL}.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: PLURAL, singular: 'widget', kind: 'Widget', listKind: 'WidgetList', shortNames: ['wd'] },
    versions: [
      {
        name: VERSION,
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['replicas'],
                properties: {
                  replicas: { type: 'integer', minimum: 0, maximum: 20 },
                  color: { type: 'string', _default: 'blue' },
                },
              },
              status: {
                type: 'object',
                properties: {
                  replicas: { type: 'integer' },
                  observedGeneration: { type: 'integer' },
                },
              },
            },
          },
        },
        subresources: {
          status: {},
          scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
        },
        additionalPrinterColumns: [
          { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
          { name: 'Ready', type: 'integer', jsonPath: '.status.replicas' },
        ],
      },
      // An older version, still served (conversion None): ownerReferences may name it.
      {
        name: 'v1beta1',
        served: true,
        storage: false,
        schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
      },
    ],
  },
};

const widget = (name: string, replicas: number, extra: Partial<Widget> = {}): Widget => ({
  apiVersion: `${GROUP}/${VERSION}`,
  kind: 'Widget',
  metadata: { name, namespace: ns },
  spec: { replicas },
  ...extra,
});

/** The ConfigMap name of a Widget's `i`th replica. */
const childName = (w: string, i: number) => `${w}-${i}`;

/**
 * The controller under test, in client-go's shape: informer handlers only enqueue the
 * Widget's name; one reconcile(name) at a time compares the ConfigMaps labelled for the
 * Widget with `spec.replicas`, creates the missing ones (owned by the Widget, controller
 * and blockOwnerDeletion set), deletes the surplus, and writes `status` through the status
 * subresource when it changed (a Widget deleted meanwhile is done with). A failed reconcile
 * is retried after 200 ms.
 */
class WidgetController {
  readonly events: string[] = [];
  readonly errors: unknown[] = [];
  readonly informer: k8s.Informer<Widget> & k8s.ObjectCache<Widget>;
  private readonly queue = new Set<string>();
  private running = false;
  private stopped = false;

  constructor(
    kc: k8s.KubeConfig,
    private readonly core: k8s.CoreV1Api,
    private readonly custom: k8s.CustomObjectsApi,
  ) {
    this.informer = k8s.makeInformer<Widget>(
      kc,
      `/apis/${GROUP}/${VERSION}/namespaces/${ns}/${PLURAL}`,
      () =>
        custom.listNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          namespace: ns,
          plural: PLURAL,
        }) as Promise<k8s.KubernetesListObject<Widget>>,
    );
    const record = (type: string) => (w: Widget) => {
      const m = w.metadata ?? {};
      this.events.push(
        `${type} ${m.name} gen=${m.generation} deleting=${m.deletionTimestamp !== undefined} status=${JSON.stringify(w.status ?? {})}`,
      );
      this.enqueue(m.name!);
    };
    this.informer.on('add', record('add'));
    this.informer.on('update', record('update'));
    this.informer.on('delete', record('delete'));
    this.informer.on('error', (err) => this.errors.push(err));
  }

  start(): Promise<void> {
    return this.informer.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.informer.stop();
  }

  /** Whether the informer has recorded an event matching `re`. */
  saw(re: RegExp): boolean {
    return this.events.some((e) => re.test(e));
  }

  private enqueue(name: string): void {
    this.queue.add(name);
    void this.drain();
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (!this.stopped && this.queue.size > 0) {
        const name = this.queue.values().next().value!;
        this.queue.delete(name);
        try {
          await this.reconcile(name);
        } catch (err) {
          this.errors.push(err);
          setTimeout(() => this.enqueue(name), 200).unref();
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async reconcile(name: string): Promise<void> {
    const w = this.informer.get(name, ns);
    // Gone or going: its ConfigMaps are the garbage collector's.
    if (!w || w.metadata?.deletionTimestamp) return;
    const uid = w.metadata!.uid!;
    const children = (
      await this.core.listNamespacedConfigMap({ namespace: ns, labelSelector: `${WIDGET_LABEL}=${name}` })
    ).items.filter((cm) => cm.metadata?.ownerReferences?.some((o) => o.uid === uid));
    const have = new Set(children.map((cm) => cm.metadata!.name!));
    const want = new Set(Array.from({ length: w.spec.replicas }, (_, i) => childName(name, i)));
    for (const child of want) {
      if (have.has(child)) continue;
      await this.core.createNamespacedConfigMap({
        namespace: ns,
        body: {
          metadata: {
            name: child,
            labels: { [WIDGET_LABEL]: name },
            ownerReferences: [
              {
                apiVersion: `${GROUP}/${VERSION}`,
                kind: 'Widget',
                name,
                uid,
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          },
          data: { color: w.spec.color ?? '' },
        },
      });
    }
    for (const cm of children)
      if (!want.has(cm.metadata!.name!) && !cm.metadata?.deletionTimestamp)
        await this.core.deleteNamespacedConfigMap({ namespace: ns, name: cm.metadata!.name! });
    const status = { replicas: want.size, observedGeneration: w.metadata!.generation };
    if (w.status?.replicas === status.replicas && w.status.observedGeneration === status.observedGeneration)
      return;
    try {
      await this.custom.patchNamespacedCustomObjectStatus(
        { group: GROUP, version: VERSION, namespace: ns, plural: PLURAL, name, body: { status } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
    } catch (err) {
      // Deleted since the cache saw it: its delete event is on the way, nothing to retry.
      if (!(err instanceof k8s.ApiException && err.code === 404)) throw err;
    }
  }
}

describe('a client-node controller reconciling a custom resource', { timeout: 600_000 }, () => {
  let k: K8tsServer;
  let kc: k8s.KubeConfig;
  let core: k8s.CoreV1Api;
  let custom: k8s.CustomObjectsApi;
  let controller: WidgetController;
  const crOf = { group: GROUP, version: VERSION, namespace: ns, plural: PLURAL };
  const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

  const getWidget = async (name: string): Promise<Widget | undefined> => {
    try {
      return (await custom.getNamespacedCustomObject({ ...crOf, name })) as Widget;
    } catch (err) {
      if (err instanceof k8s.ApiException && err.code === 404) return undefined;
      throw err;
    }
  };
  const childrenOf = async (name: string): Promise<k8s.V1ConfigMap[]> =>
    (await core.listNamespacedConfigMap({ namespace: ns, labelSelector: `${WIDGET_LABEL}=${name}` })).items;
  const childNames = async (name: string): Promise<string[]> =>
    (await childrenOf(name)).map((cm) => cm.metadata!.name!).sort();
  /** Resolves once the Widget's status says `replicas` for its current generation. */
  const settled = (name: string, replicas: number) =>
    untilTruthy(`${name}'s status to say ${replicas} replicas for its generation`, async () => {
      const w = await getWidget(name);
      return (
        w?.status?.replicas === replicas &&
        w.status.observedGeneration === w.metadata?.generation &&
        (await childNames(name)).length === replicas &&
        w
      );
    });

  before(async () => {
    k = await startK8tsServer({ fromSource: true, readyTimeoutMs: 60_000 });
    kc = new k8s.KubeConfig();
    kc.loadFromFile(k.kubeconfig);
    core = kc.makeApiClient(k8s.CoreV1Api);
    custom = kc.makeApiClient(k8s.CustomObjectsApi);
    await core.createNamespace({ body: { metadata: { name: ns } } });
    // The CRD comes after the garbage collector has built its graph, as on a running
    // cluster: it learns of widgets from discovery, not from its start-up.
    await untilTruthy(
      'the garbage collector to sync',
      () => k.logs().includes('garbagecollector: graph synced'),
      60_000,
    );
    await kc.makeApiClient(k8s.ApiextensionsV1Api).createCustomResourceDefinition({ body: widgetCRD });
    // Served once Established (names accepted by the CRD controllers of the API server).
    await until(
      'widgets to be served',
      async () => {
        await custom.listNamespacedCustomObject(crOf);
        return true;
      },
      30_000,
    );
    controller = new WidgetController(kc, core, custom);
    await controller.start();
  });

  after(async () => {
    await controller?.stop();
    await k?.stop();
  });

  it("creates a Widget's ConfigMaps, owned by it, and writes its status through /status", async () => {
    const created = (await custom.createNamespacedCustomObject({
      ...crOf,
      body: widget('alpha', 2),
    })) as Widget;
    assert.equal(created.metadata?.generation, 1);
    assert.equal(created.spec.color, 'blue', "the schema's default");
    await untilTruthy('the informer to see alpha added', () => controller.saw(/^add alpha gen=1/));
    const w = await settled('alpha', 2);
    assert.deepEqual(w.status, { replicas: 2, observedGeneration: 1 });
    assert.equal(w.metadata?.generation, 1, 'a status write leaves the generation');
    const cms = await childrenOf('alpha');
    assert.deepEqual(cms.map((cm) => cm.metadata!.name).sort(), ['alpha-0', 'alpha-1']);
    for (const cm of cms) {
      assert.deepEqual(
        cm.metadata?.ownerReferences?.map((o) => ({ ...o })),
        [
          {
            apiVersion: `${GROUP}/${VERSION}`,
            kind: 'Widget',
            name: 'alpha',
            uid: created.metadata!.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      );
      assert.equal(cm.data?.color, 'blue');
    }
    await untilTruthy("the informer to see alpha's status", () =>
      controller.saw(/^update alpha gen=1 deleting=false status=\{"replicas":2,"observedGeneration":1\}/),
    );
    // kubectl's table is additionalPrinterColumns' (and no Age column when they are set, as upstream).
    const table = await k.kubectlOk('get', 'widgets', '-n', ns);
    assert.match(table, /^NAME\s+REPLICAS\s+READY\nalpha\s+2\s+2\n$/);
  });

  it('follows spec changes, through the resource and the scale subresource', async () => {
    await custom.patchNamespacedCustomObject(
      { ...crOf, name: 'alpha', body: { spec: { replicas: 4 } } },
      mergePatch,
    );
    let w = await settled('alpha', 4);
    assert.equal(w.metadata?.generation, 2);
    assert.deepEqual(await childNames('alpha'), ['alpha-0', 'alpha-1', 'alpha-2', 'alpha-3']);
    const scale = (await custom.getNamespacedCustomObjectScale({ ...crOf, name: 'alpha' })) as k8s.V1Scale;
    assert.deepEqual([scale.kind, scale.spec?.replicas, scale.status?.replicas], ['Scale', 4, 4]);
    await custom.patchNamespacedCustomObjectScale(
      { ...crOf, name: 'alpha', body: { spec: { replicas: 1 } } },
      mergePatch,
    );
    w = await settled('alpha', 1);
    assert.equal(w.spec.replicas, 1);
    assert.equal(w.metadata?.generation, 3);
    assert.deepEqual(await childNames('alpha'), ['alpha-0']);
  });

  it('keeps status and spec apart: the resource ignores status, /status ignores spec', async () => {
    const before = (await getWidget('alpha'))!;
    const put = (await custom.replaceNamespacedCustomObject({
      ...crOf,
      name: 'alpha',
      body: { ...before, status: { replicas: 99, observedGeneration: 99 } },
    })) as Widget;
    assert.deepEqual(put.status, before.status, 'status written to the resource is dropped');
    assert.equal(put.metadata?.generation, before.metadata?.generation);
    const viaStatus = (await custom.replaceNamespacedCustomObjectStatus({
      ...crOf,
      name: 'alpha',
      body: { ...put, spec: { replicas: 7, color: 'red' }, status: { replicas: 1, observedGeneration: 3 } },
    })) as Widget;
    assert.deepEqual(viaStatus.spec, { replicas: 1, color: 'blue' }, 'spec written to /status is dropped');
    assert.equal(viaStatus.metadata?.generation, before.metadata?.generation);
    const invalid = await custom
      .patchNamespacedCustomObject(
        { ...crOf, name: 'alpha', body: { spec: { replicas: 'three' } } },
        mergePatch,
      )
      .then(
        () => assert.fail('replicas "three" accepted'),
        (err: unknown) => err as k8s.ApiException<string>,
      );
    assert.equal(invalid.code, 422);
    assert.match(String(invalid.body), /spec\.replicas in body must be of type integer: \\?"string\\?"/);
  });

  it('deleting a Widget (Background) makes the garbage collector delete its ConfigMaps', async () => {
    await custom.patchNamespacedCustomObject(
      { ...crOf, name: 'alpha', body: { spec: { replicas: 3 } } },
      mergePatch,
    );
    await settled('alpha', 3);
    await custom.deleteNamespacedCustomObject({ ...crOf, name: 'alpha', propagationPolicy: 'Background' });
    assert.equal(await getWidget('alpha'), undefined, 'Background deletes the owner at once');
    await untilTruthy('the informer to see alpha deleted', () => controller.saw(/^delete alpha /));
    await untilTruthy(
      "the garbage collector to delete alpha's ConfigMaps",
      async () => (await childNames('alpha')).length === 0,
      GC_DEADLINE_MS,
      250,
    );
  });

  it('Foreground: the Widget stays, with foregroundDeletion, until its blocking ConfigMaps are gone', async () => {
    await custom.createNamespacedCustomObject({ ...crOf, body: widget('beta', 2) });
    await settled('beta', 2);
    // A finalizer of ours keeps beta-1 Terminating, and with it the Widget.
    await core.patchNamespacedConfigMap(
      { namespace: ns, name: 'beta-1', body: { metadata: { finalizers: [`${GROUP}/hold`] } } },
      mergePatch,
    );
    await custom.deleteNamespacedCustomObject({ ...crOf, name: 'beta', propagationPolicy: 'Foreground' });
    const deleting = await getWidget('beta');
    assert.ok(deleting?.metadata?.deletionTimestamp);
    assert.deepEqual(deleting.metadata.finalizers, ['foregroundDeletion']);
    await untilTruthy(
      'the garbage collector to delete beta-0 and mark beta-1',
      async () => {
        const cms = await childrenOf('beta');
        return cms.length === 1 && cms[0]!.metadata!.deletionTimestamp !== undefined;
      },
      GC_DEADLINE_MS,
      250,
    );
    const held = await getWidget('beta');
    assert.ok(held, 'the Widget waits for beta-1');
    assert.deepEqual(held.metadata?.finalizers, ['foregroundDeletion']);
    await core.patchNamespacedConfigMap(
      { namespace: ns, name: 'beta-1', body: { metadata: { finalizers: null } } },
      mergePatch,
    );
    await untilTruthy('beta to be deleted', async () => (await getWidget('beta')) === undefined, 60_000, 250);
    assert.deepEqual(await childNames('beta'), []);
    assert.ok(
      controller.saw(/^update beta gen=\d+ deleting=true/),
      'the informer saw the Terminating Widget',
    );
    await untilTruthy('the informer to see beta deleted', () => controller.saw(/^delete beta /));
  });

  it('Orphan: the ConfigMaps stay, without their ownerReference', async () => {
    await custom.createNamespacedCustomObject({ ...crOf, body: widget('gamma', 2) });
    await settled('gamma', 2);
    await custom.deleteNamespacedCustomObject({ ...crOf, name: 'gamma', propagationPolicy: 'Orphan' });
    await untilTruthy(
      'gamma to be deleted once its ConfigMaps are orphaned',
      async () => (await getWidget('gamma')) === undefined,
      GC_DEADLINE_MS,
      250,
    );
    const cms = await childrenOf('gamma');
    assert.deepEqual(
      cms.map((cm) => [cm.metadata!.name, cm.metadata!.ownerReferences ?? []]),
      [
        ['gamma-0', []],
        ['gamma-1', []],
      ],
    );
  });

  it('a Widget owned by two ConfigMaps loses only the reference to the deleted one, then goes with the other', async () => {
    const owner = async (name: string) => {
      const cm = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name } } });
      return { apiVersion: 'v1', kind: 'ConfigMap', name, uid: cm.metadata!.uid! };
    };
    const a = await owner('eta-owner-a');
    const b = await owner('eta-owner-b');
    await custom.createNamespacedCustomObject({
      ...crOf,
      body: widget('eta', 0, { metadata: { name: 'eta', namespace: ns, ownerReferences: [a, b] } }),
    });
    await settled('eta', 0);
    await core.deleteNamespacedConfigMap({ namespace: ns, name: a.name });
    // The garbage collector's strategic merge patch is 415 for a custom resource: it
    // falls back to a merge patch, as kube-controller-manager's does.
    await untilTruthy(
      'eta to lose its reference to eta-owner-a',
      async () => (await getWidget('eta'))?.metadata?.ownerReferences?.map((o) => o.name).join() === b.name,
      GC_DEADLINE_MS,
      250,
    );
    await core.deleteNamespacedConfigMap({ namespace: ns, name: b.name });
    await untilTruthy(
      'eta to be collected with its last owner',
      async () => (await getWidget('eta')) === undefined,
      GC_DEADLINE_MS,
      250,
    );
  });

  it('an ownerReference naming a served version that is not the preferred one is followed too', async () => {
    const owner = (await custom.createNamespacedCustomObject({
      ...crOf,
      version: 'v1beta1',
      body: { ...widget('theta', 0), apiVersion: `${GROUP}/v1beta1` },
    })) as Widget;
    await settled('theta', 0);
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: {
          name: 'theta-child',
          ownerReferences: [
            { apiVersion: `${GROUP}/v1beta1`, kind: 'Widget', name: 'theta', uid: owner.metadata!.uid! },
          ],
        },
      },
    });
    await custom.deleteNamespacedCustomObject({ ...crOf, name: 'theta' });
    // As kube-controller-manager's REST mapper: any served version of the kind maps.
    await untilTruthy(
      'theta-child to be collected',
      async () =>
        !(await core.listNamespacedConfigMap({ namespace: ns })).items.some(
          (cm) => cm.metadata?.name === 'theta-child',
        ),
      GC_DEADLINE_MS,
      250,
    );
  });

  it('RBAC: a ServiceAccount token allowed get and list on widgets reads them, and gets 403 on create', async () => {
    await custom.createNamespacedCustomObject({ ...crOf, body: widget('delta', 1) });
    await core.createNamespacedServiceAccount({
      namespace: ns,
      body: { metadata: { name: 'widget-reader' } },
    });
    const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: ns,
      body: {
        metadata: { name: 'widget-reader' },
        rules: [{ apiGroups: [GROUP], resources: [PLURAL], verbs: ['get', 'list'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: ns,
      body: {
        metadata: { name: 'widget-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'widget-reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'widget-reader', namespace: ns }],
      },
    });
    const token = (
      await core.createNamespacedServiceAccountToken({
        namespace: ns,
        name: 'widget-reader',
        body: { spec: { audiences: [], expirationSeconds: 3600 } },
      })
    ).status?.token;
    assert.ok(token);
    const cluster = kc.getCurrentCluster()!;
    const saConfig = new k8s.KubeConfig();
    saConfig.loadFromOptions({
      clusters: [cluster],
      users: [{ name: 'widget-reader', token }],
      contexts: [{ name: 'widget-reader', cluster: cluster.name, user: 'widget-reader' }],
      currentContext: 'widget-reader',
    });
    const asReader = saConfig.makeApiClient(k8s.CustomObjectsApi);
    const user = `system:serviceaccount:${ns}:widget-reader`;
    const list = (await asReader.listNamespacedCustomObject(crOf)) as k8s.KubernetesListObject<Widget>;
    assert.ok(list.items.some((w) => w.metadata?.name === 'delta'));
    const got = (await asReader.getNamespacedCustomObject({ ...crOf, name: 'delta' })) as Widget;
    assert.equal(got.spec.replicas, 1);
    const refused = async (what: string, call: Promise<unknown>, message: RegExp) => {
      const err = await call.then(
        () => assert.fail(`${what} allowed`),
        (e: unknown) => e as k8s.ApiException<string>,
      );
      assert.equal(err.code, 403, `${what}: ${String(err)}`);
      assert.match(String(err.body), message, what);
    };
    await refused(
      'create',
      asReader.createNamespacedCustomObject({ ...crOf, body: widget('epsilon', 1) }),
      new RegExp(
        `widgets\\.example\\.k8ts\\.io is forbidden: User \\\\?"${user}\\\\?" cannot create resource \\\\?"widgets\\\\?" in API group \\\\?"${GROUP.replaceAll('.', '\\.')}\\\\?" in the namespace \\\\?"${ns}\\\\?"`,
      ),
    );
    await refused(
      'a status write',
      asReader.patchNamespacedCustomObjectStatus(
        { ...crOf, name: 'delta', body: { status: { replicas: 5 } } },
        mergePatch,
      ),
      /cannot patch resource \\?"widgets\/status\\?"/,
    );
    await refused(
      'delete',
      asReader.deleteNamespacedCustomObject({ ...crOf, name: 'delta' }),
      /cannot delete resource \\?"widgets\\?"/,
    );
    await refused(
      'a list in another namespace',
      asReader.listNamespacedCustomObject({ ...crOf, namespace: 'default' }),
      /cannot list resource \\?"widgets\\?" in API group \\?"example\.k8ts\.io\\?" in the namespace \\?"default\\?"/,
    );
    assert.equal(await getWidget('epsilon'), undefined, 'nothing was stored');
  });

  it('the informer saw no errors', () => {
    // Reconcile errors are retried; none is expected in these steps.
    assert.deepEqual(controller.errors, []);
  });
});
