/**
 * The CronJob controller with the Job controller against the real API server in process,
 * a FakeKubelet running the pods of node `node-a`, and a FakeClock that the tests move
 * across minute boundaries (the API server stamps creationTimestamp with real time, so
 * the fake clock starts at the real now).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CronJob, Job } from '../../../api/batch.js';
import { FakeClock } from '../../../api/clock.js';
import { ApiStatusError } from '../../../api/client/errors.js';
import { resources } from '../../../api/client/resource.js';
import type { KubeObject } from '../../../api/object.js';
import type { Pod } from '../../../api/types.js';
import { startTestApi, type TestApi } from '../../../test/support/api.js';
import { FakeKubelet, makeNode } from '../../../test/support/fake-nodes.js';
import { silentLogger } from '../context.js';
import { jobController } from '../job/index.js';
import { ControllerManager } from '../manager.js';
import { until } from '../testing.js';
import { CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION, cronJobController, jobNameFor } from './index.js';

let api: TestApi;
let kubelet: FakeKubelet;
let clock: FakeClock;
let ac: AbortController;
let done: Promise<void>;

before(async () => {
  api = await startTestApi();
  kubelet = new FakeKubelet({ client: api.client, nodes: [makeNode('node-a')] });
  await kubelet.start();
  clock = new FakeClock(Date.now());
  ac = new AbortController();
  done = new ControllerManager({
    client: api.client,
    controllers: { cronjob: cronJobController, job: jobController },
    clock,
    logger: silentLogger,
  }).run(ac.signal);
});

after(async () => {
  ac.abort();
  await done;
  await kubelet.stop();
  await api.stop();
});

let nsSeq = 0;
/** A fresh namespace; the CronJobs of the test before are deleted so they stop ticking while the clock jumps. */
async function namespace(): Promise<string> {
  if (nsSeq > 0) {
    const prev = `cron-${nsSeq}`;
    for (const cj of (await api.client.list(resources.cronjobs, { namespace: prev })).items)
      await api.client.delete(resources.cronjobs, prev, cj.metadata!.name!);
  }
  const name = `cron-${++nsSeq}`;
  await api.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

function cronJob(ns: string, name: string, spec: Partial<CronJob['spec']> = {}): CronJob {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, namespace: ns },
    spec: {
      schedule: '* * * * *',
      jobTemplate: {
        metadata: { labels: { app: name } },
        spec: {
          template: {
            spec: {
              restartPolicy: 'Never',
              nodeName: 'node-a',
              containers: [{ name: 'main', image: 'k8ts/busybox:1.0' }],
            },
          },
        },
      },
      ...spec,
    },
  };
}

const jobs = async (ns: string) => (await api.client.list<Job>(resources.jobs, { namespace: ns })).items;
const getCJ = (ns: string, name: string) => api.client.get<CronJob>(resources.cronjobs, ns, name);
const cond = (j: Job, type: string) =>
  j.status?.conditions?.find((c) => c.type === type && c.status === 'True');

async function events(ns: string, reason: string): Promise<KubeObject[]> {
  return (await api.client.list(resources.events, { namespace: ns })).items.filter(
    (e) => (e as { reason?: string }).reason === reason,
  );
}

/** Moves the fake clock to 1 s past the next minute boundary; returns that boundary (ms). */
async function nextMinute(): Promise<number> {
  const boundary = (Math.floor(clock.now() / 60_000) + 1) * 60_000;
  await clock.advance(boundary + 1000 - clock.now());
  return boundary;
}

/** Lets the one running pod of `job` succeed. */
async function completeJob(ns: string, job: string): Promise<void> {
  const pod = await until(`a running pod of ${job}`, async () =>
    (await api.client.list<Pod>(resources.pods, { namespace: ns })).items.find(
      (p) => p.metadata.labels?.['job-name'] === job && p.status?.phase === 'Running',
    ),
  );
  await api.client.patch(
    resources.pods,
    ns,
    pod.metadata.name!,
    'merge',
    { status: { phase: 'Succeeded' } },
    { subresource: 'status' },
  );
  await until(`${job} Complete`, async () =>
    cond(await api.client.get<Job>(resources.jobs, ns, job), 'Complete'),
  );
}

describe('CronJob controller', () => {
  it('creates <name>-<minutes> at each minute, tracks it in status.active and notes its completion', async () => {
    const ns = await namespace();
    await api.client.create(resources.cronjobs, cronJob(ns, 'tick'));
    const at = await nextMinute();
    const name = jobNameFor('tick', new Date(at));
    assert.equal(name, `tick-${at / 60_000}`);
    const job = await until('the Job', async () => (await jobs(ns)).find((j) => j.metadata.name === name));
    assert.equal(
      job.metadata.annotations?.[CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION],
      new Date(at).toISOString().replace('.000Z', 'Z'),
    );
    assert.equal(job.metadata.labels?.app, 'tick');
    assert.equal(job.metadata.ownerReferences?.[0]?.kind, 'CronJob');
    const cj = await until('status.active', async () => {
      const cj = await getCJ(ns, 'tick');
      return cj.status?.active?.length === 1 && cj;
    });
    assert.equal(cj.status?.active?.[0]?.name, name);
    assert.equal(Date.parse(cj.status!.lastScheduleTime!), at);
    await completeJob(ns, name);
    const after = await until('active emptied', async () => {
      const cj = await getCJ(ns, 'tick');
      return !cj.status?.active && !!cj.status?.lastSuccessfulTime && cj;
    });
    assert.ok(after.status?.lastSuccessfulTime);
    assert.equal((await events(ns, 'SawCompletedJob')).length, 1);
    const created = (await events(ns, 'SuccessfulCreate')).filter(
      (e) => (e as { involvedObject?: { kind?: string } }).involvedObject?.kind === 'CronJob',
    );
    assert.equal(created.length, 1);
  });

  it('Forbid skips a time while a Job runs; Replace deletes the running Job and starts a new one', async () => {
    const ns = await namespace();
    await clock.advance(30_000); // half a minute from any boundary, out of the 5 s window
    await api.client.create(
      resources.cronjobs,
      cronJob(ns, 'forbid', { concurrencyPolicy: 'Forbid', startingDeadlineSeconds: 5 }),
    );
    await nextMinute();
    await until('first Job', async () => (await jobs(ns)).length === 1);
    await nextMinute();
    await until('JobAlreadyActive', async () => (await events(ns, 'JobAlreadyActive')).length > 0);
    assert.equal((await jobs(ns)).length, 1);

    await api.client.patch(resources.cronjobs, ns, 'forbid', 'merge', {
      spec: { concurrencyPolicy: 'Replace' },
    });
    const first = (await jobs(ns))[0]!;
    const at = await nextMinute();
    const second = jobNameFor('forbid', new Date(at));
    await until('the replacement Job', async () => (await jobs(ns)).some((j) => j.metadata.name === second));
    await until('the old Job deleted', async () => {
      const old = (await jobs(ns)).find((j) => j.metadata.uid === first.metadata.uid);
      return !old || !!old.metadata.deletionTimestamp;
    });
    const cj = await until('active is the new Job', async () => {
      const cj = await getCJ(ns, 'forbid');
      return cj.status?.active?.length === 1 && cj.status.active[0]!.name === second && cj;
    });
    assert.ok(cj);
  });

  it('after more than 100 missed times warns once (TooManyMissedTimes) and runs only the latest', async () => {
    const ns = await namespace();
    await api.client.create(resources.cronjobs, cronJob(ns, 'late', { suspend: true }));
    await clock.advance(150 * 60_000);
    await api.client.patch(resources.cronjobs, ns, 'late', 'merge', { spec: { suspend: false } });
    const [ev] = await until('TooManyMissedTimes', async () => {
      const e = await events(ns, 'TooManyMissedTimes');
      return e.length > 0 && e;
    });
    assert.match(
      (ev as { message?: string }).message ?? '',
      /^too many missed start times: 1[45][0-9]\. Set or decrease \.spec\.startingDeadlineSeconds or check clock skew$/,
    );
    const latest = Math.floor(clock.now() / 60_000) * 60_000;
    await until('one Job, for the latest time', async () => {
      const js = await jobs(ns);
      return js.length === 1 && js[0]!.metadata.name === jobNameFor('late', new Date(latest));
    });
    assert.equal((await events(ns, 'TooManyMissedTimes')).length, 1);
  });

  it('with startingDeadlineSeconds a time missed by more than the deadline is not run', async () => {
    const ns = await namespace();
    await api.client.create(
      resources.cronjobs,
      cronJob(ns, 'strict', { suspend: true, startingDeadlineSeconds: 10 }),
    );
    await nextMinute();
    await clock.advance(30_000); // 31 s past the scheduled minute
    await api.client.patch(resources.cronjobs, ns, 'strict', 'merge', { spec: { suspend: false } });
    // The sync after the resume sees no time within the deadline; the next minute runs.
    const at = await nextMinute();
    await until('the next minute runs', async () => (await jobs(ns)).length === 1);
    assert.equal((await jobs(ns))[0]!.metadata.name, jobNameFor('strict', new Date(at)));
  });

  it('keeps successfulJobsHistoryLimit finished Jobs, deleting the oldest', async () => {
    const ns = await namespace();
    await clock.advance(30_000); // half a minute from any boundary, out of the 5 s window
    await api.client.create(
      resources.cronjobs,
      cronJob(ns, 'hist', {
        successfulJobsHistoryLimit: 1,
        // The fake clock is far ahead of the creationTimestamp by now: no backlog.
        startingDeadlineSeconds: 5,
      }),
    );
    const names: string[] = [];
    for (let i = 0; i < 2; i++) {
      const at = await nextMinute();
      const name = jobNameFor('hist', new Date(at));
      names.push(name);
      await until(`Job ${i}`, async () => (await jobs(ns)).some((j) => j.metadata.name === name));
      await completeJob(ns, name);
    }
    await until('the oldest deleted', async () => {
      const js = (await jobs(ns)).filter((j) => !j.metadata.deletionTimestamp);
      return js.length === 1 && js[0]!.metadata.name === names[1];
    });
    assert.ok((await events(ns, 'SuccessfulDelete')).length >= 1);
  });

  it('refuses a schedule that does not parse with 422 on spec.schedule', async () => {
    const ns = await namespace();
    await assert.rejects(
      api.client.create(resources.cronjobs, cronJob(ns, 'bad', { schedule: '* * *' })),
      (err: unknown) => {
        assert.ok(err instanceof ApiStatusError);
        assert.equal(err.status.code, 422);
        assert.equal(err.status.details?.causes?.[0]?.field, 'spec.schedule');
        assert.match(err.status.message ?? '', /expected exactly 5 fields, found 3/);
        return true;
      },
    );
    assert.equal((await api.client.list(resources.cronjobs, { namespace: ns })).items.length, 0);
  });
});
