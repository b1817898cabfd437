/**
 * Test helpers of the endpoint controllers' tests (Endpoints and EndpointSlice): pods
 * bound to a fake node, Services, and polling the API with a deadline.
 */
import type { RestClient } from '../../../api/client/rest.js';
import { resources } from '../../../api/client/resource.js';
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

/**
 * Polls `probe` until it returns a value other than undefined/false and returns it;
 * rejects after `timeoutMs` with the last value seen, named `what`.
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`,
      );
    await new Promise((r) => setTimeout(r, 20));
  }
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
