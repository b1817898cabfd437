import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApi, type TestApi } from '../../../test/support/api.js';
import { assertErrors, create, created, modified, update, type Json } from './testing.js';

const GVR = 'apps/v1/daemonsets';
const ds = {
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name: 'agent', namespace: 'default' },
  spec: {
    selector: { matchLabels: { app: 'agent' } },
    template: {
      metadata: { labels: { app: 'agent' } },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    },
  },
};

describe('DaemonSet strategy', () => {
  it('defaults updateStrategy RollingUpdate 1/0, revisionHistoryLimit 10, the pod template, template generation 1', () => {
    const obj = created(GVR, ds) as Json;
    assert.deepEqual(obj.spec.updateStrategy, {
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 1, maxSurge: 0 },
    });
    assert.equal(obj.spec.revisionHistoryLimit, 10);
    assert.equal(obj.spec.template.spec.restartPolicy, 'Always');
    assert.equal(obj.spec.template.spec.dnsPolicy, 'ClusterFirst');
    assert.equal(obj.metadata.annotations['deprecated.daemonset.template.generation'], '1');
    assert.deepEqual(obj.status, {
      currentNumberScheduled: 0,
      numberMisscheduled: 0,
      desiredNumberScheduled: 0,
      numberReady: 0,
    });
  });

  it('refuses a bad spec with the field paths and words of ValidateDaemonSetSpec', () => {
    const cases: [string, (o: Json) => void, [string, string][]][] = [
      [
        'no selector',
        (o) => delete o.spec.selector,
        [
          ['spec.selector', 'Required'],
          ['spec.template.metadata.labels', 'Invalid'],
        ],
      ],
      [
        'selector not matching',
        (o) => (o.spec.selector.matchLabels.app = 'x'),
        [['spec.template.metadata.labels', 'Invalid']],
      ],
      [
        'restartPolicy Never',
        (o) => (o.spec.template.spec.restartPolicy = 'Never'),
        [['spec.template.spec.restartPolicy', 'NotSupported']],
      ],
      [
        'bad strategy type',
        (o) => (o.spec.updateStrategy = { type: 'Recreate' }),
        [['spec.updateStrategy.type', 'NotSupported']],
      ],
      [
        'both surge and unavailable',
        (o) =>
          (o.spec.updateStrategy = {
            type: 'RollingUpdate',
            rollingUpdate: { maxUnavailable: 1, maxSurge: '10%' },
          }),
        [['spec.updateStrategy.rollingUpdate.maxSurge', 'Invalid']],
      ],
      [
        'both zero',
        (o) =>
          (o.spec.updateStrategy = {
            type: 'RollingUpdate',
            rollingUpdate: { maxUnavailable: 0, maxSurge: 0 },
          }),
        [['spec.updateStrategy.rollingUpdate.maxUnavailable', 'Required']],
      ],
      [
        'negative history',
        (o) => (o.spec.revisionHistoryLimit = -1),
        [['spec.revisionHistoryLimit', 'Invalid']],
      ],
    ];
    for (const [name, edit, want] of cases) {
      const { errs } = create(GVR, modified(ds, edit));
      assertErrors(errs, want);
      assert.ok(errs.length > 0, name);
    }
    const { errs } = create(
      GVR,
      modified(ds, (o) => (o.spec.selector.matchLabels.app = 'x')),
    );
    assert.equal(errs[0]?.message, '`selector` does not match template `labels`');
  });

  it('raises the template generation only when the template changes; the selector is immutable', () => {
    const old = created(GVR, ds);
    const same = update(
      GVR,
      old,
      modified(old, (o) => (o.spec.minReadySeconds = 5)),
    );
    assert.equal((same.obj as Json).metadata.annotations['deprecated.daemonset.template.generation'], '1');
    const changed = update(
      GVR,
      old,
      modified(old, (o) => (o.spec.template.spec.containers[0].image = 'v2')),
    );
    assert.equal((changed.obj as Json).metadata.annotations['deprecated.daemonset.template.generation'], '2');
    const moved = update(
      GVR,
      old,
      modified(old, (o) => {
        o.spec.selector.matchLabels = { app: 'agent', tier: 'x' };
        o.spec.template.metadata.labels.tier = 'x';
      }),
    );
    assertErrors(moved.errs, [['spec.selector', 'Invalid']]);
  });
});

describe('DaemonSet through kubectl', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.stop());

  it('prints NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE', async () => {
    const obj = modified(ds, (o) => (o.spec.template.spec.nodeSelector = { role: 'edge' }));
    const r = await api.kubectlIn(JSON.stringify(obj), 'create', '-f', '-');
    assert.equal(r.code, 0, r.stderr);
    const get = await api.kubectl('get', 'ds');
    assert.equal(get.code, 0, get.stderr);
    const [header, row] = get.stdout.trim().split('\n');
    assert.deepEqual(header!.split(/\s{2,}/), [
      'NAME',
      'DESIRED',
      'CURRENT',
      'READY',
      'UP-TO-DATE',
      'AVAILABLE',
      'NODE SELECTOR',
      'AGE',
    ]);
    assert.deepEqual(row!.split(/\s+/).slice(0, 7), ['agent', '0', '0', '0', '0', '0', 'role=edge']);
  });

  it('answers a bad DaemonSet with 422 and stores nothing', async () => {
    const bad = modified(ds, (o) => {
      o.metadata.name = 'bad';
      o.spec.selector.matchLabels.app = 'other';
    });
    const r = await api.kubectlIn(JSON.stringify(bad), 'create', '-f', '-');
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /spec\.template\.metadata\.labels: Invalid value: .*`selector` does not match template `labels`/,
    );
    assert.match((await api.kubectl('get', 'ds', 'bad')).stderr, /not found/);
  });

  it('serves the status subresource (kubectl get --subresource status)', async () => {
    const r = await api.kubectl(
      'get',
      'ds',
      'agent',
      '--subresource',
      'status',
      '-o',
      'jsonpath={.status.numberReady}',
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '0');
  });
});
