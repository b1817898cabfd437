// Namespace labels to a policy (api.PolicyToEvaluate) and the server's
// PodSecurityConfiguration.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_POD_SECURITY, parsePodSecurityConfiguration, withDefaultLevel } from './config.js';
import { levelVersionString, policyToEvaluate, PRIVILEGED_POLICY, type Policy } from './policy.js';

const show = (p: Policy) =>
  `enforce=${levelVersionString(p.enforce)} audit=${levelVersionString(p.audit)} warn=${levelVersionString(p.warn)}`;
const L = (mode: string, v: string) => [`pod-security.kubernetes.io/${mode}`, v] as const;

describe('policyToEvaluate', () => {
  const cases: [string, Record<string, string>, string, number][] = [
    [
      'no labels: the defaults',
      {},
      'enforce=privileged:latest audit=privileged:latest warn=privileged:latest',
      0,
    ],
    [
      'enforce with a version; warn follows a stricter enforce',
      Object.fromEntries([L('enforce', 'baseline'), L('enforce-version', 'v1.29')]),
      'enforce=baseline:v1.29 audit=privileged:latest warn=baseline:v1.29',
      0,
    ],
    [
      'an explicit warn is kept',
      Object.fromEntries([L('enforce', 'restricted'), L('warn', 'baseline')]),
      'enforce=restricted:latest audit=privileged:latest warn=baseline:latest',
      0,
    ],
    [
      'an invalid enforce level enforces restricted (and warn does not follow it)',
      Object.fromEntries([L('enforce', 'strict')]),
      'enforce=restricted:latest audit=privileged:latest warn=privileged:latest',
      1,
    ],
    [
      'invalid audit and warn levels fail open; an invalid version is latest',
      Object.fromEntries([L('audit', 'x'), L('warn', 'y'), L('audit-version', 'v2.0')]),
      'enforce=privileged:latest audit=privileged:latest warn=privileged:latest',
      3,
    ],
  ];
  for (const [what, labels, want, errors] of cases) {
    it(what, () => {
      const r = policyToEvaluate(labels, PRIVILEGED_POLICY);
      assert.equal(show(r.policy), want);
      assert.equal(r.errors.length, errors);
    });
  }
  it('words a bad label as a field error of the Namespace', () => {
    const { errors } = policyToEvaluate(Object.fromEntries([L('enforce', 'strict')]), PRIVILEGED_POLICY);
    assert.deepEqual(errors, [
      {
        type: 'FieldValueInvalid',
        field: 'metadata.labels[pod-security.kubernetes.io/enforce]',
        badValue: 'strict',
        message: 'must be one of privileged, baseline, restricted',
      },
    ]);
  });
});

describe('PodSecurityConfiguration', () => {
  it('reads defaults and exemptions, alone or inside an AdmissionConfiguration', () => {
    const config = {
      apiVersion: 'pod-security.admission.config.k8s.io/v1',
      kind: 'PodSecurityConfiguration',
      defaults: { enforce: 'baseline', 'enforce-version': 'v1.30', warn: 'restricted' },
      exemptions: { usernames: ['alice'], namespaces: ['kube-system'], runtimeClasses: ['kata'] },
    };
    for (const doc of [
      config,
      {
        apiVersion: 'apiserver.config.k8s.io/v1',
        kind: 'AdmissionConfiguration',
        plugins: [{ name: 'PodSecurity', configuration: config }],
      },
    ]) {
      const s = parsePodSecurityConfiguration(doc);
      assert.equal(show(s.defaults), 'enforce=baseline:v1.30 audit=privileged:latest warn=restricted:latest');
      assert.deepEqual(s.exemptions, {
        usernames: ['alice'],
        namespaces: ['kube-system'],
        runtimeClasses: ['kata'],
      });
    }
  });
  it('names every invalid field', () => {
    assert.throws(
      () =>
        parsePodSecurityConfiguration({
          apiVersion: 'pod-security.admission.config.k8s.io/v1',
          kind: 'PodSecurityConfiguration',
          defaults: { enforce: 'strict', 'audit-version': '1.29' },
          exemptions: { namespaces: ['Bad_NS', 'ok', 'ok'] },
        }),
      (err: Error) =>
        err.message.includes(
          'defaults.enforce: Invalid value: "strict": must be one of privileged, baseline, restricted',
        ) &&
        err.message.includes('defaults.audit-version: Invalid value: "1.29": must be "latest" or "v1.x"') &&
        err.message.includes('exemptions.namespaces[0]: Invalid value: "Bad_NS"') &&
        err.message.includes('exemptions.namespaces[2]: Duplicate value: "ok"'),
    );
    assert.throws(
      () => parsePodSecurityConfiguration({ kind: 'Other' }),
      /expected kind PodSecurityConfiguration/,
    );
  });
  it('a default level sets every mode (--pod-security-default-level)', () => {
    assert.equal(
      show(withDefaultLevel(DEFAULT_POD_SECURITY, 'baseline').defaults),
      'enforce=baseline:latest audit=baseline:latest warn=baseline:latest',
    );
  });
});
