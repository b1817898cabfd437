// Job and CronJob end to end (issue 17): the real CLI (`k8ts server` and one `k8ts agent`),
// real Docker, the real kubectl. An Indexed Job of 5 completions at parallelism 2 whose index 0
// fails exactly once (a marker file in a hostPath directory tells its second pod it ran
// before) completes with 5 succeeded, 1 failed, completedIndexes 0-4, and `kubectl wait
// --for=condition=complete` returns; `kubectl create job --image` and `kubectl create job
// --from=cronjob/...` make Jobs that complete; a CronJob `* * * * *` (startingDeadlineSeconds
// 60) starts a Job at the next minute that completes and shows in lastSuccessfulTime; the
// tables read as kubectl's. Every container is labelled with the test's node name and
// removed at the end, with the marker directory.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { removeNodeFromDocker, startServerAndAgent, type K8tsAgent } from './support/k8ts-agent.js';
import { buildImages, cleanUp, type K8tsServer } from './support/k8ts-server.js';
import { until as waitUntil } from './support/wait.js';

const NODE = `job-e2e-${process.pid}`;
const NS = 'job-e2e';
const MARKS = `/tmp/k8ts-job-e2e-${process.pid}`;

const manifests = `
apiVersion: v1
kind: Namespace
metadata: { name: ${NS} }
---
apiVersion: batch/v1
kind: Job
metadata: { name: five, namespace: ${NS} }
spec:
  completions: 5
  parallelism: 2
  completionMode: Indexed
  backoffLimit: 3
  template:
    spec:
      restartPolicy: Never
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 1
      volumes: [{ name: marks, hostPath: { path: ${MARKS}, type: DirectoryOrCreate } }]
      containers:
        - name: work
          image: k8ts/busybox:1.0
          imagePullPolicy: IfNotPresent
          volumeMounts: [{ name: marks, mountPath: /marks }]
          command:
            - sh
            - -c
            - |
              if [ "$JOB_COMPLETION_INDEX" = 0 ] && [ ! -e /marks/failed-once ]; then touch /marks/failed-once; exit 1; fi
              echo "index $JOB_COMPLETION_INDEX on $(hostname)"
---
apiVersion: batch/v1
kind: CronJob
metadata: { name: minutely, namespace: ${NS} }
spec:
  schedule: '* * * * *'
  startingDeadlineSeconds: 60
  concurrencyPolicy: Forbid
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          automountServiceAccountToken: false
          terminationGracePeriodSeconds: 1
          containers:
            - { name: tick, image: k8ts/busybox:1.0, imagePullPolicy: IfNotPresent, command: [sh, -c, 'echo tick'] }
`;

/** Polls `check` (support/wait.ts) with this file's deadline (180 s) and pace (500 ms). */
const until = <T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms = 180_000) =>
  waitUntil(what, check, ms, 500);

describe('Job and CronJob with real Docker and kubectl', { timeout: 900_000 }, () => {
  let k: K8tsServer | undefined;
  let agent: K8tsAgent | undefined;

  const kubectl = (...args: string[]) => k!.kubectlOk(...args);
  const jobJson = async (name: string) =>
    JSON.parse(await kubectl('get', 'job', name, '-n', NS, '-o', 'json')) as {
      status?: { succeeded?: number; failed?: number; completedIndexes?: string };
      metadata: { annotations?: Record<string, string>; ownerReferences?: { kind: string }[] };
    };

  before(async () => {
    await buildImages(['busybox', 'pause']);
    ({ k, agent } = await startServerAndAgent({ nodeName: NODE, nodeIP: '127.0.0.1' }));
    const applied = await k.kubectlIn(manifests, 'apply', '-f', '-');
    assert.equal(applied.code, 0, applied.stderr);
  });

  after(async () => {
    await cleanUp([
      () => agent?.stop(),
      () => k?.stop(),
      () => removeNodeFromDocker(NODE),
      () => rmSync(MARKS, { recursive: true, force: true }),
    ]);
  });

  it('an Indexed Job of 5 at parallelism 2 survives one failed pod and completes', async () => {
    // Seen once in a loaded local CI run: failed 2. What the pods said, for the next time.
    const pods = async () =>
      kubectl(
        'get',
        'pods',
        '-n',
        NS,
        '-l',
        'job-name=five',
        '-o',
        'custom-columns=NAME:.metadata.name,INDEX:.metadata.annotations.batch\\.kubernetes\\.io/job-completion-index,PHASE:.status.phase,REASON:.status.reason,EXIT:.status.containerStatuses[0].state.terminated.exitCode,MSG:.status.message',
      );
    const waited = await k!.kubectl(
      'wait',
      '--for=condition=complete',
      'job/five',
      '-n',
      NS,
      '--timeout=240s',
    );
    if (waited.code !== 0) {
      const status = JSON.stringify((await jobJson('five')).status);
      assert.fail(`kubectl wait: ${waited.stderr}\njob status ${status}\n${await pods()}`);
    }
    const job = await jobJson('five');
    assert.equal(job.status?.succeeded, 5, await pods());
    assert.equal(job.status?.failed, 1, await pods());
    assert.equal(job.status?.completedIndexes, '0-4');
    const table = await kubectl('get', 'job', 'five', '-n', NS);
    assert.match(table, /^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE\n/);
    assert.match(table, /\nfive\s+Complete\s+5\/5\s+\S+\s+\S+\n/);
    const logs = await kubectl(
      'logs',
      '-n',
      NS,
      '-l',
      'batch.kubernetes.io/job-completion-index=3',
      '--tail=-1',
    );
    assert.match(logs, /index 3 on five-3/);
  });

  it('kubectl create job --image makes a Job that completes', async () => {
    await kubectl(
      'create',
      'job',
      'hello',
      '-n',
      NS,
      '--image=k8ts/busybox:1.0',
      '--',
      'sh',
      '-c',
      'echo hello',
    );
    await kubectl('wait', '--for=condition=complete', 'job/hello', '-n', NS, '--timeout=180s');
    assert.equal((await jobJson('hello')).status?.succeeded, 1);
  });

  it('a CronJob * * * * * starts a Job at the next minute that completes; kubectl create job --from=cronjob works', async () => {
    const table = await kubectl('get', 'cronjob', 'minutely', '-n', NS);
    assert.match(table, /^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE\n/);
    assert.match(table, /\nminutely\s+\* \* \* \* \*\s+<none>\s+False\s+\d\s+\S+\s+\S+\n/);
    const last = await until('lastSuccessfulTime', async () => {
      const out = await kubectl(
        'get',
        'cronjob',
        'minutely',
        '-n',
        NS,
        '-o',
        'jsonpath={.status.lastSuccessfulTime}',
      );
      return out !== '' ? out : undefined;
    });
    assert.ok(!Number.isNaN(Date.parse(last)));
    const names = (await kubectl('get', 'jobs', '-n', NS, '-o', 'jsonpath={.items[*].metadata.name}')).split(
      ' ',
    );
    const scheduled = names.find((n) => /^minutely-\d+$/.test(n));
    assert.ok(scheduled, `a scheduled Job among ${names.join(' ')}`);
    const job = await jobJson(scheduled);
    const stamp = job.metadata.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp'] ?? '';
    assert.equal(Date.parse(stamp) / 60_000, Number(scheduled.split('-')[1]));

    await kubectl('create', 'job', 'manual', '-n', NS, '--from=cronjob/minutely');
    await kubectl('wait', '--for=condition=complete', 'job/manual', '-n', NS, '--timeout=180s');
    const manual = await jobJson('manual');
    assert.equal(manual.metadata.annotations?.['cronjob.kubernetes.io/instantiate'], 'manual');
    assert.equal(manual.metadata.ownerReferences?.[0]?.kind, 'CronJob');
  });

  it('refuses a CronJob whose schedule does not parse, naming spec.schedule', async () => {
    const r = await k!.kubectl(
      'create',
      'cronjob',
      'bad',
      '-n',
      NS,
      '--image=k8ts/busybox:1.0',
      '--schedule=* * *',
    );
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /spec\.schedule: Invalid value: "\* \* \*": expected exactly 5 fields, found 3: \[\* \* \*\]/,
    );
  });
});
