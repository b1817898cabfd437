// PodSecurity admission in the API server, over real HTTPS: the namespace labels' enforce,
// audit and warn modes, the server's exemptions and default level, the Namespace label
// checks and the warnings when an enforce level tightens, and kubectl printing the warnings.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import winston from 'winston';
import { configuredFetch, type ConfiguredFetch } from '../../../../api/client/fetch.js';
import { signLeaf } from '../../../../api/tls/certs.js';
import { kubeconfig } from '../../../main.js';
import { MemoryStore } from '../../../storage/memory.js';
import { run } from '../../../../test/support/k8ts-server.js';
import { DEFAULT_POD_SECURITY, withDefaultLevel, type PodSecuritySettings } from './config.js';
import { startSecureApiServer } from '../../auth/testing.js';

interface Answer {
  code: number;
  warnings: string[];
  body: { kind?: string; reason?: string; message?: string; metadata?: { name?: string } };
}

/** A server with `settings`, its admin (and other users) over HTTPS, and its request log. */
async function startServer(settings: PodSecuritySettings) {
  const store = new MemoryStore();
  const log: Record<string, unknown>[] = [];
  const logger = winston.createLogger({
    level: 'info',
    format: winston.format.json(),
    transports: [
      new winston.transports.Stream({
        stream: new Writable({
          write(chunk: Buffer, _enc, cb) {
            log.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
            cb();
          },
        }),
      }),
    ],
  });
  const { ca, server, url } = await startSecureApiServer(store, { logger, podSecurity: settings });
  const as = async (user: string): Promise<ConfiguredFetch> => {
    const { cert, key } = await signLeaf(ca, { usage: 'client', user, groups: ['system:masters'] });
    return configuredFetch({ ca: ca.cert, cert, key: key! });
  };
  const admin = await as('root');
  const send = async (
    method: string,
    path: string,
    body?: unknown,
    type = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
    f: ConfiguredFetch = admin,
  ): Promise<Answer> => {
    const r = await f(url + path, {
      method,
      headers: { 'Content-Type': type },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const warnings = (r.headers.get('warning') ?? '')
      .split(/,\s*(?=299 )/)
      .filter((w) => w !== '')
      .map((w) => JSON.parse(w.replace(/^299 - /, '')) as string);
    return { code: r.status, warnings, body: (await r.json()) as Answer['body'] };
  };
  const stop = async () => {
    await server.stop();
    await store.close();
  };
  return { url, ca, as, send, log, stop };
}

const namespace = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, labels },
});
const pod = (name: string, spec: Record<string, unknown> = {}, container: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'i', ...container }], ...spec },
});
const hostPathPod = (name: string) =>
  pod(
    name,
    { volumes: [{ name: 'host', hostPath: { path: '/etc/k8ts' } }] },
    { volumeMounts: [{ name: 'host', mountPath: '/host' }] },
  );
const privilegedPod = (name: string) => pod(name, {}, { securityContext: { privileged: true } });
/** A pod restricted admits. */
const hardenedPod = (name: string) =>
  pod(
    name,
    { securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } } },
    { securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } },
  );
const L = (mode: string) => `pod-security.kubernetes.io/${mode}`;

describe('PodSecurity admission', () => {
  let s: Awaited<ReturnType<typeof startServer>>;
  before(async () => {
    s = await startServer({
      ...DEFAULT_POD_SECURITY,
      exemptions: { usernames: ['exempt-user'], namespaces: ['exempt-ns'], runtimeClasses: ['kata'] },
    });
    for (const [name, labels] of [
      ['restricted', { [L('enforce')]: 'restricted' }],
      ['baseline-v1-29', { [L('enforce')]: 'baseline', [L('enforce-version')]: 'v1.29' }],
      ['warned', { [L('warn')]: 'baseline' }],
      ['audited', { [L('audit')]: 'restricted' }],
    ] as const) {
      assert.equal((await s.send('POST', '/api/v1/namespaces', namespace(name, labels))).code, 201);
    }
  });
  after(() => s.stop());

  const annotationsOf = (path: string) =>
    s.log.filter((l) => l.message === 'request' && l.path === path).map((l) => l.auditAnnotations);

  it('enforce: a namespace labelled restricted refuses a hostPath pod, by POST, server-side apply and dry run', async () => {
    const refused = await s.send('POST', '/api/v1/namespaces/restricted/pods', hostPathPod('escape'));
    assert.equal(refused.code, 403, refused.body.message);
    assert.equal(refused.body.reason, 'Forbidden');
    assert.match(
      refused.body.message ?? '',
      /^pods "escape" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false \(container "c" must set securityContext.allowPrivilegeEscalation=false\), .*restricted volume types \(volume "host" uses restricted volume type "hostPath"\)/,
    );
    const applied = await s.send(
      'PATCH',
      '/api/v1/namespaces/restricted/pods/escape?fieldManager=kubectl',
      hostPathPod('escape'),
      'application/apply-patch+yaml',
    );
    assert.equal(applied.code, 403, applied.body.message);
    const dry = await s.send('POST', '/api/v1/namespaces/restricted/pods?dryRun=All', hostPathPod('escape'));
    assert.equal(dry.code, 403);
    assert.equal((await s.send('GET', '/api/v1/namespaces/restricted/pods/escape')).code, 404);
    const ok = await s.send('POST', '/api/v1/namespaces/restricted/pods', hardenedPod('fine'));
    assert.equal(ok.code, 201, ok.body.message);
    assert.deepEqual(ok.warnings, []);
    assert.deepEqual(annotationsOf('/api/v1/namespaces/restricted/pods').at(-1), {
      'pod-security.kubernetes.io/enforce-policy': 'restricted:latest',
    });
  });

  it('enforce at a version: baseline:v1.29 still refuses a privileged pod', async () => {
    const r = await s.send('POST', '/api/v1/namespaces/baseline-v1-29/pods', privilegedPod('p'));
    assert.equal(r.code, 403);
    assert.match(
      r.body.message ?? '',
      /violates PodSecurity "baseline:v1.29": privileged \(container "c" must not set securityContext.privileged=true\)$/,
    );
  });

  it('an image change of a pod is checked again; other changes of an existing pod are not', async () => {
    assert.equal((await s.send('POST', '/api/v1/namespaces', namespace('later'))).code, 201);
    assert.equal((await s.send('POST', '/api/v1/namespaces/later/pods', privilegedPod('old'))).code, 201);
    const labelled = await s.send('PATCH', '/api/v1/namespaces/later', {
      metadata: { labels: { [L('enforce')]: 'baseline' } },
    });
    assert.equal(labelled.code, 200);
    assert.equal(
      (await s.send('PATCH', '/api/v1/namespaces/later/pods/old', { metadata: { labels: { a: 'b' } } })).code,
      200,
    );
    const image = await s.send(
      'PATCH',
      '/api/v1/namespaces/later/pods/old',
      { spec: { containers: [{ name: 'c', image: 'j' }] } },
      'application/strategic-merge-patch+json',
    );
    assert.equal(image.code, 403, image.body.message);
    assert.match(image.body.message ?? '', /violates PodSecurity "baseline:latest": privileged/);
  });

  it("warn: a privileged pod is admitted with a Warning header in Kubernetes' words", async () => {
    const r = await s.send('POST', '/api/v1/namespaces/warned/pods', privilegedPod('loud'));
    assert.equal(r.code, 201, r.body.message);
    assert.deepEqual(r.warnings, [
      'would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)',
    ]);
  });

  it('audit: a violation is an audit annotation on the request, with no warning', async () => {
    const r = await s.send('POST', '/api/v1/namespaces/audited/pods', pod('plain'));
    assert.equal(r.code, 201);
    assert.deepEqual(r.warnings, []);
    const annotations = annotationsOf('/api/v1/namespaces/audited/pods').at(-1) as Record<string, string>;
    assert.equal(annotations['pod-security.kubernetes.io/enforce-policy'], 'privileged:latest');
    assert.match(
      annotations['pod-security.kubernetes.io/audit-violations']!,
      /^would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false/,
    );
  });

  it('pod templates: a Deployment is admitted with the warning, not refused', async () => {
    const r = await s.send('POST', '/apis/apps/v1/namespaces/restricted/deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: hostPathPod('x').spec },
      },
    });
    assert.equal(r.code, 201, r.body.message);
    assert.equal(r.warnings.length, 1);
    assert.match(r.warnings[0]!, /^would violate PodSecurity "restricted:latest": .*restricted volume types/);
  });

  it('exempts the configured namespaces, usernames and runtimeClasses', async () => {
    const ns = await s.send(
      'POST',
      '/api/v1/namespaces',
      namespace('exempt-ns', { [L('enforce')]: 'restricted' }),
    );
    assert.equal(ns.code, 201);
    assert.deepEqual(ns.warnings, [
      'namespace "exempt-ns" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored',
    ]);
    assert.equal((await s.send('POST', '/api/v1/namespaces/exempt-ns/pods', hostPathPod('a'))).code, 201);
    assert.deepEqual(annotationsOf('/api/v1/namespaces/exempt-ns/pods').at(-1), {
      'pod-security.kubernetes.io/exempt': 'namespace',
    });
    const exemptUser = await s.as('exempt-user');
    const byUser = await s.send(
      'POST',
      '/api/v1/namespaces/restricted/pods',
      hostPathPod('b'),
      'application/json',
      exemptUser,
    );
    assert.equal(byUser.code, 201, byUser.body.message);
    const kata = hostPathPod('c');
    (kata.spec as Record<string, unknown>).runtimeClassName = 'kata';
    const byRuntime = await s.send('POST', '/api/v1/namespaces/restricted/pods', kata);
    assert.equal(byRuntime.code, 201, byRuntime.body.message);
  });

  it('refuses invalid Pod Security labels on a Namespace (422), on create and on a change', async () => {
    const created = await s.send(
      'POST',
      '/api/v1/namespaces',
      namespace('typo', { [L('enforce')]: 'strict' }),
    );
    assert.equal(created.code, 422);
    assert.equal(created.body.reason, 'Invalid');
    assert.equal(
      created.body.message,
      'Namespace "typo" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted',
    );
    const changed = await s.send('PATCH', '/api/v1/namespaces/warned', {
      metadata: { labels: { [L('warn-version')]: '1.29' } },
    });
    assert.equal(changed.code, 422);
    assert.match(
      changed.body.message ?? '',
      /warn-version\]: Invalid value: "1.29": must be "latest" or "v1.x"/,
    );
    assert.equal((await s.send('GET', '/api/v1/namespaces/typo')).code, 404);
  });

  it("warns about existing pods when a namespace's enforce level tightens", async () => {
    assert.equal((await s.send('POST', '/api/v1/namespaces', namespace('tighten'))).code, 201);
    for (const name of ['p1', 'p2', 'p3'])
      assert.equal((await s.send('POST', '/api/v1/namespaces/tighten/pods', privilegedPod(name))).code, 201);
    assert.equal((await s.send('POST', '/api/v1/namespaces/tighten/pods', hostPathPod('h'))).code, 201);
    const r = await s.send('PATCH', '/api/v1/namespaces/tighten', {
      metadata: { labels: { [L('enforce')]: 'baseline' } },
    });
    assert.equal(r.code, 200, r.body.message);
    assert.deepEqual(r.warnings, [
      'existing pods in namespace "tighten" violate the new PodSecurity enforce level "baseline:latest"',
      'h: hostPath volumes',
      'p1 (and 2 other pods): privileged',
    ]);
    // Relaxing it warns about nothing.
    const relaxed = await s.send('PATCH', '/api/v1/namespaces/tighten', {
      metadata: { labels: { [L('enforce')]: 'privileged' } },
    });
    assert.deepEqual(relaxed.warnings, []);
  });

  it('kubectl prints the warnings', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'k8ts-podsecurity-'));
    try {
      const { cert, key } = await signLeaf(s.ca, {
        usage: 'client',
        user: 'root',
        groups: ['system:masters'],
      });
      const config = join(dir, 'kubeconfig.yaml');
      writeFileSync(config, kubeconfig(s.url, { ca: s.ca, admin: { cert, key: key! } }), { mode: 0o600 });
      const r = await run(
        'kubectl',
        ['--kubeconfig', config, '--cache-dir', join(dir, 'cache'), 'apply', '-n', 'warned', '-f', '-'],
        {
          stdin: JSON.stringify(privilegedPod('from-kubectl')),
        },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stderr,
        /Warning: would violate PodSecurity "baseline:latest": privileged \(container "c" must not set securityContext.privileged=true\)/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('PodSecurity with a cluster-wide default level (--pod-security-default-level baseline)', () => {
  let s: Awaited<ReturnType<typeof startServer>>;
  before(async () => {
    s = await startServer(withDefaultLevel(DEFAULT_POD_SECURITY, 'baseline'));
  });
  after(() => s.stop());

  it('refuses a hostPath pod in a namespace without labels; a label still relaxes it', async () => {
    const r = await s.send('POST', '/api/v1/namespaces/default/pods', hostPathPod('escape'));
    assert.equal(r.code, 403);
    assert.match(
      r.body.message ?? '',
      /violates PodSecurity "baseline:latest": hostPath volumes \(volume "host"\)$/,
    );
    assert.equal(
      (
        await s.send(
          'POST',
          '/api/v1/namespaces',
          namespace('open', {
            [L('enforce')]: 'privileged',
            [L('warn')]: 'privileged',
            [L('audit')]: 'privileged',
          }),
        )
      ).code,
      201,
    );
    assert.equal((await s.send('POST', '/api/v1/namespaces/open/pods', hostPathPod('allowed'))).code, 201);
  });
});
