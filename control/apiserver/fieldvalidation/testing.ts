/**
 * Test data for field validation, shared by the tests (through test-fixtures.ts) and the request-path
 * costs of `npm run bench:api`.
 */

type Json = Record<string, unknown>;

/** `at(obj, 'spec', 'template', 'spec', 'containers', 0)`: the object at that place; throws when there is none. */
function at(obj: unknown, ...path: (string | number)[]): Json {
  let v = obj;
  for (const p of path) v = (v as Record<string | number, unknown>)[p];
  if (v === null || typeof v !== 'object') throw new TypeError(`no object at ${path.join('.')}`);
  return v as Json;
}

const container = (o: Json, i = 0) => at(o, 'spec', 'template', 'spec', 'containers', i);
const podSpec = (o: Json) => at(o, 'spec', 'template', 'spec');

/**
 * `spring` (a Deployment as a user writes it, e.g. examples/spring-deployment.yaml) as the
 * store holds it after a few writes: most of what a typical one carries (uid, managedFields,
 * the last-applied annotation, defaulted fields, probes, volumes, a status). A new object.
 */
export function typicalDeployment(spring: Json): Json {
  const d = structuredClone(spring);
  Object.assign(at(d, 'metadata'), {
    uid: '5a1d3c7e-0000-4000-8000-000000000001',
    resourceVersion: '42',
    generation: 3,
    creationTimestamp: '2025-01-01T00:00:00Z',
    labels: { app: 'backend-app', 'app.kubernetes.io/part-of': 'spring' },
    annotations: {
      'deployment.kubernetes.io/revision': '3',
      'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(spring),
    },
    managedFields: [
      {
        manager: 'kubectl-client-side-apply',
        operation: 'Update',
        apiVersion: 'apps/v1',
        time: '2025-01-01T00:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': {
            'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} },
          },
          'f:spec': { 'f:replicas': {}, 'f:template': { 'f:spec': { 'k:{"name":"spring-container"}': {} } } },
        },
      },
    ],
  });
  Object.assign(at(d, 'spec'), {
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
    revisionHistoryLimit: 10,
    progressDeadlineSeconds: 600,
  });
  Object.assign(podSpec(d), {
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    dnsPolicy: 'ClusterFirst',
    nodeSelector: { 'kubernetes.io/os': 'linux' },
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'backend', effect: 'NoSchedule' }],
    volumes: [
      { name: 'cache', emptyDir: { sizeLimit: '1Gi' } },
      { name: 'config', configMap: { name: 'spring-config', items: [{ key: 'a', path: 'a.yaml' }] } },
    ],
  });
  Object.assign(container(d), {
    env: [
      { name: 'JAVA_OPTS', value: '-Xmx512m' },
      { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
    ],
    resources: { limits: { cpu: '500m', memory: '512Mi' }, requests: { cpu: 0.25, memory: '256Mi' } },
    livenessProbe: { httpGet: { path: '/actuator/health', port: 8080, scheme: 'HTTP' }, periodSeconds: 10 },
    readinessProbe: { tcpSocket: { port: 'http' }, initialDelaySeconds: 5 },
    volumeMounts: [{ name: 'cache', mountPath: '/cache' }],
    terminationMessagePath: '/dev/termination-log',
  });
  d.status = {
    observedGeneration: 3,
    replicas: 5,
    readyReplicas: 5,
    conditions: [
      {
        type: 'Available',
        status: 'True',
        lastUpdateTime: '2025-01-01T00:00:00Z',
        lastTransitionTime: '2025-01-01T00:00:00Z',
        reason: 'MinimumReplicasAvailable',
        message: 'Deployment has minimum availability.',
      },
    ],
  };
  return d;
}
