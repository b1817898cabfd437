/**
 * The cluster network's one setting, shared by the control process (which writes it) and
 * every agent (which reads it), in flannel's model: the ConfigMap
 * `kube-system/kube-flannel-cfg` holds `net-conf.json`,
 *
 *   {"Network":"10.42.0.0/16","EnableIPv4":true,"Backend":{"Type":"vxlan","VNI":1,"Port":8472}}
 *
 * and each node publishes what the others need to reach its pods as annotations on its own
 * Node (`flannel.alpha.coreos.com/public-ip`, `.../backend-type`, `.../backend-data` with
 * the VXLAN device's MAC). The backend is chosen once for the cluster (`k8ts server
 * --flannel-backend`, as k3s's flag); agents never take it from their own flags.
 */

/** Where the setting lives. */
export const NET_CONF_CONFIGMAP = { namespace: 'kube-system', name: 'kube-flannel-cfg' } as const;
/** The ConfigMap's key. */
export const NET_CONF_KEY = 'net-conf.json';

/** The cross-host backends: `none` leaves pods reachable only from their own host. */
export const BACKENDS = ['vxlan', 'host-gw', 'none'] as const;
export type Backend = (typeof BACKENDS)[number];

/** Flannel's VXLAN defaults (its Linux defaults: VNI 1, the kernel's old port 8472). */
export const DEFAULT_VNI = 1;
export const DEFAULT_VXLAN_PORT = 8472;
/** Bytes of VXLAN encapsulation over IPv4: outer IP 20 + UDP 8 + VXLAN 8 + inner Ethernet 14. */
export const VXLAN_OVERHEAD = 50;

/** The Node annotations a node publishes (flannel's names, so its tooling reads them). */
export const NODE_ANNOTATIONS = {
  backendType: 'flannel.alpha.coreos.com/backend-type',
  /** JSON: `{"VNI":1,"VtepMAC":"aa:bb:..."}` for vxlan, `null` otherwise. */
  backendData: 'flannel.alpha.coreos.com/backend-data',
  publicIP: 'flannel.alpha.coreos.com/public-ip',
  kubeSubnetManager: 'flannel.alpha.coreos.com/kube-subnet-manager',
} as const;

/** The parsed setting. */
export interface NetConf {
  /** The cluster CIDR, e.g. `10.42.0.0/16`. */
  network: string;
  backend: Backend;
  /** VXLAN network identifier (vxlan only). */
  vni: number;
  /** VXLAN UDP port (vxlan only). */
  port: number;
}

/** The ConfigMap data for `conf`. */
export function formatNetConf(conf: NetConf): string {
  const backend: Record<string, unknown> = { Type: conf.backend };
  if (conf.backend === 'vxlan') Object.assign(backend, { VNI: conf.vni, Port: conf.port });
  return JSON.stringify({ Network: conf.network, EnableIPv4: true, Backend: backend });
}

/**
 * Reads `net-conf.json`.
 * @throws Error saying what is wrong (not JSON, no Network, an unknown backend type).
 */
export function parseNetConf(text: string): NetConf {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`${NET_CONF_KEY} is not JSON: ${(err as Error).message}`);
  }
  const o = (raw ?? {}) as { Network?: unknown; Backend?: { Type?: unknown; VNI?: unknown; Port?: unknown } };
  if (typeof o.Network !== 'string' || !/^\d+\.\d+\.\d+\.\d+\/\d+$/.test(o.Network))
    throw new Error(`${NET_CONF_KEY}: Network must be an IPv4 CIDR, got ${JSON.stringify(o.Network)}`);
  const type = o.Backend?.Type ?? 'vxlan';
  if (!BACKENDS.includes(type as Backend))
    throw new Error(
      `${NET_CONF_KEY}: Backend.Type must be one of ${BACKENDS.join(', ')}, got ${JSON.stringify(type)}`,
    );
  const int = (v: unknown, dflt: number, what: string, max: number): number => {
    if (v === undefined) return dflt;
    if (!Number.isInteger(v) || (v as number) < 1 || (v as number) > max)
      throw new Error(
        `${NET_CONF_KEY}: Backend.${what} must be an integer 1-${max}, got ${JSON.stringify(v)}`,
      );
    return v as number;
  };
  return {
    network: o.Network,
    backend: type as Backend,
    vni: int(o.Backend?.VNI, DEFAULT_VNI, 'VNI', 16_777_215),
    port: int(o.Backend?.Port, DEFAULT_VXLAN_PORT, 'Port', 65_535),
  };
}
