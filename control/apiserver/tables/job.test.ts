// The Job and CronJob tables against kubectl's printJob / printCronJob: columns and cells.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../api/object.js';
import { findResource } from '../resources.js';
import { toTable, type TableCell } from '../table.js';

const NOW = new Date('2026-11-30T12:00:00Z');
const ago = (s: number) => new Date(NOW.getTime() - s * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

function row(resource: 'jobs' | 'cronjobs', obj: KubeObject, wide = false): Record<string, TableCell> {
  const table = toTable(findResource('batch', 'v1', resource)!, [obj], { includeObject: 'None', now: NOW });
  const cols = table.columnDefinitions ?? [];
  return Object.fromEntries(
    cols.flatMap((c, i) =>
      wide || c.priority === 0 ? [[c.name.toUpperCase(), table.rows[0].cells[i]]] : [],
    ),
  );
}

function job(spec: object, status: object = {}, meta: object = {}): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'pi', namespace: 'default', creationTimestamp: ago(600), ...meta },
    spec: { template: { spec: { containers: [{ name: 'pi', image: 'perl' }] } }, ...spec },
    status,
  };
}

describe('Job table (printJob)', () => {
  it('NAME STATUS COMPLETIONS DURATION AGE, wide CONTAINERS IMAGES SELECTOR', () => {
    const got = row(
      'jobs',
      job(
        { completions: 5, selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': 'u' } } },
        {
          succeeded: 5,
          startTime: ago(300),
          completionTime: ago(180),
          conditions: [{ type: 'Complete', status: 'True' }],
        },
      ),
      true,
    );
    assert.deepEqual(got, {
      NAME: 'pi',
      STATUS: 'Complete',
      COMPLETIONS: '5/5',
      DURATION: '2m',
      AGE: '10m',
      CONTAINERS: 'pi',
      IMAGES: 'perl',
      SELECTOR: 'batch.kubernetes.io/controller-uid=u',
    });
  });

  const cases: [string, KubeObject, Record<string, TableCell>][] = [
    [
      'running, duration so far',
      job({ completions: 3 }, { succeeded: 1, startTime: ago(30) }),
      { STATUS: 'Running', COMPLETIONS: '1/3', DURATION: '30s' },
    ],
    [
      'a work queue of parallelism 3',
      job({ parallelism: 3, completions: null }, {}),
      { COMPLETIONS: '0/1 of 3', DURATION: '' },
    ],
    ['parallelism 1 without completions', job({ parallelism: 1 }, {}), { COMPLETIONS: '0/1' }],
    [
      'failed',
      job({ completions: 1 }, { failed: 7, conditions: [{ type: 'Failed', status: 'True' }] }),
      { STATUS: 'Failed' },
    ],
    [
      'suspended',
      job({ completions: 1 }, { conditions: [{ type: 'Suspended', status: 'True' }] }),
      { STATUS: 'Suspended' },
    ],
    [
      'failing',
      job({ completions: 1 }, { conditions: [{ type: 'FailureTarget', status: 'True' }] }),
      { STATUS: 'FailureTarget' },
    ],
    ['being deleted', job({ completions: 1 }, {}, { deletionTimestamp: ago(1) }), { STATUS: 'Terminating' }],
  ];
  for (const [what, obj, want] of cases)
    it(what, () => {
      const got = row('jobs', obj);
      for (const [k, v] of Object.entries(want)) assert.equal(got[k], v, k);
    });
});

describe('CronJob table (printCronJob)', () => {
  it('NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE', () => {
    const cj: KubeObject = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'hello', namespace: 'default', creationTimestamp: ago(3600) },
      spec: {
        schedule: '*/1 * * * *',
        suspend: false,
        jobTemplate: { spec: { template: { spec: { containers: [] } } } },
      },
      status: { active: [{ name: 'hello-1' }], lastScheduleTime: ago(20) },
    };
    assert.deepEqual(row('cronjobs', cj), {
      NAME: 'hello',
      SCHEDULE: '*/1 * * * *',
      TIMEZONE: '<none>',
      SUSPEND: 'False',
      ACTIVE: 1,
      'LAST SCHEDULE': '20s',
      AGE: '60m',
    });
    const never = row(
      'cronjobs',
      { ...cj, spec: { ...(cj.spec as object), timeZone: 'Etc/UTC', suspend: true }, status: {} },
      true,
    );
    assert.equal(never['TIMEZONE'], 'Etc/UTC');
    assert.equal(never['SUSPEND'], 'True');
    assert.equal(never['ACTIVE'], 0);
    assert.equal(never['LAST SCHEDULE'], '<none>');
    assert.equal(never['SELECTOR'], '<none>');
  });
});
