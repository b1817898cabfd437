// kube-proxy's nftables mode (issue 19) on two simulated hosts with the vxlan backend: the
// agents serve Services with rules in the kernel's table `ip k8ts-<node>` (`ip k8ts` for a
// node named after its host). The cases, each checked also with the rules removed, are in
// test/support/kernel-proxy-suite.ts (shared with iptables mode).
import { kernelProxySuite } from './support/kernel-proxy-suite.js';

kernelProxySuite('nftables');
