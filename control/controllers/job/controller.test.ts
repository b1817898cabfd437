/**
 * The Job controller against the real API server in process, with a FakeKubelet running
 * the pods of node `node-a` (the templates name it, so no scheduler is needed) and a
 * FakeClock for backoff and deadlines. Pods finish when the test says so (pods/status).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Job } from '../../../api/batch.js';
import { FakeClock } from '../../../api/clock.js';
import { resources } from '../../../api/client/resource.js';
import type { KubeObject } from '../../../api/object.js';
import type { Pod } from '../../../api/types.js';
import { startTestApi, type TestApi } from '../../../test/support/api.js';
import { FakeKubelet, makeNode } from '../../../test/support/fake-nodes.js';
import { silentLogger } from '../context.js';
import { ControllerManager } from '../manager.js';
import { until } from '../testing.js';
import { garbageCollectorController } from '../garbagecollector/index.js';
import { ttlAfterFinishedController } from '../ttlafterfinished/index.js';
import { JOB_TRACKING_FINALIZER, JobController } from './index.js';

let api: TestApi;
let kubelet: FakeKubelet;
let clock: FakeClock;
let stopManager: (() => Promise<void>) | undefined;
/** Finished reconciles per Job key of the running controller (reset at each start). */
let synced = new Map<string, number>();

function startManager(): void {
  const ac = new AbortController();
  const done = new ControllerManager({
    client: api.client,
    controllers: {
      job: (ctx) => {
        const jc = new JobController(ctx);
        const reconcile = jc.reconcile.bind(jc);
        synced = new Map();
        jc.reconcile = async (key) => {
          await reconcile(key);
          synced.set(key, (synced.get(key) ?? 0) + 1);
        };
        return jc;
      },
      'ttl-after-finished': ttlAfterFinishedController,
      garbagecollector: garbageCollectorController,
    },
    clock,
    logger: silentLogger,
  }).run(ac.signal);
  stopManager = async () => {
    ac.abort();
    await done;
  };
}

before(async () => {
  api = await startTestApi();
  kubelet = new FakeKubelet({ client: api.client, nodes: [makeNode('node-a')] });
  await kubelet.start();
  clock = new FakeClock(Date.now());
  startManager();
});

after(async () => {
  await stopManager?.();
  await kubelet.stop();
  await api.stop();
});

let nsSeq = 0;
async function namespace(): Promise<string> {
  const name = `job-${++nsSeq}`;
  await api.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

function job(ns: string, name: string, spec: Partial<Job['spec']> = {}): Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: ns },
    spec: {
      template: {
        spec: {
          restartPolicy: 'Never',
          nodeName: 'node-a',
          containers: [{ name: 'main', image: 'k8ts/busybox:1.0' }],
        },
      },
      ...spec,
    },
  };
}

const getJob = (ns: string, name: string) => api.client.get<Job>(resources.jobs, ns, name);
const pods = async (ns: string) => (await api.client.list<Pod>(resources.pods, { namespace: ns })).items;
const running = async (ns: string) =>
  (await pods(ns)).filter((p) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp);
const cond = (j: Job, type: string) =>
  j.status?.conditions?.find((c) => c.type === type && c.status === 'True');

/** Ends a running pod as the kubelet would: phase and the main container's exit code. */
async function finish(
  pod: Pod,
  exitCode: number,
  conditions: { type: string; status: 'True' }[] = [],
): Promise<void> {
  const now = new Date(clock.now()).toISOString().replace(/\.\d+Z$/, 'Z');
  await api.client.patch(
    resources.pods,
    pod.metadata.namespace,
    pod.metadata.name!,
    'merge',
    {
      status: {
        phase: exitCode === 0 ? 'Succeeded' : 'Failed',
        conditions: [...(pod.status?.conditions ?? []), ...conditions],
        containerStatuses: [
          {
            name: 'main',
            image: 'k8ts/busybox:1.0',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode, finishedAt: now } },
          },
        ],
      },
    },
    { subresource: 'status' },
  );
}

async function events(ns: string, reason: string): Promise<KubeObject[]> {
  return (await api.client.list(resources.events, { namespace: ns })).items.filter(
    (e) => (e as { reason?: string }).reason === reason,
  );
}

describe('Job controller', () => {
  it('runs 5 completions 2 at a time, counts each success once and completes', async () => {
    const ns = await namespace();
    await api.client.create(resources.jobs, job(ns, 'five', { completions: 5, parallelism: 2 }));
    const started = await until('active counted', async () => {
      const j = await getJob(ns, 'five');
      return (j.status?.active ?? 0) > 0 && j;
    });
    // omitempty upstream: a running Job has no conditions (not []) and no zero counters.
    assert.equal(started.status?.conditions, undefined);
    assert.equal(started.status?.succeeded, undefined);
    for (let done = 0; done < 5; done++) {
      const run = await until(`a running pod (${done} done)`, async () => {
        const r = await running(ns);
        return r.length > 0 && r;
      });
      assert.ok(run.length <= 2, `at most parallelism pods run: ${run.length}`);
      assert.ok(run[0]!.metadata.finalizers?.includes(JOB_TRACKING_FINALIZER));
      await finish(run[0]!, 0);
      await until(
        `succeeded ${done + 1}`,
        async () => ((await getJob(ns, 'five')).status?.succeeded ?? 0) >= done + 1,
      );
    }
    const j = await until('Complete', async () => {
      const j = await getJob(ns, 'five');
      return cond(j, 'Complete') && j;
    });
    assert.equal(j.status?.succeeded, 5);
    // active and failed are omitempty in Kubernetes' JobStatus: no zeros in the object.
    assert.equal(j.status?.failed, undefined);
    assert.equal(j.status?.active, undefined);
    assert.equal(j.status?.ready, 0);
    assert.equal(j.status?.terminating, 0);
    assert.ok(cond(j, 'SuccessCriteriaMet'));
    assert.ok(j.status?.completionTime);
    assert.deepEqual(j.status?.uncountedTerminatedPods, {});
    const all = await pods(ns);
    assert.equal(all.length, 5);
    assert.ok(
      all.every((p) => !p.metadata.finalizers?.includes(JOB_TRACKING_FINALIZER)),
      'finalizers removed',
    );
    assert.equal((await events(ns, 'Completed')).length, 1);
  });

  it('gives Indexed pods their index as annotation, label, hostname and JOB_COMPLETION_INDEX', async () => {
    const ns = await namespace();
    await api.client.create(
      resources.jobs,
      job(ns, 'idx', { completions: 3, parallelism: 3, completionMode: 'Indexed' }),
    );
    const run = await until('3 running', async () => {
      const r = await running(ns);
      return r.length === 3 && r;
    });
    const byIndex = new Map(
      run.map((p) => [p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'], p]),
    );
    assert.deepEqual([...byIndex.keys()].sort(), ['0', '1', '2']);
    const p1 = byIndex.get('1')!;
    assert.ok(p1.metadata.name!.startsWith('idx-1-'));
    assert.equal(p1.metadata.labels?.['batch.kubernetes.io/job-completion-index'], '1');
    assert.equal((p1.spec as { hostname?: string }).hostname, 'idx-1');
    assert.deepEqual(p1.spec.containers[0]!.env, [
      {
        name: 'JOB_COMPLETION_INDEX',
        valueFrom: {
          fieldRef: {
            apiVersion: 'v1',
            fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']",
          },
        },
      },
    ]);
    await finish(byIndex.get('2')!, 0);
    await until('completedIndexes 2', async () => (await getJob(ns, 'idx')).status?.completedIndexes === '2');
    await finish(byIndex.get('0')!, 1);
    // The sync that counts the failure also decides not to replace it for 10 s.
    await until('failed 1', async () => (await getJob(ns, 'idx')).status?.failed === 1);
    const index0 = async () =>
      (await pods(ns)).filter(
        (p) =>
          p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'] === '0' &&
          p.status?.phase !== 'Failed',
      );
    assert.deepEqual(await index0(), [], 'no replacement during the backoff');
    await clock.advance(10_000);
    const again = await until('index 0 recreated after the backoff', async () =>
      (await index0()).find((p) => p.status?.phase === 'Running'),
    );
    await finish(again, 0);
    await finish(p1, 0);
    const j = await until('Complete', async () => {
      const j = await getJob(ns, 'idx');
      return cond(j, 'Complete') && j;
    });
    assert.equal(j.status?.completedIndexes, '0-2');
    assert.equal(j.status?.succeeded, 3);
    assert.equal(j.status?.failed, 1);
  });

  it('backs off 10 s then 20 s between failures and fails at backoffLimit with BackoffLimitExceeded', async () => {
    const ns = await namespace();
    await api.client.create(resources.jobs, job(ns, 'flaky', { backoffLimit: 2 }));
    for (let failures = 1; failures <= 3; failures++) {
      const [pod] = await until(`pod ${failures}`, async () => {
        const r = await running(ns);
        return r.length === 1 && r;
      });
      await finish(pod!, 1);
      await until(`failed ${failures}`, async () => (await getJob(ns, 'flaky')).status?.failed === failures);
      if (failures === 3) break;
      const delay = 10_000 * 2 ** (failures - 1);
      await clock.advance(delay - 1000);
      assert.deepEqual(
        await running(ns),
        [],
        `still backing off ${delay - 1000} ms after failure ${failures}`,
      );
      await clock.advance(1000);
    }
    const j = await until('Failed', async () => {
      const j = await getJob(ns, 'flaky');
      return cond(j, 'Failed') && j;
    });
    assert.equal(cond(j, 'Failed')!.reason, 'BackoffLimitExceeded');
    assert.equal(cond(j, 'Failed')!.message, 'Job has reached the specified backoff limit');
    assert.equal(cond(j, 'FailureTarget')!.reason, 'BackoffLimitExceeded');
    assert.equal(j.status?.failed, 3);
    assert.equal((await events(ns, 'BackoffLimitExceeded')).length, 1);
  });

  it('fails a Job past activeDeadlineSeconds and deletes its pods', async () => {
    const ns = await namespace();
    await api.client.create(
      resources.jobs,
      job(ns, 'slow', { activeDeadlineSeconds: 30, parallelism: 2, completions: 4 }),
    );
    await until('2 running', async () => (await running(ns)).length === 2);
    await clock.advance(30_000);
    const j = await until('Failed', async () => {
      const j = await getJob(ns, 'slow');
      return cond(j, 'Failed') && j;
    });
    assert.equal(cond(j, 'Failed')!.reason, 'DeadlineExceeded');
    assert.equal(cond(j, 'Failed')!.message, 'Job was active longer than specified deadline');
    assert.equal(j.status?.active, undefined);
    assert.equal(j.status?.succeeded, undefined);
    await until('pods gone', async () => (await pods(ns)).length === 0);
  });

  it('podFailurePolicy: Ignore on a condition is not counted, FailJob on an exit code fails the Job', async () => {
    const ns = await namespace();
    await api.client.create(
      resources.jobs,
      job(ns, 'policy', {
        backoffLimit: 6,
        podFailurePolicy: {
          rules: [
            { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] },
            { action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } },
          ],
        },
      }),
    );
    const [first] = await until('pod', async () => {
      const r = await running(ns);
      return r.length === 1 && r;
    });
    await finish(first!, 137, [{ type: 'DisruptionTarget', status: 'True' }]);
    // Ignored: replaced at once (no backoff) and not counted.
    const [second] = await until('replacement', async () => {
      const r = await running(ns);
      return r.length === 1 && r[0]!.metadata.uid !== first!.metadata.uid && r;
    });
    assert.equal((await getJob(ns, 'policy')).status?.failed ?? 0, 0);
    await finish(second!, 42);
    const j = await until('Failed', async () => {
      const j = await getJob(ns, 'policy');
      return cond(j, 'Failed') && j;
    });
    assert.equal(cond(j, 'Failed')!.reason, 'PodFailurePolicy');
    assert.equal(
      cond(j, 'Failed')!.message,
      `Container main for pod ${ns}/${second!.metadata.name} failed with exit code 42 matching FailJob rule at index 1`,
    );
    assert.equal(j.status?.failed, 1);
  });

  it('suspend deletes the active pods and resume starts them again', async () => {
    const ns = await namespace();
    await api.client.create(resources.jobs, job(ns, 'sus', { parallelism: 2, completions: 2 }));
    await until('2 running', async () => (await running(ns)).length === 2);
    await api.client.patch(resources.jobs, ns, 'sus', 'merge', { spec: { suspend: true } });
    const j = await until('Suspended', async () => {
      const j = await getJob(ns, 'sus');
      return cond(j, 'Suspended') && j.status?.active === undefined && j;
    });
    assert.equal(cond(j, 'Suspended')!.reason, 'JobSuspended');
    await until('pods gone', async () => (await pods(ns)).length === 0);
    await api.client.patch(resources.jobs, ns, 'sus', 'merge', { spec: { suspend: false } });
    await until('2 running again', async () => (await running(ns)).length === 2);
    const resumed = await getJob(ns, 'sus');
    assert.equal(resumed.status?.conditions?.find((c) => c.type === 'Suspended')?.reason, 'JobResumed');
    assert.equal((await events(ns, 'Resumed')).length, 1);
  });

  it('counts every finished pod exactly once across controller restarts', async () => {
    const ns = await namespace();
    await api.client.create(resources.jobs, job(ns, 'restart', { completions: 6, parallelism: 6 }));
    const run = await until('6 running', async () => {
      const r = await running(ns);
      return r.length === 6 && r;
    });
    // Pods finish while no controller runs, then again between two restarts.
    await stopManager!();
    await Promise.all(run.slice(0, 3).map((p, i) => finish(p, i === 0 ? 1 : 0)));
    startManager();
    await until('3 counted', async () => {
      const s = (await getJob(ns, 'restart')).status;
      return (s?.succeeded ?? 0) + (s?.failed ?? 0) === 3;
    });
    await stopManager!();
    await Promise.all(run.slice(3).map((p) => finish(p, 0)));
    startManager();
    await clock.advance(10_000); // the backoff of the one failure
    const replacement = await until('the failed pod replaced', async () => {
      const r = await running(ns);
      return r.length === 1 && r[0];
    });
    await finish(replacement, 0);
    const j = await until('Complete', async () => {
      const j = await getJob(ns, 'restart');
      return cond(j, 'Complete') && j;
    });
    assert.equal(j.status?.succeeded, 6);
    assert.equal(j.status?.failed, 1);
    assert.deepEqual(j.status?.uncountedTerminatedPods, {});
  });

  it('keeps the failure backoff across a controller restart (rebuilt from the failed pods)', async () => {
    const ns = await namespace();
    await api.client.create(resources.jobs, job(ns, 'again', { backoffLimit: 6 }));
    const [pod] = await until('pod', async () => {
      const r = await running(ns);
      return r.length === 1 && r;
    });
    await finish(pod!, 1);
    await until('failed 1', async () => (await getJob(ns, 'again')).status?.failed === 1);
    await stopManager!();
    startManager();
    await until('the restarted controller synced the Job', () => (synced.get(`${ns}/again`) ?? 0) > 0);
    const live = async () => (await pods(ns)).filter((p) => p.status?.phase !== 'Failed');
    assert.deepEqual(await live(), [], 'no replacement right after the restart');
    await clock.advance(10_000);
    await until('replacement after the backoff', async () => (await running(ns)).length === 1);
  });

  it('deletes a finished Job ttlSecondsAfterFinished later, its pods with it', async () => {
    const ns = await namespace();
    await api.client.create(resources.jobs, job(ns, 'ttl', { ttlSecondsAfterFinished: 60 }));
    const [pod] = await until('pod', async () => {
      const r = await running(ns);
      return r.length === 1 && r;
    });
    await finish(pod!, 0);
    await until('Complete', async () => cond(await getJob(ns, 'ttl'), 'Complete'));
    await clock.advance(59_000);
    assert.ok(!(await getJob(ns, 'ttl')).metadata.deletionTimestamp, 'kept before the TTL');
    await clock.advance(1_000);
    await until(
      'job gone',
      async () => !(await api.client.list(resources.jobs, { namespace: ns })).items.length,
    );
    await until('pods gone', async () => (await pods(ns)).length === 0);
  });
});
