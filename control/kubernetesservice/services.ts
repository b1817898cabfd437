/**
 * The two Services every cluster has from its first start, and the addresses they keep:
 *
 *   default/kubernetes    the API server, at the FIRST address of --service-cluster-ip-range
 *                         (10.43.0.1 for 10.43.0.0/16), port `https` 443/TCP → the API
 *                         server's secure port; labels component=apiserver,
 *                         provider=kubernetes; no selector (the endpoint reconciler keeps its
 *                         endpoints), as kube-apiserver's kubernetesservice controller makes it
 *   kube-system/kube-dns  the cluster DNS, at --cluster-dns (default the TENTH address,
 *                         10.43.0.10), ports `dns` 53/UDP and `dns-tcp` 53/TCP, labels
 *                         k8s-app=kube-dns, kubernetes.io/name=KubeDNS (kubeadm's), and
 *                         service.kubernetes.io/service-proxy-name=k8ts-dns: the DNS server in
 *                         every agent binds this address itself (as NodeLocal DNSCache does),
 *                         so kube-proxy, which skips Services with that label, leaves it alone
 *
 * Both are created only when missing, never updated (upstream's "the service definition
 * is not reconciled after the first run"), so a restart never moves a clusterIP; a
 * deleted one is created again at the next reconcile. Their addresses are reserved in the
 * service allocator (reservedClusterIPs) so that no other Service ever gets them.
 */
import { isIP } from 'node:net';
import type { KubeObject } from '../../api/object.js';
import type { Service } from '../../api/types.js';
import type { Registry } from '../apiserver/registry.js';
import { ApiError } from '../apiserver/status.js';
import { numberToIPv4, parseIPv4CIDR } from '../apiserver/service-allocator/index.js';

export const KUBERNETES_SERVICE = { namespace: 'default', name: 'kubernetes' } as const;
export const KUBE_DNS_SERVICE = { namespace: 'kube-system', name: 'kube-dns' } as const;
/** kubelet's and k3s's default `--cluster-domain`. */
export const DEFAULT_CLUSTER_DOMAIN = 'cluster.local';
/** The value of `service.kubernetes.io/service-proxy-name` on kube-dns: kube-proxy skips it. */
export const DNS_SERVICE_PROXY_NAME = 'k8ts-dns';
export const LABEL_SERVICE_PROXY_NAME = 'service.kubernetes.io/service-proxy-name';

/**
 * The `kubernetes` Service's clusterIP: the first usable address of the service CIDR
 * (kube-apiserver's ServiceIPRange → GetIndexedIP(range, 1)).
 * @throws Error for a malformed or non-IPv4 CIDR.
 */
export function kubernetesServiceIP(serviceClusterIPRange: string): string {
  return indexedIP(serviceClusterIPRange, 1);
}

/**
 * The default cluster DNS address: the tenth address of the service CIDR (10.43.0.10 for
 * 10.43.0.0/16), as k3s's default `--cluster-dns` and kubeadm's DNS Service IP.
 * @throws Error for a malformed or non-IPv4 CIDR, or one too small to hold it.
 */
export function defaultClusterDNS(serviceClusterIPRange: string): string {
  return indexedIP(serviceClusterIPRange, 10);
}

/** The `index`-th address of an IPv4 CIDR (0 = the network address); it must be usable. */
function indexedIP(cidr: string, index: number): string {
  const { base, prefixLength } = parseIPv4CIDR(cidr);
  if (index >= 2 ** (32 - prefixLength) - 1)
    throw new Error(`service CIDR ${cidr} is too small to hold its address number ${index}`);
  return numberToIPv4(base + index);
}

/**
 * Why `ip` cannot be the `kubernetes` Service's endpoint (undefined when it can): it must
 * be IPv4 (the Service is single-stack IPv4) and neither unspecified, loopback nor
 * link-local, which Endpoints and EndpointSlice validation refuse (ValidateEndpointIP).
 */
export function advertiseAddressProblem(ip: string): string | undefined {
  if (isIP(ip) !== 4) return 'it must be an IPv4 address';
  if (ip === '0.0.0.0') return 'it may not be unspecified (0.0.0.0)';
  if (ip.startsWith('127.')) return 'it may not be in the loopback range (127.0.0.0/8)';
  if (ip.startsWith('169.254.')) return 'it may not be in the link-local range (169.254.0.0/16)';
  return undefined;
}

/**
 * `--advertise-address` when not given, as kube-apiserver's DefaultAdvertiseAddress (the
 * bind address unless it is unspecified or loopback, else the address of the host's
 * default route interface), with k3s's --node-ip between the two: `bindAddress` when it
 * can be an endpoint (advertiseAddressProblem), else `nodeIP` when it can, else the
 * host's primary IPv4 address (agent/kubelet/machine.ts primaryIPv4, which may be
 * 127.0.0.1 on a host without a network: the endpoints then cannot be written, and the
 * controller says so in its log).
 */
export async function defaultAdvertiseAddress(bindAddress: string, nodeIP?: string): Promise<string> {
  if (!advertiseAddressProblem(bindAddress)) return bindAddress;
  if (nodeIP !== undefined && !advertiseAddressProblem(nodeIP)) return nodeIP;
  const { primaryIPv4 } = await import('../../agent/kubelet/machine.js');
  return primaryIPv4();
}

/**
 * The serving certificate's names for in-cluster clients, which dial
 * `https://<clusterIP>` or `https://kubernetes.default.svc`: the clusterIP, `kubernetes`,
 * `kubernetes.default`, `kubernetes.default.svc` and `kubernetes.default.svc.<domain>`
 * (kube-apiserver's getServiceIPAndRanges + its default alternate DNS names).
 */
export function kubernetesServiceSANs(clusterIP: string, clusterDomain: string): string[] {
  return [
    clusterIP,
    'kubernetes',
    'kubernetes.default',
    'kubernetes.default.svc',
    `kubernetes.default.svc.${clusterDomain}`,
  ];
}

/** The `default/kubernetes` Service (see the file comment); `securePort` is its targetPort. */
export function kubernetesService(clusterIP: string, securePort: number): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      ...KUBERNETES_SERVICE,
      labels: { component: 'apiserver', provider: 'kubernetes' },
    },
    spec: {
      type: 'ClusterIP',
      clusterIP,
      clusterIPs: [clusterIP],
      ipFamilyPolicy: 'SingleStack',
      sessionAffinity: 'None',
      ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: securePort }],
    },
  };
}

/** The `kube-system/kube-dns` Service (see the file comment). */
export function kubeDNSService(clusterIP: string): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      ...KUBE_DNS_SERVICE,
      labels: {
        'k8s-app': 'kube-dns',
        'kubernetes.io/name': 'KubeDNS',
        [LABEL_SERVICE_PROXY_NAME]: DNS_SERVICE_PROXY_NAME,
      },
    },
    spec: {
      type: 'ClusterIP',
      clusterIP,
      clusterIPs: [clusterIP],
      ipFamilyPolicy: 'SingleStack',
      sessionAffinity: 'None',
      ports: [
        { name: 'dns', protocol: 'UDP', port: 53, targetPort: 53 },
        { name: 'dns-tcp', protocol: 'TCP', port: 53, targetPort: 53 },
      ],
    },
  };
}

/**
 * Creates `svc` through the services registry when no Service of its name exists
 * (CreateOrUpdateMasterServiceIfNeeded); an existing one is left as it is.
 * @returns the stored Service (created or existing), and whether it was created now.
 * @throws ApiError from the registry (e.g. 422 when its clusterIP is taken: a Service
 *   stored before the address was reserved holds it).
 */
export async function ensureService(
  services: Pick<Registry, 'get' | 'create'>,
  svc: Service,
): Promise<{ service: Service; created: boolean }> {
  const { namespace, name } = svc.metadata as { namespace: string; name: string };
  for (;;) {
    try {
      return { service: (await services.get(namespace, name)) as Service, created: false };
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
    try {
      const created = await services.create(namespace, structuredClone(svc) as KubeObject);
      return { service: created as Service, created: true };
    } catch (err) {
      // Another control process created it between our get and our create: read it.
      if (!(err instanceof ApiError && err.code === 409)) throw err;
    }
  }
}
