/**
 * Services: NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE, wide SELECTOR (printService).
 *
 * EXTERNAL-IP: spec.externalIPs for ClusterIP and NodePort services (`<none>` without);
 * for LoadBalancer the ingress IPs or hostnames (sorted, unique) followed by the
 * externalIPs, `<pending>` while there are none; the externalName of an ExternalName
 * service. PORT(S): `port/protocol`, `port:nodePort/protocol` with a node port.
 */
import type { KubeObject } from '../../../api/object.js';
import { formatLabels, since } from './format.js';
import { AGE_COLUMN, NAME_COLUMN, column, nameOf, type PrintedRow, type TablePrinter } from './printer.js';

interface ServiceWire extends KubeObject {
  spec?: {
    type?: string;
    clusterIP?: string;
    clusterIPs?: string[];
    externalIPs?: string[];
    externalName?: string;
    selector?: Record<string, string>;
    ports?: { port: number; nodePort?: number; protocol?: string }[];
  };
  status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } };
}

function externalIP(svc: ServiceWire): string {
  const spec = svc.spec ?? {};
  const external = spec.externalIPs ?? [];
  switch (spec.type ?? 'ClusterIP') {
    case 'ClusterIP':
    case 'NodePort':
      return external.length > 0 ? external.join(',') : '<none>';
    case 'LoadBalancer': {
      const ingress = new Set<string>();
      for (const i of svc.status?.loadBalancer?.ingress ?? []) {
        if (i.ip) ingress.add(i.ip);
        else if (i.hostname) ingress.add(i.hostname);
      }
      // The server renders the wide form, so the ingress list is never clipped.
      const all = [...[...ingress].sort(), ...external];
      return all.length > 0 ? all.join(',') : '<pending>';
    }
    case 'ExternalName':
      return spec.externalName ?? '';
    default:
      return '<unknown>';
  }
}

/** `80/TCP,443:30443/TCP`, or `<none>` without ports. */
export function servicePorts(ports: NonNullable<ServiceWire['spec']>['ports']): string {
  const parts = (ports ?? []).map((p) => {
    const protocol = p.protocol ?? 'TCP';
    return p.nodePort ? `${p.port}:${p.nodePort}/${protocol}` : `${p.port}/${protocol}`;
  });
  return parts.length > 0 ? parts.join(',') : '<none>';
}

function printService(obj: KubeObject, now: Date): PrintedRow {
  const svc = obj as ServiceWire;
  const spec = svc.spec ?? {};
  // The v1 API mirrors clusterIP into clusterIPs[0]; fall back for objects written with clusterIP only.
  const clusterIP = spec.clusterIPs?.[0] || spec.clusterIP || '<none>';
  return {
    cells: [
      nameOf(svc),
      spec.type ?? 'ClusterIP',
      clusterIP,
      externalIP(svc),
      servicePorts(spec.ports),
      since(svc.metadata?.creationTimestamp, now),
      formatLabels(spec.selector),
    ],
  };
}

export const servicePrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Type', 'string', 'ClusterIP, NodePort, LoadBalancer or ExternalName.'),
    column('Cluster-IP', 'string', 'The virtual IP of the service inside the cluster.'),
    column('External-IP', 'string', 'Addresses outside the cluster that reach the service.'),
    column('Port(s)', 'string', 'The ports of the service, with node ports.'),
    AGE_COLUMN,
    column('Selector', 'string', 'The labels of the pods behind the service.', { priority: 1 }),
  ],
  row: printService,
};
