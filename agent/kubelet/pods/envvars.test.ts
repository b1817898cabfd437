/**
 * The Service environment variables of a pod (envvars.ts), after pkg/kubelet/envvars
 * envvars_test.go and kubelet_pods_test.go TestMakeEnvironmentVariables: which Services
 * count, the variables of each, and how they sit under the container's own env.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Service } from '../../../api/types.js';
import { makeEnvironmentVariables } from './env.js';
import { serviceEnvVarMap, serviceEnvVars } from './envvars.js';
import type { KubeletContainer, KubeletPod } from './types.js';

const svc = (
  namespace: string,
  name: string,
  clusterIP: string | undefined,
  ports: Service['spec']['ports'],
): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { namespace, name },
  spec: { ...(clusterIP !== undefined ? { clusterIP } : {}), ports },
});

const KUBERNETES = svc('default', 'kubernetes', '10.43.0.1', [{ name: 'https', port: 443, protocol: 'TCP' }]);
const SPRING = svc('shop', 'spring-service', '10.43.0.20', [
  { port: 8080 },
  { name: 'metrics-port', port: 9090, protocol: 'UDP' },
]);
const HEADLESS = svc('shop', 'db', 'None', [{ port: 5432 }]);
const EXTERNAL = svc('shop', 'ext', undefined, [{ port: 80 }]);
const OTHER_NS = svc('other', 'api', '10.43.0.30', [{ port: 80 }]);
const ALL = [KUBERNETES, SPRING, HEADLESS, EXTERNAL, OTHER_NS];

describe('serviceEnvVars', () => {
  it('gives the host, ports, named ports and Docker link variables', () => {
    assert.deepEqual(Object.fromEntries(serviceEnvVars([SPRING]).map((e) => [e.name, e.value])), {
      SPRING_SERVICE_SERVICE_HOST: '10.43.0.20',
      SPRING_SERVICE_SERVICE_PORT: '8080',
      SPRING_SERVICE_SERVICE_PORT_METRICS_PORT: '9090',
      SPRING_SERVICE_PORT: 'tcp://10.43.0.20:8080',
      SPRING_SERVICE_PORT_8080_TCP: 'tcp://10.43.0.20:8080',
      SPRING_SERVICE_PORT_8080_TCP_PROTO: 'tcp',
      SPRING_SERVICE_PORT_8080_TCP_PORT: '8080',
      SPRING_SERVICE_PORT_8080_TCP_ADDR: '10.43.0.20',
      SPRING_SERVICE_PORT_9090_UDP: 'udp://10.43.0.20:9090',
      SPRING_SERVICE_PORT_9090_UDP_PROTO: 'udp',
      SPRING_SERVICE_PORT_9090_UDP_PORT: '9090',
      SPRING_SERVICE_PORT_9090_UDP_ADDR: '10.43.0.20',
    });
  });
  it('brackets an IPv6 clusterIP in the URLs', () => {
    const v6 = svc('shop', 'v6', 'fd00::10', [{ port: 80 }]);
    assert.equal(
      new Map(serviceEnvVars([v6]).map((e) => [e.name, e.value])).get('V6_PORT'),
      'tcp://[fd00::10]:80',
    );
  });
});

describe('serviceEnvVarMap', () => {
  it("takes the namespace's Services with a clusterIP, and default/kubernetes", () => {
    const m = serviceEnvVarMap(ALL, 'shop', true);
    assert.equal(m.get('KUBERNETES_SERVICE_HOST'), '10.43.0.1');
    assert.equal(m.get('KUBERNETES_SERVICE_PORT'), '443');
    assert.equal(m.get('KUBERNETES_SERVICE_PORT_HTTPS'), '443');
    assert.equal(m.get('KUBERNETES_PORT_443_TCP_ADDR'), '10.43.0.1');
    assert.equal(m.get('SPRING_SERVICE_SERVICE_HOST'), '10.43.0.20');
    for (const k of m.keys()) assert.doesNotMatch(k, /^(DB|EXT|API)_/);
  });
  it('enableServiceLinks false leaves only the kubernetes Service', () => {
    const m = serviceEnvVarMap(ALL, 'shop', false);
    assert.equal(m.get('KUBERNETES_SERVICE_HOST'), '10.43.0.1');
    assert.deepEqual(
      [...m.keys()].filter((k) => !k.startsWith('KUBERNETES_')),
      [],
    );
  });
});

describe('makeEnvironmentVariables with Service variables', () => {
  const pod: KubeletPod = {
    metadata: { name: 'p', namespace: 'shop', uid: 'u' },
    spec: { containers: [] },
  };
  it('the container env wins, $(VAR) sees the Service variables, the rest come after', async () => {
    const container: KubeletContainer = {
      name: 'app',
      env: [
        { name: 'KUBERNETES_SERVICE_PORT', value: '6443' },
        {
          name: 'SPRING_URL',
          value: 'http://$(SPRING_SERVICE_SERVICE_HOST):$(SPRING_SERVICE_SERVICE_PORT)/',
        },
      ],
    };
    const envs = await makeEnvironmentVariables(pod, container, {
      client: undefined as never,
      nodeName: 'n',
      hostIP: '192.0.2.10',
      podIP: '10.42.0.5',
      serviceEnv: serviceEnvVarMap(ALL, 'shop', true),
    });
    const m = new Map(envs.map((e) => [e.key, e.value]));
    assert.equal(m.get('KUBERNETES_SERVICE_PORT'), '6443');
    assert.equal(m.get('SPRING_URL'), 'http://10.43.0.20:8080/');
    assert.equal(m.get('KUBERNETES_SERVICE_HOST'), '10.43.0.1');
    assert.deepEqual(
      envs.slice(0, 2).map((e) => e.key),
      ['KUBERNETES_SERVICE_PORT', 'SPRING_URL'],
    );
    assert.equal(envs.filter((e) => e.key === 'KUBERNETES_SERVICE_PORT').length, 1);
  });
});
