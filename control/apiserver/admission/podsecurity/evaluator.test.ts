// The Pod Security checks, one violation each, with upstream's reasons and details
// (k8s.io/pod-security-admission/policy check_*.go), and the evaluator's versions,
// overrides and order.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Obj } from './checks.js';
import { Evaluator } from './evaluator.js';
import type { Level, LevelVersion } from './policy.js';

const evaluator = new Evaluator(32);
const at = (level: Level, minor?: number): LevelVersion => ({
  level,
  version: minor === undefined ? 'latest' : { minor },
});

/** A pod with one container `c` (what restricted wants unless `sc` says otherwise) and the given spec fields. */
function pod(spec: Obj = {}, sc: Obj = {}, metadata: Obj = {}) {
  const restricted = {
    allowPrivilegeEscalation: false,
    runAsNonRoot: true,
    seccompProfile: { type: 'RuntimeDefault' },
    capabilities: { drop: ['ALL'] },
  };
  return {
    metadata,
    spec: { containers: [{ name: 'c', image: 'i', securityContext: { ...restricted, ...sc } }], ...spec },
  };
}

describe('Pod Security checks (baseline)', () => {
  const cases: [string, ReturnType<typeof pod>, string][] = [
    [
      'hostNetwork',
      pod({ hostNetwork: true, hostPID: true }),
      'host namespaces (hostNetwork=true, hostPID=true)',
    ],
    [
      'privileged',
      pod({}, { privileged: true }),
      'privileged (container "c" must not set securityContext.privileged=true)',
    ],
    [
      'capabilities.add',
      pod({}, { capabilities: { add: ['SYS_ADMIN', 'NET_RAW', 'CHOWN'] } }),
      'non-default capabilities (container "c" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)',
    ],
    [
      'hostPath',
      pod({
        volumes: [
          { name: 'host', hostPath: { path: '/' } },
          { name: 'e', emptyDir: {} },
        ],
      }),
      'hostPath volumes (volume "host")',
    ],
    [
      'hostPort',
      pod({
        containers: [
          {
            name: 'c',
            image: 'i',
            ports: [
              { containerPort: 80, hostPort: 8080 },
              { containerPort: 9, hostPort: 10 },
            ],
          },
        ],
      }),
      'hostPort (container "c" uses hostPorts 10, 8080)',
    ],
    [
      'appArmor',
      pod(
        {},
        { appArmorProfile: { type: 'Unconfined' } },
        { annotations: { 'container.apparmor.security.beta.kubernetes.io/c': 'unconfined' } },
      ),
      'forbidden AppArmor profiles (container "c" and annotation must not set AppArmor profile type to "Unconfined", "container.apparmor.security.beta.kubernetes.io/c="unconfined"")',
    ],
    [
      'seLinuxOptions',
      pod({ securityContext: { seLinuxOptions: { type: 'spc_t', user: 'root' } } }),
      'seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set)',
    ],
    [
      'procMount',
      pod({}, { procMount: 'Unmasked' }),
      'procMount (container "c" must not set securityContext.procMount to "Unmasked")',
    ],
    [
      'seccomp Unconfined',
      pod({ securityContext: { seccompProfile: { type: 'Unconfined' } } }, { seccompProfile: undefined }),
      'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")',
    ],
    [
      'sysctls',
      pod({
        securityContext: {
          sysctls: [
            { name: 'kernel.msgmax', value: '1' },
            { name: 'net.ipv4.tcp_rmem', value: '1' },
          ],
        },
      }),
      'forbidden sysctls (kernel.msgmax)',
    ],
    [
      'hostProcess',
      pod({}, { windowsOptions: { hostProcess: true } }),
      'hostProcess (container "c" must not set securityContext.windowsOptions.hostProcess=true)',
    ],
  ];
  for (const [what, p, detail] of cases) {
    it(`refuses ${what} at baseline and restricted, allows it at privileged`, () => {
      const baseline = evaluator.check(at('baseline'), p);
      assert.equal(baseline.allowed, false);
      assert.equal(baseline.detail, detail);
      assert.equal(evaluator.check(at('restricted'), p).allowed, false);
      assert.equal(evaluator.check(at('privileged'), p).allowed, true);
    });
  }
  it('allows a plain pod at baseline, and one hardened for restricted at restricted', () => {
    const plain = { metadata: {}, spec: { containers: [{ name: 'c', image: 'i' }] } };
    assert.equal(evaluator.check(at('baseline'), plain).allowed, true);
    assert.equal(evaluator.check(at('restricted'), pod()).allowed, true);
  });
});

describe('Pod Security checks (restricted)', () => {
  const plain = {
    metadata: {},
    spec: { initContainers: [{ name: 'init', image: 'i' }], containers: [{ name: 'c', image: 'i' }] },
  };
  it('lists every restricted violation of a plain pod, baseline order first, IDs in byte order', () => {
    const r = evaluator.check(at('restricted'), plain);
    assert.equal(
      r.reason,
      'allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile',
    );
    assert.equal(
      r.detail,
      'allowPrivilegeEscalation != false (containers "init", "c" must set securityContext.allowPrivilegeEscalation=false), ' +
        'unrestricted capabilities (containers "init", "c" must set securityContext.capabilities.drop=["ALL"]), ' +
        'runAsNonRoot != true (pod or containers "init", "c" must set securityContext.runAsNonRoot=true), ' +
        'seccompProfile (pod or containers "init", "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    );
  });
  const cases: [string, ReturnType<typeof pod>, string][] = [
    [
      'a restricted volume type (instead of hostPathVolumes)',
      pod({
        volumes: [
          { name: 'h', hostPath: { path: '/' } },
          { name: 'n', nfs: { server: 's', path: '/' } },
        ],
      }),
      'restricted volume types (volumes "h", "n" use restricted volume types "hostPath", "nfs")',
    ],
    ['runAsUser 0', pod({ securityContext: { runAsUser: 0 } }), 'runAsUser=0 (pod must not set runAsUser=0)'],
    [
      'runAsNonRoot false',
      pod({}, { runAsNonRoot: false }),
      'runAsNonRoot != true (container "c" must not set securityContext.runAsNonRoot=false)',
    ],
    [
      'capabilities beyond NET_BIND_SERVICE',
      pod({}, { capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE', 'CHOWN'] } }),
      'unrestricted capabilities (container "c" must not include "CHOWN" in securityContext.capabilities.add)',
    ],
  ];
  for (const [what, p, detail] of cases) {
    it(`refuses ${what}`, () => {
      const r = evaluator.check(at('restricted'), p);
      assert.equal(r.detail, detail);
    });
  }
  it('exempts Windows pods from the checks that do not apply to them (from v1.25)', () => {
    const windows = {
      metadata: {},
      spec: {
        os: { name: 'windows' },
        containers: [{ name: 'c', image: 'i', securityContext: { runAsNonRoot: true } }],
      },
    };
    assert.equal(evaluator.check(at('restricted'), windows).allowed, true);
    assert.equal(evaluator.check(at('restricted', 24), windows).allowed, false);
  });
});

describe('Pod Security versions', () => {
  it('applies a check only from its version on, and caps later versions at the newest known', () => {
    const tcp = pod({ securityContext: { sysctls: [{ name: 'net.ipv4.tcp_rmem', value: '1' }] } });
    assert.equal(evaluator.check(at('baseline', 31), tcp).allowed, false);
    assert.equal(evaluator.check(at('baseline', 32), tcp).allowed, true);
    assert.equal(evaluator.check(at('baseline', 99), tcp).allowed, true);
    assert.equal(new Evaluator(31).check(at('baseline'), tcp).allowed, false, 'latest of a 1.31 server');
    // runAsUser came in v1.23; seccomp's field in v1.19 (annotations before).
    const root = pod({ securityContext: { runAsUser: 0 } });
    assert.equal(evaluator.check(at('restricted', 22), root).reason.includes('runAsUser'), false);
    const annotated = pod(
      {},
      {},
      { annotations: { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined' } },
    );
    assert.equal(
      evaluator.check(at('baseline', 18), annotated).detail,
      'seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")',
    );
    assert.equal(evaluator.check(at('baseline', 19), annotated).allowed, true);
  });
});
