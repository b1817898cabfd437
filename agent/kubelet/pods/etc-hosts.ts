/**
 * The pod's /etc/hosts, as the kubelet manages it (kubelet_pods.go makeHostsMount,
 * ensureHostsFile, managedHostsFileContent): one file `<podDir>/etc-hosts`, rewritten before
 * each container starts and bind-mounted at /etc/hosts into every container that does not
 * mount something there itself. The runtime's own file (Docker's, containerd's) is not used.
 */
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Mount } from '../../../cri/index.js';
import type { KubeletContainer } from './types.js';

/** A pod's spec.hostAliases entry (core/v1 HostAlias). */
export interface HostAlias {
  ip?: string;
  hostnames?: string[];
}

/** Where containers see the file. */
export const ETC_HOSTS_PATH = '/etc/hosts';

/** The hostAliases section (hostsEntriesFromHostAliases): '' without aliases. */
function hostAliasLines(aliases: readonly HostAlias[]): string {
  if (aliases.length === 0) return '';
  let out = '\n# Entries added by HostAliases.\n';
  for (const a of aliases) out += `${a.ip ?? ''}\t${(a.hostnames ?? []).join('\t')}\n`;
  return out;
}

/**
 * The hosts file of a pod on the pod network (managedHostsFileContent): the header, the
 * localhost and IPv6 lines, then per pod IP `<ip>\t<hostname>.<domain>\t<hostname>`
 * (`<ip>\t<hostname>` without a domain), then the hostAliases.
 */
export function managedHostsFileContent(
  podIPs: readonly string[],
  hostname: string,
  domain: string,
  aliases: readonly HostAlias[] = [],
): string {
  let out =
    '# Kubernetes-managed hosts file.\n' +
    '127.0.0.1\tlocalhost\n' +
    '::1\tlocalhost ip6-localhost ip6-loopback\n' +
    'fe00::0\tip6-localnet\n' +
    'fe00::0\tip6-mcastprefix\n' +
    'fe00::1\tip6-allnodes\n' +
    'fe00::2\tip6-allrouters\n';
  for (const ip of podIPs)
    out += domain ? `${ip}\t${hostname}.${domain}\t${hostname}\n` : `${ip}\t${hostname}\n`;
  return out + hostAliasLines(aliases);
}

/** The hosts file of a hostNetwork pod (nodeHostsFileContent): the node's /etc/hosts under a header, then the hostAliases. */
export function nodeHostsFileContent(nodeHosts: string, aliases: readonly HostAlias[] = []): string {
  return `# Kubernetes-managed hosts file (host network).\n${nodeHosts}${hostAliasLines(aliases)}`;
}

/** What ensureHostsFile writes. */
export interface HostsFileInput {
  podDir: string;
  /** The pod's IPs ('' entries left out); none: no file, no mount (the kubelet's rule). */
  podIPs: readonly string[];
  hostname: string;
  domain: string;
  hostAliases?: readonly HostAlias[];
  /** hostNetwork: the node's file with the aliases instead. */
  hostNetwork: boolean;
  /** The node's hosts file, for hostNetwork pods; default /etc/hosts. */
  nodeHostsPath?: string;
}

/**
 * Writes `<podDir>/etc-hosts` (mode 0644) and returns the mount of it for `container`;
 * undefined (nothing written) when the pod has no IP yet or the container mounts its own
 * /etc/hosts.
 * @throws Error from the filesystem.
 */
export async function ensureHostsFile(
  container: KubeletContainer,
  input: HostsFileInput,
): Promise<Mount | undefined> {
  const ips = input.podIPs.filter((ip) => ip !== '');
  if (ips.length === 0) return undefined;
  if ((container.volumeMounts ?? []).some((m) => m.mountPath === ETC_HOSTS_PATH)) return undefined;
  const path = join(input.podDir, 'etc-hosts');
  const content = input.hostNetwork
    ? nodeHostsFileContent(await readFile(input.nodeHostsPath ?? ETC_HOSTS_PATH, 'utf8'), input.hostAliases)
    : managedHostsFileContent(ips, input.hostname, input.domain, input.hostAliases);
  await mkdir(input.podDir, { recursive: true });
  await writeFile(path, content, { mode: 0o644 });
  await chmod(path, 0o644);
  return { containerPath: ETC_HOSTS_PATH, hostPath: path, readonly: false };
}
