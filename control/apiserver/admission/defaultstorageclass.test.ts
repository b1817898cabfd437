/**
 * DefaultStorageClass admission: on the plugin alone, which class is the default
 * (annotation or beta annotation `true`, the newest, then by name) and which claims get
 * it (no storageClassName and no beta annotation); through the real API server, a claim
 * created without a class is stored with the default one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resources } from '../../../api/client/resource.js';
import type { KubeObject } from '../../../api/object.js';
import type { UserInfo } from '../../../api/auth/user.js';
import { startTestApi, type TestApi } from '../../../test/support/api.js';
import { findResource } from '../resources.js';
import { defaultStorageClass, defaultStorageClassAdmission } from './defaultstorageclass.js';
import type { AdmissionRequest } from './interfaces.js';

const sc = (name: string, created: string, annotations: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name, creationTimestamp: created, annotations },
  provisioner: 'example.com/p',
});
const DEFAULT = { 'storageclass.kubernetes.io/is-default-class': 'true' };
const BETA_DEFAULT = { 'storageclass.beta.kubernetes.io/is-default-class': 'true' };

const admin: UserInfo = { name: 'admin', groups: ['system:masters'] };
const request = (body: KubeObject, over: Partial<AdmissionRequest> = {}): AdmissionRequest => ({
  operation: 'CREATE',
  resource: findResource('', 'v1', 'persistentvolumeclaims')!,
  subresource: undefined,
  namespace: 'default',
  name: body.metadata?.name ?? '',
  body,
  user: admin,
  dryRun: false,
  ...over,
});
const claim = (spec: Record<string, unknown> = {}, annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'data', ...(annotations ? { annotations } : {}) },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
});
const recorder = { warn: () => {}, annotate: () => {} };
const classOf = (c: KubeObject) => (c.spec as { storageClassName?: string } | undefined)?.storageClassName;

describe('DefaultStorageClass admission (plugin)', () => {
  it('picks the newest default class, then the first by name; none without the annotation', () => {
    const names = (classes: KubeObject[]) => defaultStorageClass(classes)?.metadata?.name;
    assert.equal(names([sc('a', '2026-01-01T00:00:00Z'), sc('b', '2026-01-02T00:00:00Z')]), undefined);
    assert.equal(
      names([
        sc('old', '2026-01-01T00:00:00Z', DEFAULT),
        sc('new', '2026-01-02T00:00:00Z', BETA_DEFAULT),
        sc('newest-not-default', '2026-01-03T00:00:00Z', {
          'storageclass.kubernetes.io/is-default-class': 'false',
        }),
      ]),
      'new',
    );
    assert.equal(
      names([sc('zeta', '2026-01-02T00:00:00Z', DEFAULT), sc('Alpha', '2026-01-02T00:00:00Z', DEFAULT)]),
      'Alpha',
    );
  });

  it('sets storageClassName only on a new claim that names no class', async () => {
    const classes = [sc('local-path', '2026-01-01T00:00:00Z', DEFAULT)];
    const plugin = defaultStorageClassAdmission({ listStorageClasses: () => Promise.resolve(classes) });
    const cases: [string, KubeObject, Partial<AdmissionRequest>, unknown][] = [
      ['no class', claim(), {}, 'local-path'],
      ['an explicit class', claim({ storageClassName: 'fast' }), {}, 'fast'],
      ['"" (no class wanted)', claim({ storageClassName: '' }), {}, ''],
      [
        'the beta annotation',
        claim({}, { 'volume.beta.kubernetes.io/storage-class': 'slow' }),
        {},
        undefined,
      ],
      ['an update', claim(), { operation: 'UPDATE', body: undefined }, undefined],
      ['a status write', claim(), { subresource: 'status' }, undefined],
      ['another resource', claim(), { resource: findResource('', 'v1', 'persistentvolumes')! }, undefined],
    ];
    for (const [what, body, over, want] of cases) {
      const req = request(body, over);
      await plugin.admit!(req, recorder);
      assert.equal((body.spec as { storageClassName?: string }).storageClassName, want, what);
    }
    const none = defaultStorageClassAdmission({ listStorageClasses: () => Promise.resolve([]) });
    const body = claim();
    await none.admit!(request(body), recorder);
    assert.equal((body.spec as { storageClassName?: string }).storageClassName, undefined);
  });
});

describe('DefaultStorageClass admission (real API server)', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.stop());

  it('a claim without a class is stored with the default class; without a default it has none', async () => {
    const create = (name: string) =>
      api.client.create<KubeObject>(
        resources.persistentvolumeclaims,
        { ...claim(), metadata: { name, namespace: 'default' } },
        { namespace: 'default' },
      );
    assert.equal(classOf(await create('before')), undefined);
    await api.client.create(resources.storageclasses, {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'local-path', annotations: DEFAULT },
      provisioner: 'rancher.io/local-path',
    });
    assert.equal(classOf(await create('after')), 'local-path');
  });
});
