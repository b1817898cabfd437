/**
 * The security parts of the kubelet's configs, as pure functions: the namespaces a pod's
 * sandbox and containers use (namespacesForPod) and verifyRunAsNonRoot's rulebook.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { containerConfig, namespacesForPod, verifyRunAsNonRoot } from './config.js';
import type { KubeletContainer, KubeletPod, KubeletPodSpec } from './types.js';

const pod = (spec: Partial<KubeletPodSpec> = {}, container: Partial<KubeletContainer> = {}): KubeletPod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'ns', uid: 'u1' },
  spec: { containers: [{ name: 'app', image: 'img:1', ...container }], ...spec },
});

describe('namespacesForPod', () => {
  const cases: [string, Partial<KubeletPodSpec>, ReturnType<typeof namespacesForPod>][] = [
    ['defaults', {}, { network: 'POD', ipc: 'POD', pid: 'CONTAINER' }],
    [
      'hostNetwork, hostIPC, hostPID',
      { hostNetwork: true, hostIPC: true, hostPID: true },
      { network: 'NODE', ipc: 'NODE', pid: 'NODE' },
    ],
    ['shareProcessNamespace', { shareProcessNamespace: true }, { network: 'POD', ipc: 'POD', pid: 'POD' }],
    [
      'hostPID wins over shareProcessNamespace',
      { hostPID: true, shareProcessNamespace: true },
      { network: 'POD', ipc: 'POD', pid: 'NODE' },
    ],
  ];
  for (const [what, spec, want] of cases) it(what, () => assert.deepEqual(namespacesForPod(pod(spec)), want));
});

describe('containerConfig security context', () => {
  it('capabilities, no_new_privs only for an explicit allowPrivilegeEscalation false, privileged', () => {
    const p = pod(
      {},
      {
        securityContext: {
          capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] },
          allowPrivilegeEscalation: false,
          privileged: true,
        },
      },
    );
    const sc = containerConfig(p, p.spec.containers[0]!, {
      restartCount: 0,
      envs: [],
      mounts: [],
      nodeName: 'n',
    }).linux?.securityContext;
    assert.deepEqual(sc, {
      privileged: true,
      capabilities: { addCapabilities: ['NET_ADMIN'], dropCapabilities: ['ALL'] },
      noNewPrivs: true,
      namespaceOptions: { network: 'POD', ipc: 'POD', pid: 'CONTAINER' },
    });
    const q = pod({}, { securityContext: { allowPrivilegeEscalation: true } });
    const open = containerConfig(q, q.spec.containers[0]!, {
      restartCount: 0,
      envs: [],
      mounts: [],
      nodeName: 'n',
    });
    assert.equal(open.linux?.securityContext?.noNewPrivs, undefined);
  });
});

describe('verifyRunAsNonRoot', () => {
  const who = '(pod: "p_ns(u1)", container: app)';
  const cases: [string, KubeletPod, { uid?: number; username?: string }, string | undefined][] = [
    ['not asked for', pod(), {}, undefined],
    [
      'an image with no user (root)',
      pod({}, { securityContext: { runAsNonRoot: true } }),
      {},
      `container has runAsNonRoot and image will run as root ${who}`,
    ],
    [
      'an image of uid 0, asked for by the pod',
      pod({ securityContext: { runAsNonRoot: true } }),
      { uid: 0 },
      `container has runAsNonRoot and image will run as root ${who}`,
    ],
    ['an image of uid 1000', pod({}, { securityContext: { runAsNonRoot: true } }), { uid: 1000 }, undefined],
    [
      'an image with a user name',
      pod({}, { securityContext: { runAsNonRoot: true } }),
      { username: 'app' },
      `container has runAsNonRoot and image has non-numeric user (app), cannot verify user is non-root ${who}`,
    ],
    [
      'runAsUser 0 (the pod’s)',
      pod({ securityContext: { runAsUser: 0 } }, { securityContext: { runAsNonRoot: true } }),
      { uid: 1000 },
      `container's runAsUser breaks non-root policy ${who}`,
    ],
    [
      'runAsUser 1000 over a root image',
      pod({ securityContext: { runAsNonRoot: true } }, { securityContext: { runAsUser: 1000 } }),
      {},
      undefined,
    ],
    [
      'the container’s false over the pod’s true',
      pod({ securityContext: { runAsNonRoot: true } }, { securityContext: { runAsNonRoot: false } }),
      {},
      undefined,
    ],
  ];
  for (const [what, p, image, want] of cases) {
    it(what, () => assert.equal(verifyRunAsNonRoot(p, p.spec.containers[0]!, image), want));
  }
});
