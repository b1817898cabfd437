import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../api/clock.js';
import { silentLogger } from '../../../api/log.js';
import { FakeRuntime } from '../../../cri/fake/runtime.js';
import { isContainerStartError } from './errors.js';
import { defaultPullPolicy, ImageManager } from './images.js';
import type { KubeletContainer, KubeletPod } from './types.js';

interface Recorded {
  type: string;
  reason: string;
  message: string;
}

function setup(images: string[], registry: string[]) {
  const clock = new FakeClock();
  const runtime = new FakeRuntime({ clock, images, registry });
  const events: Recorded[] = [];
  const manager = new ImageManager({
    images: runtime,
    clock,
    logger: silentLogger(),
    recorder: { event: (_t, type, reason, message) => events.push({ type, reason, message }) },
  });
  return { clock, runtime, events, manager };
}

const pod: KubeletPod = {
  metadata: { name: 'p', namespace: 'default', uid: 'u1' },
  spec: { containers: [] },
};
const ref = { kind: 'Pod', name: 'p', namespace: 'default', fieldPath: 'spec.containers{c}' };

async function reasonOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    if (isContainerStartError(err)) return err.reason;
    throw err;
  }
}

describe('defaultPullPolicy', () => {
  for (const [image, want] of [
    ['spring-server:1.0', 'IfNotPresent'],
    ['busybox', 'Always'],
    ['busybox:latest', 'Always'],
    ['127.0.0.1:5000/k8ts/pause:1.0', 'IfNotPresent'],
    [`busybox@sha256:${'a'.repeat(64)}`, 'IfNotPresent'],
  ] as const) {
    it(`${image} → ${want}`, () => assert.equal(defaultPullPolicy(image), want));
  }
});

describe('ImageManager.ensureImageExists', () => {
  const table: {
    name: string;
    container: KubeletContainer;
    images: string[];
    registry: string[];
    want: string;
    pulled: string[];
    reasons: string[];
  }[] = [
    {
      name: 'IfNotPresent, present: no pull',
      container: { name: 'c', image: 'spring-server:1.0', imagePullPolicy: 'IfNotPresent' },
      images: ['spring-server:1.0'],
      registry: [],
      want: 'ok',
      pulled: [],
      reasons: ['Pulled'],
    },
    {
      name: 'IfNotPresent, absent: pulled',
      container: { name: 'c', image: 'spring-server:1.1', imagePullPolicy: 'IfNotPresent' },
      images: [],
      registry: ['spring-server:1.1'],
      want: 'ok',
      pulled: ['spring-server:1.1'],
      reasons: ['Pulling', 'Pulled'],
    },
    {
      name: 'Always, present: pulled anyway',
      container: { name: 'c', image: 'spring-server:1.0', imagePullPolicy: 'Always' },
      images: ['spring-server:1.0'],
      registry: ['spring-server:1.0'],
      want: 'ok',
      pulled: ['spring-server:1.0'],
      reasons: ['Pulling', 'Pulled'],
    },
    {
      name: 'default for :latest is Always',
      container: { name: 'c', image: 'k8ts/busybox' },
      images: ['k8ts/busybox:latest'],
      registry: ['k8ts/busybox:latest'],
      want: 'ok',
      pulled: ['k8ts/busybox:latest'],
      reasons: ['Pulling', 'Pulled'],
    },
    {
      name: 'Never, present: used',
      container: { name: 'c', image: 'spring-server:1.0', imagePullPolicy: 'Never' },
      images: ['spring-server:1.0'],
      registry: [],
      want: 'ok',
      pulled: [],
      reasons: ['Pulled'],
    },
    {
      name: 'Never, absent: ErrImageNeverPull',
      container: { name: 'c', image: 'nope:1', imagePullPolicy: 'Never' },
      images: [],
      registry: ['nope:1'],
      want: 'ErrImageNeverPull',
      pulled: [],
      reasons: ['ErrImageNeverPull', 'Failed'],
    },
    {
      name: 'unparsable reference: InvalidImageName',
      container: { name: 'c', image: 'Not A Valid:Image' },
      images: [],
      registry: [],
      want: 'InvalidImageName',
      pulled: [],
      reasons: ['InspectFailed', 'Failed'],
    },
    {
      name: 'pull fails: ErrImagePull',
      container: { name: 'c', image: 'missing:1.0' },
      images: [],
      registry: [],
      want: 'ErrImagePull',
      pulled: [],
      reasons: ['Pulling', 'Failed', 'Failed'],
    },
  ];
  for (const c of table) {
    it(c.name, async () => {
      const { runtime, events, manager } = setup(c.images, c.registry);
      assert.equal(await reasonOf(manager.ensureImageExists(pod, c.container, ref)), c.want);
      assert.deepEqual([...runtime.pulls], c.pulled);
      assert.deepEqual(
        events.map((e) => e.reason),
        c.reasons,
      );
    });
  }

  it('messages as the kubelet words them', async () => {
    const { events, manager } = setup(['spring-server:1.0'], []);
    await manager.ensureImageExists(pod, { name: 'c', image: 'spring-server:1.0' }, ref);
    await reasonOf(
      manager.ensureImageExists(pod, { name: 'c', image: 'x:1', imagePullPolicy: 'Never' }, ref),
    );
    assert.deepEqual(
      events.map((e) => e.message),
      [
        'Container image "spring-server:1.0" already present on machine',
        'Container image "x:1" is not present with pull policy of Never',
        'Error: ErrImageNeverPull',
      ],
    );
  });

  it('after a failed pull: ImagePullBackOff until the backoff (10 s, then 20 s) passes', async () => {
    const { clock, runtime, events, manager } = setup([], []);
    const c: KubeletContainer = { name: 'c', image: 'later:1.0' };
    assert.equal(await reasonOf(manager.ensureImageExists(pod, c, ref)), 'ErrImagePull');
    await clock.advance(9_000);
    assert.equal(await reasonOf(manager.ensureImageExists(pod, c, ref)), 'ImagePullBackOff');
    assert.equal(events.at(-2)!.reason, 'BackOff');
    assert.equal(events.at(-2)!.message, 'Back-off pulling image "later:1.0"');
    await clock.advance(1_000);
    assert.equal(await reasonOf(manager.ensureImageExists(pod, c, ref)), 'ErrImagePull');
    await clock.advance(19_000);
    assert.equal(await reasonOf(manager.ensureImageExists(pod, c, ref)), 'ImagePullBackOff');
    runtime.state.registry.add('later:1.0');
    await clock.advance(1_000);
    assert.equal(await reasonOf(manager.ensureImageExists(pod, c, ref)), 'ok');
    assert.match(events.at(-1)!.message, /^Successfully pulled image "later:1.0" in \d+\.\d{3}s/);
  });
});

describe('ImageManager: imagePullSecrets', () => {
  const REG = '127.0.0.1:5000';
  const image = `${REG}/team/app:1.0`;
  const dockerconfigjson = (auths: Record<string, unknown>) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'x', namespace: 'default' },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths })).toString('base64') },
  });
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const secrets: Record<string, ReturnType<typeof dockerconfigjson>> = {
    good: dockerconfigjson({ [REG]: { auth: b64('ann:pw') } }),
    wrong: dockerconfigjson({ [`http://${REG}/team`]: { username: 'ann', password: 'nope' } }),
    other: dockerconfigjson({ 'other.example:5000': { username: 'ann', password: 'pw' } }),
  };
  function withSecrets() {
    const clock = new FakeClock();
    const runtime = new FakeRuntime({ clock, images: [], registry: [image] });
    runtime.requirePullCredentials(image, 'ann', 'pw');
    const events: Recorded[] = [];
    const manager = new ImageManager({
      images: runtime,
      clock,
      logger: silentLogger(),
      recorder: { event: (_t, type, reason, message) => events.push({ type, reason, message }) },
      getSecret: async (_ns, name) => secrets[name],
    });
    return { runtime, events, manager };
  }
  const podWith = (...names: string[]): KubeletPod => ({
    ...pod,
    spec: { containers: [], imagePullSecrets: names.map((name) => ({ name })) },
  });
  const c: KubeletContainer = { name: 'c', image, imagePullPolicy: 'Always' };

  it('a secret for the registry: the pull goes with its credentials', async () => {
    const { runtime, manager } = withSecrets();
    assert.equal(await reasonOf(manager.ensureImageExists(podWith('good'), c, ref)), 'ok');
    assert.deepEqual(runtime.pullAuths, [{ username: 'ann', password: 'pw', auth: b64('ann:pw') }]);
  });

  it('no secret, or one for another registry: no credentials, ErrImagePull unauthorized', async () => {
    for (const p of [pod, podWith('other')]) {
      const { runtime, events, manager } = withSecrets();
      assert.equal(await reasonOf(manager.ensureImageExists(p, c, ref)), 'ErrImagePull');
      assert.deepEqual(runtime.pullAuths, [undefined]);
      assert.ok(events.some((e) => /unauthorized: authentication required/.test(e.message)));
    }
  });

  it('each matching credential in turn, the more specific key first, until one works', async () => {
    const { runtime, manager } = withSecrets();
    assert.equal(await reasonOf(manager.ensureImageExists(podWith('good', 'wrong'), c, ref)), 'ok');
    assert.deepEqual(
      runtime.pullAuths.map((a) => a?.password),
      ['nope', 'pw'],
      `${REG}/team before ${REG}`,
    );
  });

  it('a missing secret: Warning FailedToRetrieveImagePullSecret, the others still used', async () => {
    const { events, manager } = withSecrets();
    assert.equal(await reasonOf(manager.ensureImageExists(podWith('gone', 'good'), c, ref)), 'ok');
    const warn = events.find((e) => e.reason === 'FailedToRetrieveImagePullSecret');
    assert.equal(
      warn?.message,
      'Unable to retrieve some image pull secrets (gone); attempting to pull the image may not succeed.',
    );
    assert.equal(warn?.type, 'Warning');
  });
});
