/**
 * The `default/kubernetes` and `kube-system/kube-dns` Services of the control process, and
 * the endpoints of `kubernetes` kept by every live API server (kube-apiserver's
 * kubernetesservice controller and lease endpoint reconciler). What is where:
 *
 *   services.ts    the two Services, their addresses (first and tenth of the service
 *                  range), the serving certificate's names for in-cluster clients
 *   leases.ts      one Lease per live API server in kube-system; expiry as its readers see it
 *   endpoints.ts   the Endpoints and EndpointSlice `kubernetes` written from the live leases
 *   controller.ts  the loop: ensure the Services, renew our lease, write the endpoints;
 *                  on stop remove our lease
 */
export {
  DEFAULT_ENDPOINT_INTERVAL_SECONDS,
  DEFAULT_ENDPOINT_LEASE_SECONDS,
  KubernetesServiceController,
  type KubernetesServiceControllerConfig,
} from './controller.js';
export { EndpointsWriter } from './endpoints.js';
export { EndpointLeases, leaseNameOf, type ApiEndpoint } from './leases.js';
export {
  DEFAULT_CLUSTER_DOMAIN,
  KUBE_DNS_SERVICE,
  KUBERNETES_SERVICE,
  advertiseAddressProblem,
  defaultAdvertiseAddress,
  defaultClusterDNS,
  kubeDNSService,
  kubernetesService,
  kubernetesServiceIP,
  kubernetesServiceSANs,
} from './services.js';
