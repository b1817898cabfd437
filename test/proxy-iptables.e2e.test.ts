// kube-proxy's iptables mode (issue 19) on two simulated hosts with the vxlan backend: the
// agents (`--proxy-mode iptables`) serve Services with chains of their own in iptables' nat
// and filter tables (`K8TSP<hash>-…` for a node not named after its host). The cases, each
// checked also with the rules removed, are in test/support/kernel-proxy-suite.ts (shared
// with nftables mode).
import { kernelProxySuite } from './support/kernel-proxy-suite.js';

kernelProxySuite('iptables');
