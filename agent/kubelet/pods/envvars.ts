/**
 * The Service environment variables of a pod (pkg/kubelet/envvars FromServices and
 * kubelet_pods.go getServiceEnvVarMap).
 *
 * Which Services: those with a clusterIP (not `None`, not unset: headless and ExternalName
 * Services have none) of the pod's namespace when spec.enableServiceLinks is not false, and
 * always the `kubernetes` Service of namespace `default` (the "master service" in-cluster
 * clients find the API by). For each, with NAME its name upper-cased and `-` → `_`:
 * - `NAME_SERVICE_HOST` = clusterIP, `NAME_SERVICE_PORT` = the first port,
 *   `NAME_SERVICE_PORT_<PORTNAME>` for each named port;
 * - Docker links: `NAME_PORT` = `<proto>://<ip>:<first port>`, and per port
 *   `NAME_PORT_<port>_<PROTO>` (the same URL), `..._PROTO`, `..._PORT`, `..._ADDR`.
 */
import { isIP } from 'node:net';
import type { Service } from '../../../api/types.js';

/** The Services whose variables every pod gets, whatever its enableServiceLinks (masterServices). */
const MASTER_SERVICES = new Set(['kubernetes']);

/** makeEnvVariableName: upper case, `-` → `_`. */
function envName(name: string): string {
  return name.toUpperCase().replaceAll('-', '_');
}

/** IsServiceIPSet: a clusterIP that is neither '' nor None. */
export function isServiceIPSet(svc: Service): boolean {
  const ip = svc.spec?.clusterIP ?? '';
  return ip !== '' && ip !== 'None';
}

/** net.JoinHostPort: brackets around an IPv6 address. */
function joinHostPort(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

/** The variables of `services` (FromServices), in their order; Services without a clusterIP or ports give none. */
export function serviceEnvVars(services: readonly Service[]): { name: string; value: string }[] {
  const out: { name: string; value: string }[] = [];
  for (const svc of services) {
    const ports = svc.spec?.ports ?? [];
    if (!isServiceIPSet(svc) || ports.length === 0) continue;
    const ip = svc.spec.clusterIP as string;
    const prefix = envName(svc.metadata.name ?? '');
    out.push({ name: `${prefix}_SERVICE_HOST`, value: ip });
    out.push({ name: `${prefix}_SERVICE_PORT`, value: String(ports[0]!.port) });
    for (const p of ports) {
      if (p.name) out.push({ name: `${prefix}_SERVICE_PORT_${envName(p.name)}`, value: String(p.port) });
    }
    ports.forEach((p, i) => {
      const proto = (p.protocol ?? 'TCP').toLowerCase();
      const url = `${proto}://${joinHostPort(ip, p.port)}`;
      if (i === 0) out.push({ name: `${prefix}_PORT`, value: url });
      const pp = `${prefix}_PORT_${p.port}_${proto.toUpperCase()}`;
      out.push({ name: pp, value: url });
      out.push({ name: `${pp}_PROTO`, value: proto });
      out.push({ name: `${pp}_PORT`, value: String(p.port) });
      out.push({ name: `${pp}_ADDR`, value: ip });
    });
  }
  return out;
}

/**
 * The Service variables of a pod in `namespace` (getServiceEnvVarMap) from `all` Services
 * of the cluster: the namespace's with enableServiceLinks, and `default/kubernetes` always.
 * Services are taken by name order, so the result does not depend on the cache's order.
 */
export function serviceEnvVarMap(
  all: readonly Service[],
  namespace: string,
  enableServiceLinks: boolean,
): Map<string, string> {
  const byName = new Map<string, Service>();
  for (const svc of all) {
    if (!isServiceIPSet(svc)) continue;
    const name = svc.metadata.name ?? '';
    if (svc.metadata.namespace === 'default' && MASTER_SERVICES.has(name)) {
      if (!byName.has(name)) byName.set(name, svc);
    } else if (svc.metadata.namespace === namespace && enableServiceLinks) {
      byName.set(name, svc);
    }
  }
  const services = [...byName.keys()].sort().map((n) => byName.get(n)!);
  return new Map(serviceEnvVars(services).map((e) => [e.name, e.value]));
}
