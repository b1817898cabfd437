// HorizontalPodAutoscaler end to end (issue 17): the real CLI (`k8ts server --disable-agent`
// with `--horizontal-pod-autoscaler-sync-period 2s`, and one `k8ts agent`), real Docker, the
// real kubectl. A Deployment of one busybox pod running a busy loop on a 20m CPU request;
// `kubectl autoscale deployment busy --cpu-percent=50 --min=1 --max=2` (kubectl sends
// autoscaling/v1) and a patch of the v2 object setting behavior.scaleDown
// .stabilizationWindowSeconds 0 (else a scale-down waits 300 s). The HPA reads the pods'
// usage from metrics.k8s.io (the kubelets' /stats/summary) and scales the Deployment to 2
// (SuccessfulRescale `New size: 2; reason: cpu resource utilization (percentage of request)
// above target`, `kubectl get hpa` TARGETS `cpu: N%/50%`); once every pod stops its loop
// (`kubectl exec ... touch /tmp/stop`), back to 1 (`reason: All metrics below target`).
// Every container is labelled with the test's node name and removed at the end.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { removeNodeFromDocker, startServerAndAgent, type K8tsAgent } from './support/k8ts-agent.js';
import { buildImages, cleanUp, type K8tsServer } from './support/k8ts-server.js';
import { until as waitUntil } from './support/wait.js';

const NODE = `hpa-e2e-${process.pid}`;
const NODE_IP = '127.0.0.1';
const NS = 'hpa-e2e';

const manifests = `
apiVersion: v1
kind: Namespace
metadata: { name: ${NS} }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: busy, namespace: ${NS} }
spec:
  replicas: 1
  selector: { matchLabels: { app: busy } }
  template:
    metadata: { labels: { app: busy } }
    spec:
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 0
      containers:
        - name: main
          image: k8ts/busybox:1.0
          imagePullPolicy: IfNotPresent
          command: [sh, -c, 'while [ ! -f /tmp/stop ]; do :; done; exec sleep 3600']
          resources: { requests: { cpu: 20m } }
`;

/** Polls `check` (support/wait.ts) with this file's deadline (90 s) and pace (500 ms). */
const until = <T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms = 90_000) =>
  waitUntil(what, check, ms, 500);

describe('HorizontalPodAutoscaler with real Docker and kubectl', { timeout: 300_000 }, () => {
  let k: K8tsServer | undefined;
  let agent: K8tsAgent | undefined;

  const kubectl = (...args: string[]) => k!.kubectlOk(...args);
  const replicas = async () =>
    Number(await kubectl('get', 'deployment', 'busy', '-n', NS, '-o', 'jsonpath={.spec.replicas}'));
  const rescales = async () =>
    (
      await kubectl(
        'get',
        'events',
        '-n',
        NS,
        '--field-selector',
        'reason=SuccessfulRescale',
        '-o',
        'jsonpath={range .items[*]}{.message}{"\\n"}{end}',
      )
    )
      .split('\n')
      .filter(Boolean);

  before(async () => {
    await buildImages(['busybox', 'pause']);
    ({ k, agent } = await startServerAndAgent({
      nodeName: NODE,
      nodeIP: NODE_IP,
      serverArgs: ['--horizontal-pod-autoscaler-sync-period', '2s'],
    }));
    const applied = await k.kubectlIn(manifests, 'apply', '-f', '-');
    assert.equal(applied.code, 0, applied.stderr);
  });

  after(async () => {
    await cleanUp([() => agent?.stop(), () => k?.stop(), () => removeNodeFromDocker(NODE)]);
  });

  it('kubectl autoscale creates the HPA; a busy pod scales the Deployment up to maxReplicas', async () => {
    const out = await kubectl(
      'autoscale',
      'deployment',
      'busy',
      '-n',
      NS,
      '--cpu-percent=50',
      '--min=1',
      '--max=2',
    );
    assert.match(out, /horizontalpodautoscaler.autoscaling\/busy autoscaled/);
    await kubectl(
      'patch',
      'hpa',
      'busy',
      '-n',
      NS,
      '--type',
      'merge',
      '-p',
      JSON.stringify({ spec: { behavior: { scaleDown: { stabilizationWindowSeconds: 0 } } } }),
    );
    await until('the Deployment scaled to 2', async () => ((await replicas()) === 2 ? true : undefined));
    const messages = await until('a SuccessfulRescale event', async () => {
      const m = await rescales();
      return m.length > 0 ? m : undefined;
    });
    assert.deepEqual(messages, [
      'New size: 2; reason: cpu resource utilization (percentage of request) above target',
    ]);
    const table = await kubectl('get', 'hpa', '-n', NS);
    assert.match(table, /^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE\n/);
    const row = /\nbusy\s+Deployment\/busy\s+cpu: (\d+)%\/50%\s+1\s+2\s+\d\s+/.exec(table);
    assert.ok(row, table);
    assert.ok(Number(row[1]) > 50, `utilization ${row[1]}% is above the 50% target`);
    const hpa = JSON.parse(await kubectl('get', 'hpa', 'busy', '-n', NS, '-o', 'json')) as {
      apiVersion: string;
      status: { conditions: { type: string; status: string }[] };
    };
    assert.equal(hpa.apiVersion, 'autoscaling/v2');
    const active = hpa.status.conditions.find((c) => c.type === 'ScalingActive');
    assert.equal(active?.status, 'True');
  });

  it('once the pods are idle, scales back down to minReplicas', async () => {
    const pods = await until('2 running pods', async () => {
      const names = (
        await kubectl(
          'get',
          'pods',
          '-n',
          NS,
          '-l',
          'app=busy',
          '--field-selector',
          'status.phase=Running',
          '-o',
          'jsonpath={.items[*].metadata.name}',
        )
      )
        .split(' ')
        .filter(Boolean);
      return names.length === 2 ? names : undefined;
    });
    for (const pod of pods) await kubectl('exec', '-n', NS, pod, '--', 'touch', '/tmp/stop');
    await until('the Deployment scaled to 1', async () => ((await replicas()) === 1 ? true : undefined));
    const messages = await rescales();
    assert.ok(messages.includes('New size: 1; reason: All metrics below target'), messages.join('\n'));
  });
});
