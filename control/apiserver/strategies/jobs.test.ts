import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../api/object.js';
import { assertErrors, create, created, modified, strategy, update, type Json } from './testing.js';

const JOBS = 'batch/v1/jobs';
const CRONJOBS = 'batch/v1/cronjobs';

function job(extra: Json = {}): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'pi', namespace: 'default', uid: 'u-1' },
    spec: {
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'pi', image: 'busybox' }] } },
      ...extra,
    },
  };
}

function cronJob(spec: Json = {}): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'hello', namespace: 'default', uid: 'u-2' },
    spec: {
      schedule: '*/1 * * * *',
      jobTemplate: {
        spec: {
          template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox' }] } },
        },
      },
      ...spec,
    },
  };
}

describe('Job strategy', () => {
  it('defaults as kube-apiserver: completions/parallelism 1, backoffLimit 6, NonIndexed, the generated selector and labels', () => {
    const obj = created(JOBS, job()) as Json;
    assert.equal(obj.spec.completions, 1);
    assert.equal(obj.spec.parallelism, 1);
    assert.equal(obj.spec.backoffLimit, 6);
    assert.equal(obj.spec.completionMode, 'NonIndexed');
    assert.equal(obj.spec.suspend, false);
    assert.equal(obj.spec.manualSelector, false);
    assert.equal(obj.spec.podReplacementPolicy, 'TerminatingOrFailed');
    assert.deepEqual(obj.spec.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': 'u-1' } });
    const labels = {
      'batch.kubernetes.io/controller-uid': 'u-1',
      'batch.kubernetes.io/job-name': 'pi',
      'controller-uid': 'u-1',
      'job-name': 'pi',
    };
    assert.deepEqual(obj.spec.template.metadata.labels, labels);
    assert.deepEqual(obj.metadata.labels, labels);
    assert.deepEqual(obj.status, {});
  });

  it('leaves completions unset when only parallelism is given (a work queue)', () => {
    const obj = created(JOBS, job({ parallelism: 3 })) as Json;
    assert.equal(obj.spec.completions, undefined);
    assert.equal(obj.spec.parallelism, 3);
  });

  it('podReplacementPolicy is Failed with a podFailurePolicy, and rule conditions default status True', () => {
    const obj = created(
      JOBS,
      job({
        podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] },
      }),
    ) as Json;
    assert.equal(obj.spec.podReplacementPolicy, 'Failed');
    assert.equal(obj.spec.podFailurePolicy.rules[0].onPodConditions[0].status, 'True');
  });

  const bad: [string, Json, [string, string][], string?][] = [
    [
      'negative completions',
      { completions: -1 },
      [['spec.completions', 'Invalid']],
      'must be greater than or equal to 0',
    ],
    ['negative parallelism', { parallelism: -1 }, [['spec.parallelism', 'Invalid']]],
    ['negative backoffLimit', { backoffLimit: -1 }, [['spec.backoffLimit', 'Invalid']]],
    ['bad completionMode', { completionMode: 'Sometimes' }, [['spec.completionMode', 'NotSupported']]],
    [
      'Indexed without completions',
      { completionMode: 'Indexed', completions: null, parallelism: 2 },
      [['spec.completions', 'Required']],
    ],
    [
      'Indexed parallelism over 10^5',
      { completionMode: 'Indexed', completions: 5, parallelism: 100_001 },
      [['spec.parallelism', 'Invalid']],
      'must be less than or equal to 100000 when completion mode is Indexed',
    ],
    [
      'more failed indexes than completions',
      { completionMode: 'Indexed', completions: 5, backoffLimitPerIndex: 1, maxFailedIndexes: 6 },
      [['spec.maxFailedIndexes', 'Invalid']],
      'must be less than or equal to completions',
    ],
    [
      'maxFailedIndexes without backoffLimitPerIndex',
      { completionMode: 'Indexed', completions: 5, maxFailedIndexes: 1 },
      [['spec.backoffLimitPerIndex', 'Required']],
      'when maxFailedIndexes is specified',
    ],
    [
      'over 10^5 completions with a backoffLimitPerIndex and no maxFailedIndexes',
      { completionMode: 'Indexed', completions: 100_001, parallelism: 10_001, backoffLimitPerIndex: 1 },
      [
        ['spec.maxFailedIndexes', 'Required'],
        ['spec.parallelism', 'Invalid'],
      ],
      'must be specified when completions is above 100000',
    ],
    [
      'per-index limits on a NonIndexed Job',
      { backoffLimitPerIndex: 1, maxFailedIndexes: 1 },
      [
        ['spec.backoffLimitPerIndex', 'Invalid'],
        ['spec.maxFailedIndexes', 'Invalid'],
      ],
      'requires indexed completion mode',
    ],
    [
      'a rule with neither exit codes nor conditions',
      { podFailurePolicy: { rules: [{ action: 'FailJob' }] } },
      [['spec.podFailurePolicy.rules[0]', 'Invalid']],
    ],
    [
      'exit code 0 with In',
      { podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [0] } }] } },
      [['spec.podFailurePolicy.rules[0].onExitCodes.values[0]', 'Invalid']],
    ],
  ];
  for (const [what, spec, errs, message] of bad) {
    it(`rejects ${what}`, () => {
      const r = create(JOBS, job(spec));
      assertErrors(r.errs, errs);
      if (message) assert.equal(r.errs[0]!.message, message);
    });
  }

  it("has no limit on an Indexed Job's completions (1.32), and warns above 10^5 with parallelism above 10^4", () => {
    const obj = created(JOBS, job({ completionMode: 'Indexed', completions: 100_001, parallelism: 10_001 }));
    assert.deepEqual(strategy(JOBS).warningsOnCreate!(obj), [
      'spec: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail',
    ]);
  });

  it("refuses on create an Indexed Job whose last pod's hostname would not be a DNS label", () => {
    const name = 'j'.repeat(60);
    const long = modified(
      job({ completionMode: 'Indexed', completions: 1000 }),
      (j) => (j.metadata.name = name),
    );
    const r = create(JOBS, long);
    assertErrors(r.errs, [['metadata.name', 'Invalid']]);
    assert.equal(r.errs[0]!.message, `will not able to create pod with invalid DNS label: ${name}-999`);
    // 60 + '-99' is 63: fits.
    assert.deepEqual(
      create(
        JOBS,
        modified(long, (j) => (j.spec.completions = 100)),
      ).errs,
      [],
    );
    // A NonIndexed Job's pods have generated names.
    assert.deepEqual(
      create(
        JOBS,
        modified(long, (j) => (j.spec.completionMode = 'NonIndexed')),
      ).errs,
      [],
    );
    // Only on create: an update of such a Job is not refused for it.
    const old = created(
      JOBS,
      modified(long, (j) => (j.spec.completions = 100)),
    );
    const r2 = update(
      JOBS,
      old,
      modified(old, (j) => (j.spec.completions = 1000)),
    );
    assert.ok(!r2.errs.some((e) => e.field === 'metadata.name'));
  });

  it('requires restartPolicy OnFailure or Never', () => {
    const r = create(
      JOBS,
      modified(job(), (j) => delete j.spec.template.spec.restartPolicy),
    );
    assertErrors(r.errs, [['spec.template.spec.restartPolicy', 'NotSupported']]);
  });

  it('keeps selector, template and completions immutable', () => {
    const old = created(JOBS, job());
    const r = update(
      JOBS,
      old,
      modified(old, (j) => {
        j.spec.completions = 3;
        j.spec.template.spec.containers[0].image = 'other';
        j.spec.selector = { matchLabels: { a: 'b' } };
      }),
    );
    assert.ok(r.errs.some((e) => e.field === 'spec.completions' && e.message === 'field is immutable'));
    assert.ok(r.errs.some((e) => e.field === 'spec.template' && e.message === 'field is immutable'));
    assert.ok(r.errs.some((e) => e.field === 'spec.selector' && e.message === 'field is immutable'));
  });

  it('lets an elastic Indexed Job change completions with parallelism', () => {
    const old = created(JOBS, job({ completionMode: 'Indexed', completions: 3, parallelism: 3 }));
    const r = update(
      JOBS,
      old,
      modified(old, (j) => ((j.spec.completions = 5), (j.spec.parallelism = 5))),
    );
    assert.deepEqual(r.errs, []);
  });
});

describe('CronJob strategy', () => {
  it('defaults concurrencyPolicy Allow, suspend false, history limits 3 and 1', () => {
    const obj = created(CRONJOBS, cronJob()) as Json;
    assert.equal(obj.spec.concurrencyPolicy, 'Allow');
    assert.equal(obj.spec.suspend, false);
    assert.equal(obj.spec.successfulJobsHistoryLimit, 3);
    assert.equal(obj.spec.failedJobsHistoryLimit, 1);
  });

  it('accepts the descriptors and @every', () => {
    for (const s of [
      '@hourly',
      '@daily',
      '@weekly',
      '@monthly',
      '@yearly',
      '@every 1h30m',
      '0 3 * * mon-fri',
    ])
      assert.deepEqual(create(CRONJOBS, cronJob({ schedule: s })).errs, [], s);
  });

  const bad: [string, Json, string, string][] = [
    [
      'four fields',
      { schedule: '* * * *' },
      'spec.schedule',
      'expected exactly 5 fields, found 4: [* * * *]',
    ],
    [
      'a minute out of range',
      { schedule: '61 * * * *' },
      'spec.schedule',
      'end of range (61) above maximum (59): 61',
    ],
    [
      'an unknown descriptor',
      { schedule: '@sometimes' },
      'spec.schedule',
      'unrecognized descriptor: @sometimes',
    ],
    [
      'TZ= in the schedule',
      { schedule: 'TZ=UTC 0 * * * *' },
      'spec.schedule',
      'cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
    ],
    ['an unknown time zone', { timeZone: 'Mars/Olympus' }, 'spec.timeZone', 'unknown time zone Mars/Olympus'],
    [
      'Local',
      { timeZone: 'Local' },
      'spec.timeZone',
      'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones',
    ],
  ];
  for (const [what, spec, field, message] of bad) {
    it(`rejects ${what} on ${field}`, () => {
      const { errs } = create(CRONJOBS, cronJob(spec));
      assert.deepEqual(
        errs.map((e) => [e.field, e.message]),
        [[field, message]],
      );
    });
  }

  it('rejects a concurrencyPolicy it does not know and a jobTemplate restartPolicy Always', () => {
    const r = create(
      CRONJOBS,
      modified(
        cronJob({ concurrencyPolicy: 'Sometimes' }),
        (c) => (c.spec.jobTemplate.spec.template.spec.restartPolicy = 'Always'),
      ),
    );
    assertErrors(r.errs, [
      ['spec.concurrencyPolicy', 'NotSupported'],
      ['spec.jobTemplate.spec.template.spec.restartPolicy', 'NotSupported'],
    ]);
  });

  it('accepts a valid IANA zone', () => {
    assert.deepEqual(create(CRONJOBS, cronJob({ timeZone: 'Europe/Berlin' })).errs, []);
  });
});
