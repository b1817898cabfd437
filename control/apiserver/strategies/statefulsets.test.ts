/**
 * The StatefulSet and PersistentVolumeClaim strategies: upstream's defaults, validation
 * with field paths and types, the forbidden spec update, status rules.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiStatusError } from '../../../api/client/errors.js';
import { resources } from '../../../api/client/resource.js';
import type { KubeObject } from '../../../api/object.js';
import { startTestApi } from '../../../test/support/api.js';
import { assertErrors, create, created, modified, update, updateStatus, type Json } from './testing.js';

const STS = 'apps/v1/statefulsets';
const PVC = 'v1/persistentvolumeclaims';

const web = (): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'web', namespace: 'default' },
  spec: {
    serviceName: 'nginx',
    selector: { matchLabels: { app: 'nginx' } },
    template: {
      metadata: { labels: { app: 'nginx' } },
      spec: {
        containers: [
          {
            name: 'nginx',
            image: 'nginx:1.25',
            volumeMounts: [{ name: 'www', mountPath: '/usr/share/nginx/html' }],
          },
        ],
      },
    },
    volumeClaimTemplates: [
      {
        metadata: { name: 'www' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    ],
  },
});

describe('StatefulSet strategy', () => {
  it('defaults as SetDefaults_StatefulSet, status {replicas: 0, availableReplicas: 0}', () => {
    const obj = created(STS, web()) as Json;
    assert.equal(obj.spec.podManagementPolicy, 'OrderedReady');
    assert.deepEqual(obj.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
    assert.deepEqual(obj.spec.persistentVolumeClaimRetentionPolicy, {
      whenDeleted: 'Retain',
      whenScaled: 'Retain',
    });
    assert.equal(obj.spec.replicas, 1);
    assert.equal(obj.spec.revisionHistoryLimit, 10);
    assert.equal(obj.spec.template.spec.restartPolicy, 'Always');
    assert.equal(obj.spec.volumeClaimTemplates[0].spec.volumeMode, 'Filesystem');
    assert.deepEqual(obj.spec.volumeClaimTemplates[0].status, { phase: 'Pending' });
    assert.deepEqual(obj.status, { replicas: 0, availableReplicas: 0 });
  });

  it('keeps OnDelete without rollingUpdate', () => {
    const obj = created(
      STS,
      modified(web(), (s) => (s.spec.updateStrategy = { type: 'OnDelete' })),
    ) as Json;
    assert.deepEqual(obj.spec.updateStrategy, { type: 'OnDelete' });
  });

  const bad: [string, (s: Json) => void, [string, string][]][] = [
    [
      'selector not matching the template',
      (s) => (s.spec.selector = { matchLabels: { app: 'other' } }),
      [['spec.template.metadata.labels', 'Invalid']],
    ],
    ['no selector', (s) => delete s.spec.selector, [['spec.selector', 'Required']]],
    ['empty selector', (s) => (s.spec.selector = {}), [['spec.selector', 'Invalid']]],
    ['negative replicas', (s) => (s.spec.replicas = -1), [['spec.replicas', 'Invalid']]],
    [
      'negative ordinals.start',
      (s) => (s.spec.ordinals = { start: -1 }),
      [['spec.ordinals.start', 'Invalid']],
    ],
    [
      'podManagementPolicy',
      (s) => (s.spec.podManagementPolicy = 'Random'),
      [['spec.podManagementPolicy', 'Invalid']],
    ],
    [
      'updateStrategy type',
      (s) => (s.spec.updateStrategy = { type: 'Recreate' }),
      [['spec.updateStrategy', 'Invalid']],
    ],
    [
      'OnDelete with rollingUpdate',
      (s) => (s.spec.updateStrategy = { type: 'OnDelete', rollingUpdate: { partition: 1 } }),
      [['spec.updateStrategy.rollingUpdate', 'Invalid']],
    ],
    [
      'negative partition',
      (s) => (s.spec.updateStrategy = { type: 'RollingUpdate', rollingUpdate: { partition: -2 } }),
      [['spec.updateStrategy.rollingUpdate.partition', 'Invalid']],
    ],
    [
      'maxUnavailable 0',
      (s) => (s.spec.updateStrategy = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0 } }),
      [['spec.updateStrategy.rollingUpdate.maxUnavailable', 'Invalid']],
    ],
    [
      'retention policy',
      (s) => (s.spec.persistentVolumeClaimRetentionPolicy = { whenDeleted: 'Keep', whenScaled: 'Delete' }),
      [['spec.persistentVolumeClaimRetentionPolicy.whenDeleted', 'NotSupported']],
    ],
    [
      'restartPolicy Never',
      (s) => (s.spec.template.spec.restartPolicy = 'Never'),
      [['spec.template.spec.restartPolicy', 'NotSupported']],
    ],
    [
      'activeDeadlineSeconds',
      (s) => (s.spec.template.spec.activeDeadlineSeconds = 5),
      [['spec.template.spec.activeDeadlineSeconds', 'Forbidden']],
    ],
    [
      'a claim template without access modes or storage',
      (s) => (s.spec.volumeClaimTemplates[0].spec = {}),
      [
        ['spec.volumeClaimTemplates[0].spec.accessModes', 'Required'],
        ['spec.volumeClaimTemplates[0].spec.resources[storage]', 'Required'],
      ],
    ],
    [
      'a mount of neither a volume nor a claim template',
      (s) => (s.spec.template.spec.containers[0].volumeMounts[0].name = 'data'),
      [['spec.template.spec.containers[0].volumeMounts[0].name', 'Invalid']],
    ],
  ];
  for (const [what, edit, want] of bad) {
    it(`refuses ${what}`, () => {
      assertErrors(create(STS, modified(web(), edit)).errs, want);
    });
  }

  it('updates replicas, template, updateStrategy; forbids serviceName and claim templates', () => {
    const old = created(STS, web());
    const ok = modified(old, (s) => {
      s.spec.replicas = 3;
      s.spec.template.spec.containers[0].image = 'nginx:1.26';
      s.spec.updateStrategy = { type: 'OnDelete' };
      s.spec.minReadySeconds = 5;
    });
    assert.deepEqual(update(STS, old, ok).errs, []);
    const renamed = update(
      STS,
      old,
      modified(old, (s) => (s.spec.serviceName = 'other')),
    ).errs;
    assertErrors(renamed, [['spec', 'Forbidden']]);
    assert.equal(
      renamed[0]!.message,
      "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    );
    const claims = update(
      STS,
      old,
      modified(old, (s) => (s.spec.volumeClaimTemplates[0].spec.resources.requests.storage = '2Gi')),
    );
    assertErrors(claims.errs, [['spec', 'Forbidden']]);
  });

  it('status: counters within status.replicas, available within ready', () => {
    const old = created(STS, web());
    const good = modified(
      old,
      (s) =>
        (s.status = {
          replicas: 2,
          readyReplicas: 2,
          availableReplicas: 1,
          currentReplicas: 2,
          updatedReplicas: 2,
        }),
    );
    assert.deepEqual(updateStatus(STS, old, good).errs, []);
    const badStatus = modified(
      old,
      (s) => (s.status = { replicas: 1, readyReplicas: 2, availableReplicas: 2 }),
    );
    assertErrors(updateStatus(STS, old, badStatus).errs, [
      ['status.readyReplicas', 'Invalid'],
      ['status.availableReplicas', 'Invalid'],
    ]);
  });
});

const claim = (): KubeObject => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'www-web-0', namespace: 'default' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1.5Gi' } } },
});

describe('PersistentVolumeClaim strategy', () => {
  it('defaults volumeMode Filesystem, canonical storage, status Pending', () => {
    const obj = created(PVC, claim()) as Json;
    assert.equal(obj.spec.volumeMode, 'Filesystem');
    assert.equal(obj.spec.resources.requests.storage, '1536Mi');
    assert.deepEqual(obj.status, { phase: 'Pending' });
  });

  it('refuses bad access modes, a zero or missing storage request', () => {
    assertErrors(
      create(
        PVC,
        modified(claim(), (c) => (c.spec.accessModes = ['ReadWriteSometimes'])),
      ).errs,
      [['spec.accessModes', 'NotSupported']],
    );
    assertErrors(
      create(
        PVC,
        modified(claim(), (c) => (c.spec.resources.requests.storage = '0')),
      ).errs,
      [['spec.resources[storage]', 'Invalid']],
    );
    assertErrors(
      create(
        PVC,
        modified(claim(), (c) => delete c.spec.resources),
      ).errs,
      [['spec.resources[storage]', 'Required']],
    );
  });

  it('spec is immutable but for resources.requests of a bound claim', () => {
    const old = created(PVC, claim());
    assertErrors(
      update(
        PVC,
        old,
        modified(old, (c) => (c.spec.resources.requests.storage = '2Gi')),
      ).errs,
      [['spec', 'Forbidden']],
    );
    const bound = modified(old, (c) => (c.status = { phase: 'Bound', capacity: { storage: '1536Mi' } }));
    assert.deepEqual(
      update(
        PVC,
        bound,
        modified(bound, (c) => (c.spec.resources.requests.storage = '2Gi')),
      ).errs,
      [],
    );
    assertErrors(
      update(
        PVC,
        old,
        modified(old, (c) => (c.spec.accessModes = ['ReadWriteMany'])),
      ).errs,
      [['spec', 'Forbidden']],
    );
  });
});

describe('StatefulSets through the API server', () => {
  it('422 Invalid with field causes for a bad set, and nothing stored; a serviceName change refused', async () => {
    const api = await startTestApi();
    try {
      const bad = modified(web(), (s) => (s.spec.selector = { matchLabels: { app: 'other' } }));
      const err = await api.client.create(resources.statefulsets, bad).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof ApiStatusError);
      assert.equal(err.status.code, 422);
      assert.equal(err.status.reason, 'Invalid');
      assert.deepEqual(
        err.status.details?.causes?.map((c) => c.field),
        ['spec.template.metadata.labels'],
      );
      assert.match(err.status.message ?? '', /`selector` does not match template `labels`/);
      assert.equal((await api.client.list(resources.statefulsets, { namespace: 'default' })).items.length, 0);

      const stored = await api.client.create(resources.statefulsets, web());
      const renamed = await api.client
        .patch(resources.statefulsets, 'default', 'web', 'merge', { spec: { serviceName: 'other' } })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      assert.ok(renamed instanceof ApiStatusError);
      assert.equal(renamed.status.code, 422);
      assert.match(
        renamed.status.message ?? '',
        /spec: Forbidden: updates to statefulset spec for fields other than/,
      );
      const after = await api.client.get(resources.statefulsets, 'default', 'web');
      assert.equal(after.metadata?.resourceVersion, stored.metadata?.resourceVersion);
    } finally {
      await api.stop();
    }
  });
});
