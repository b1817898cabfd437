/**
 * A second agent's kube-proxy, for the test that a second agent on a host leaves the first
 * one's kernel rules alone (kernel-proxy-suite.ts): the Proxy class as agent/main.ts runs
 * it, with another node name and node IP, in a process of its own started inside a
 * simulated host's namespace. Why not a whole `k8ts agent`: a second agent on the host
 * would also take over the host's one VXLAN device, whose MAC is derived from the node
 * name, and so the first one's pod network; its kube-proxy is the part whose rules must
 * keep apart.
 *
 *   nsenter --net=/var/run/netns/<host> node --import tsx test/support/second-proxy.ts \
 *     <kubeconfig> <node name> <node IP> nftables|iptables
 *
 * Reads the cluster CIDR from the server's net-conf.json, as the agent does; prints
 * SECOND_PROXY_READY once its caches synced and every Service is written; on SIGTERM stops
 * (its rules stay in the kernel, as a stopping agent leaves them) and exits 0.
 */
import { runHostCommand } from '../../agent/network/host-command.js';
import { clusterIPInterfaceFor } from '../../agent/proxy/cluster-ip.js';
import { Proxy } from '../../agent/proxy/proxy.js';
import type { ProxyMode } from '../../agent/proxy/mode.js';
import { loadKubeconfig } from '../../api/client/kubeconfig.js';
import { resources } from '../../api/client/resource.js';
import { RestClient } from '../../api/client/rest.js';
import { createLogger } from '../../api/log.js';
import { NET_CONF_CONFIGMAP, NET_CONF_KEY, parseNetConf } from '../../api/netconf.js';
import type { ConfigMap } from '../../api/types.js';

/** The line printed once the proxy serves. */
export const SECOND_PROXY_READY = 'k8ts-second-proxy-ready';

async function main(): Promise<void> {
  const [kubeconfig, nodeName, nodeIP, mode] = process.argv.slice(2);
  if (!kubeconfig || !nodeName || !nodeIP || (mode !== 'nftables' && mode !== 'iptables'))
    throw new Error('usage: second-proxy.ts <kubeconfig> <node name> <node IP> nftables|iptables');
  const client = new RestClient(loadKubeconfig(kubeconfig).config);
  const cm = await client.get<ConfigMap>(
    resources.configmaps,
    NET_CONF_CONFIGMAP.namespace,
    NET_CONF_CONFIGMAP.name,
  );
  const conf = parseNetConf(cm.data?.[NET_CONF_KEY] ?? '');
  const proxy = new Proxy({
    client,
    nodeName,
    nodeIP,
    clusterIPInterface: clusterIPInterfaceFor(nodeName),
    logger: createLogger('warn'),
    mode: mode as ProxyMode,
    kernel: { host: runHostCommand, enabled: () => true, clusterCIDR: () => conf.network },
  });
  await proxy.start();
  if (!(await proxy.waitForIdle(60_000))) throw new Error('the second proxy did not settle within 60 s');
  process.stdout.write(`${SECOND_PROXY_READY}\n`);
  await new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
  await proxy.stop();
}

if (process.argv[1]?.endsWith('second-proxy.ts'))
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${String((err as Error)?.stack ?? err)}\n`);
      process.exit(1);
    },
  );
