/**
 * Test helpers of the endpoint controllers' tests (Endpoints and EndpointSlice): pods
 * bound to a fake node, Services, and waiting for a pod to run.
 */
import type { RestClient } from '../../../api/client/rest.js';
import { resources } from '../../../api/client/resource.js';
import { until } from '../testing.js';
import type { ContainerPort, Pod, Service, ServicePort } from '../../../api/types.js';

/** A pod bound to `node` (no scheduler needed) with one container exposing `ports`. */
export function makePod(
  name: string,
  labels: Record<string, string>,
  opts: { node?: string; ports?: ContainerPort[]; finalizers?: string[]; namespace?: string } = {},
): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: opts.namespace ?? 'default',
      labels,
      ...(opts.finalizers ? { finalizers: opts.finalizers } : {}),
    },
    spec: {
      nodeName: opts.node ?? 'node-a',
      containers: [{ name: 'app', image: 'example/app:1', ports: opts.ports ?? [] }],
    },
  };
}

/** A ClusterIP Service (or headless, or selectorless) in `default`. */
export function makeService(
  name: string,
  selector: Record<string, string> | undefined,
  ports: ServicePort[],
  spec: Partial<Service['spec']> = {},
  labels?: Record<string, string>,
): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default', ...(labels ? { labels } : {}) },
    spec: { ...(selector ? { selector } : {}), ports, ...spec },
  };
}

/** Waits until the pod has an IP (the fake kubelet started it). */
export function podRunning(client: RestClient, name: string, namespace = 'default'): Promise<Pod> {
  return until(`pod ${name} running`, async () => {
    const p = await client.get<Pod>(resources.pods, namespace, name);
    return p.status?.podIP ? p : undefined;
  });
}

/** Removes every finalizer of a pod (so a terminating pod held by one goes). */
export async function dropFinalizers(client: RestClient, name: string, namespace = 'default'): Promise<void> {
  await client.patch(resources.pods, namespace, name, 'merge', { metadata: { finalizers: null } });
}

/**
 * The `web` fixture both endpoint controllers' first test starts from: pods web-1 (node-a)
 * and web-2 (node-b) serving port `http` 8080, web-3 serving only `other` 9090, and the
 * Service `web` (label tier=front) with a numeric port (80 → 8080) and a named one
 * (81 → http). Resolves with the created Service.
 */
export async function createWebService(client: RestClient): Promise<Service> {
  const http = [{ name: 'http', containerPort: 8080 }];
  await Promise.all([
    client.create(resources.pods, makePod('web-1', { app: 'web' }, { ports: http })),
    client.create(resources.pods, makePod('web-2', { app: 'web' }, { node: 'node-b', ports: http })),
    client.create(
      resources.pods,
      makePod('web-3', { app: 'web' }, { ports: [{ name: 'other', containerPort: 9090 }] }),
    ),
  ]);
  return client.create<Service>(
    resources.services,
    makeService(
      'web',
      { app: 'web' },
      [
        { name: 'num', port: 80, targetPort: 8080 },
        { name: 'named', port: 81, targetPort: 'http' },
      ],
      {},
      { tier: 'front' },
    ),
  );
}

/**
 * Creates a pod of the `web` fixture (label app=web, port `http` 8080) held by the
 * finalizer `test/hold`, so that once deleted it stays terminating until dropFinalizers().
 */
export async function createHeldWebPod(client: RestClient, name: string): Promise<void> {
  await client.create(
    resources.pods,
    makePod(
      name,
      { app: 'web' },
      { ports: [{ name: 'http', containerPort: 8080 }], finalizers: ['test/hold'] },
    ),
  );
}
