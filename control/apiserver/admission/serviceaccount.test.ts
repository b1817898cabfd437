/**
 * ServiceAccount admission through the real API server: a new Pod gets the
 * kube-api-access-* projected volume and a read-only mount of it in every container;
 * automountServiceAccountToken false on the pod or its ServiceAccount leaves it out; a
 * missing ServiceAccount is refused with upstream's 403 and nothing is written. The
 * plugin's own rules (existing mounts, an existing volume, mirror pods, the default
 * ServiceAccount's retries) are checked on the plugin alone.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ApiStatusError } from '../../../api/client/errors.js';
import { resources } from '../../../api/client/resource.js';
import type { KubeObject } from '../../../api/object.js';
import type { UserInfo } from '../../../api/auth/user.js';
import { startTestApi, type TestApi } from '../../../test/support/api.js';
import { findResource } from '../resources.js';
import type { AdmissionRequest } from './interfaces.js';
import {
  DEFAULT_API_TOKEN_MOUNT_PATH,
  serviceAccountAdmission,
  tokenVolumeSource,
} from './serviceaccount.js';

type Obj = Record<string, unknown>;
const pod = (name: string, spec: Obj = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: {
    initContainers: [{ name: 'init', image: 'busybox' }],
    containers: [
      { name: 'a', image: 'busybox' },
      { name: 'b', image: 'busybox' },
    ],
    ...spec,
  },
});
interface Vol {
  name: string;
  projected?: Obj;
}
interface Ctr {
  name: string;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}
const specOf = (p: KubeObject) => p.spec as { volumes?: Vol[]; containers: Ctr[]; initContainers?: Ctr[] };

describe('ServiceAccount admission (real API server)', () => {
  let api: TestApi;
  before(async () => {
    // A server that issues tokens: only then are token volumes added.
    const { privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    api = await startTestApi({ serviceAccountTokens: { key: privateKey } });
    await api.client.create(
      resources.serviceaccounts,
      { metadata: { name: 'robot' } },
      { namespace: 'default' },
    );
    await api.client.create(
      resources.serviceaccounts,
      { metadata: { name: 'quiet' }, automountServiceAccountToken: false },
      { namespace: 'default' },
    );
  });
  after(() => api.stop());

  it('adds the projected token volume and a read-only mount to every container', async () => {
    const created = await api.client.create(resources.pods, pod('with-token'), { namespace: 'default' });
    const spec = specOf(created);
    const vols = (spec.volumes ?? []).filter((v) => v.name.startsWith('kube-api-access-'));
    assert.equal(vols.length, 1);
    assert.match(vols[0]!.name, /^kube-api-access-[a-z0-9]{5}$/);
    assert.deepEqual(vols[0]!.projected, {
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        {
          downwardAPI: {
            items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
          },
        },
      ],
    });
    for (const c of [...spec.initContainers!, ...spec.containers]) {
      assert.deepEqual(
        c.volumeMounts,
        [{ name: vols[0]!.name, readOnly: true, mountPath: DEFAULT_API_TOKEN_MOUNT_PATH }],
        c.name,
      );
    }
    assert.equal((created.spec as Obj).serviceAccountName, 'default');
  });

  it('adds nothing when the pod or its ServiceAccount says automountServiceAccountToken: false', async () => {
    for (const [name, spec] of [
      ['pod-false', { automountServiceAccountToken: false }],
      ['sa-false', { serviceAccountName: 'quiet' }],
    ] as const) {
      const created = await api.client.create(resources.pods, pod(name, spec), { namespace: 'default' });
      assert.equal(specOf(created).volumes, undefined, name);
      for (const c of specOf(created).containers) assert.equal(c.volumeMounts, undefined, name);
    }
    // The pod's true wins over its ServiceAccount's false.
    const created = await api.client.create(
      resources.pods,
      pod('pod-true', { serviceAccountName: 'quiet', automountServiceAccountToken: true }),
      { namespace: 'default' },
    );
    assert.equal(specOf(created).volumes?.length, 1);
  });

  it('refuses a pod whose ServiceAccount does not exist, with 403, writing nothing', async () => {
    const err = await api.client
      .create(resources.pods, pod('orphan', { serviceAccountName: 'ghost' }), { namespace: 'default' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(err instanceof ApiStatusError, String(err));
    assert.equal(err.status.code, 403);
    assert.equal(err.status.reason, 'Forbidden');
    assert.equal(
      err.status.message,
      'pods "orphan" is forbidden: error looking up service account default/ghost: serviceaccount "ghost" not found',
    );
    const got = await api.client.get(resources.pods, 'default', 'orphan').catch((e: unknown) => e);
    assert.ok(got instanceof ApiStatusError && got.status.code === 404);
  });

  it('a pod with a ServiceAccount of its own passes validation with the volume', async () => {
    const created = await api.client.create(
      resources.pods,
      pod('robot-pod', { serviceAccountName: 'robot' }),
      {
        namespace: 'default',
      },
    );
    assert.equal(specOf(created).volumes?.length, 1);
  });

  it('refuses an invalid projected volume, naming the field', async () => {
    const bad = pod('bad-projected', {
      automountServiceAccountToken: false,
      volumes: [
        {
          name: 'p',
          projected: {
            sources: [
              { serviceAccountToken: { path: 'token', expirationSeconds: 60 } },
              { downwardAPI: { items: [{ path: 'token', fieldRef: { fieldPath: 'spec.nodeName' } }] } },
            ],
          },
        },
      ],
    });
    const err = await api.client.create(resources.pods, bad, { namespace: 'default' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof ApiStatusError, String(err));
    assert.equal(err.status.code, 422);
    const fields = (err.status.details?.causes ?? []).map((c) => c.field);
    assert.ok(
      fields.includes('spec.volumes[0].projected.sources[0].serviceAccountToken.expirationSeconds'),
      String(fields),
    );
    assert.ok(
      fields.includes('spec.volumes[0].projected.sources[1].downwardAPI.items[0].fieldRef.fieldPath'),
      String(fields),
    );
    assert.ok(fields.includes('spec.volumes[0].projected'), String(fields)); // conflicting duplicate paths
  });
});

describe('ServiceAccount admission (the plugin)', () => {
  const user: UserInfo = { name: 'u', groups: [] };
  const request = (body: KubeObject): AdmissionRequest => ({
    operation: 'CREATE',
    resource: findResource('', 'v1', 'pods')!,
    subresource: undefined,
    namespace: 'ns',
    name: body.metadata?.name ?? '',
    body,
    user,
    dryRun: false,
  });
  const plugin = (sas: string[], sleeps: number[] = []) =>
    serviceAccountAdmission({
      mountServiceAccountToken: true,
      getServiceAccount: (_ns, name) =>
        Promise.resolve(sas.includes(name) ? { metadata: { name } } : undefined),
      sleep: (ms) => {
        sleeps.push(ms);
        return Promise.resolve();
      },
      random: () => 0,
    });

  it('keeps a container mount already at the path and reuses an existing kube-api-access volume', async () => {
    const p = pod('x', {
      volumes: [
        { name: 'kube-api-access-mine', projected: tokenVolumeSource() },
        { name: 'other', emptyDir: {} },
      ],
      containers: [
        { name: 'a', image: 'i', volumeMounts: [{ name: 'other', mountPath: DEFAULT_API_TOKEN_MOUNT_PATH }] },
        { name: 'b', image: 'i' },
      ],
    });
    await plugin(['default']).admit!(request(p), { warn() {}, annotate() {} });
    const spec = specOf(p);
    assert.deepEqual(
      spec.volumes!.map((v) => v.name),
      ['kube-api-access-mine', 'other'],
    );
    assert.deepEqual(spec.containers[0]!.volumeMounts, [
      { name: 'other', mountPath: DEFAULT_API_TOKEN_MOUNT_PATH },
    ]);
    assert.deepEqual(spec.containers[1]!.volumeMounts, [
      { name: 'kube-api-access-mine', readOnly: true, mountPath: DEFAULT_API_TOKEN_MOUNT_PATH },
    ]);
    assert.equal(spec.initContainers![0]!.volumeMounts![0]!.name, 'kube-api-access-mine');
  });

  it('adds no volume when every container already mounts the path', async () => {
    const p = pod('x', {
      initContainers: [],
      volumes: [{ name: 'own', emptyDir: {} }],
      containers: [
        { name: 'a', image: 'i', volumeMounts: [{ name: 'own', mountPath: DEFAULT_API_TOKEN_MOUNT_PATH }] },
      ],
    });
    await plugin(['default']).admit!(request(p), { warn() {}, annotate() {} });
    assert.deepEqual(
      specOf(p).volumes!.map((v) => v.name),
      ['own'],
    );
  });

  it('adds no volume when the server issues no tokens, but still wants the ServiceAccount', async () => {
    const p = pod('n');
    const off = serviceAccountAdmission({
      getServiceAccount: (_ns, name) =>
        Promise.resolve(name === 'default' ? { metadata: { name } } : undefined),
      mountServiceAccountToken: false,
    });
    await off.admit!(request(p), { warn() {}, annotate() {} });
    assert.equal(specOf(p).volumes, undefined);
    await assert.rejects(
      off.admit!(request(pod('m', { serviceAccountName: 'ghost' })), {
        warn() {},
        annotate() {},
      }) as Promise<void>,
      /serviceaccount "ghost" not found/,
    );
  });

  it("gives a pod without imagePullSecrets its ServiceAccount's; keeps a pod's own", async () => {
    const withSecrets = serviceAccountAdmission({
      getServiceAccount: (_ns, name) =>
        Promise.resolve({ metadata: { name }, imagePullSecrets: [{ name: 'regcred' }, { name: 'other' }] }),
      mountServiceAccountToken: false,
    });
    const bare = pod('bare');
    await withSecrets.admit!(request(bare), { warn() {}, annotate() {} });
    assert.deepEqual((bare.spec as Obj).imagePullSecrets, [{ name: 'regcred' }, { name: 'other' }]);
    const own = pod('own', { imagePullSecrets: [{ name: 'mine' }] });
    await withSecrets.admit!(request(own), { warn() {}, annotate() {} });
    assert.deepEqual((own.spec as Obj).imagePullSecrets, [{ name: 'mine' }]);
  });

  it('leaves a mirror pod alone', async () => {
    const p = pod('m');
    p.metadata!.annotations = { 'kubernetes.io/config.mirror': 'x' };
    await plugin([]).admit!(request(p), { warn() {}, annotate() {} });
    assert.equal(specOf(p).volumes, undefined);
  });

  it('looks the default ServiceAccount up 10 times before refusing, another one once', async () => {
    const sleeps: number[] = [];
    const refused = (e: unknown) =>
      e instanceof Error && /is forbidden: error looking up service account/.test(e.message);
    await assert.rejects(
      plugin([], sleeps).admit!(request(pod('d')), { warn() {}, annotate() {} }) as Promise<void>,
      refused,
    );
    assert.deepEqual(sleeps, Array(9).fill(100));
    sleeps.length = 0;
    await assert.rejects(
      plugin([], sleeps).admit!(request(pod('o', { serviceAccountName: 'other' })), {
        warn() {},
        annotate() {},
      }) as Promise<void>,
      refused,
    );
    assert.deepEqual(sleeps, []);
    const gen = pod('');
    gen.metadata = { generateName: 'web-' };
    await assert.rejects(
      plugin(['x']).admit!(request(gen), { warn() {}, annotate() {} }) as Promise<void>,
      /pods "web-" is forbidden/,
    );
  });
});
