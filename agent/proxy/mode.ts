/**
 * kube-proxy's `--proxy-mode` (a module of its own so that the CLI's option parsing does not
 * load the proxy): `nftables` serves Services with kernel rules (nftables.ts) wherever the
 * agent may program the kernel (a cluster network backend other than none, and `nft`
 * works), and with the proxy's own sockets elsewhere; `userspace` always with its sockets.
 */
export type ProxyMode = 'nftables' | 'userspace';

/** The values `--proxy-mode` accepts, the default first. */
export const PROXY_MODES: readonly ProxyMode[] = ['nftables', 'userspace'];
