/**
 * kube-proxy's `--proxy-mode` (a module of its own so that the CLI's option parsing does not
 * load the proxy): `nftables` serves Services with kernel rules in a table of k8ts's own
 * (nftables.ts), `iptables` with chains of k8ts's own in iptables' nat and filter tables
 * (iptables.ts), each wherever the agent may program the kernel (a cluster network backend
 * other than none, and the tool works), and with the proxy's own sockets elsewhere;
 * `userspace` always with its sockets.
 */
export type ProxyMode = 'nftables' | 'iptables' | 'userspace';

/** The modes that program the kernel. */
export type KernelProxyMode = Exclude<ProxyMode, 'userspace'>;

/** The values `--proxy-mode` accepts, the default first. */
export const PROXY_MODES: readonly ProxyMode[] = ['nftables', 'iptables', 'userspace'];
