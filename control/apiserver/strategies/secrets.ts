/**
 * Secret (core/v1): Kubernetes' SetDefaults_Secret, the v1 conversion of `stringData`,
 * ValidateSecret / ValidateSecretUpdate and the secret strategy's field selector.
 */
import type { FieldError } from '../../../api/meta/validation.js';
import { invalid, isConfigMapKey, keyPath, required, tooLong } from '../../../api/meta/validation.js';
import type { KubeObject } from '../../../api/object.js';
import type { Obj } from './meta.js';
import { asObj, defineStrategy, immutable, isObj, problems, str } from './meta.js';
import { base64Length, base64Problem, MAX_DATA_SIZE, validateImmutableData } from './configmaps.js';
import { x509KeyPairError } from './tls-keypair.js';
import { setOwnValue } from '../../../api/meta/maps.js';

/** Data keys each secret type requires (Kubernetes' SecretType* constants). */
const REQUIRED_KEYS: Readonly<Record<string, readonly string[]>> = {
  'kubernetes.io/dockercfg': ['.dockercfg'],
  'kubernetes.io/dockerconfigjson': ['.dockerconfigjson'],
  'kubernetes.io/ssh-auth': ['ssh-privatekey'],
  'kubernetes.io/tls': ['tls.crt', 'tls.key'],
};

/**
 * Secret defaults: `type: Opaque`, and `stringData` merged into `data` (base64) and
 * dropped, as the v1 → internal conversion does (stringData wins over data).
 */
function defaultSecret(obj: KubeObject): void {
  if (str(obj.type) === '') obj.type = 'Opaque';
  const stringData = asObj(obj.stringData);
  if (stringData && Object.keys(stringData).length > 0) {
    const data: Obj = isObj(obj.data) ? obj.data : (obj.data = {});
    for (const [k, v] of Object.entries(stringData))
      setOwnValue(data, k, Buffer.from(str(v), 'utf8').toString('base64'));
  }
  delete obj.stringData;
}

function decoded(v: unknown): string {
  return Buffer.from(str(v), 'base64').toString('utf8');
}

/**
 * ValidateSecret: data keys are config keys, values base64, at most 1 MiB in all; typed secrets carry their keys (service-account-token needs the
 * `kubernetes.io/service-account.name` annotation; dockercfg/dockerconfigjson valid JSON;
 * basic-auth a username or password).
 */
function validateSecret(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const data = asObj(obj.data) ?? {};
  let total = 0;
  for (const [key, value] of Object.entries(data)) {
    errs.push(...problems(keyPath('data', key), key, isConfigMapKey(key)));
    const problem = base64Problem(str(value));
    if (problem) errs.push(invalid(keyPath('data', key), '<secret contents redacted>', problem));
    else total += base64Length(str(value));
  }
  if (total > MAX_DATA_SIZE) errs.push(tooLong('data', MAX_DATA_SIZE));
  const type = str(obj.type);
  if (type === 'kubernetes.io/service-account-token') {
    if (!obj.metadata?.annotations?.['kubernetes.io/service-account.name']) {
      errs.push(required(keyPath('metadata.annotations', 'kubernetes.io/service-account.name')));
    }
  } else if (type === 'kubernetes.io/basic-auth') {
    if (!Object.hasOwn(data, 'username') && !Object.hasOwn(data, 'password')) {
      errs.push(required(keyPath('data', 'username')), required(keyPath('data', 'password')));
    }
  }
  for (const key of REQUIRED_KEYS[type] ?? []) {
    if (!Object.hasOwn(data, key) || (type === 'kubernetes.io/ssh-auth' && str(data[key]) === '')) {
      errs.push(required(keyPath('data', key)));
    } else if (key.startsWith('.docker')) {
      try {
        const parsed: unknown = JSON.parse(decoded(data[key]));
        if (!isObj(parsed)) throw new Error('json: cannot unmarshal into map[string]interface {}');
      } catch (e) {
        errs.push(invalid(keyPath('data', key), '<secret contents redacted>', (e as Error).message));
      }
    }
  }
  return errs;
}

/**
 * The Secret strategy's warningsForSecret (create and update): a `kubernetes.io/tls` Secret
 * whose tls.crt and tls.key are not a matching pair gets Go's tls.X509KeyPair error.
 */
export function secretWarnings(obj: KubeObject): string[] {
  if (obj.type !== 'kubernetes.io/tls') return [];
  const data = asObj(obj.data) ?? {};
  const text = (k: string) => Buffer.from(str(data[k]), 'base64').toString('latin1');
  const err = x509KeyPairError(text('tls.crt'), text('tls.key'));
  return err === undefined ? [] : [err];
}

/**
 * The Secret strategy: `type` is immutable and `immutable: true` freezes data. Field
 * selector: `type`. Warnings: secretWarnings.
 */
export const secretStrategy = defineStrategy({
  namespaced: true,
  defaults: defaultSecret,
  validate: validateSecret,
  validateUpdate: (obj, old) => [
    ...immutable(obj.type, old.type, 'type'),
    ...validateImmutableData(obj, old, ['data']),
  ],
  warningsOnCreate: secretWarnings,
  warningsOnUpdate: (obj) => secretWarnings(obj),
  fields: (obj) => ({ type: str(obj.type) }),
});
