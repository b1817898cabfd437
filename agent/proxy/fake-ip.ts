/**
 * A fake `ip` for tests of ClusterIPAddresses and its users (the Proxy, the cluster DNS):
 * nothing touches the host's network.
 */
import type { IpCommand } from './cluster-ip.js';

/**
 * `ip` over a model of the host's links and their addresses (`lo` is there from the start),
 * answering as iproute2 does for the calls ClusterIPAddresses makes; every call is recorded.
 */
export function modelIp(): { ip: IpCommand; links: Map<string, Set<string>>; calls: string[] } {
  const links = new Map<string, Set<string>>([['lo', new Set()]]);
  const calls: string[] = [];
  const ok = (stdout = '') => ({ code: 0, stdout, stderr: '' });
  const noDevice = (dev: string) => ({ code: 1, stdout: '', stderr: `Device "${dev}" does not exist.\n` });
  const ip: IpCommand = async (args) => {
    const a = [...args];
    calls.push(a.join(' '));
    if (a[0] === 'link' && a[1] === 'add') {
      if (links.has(a[2]!)) return { code: 2, stdout: '', stderr: 'RTNETLINK answers: File exists\n' };
      links.set(a[2]!, new Set());
      return ok();
    }
    if (a[0] === 'link' && a[1] === 'set')
      return links.has(a[2]!) ? ok() : { code: 1, stdout: '', stderr: `Cannot find device "${a[2]}"\n` };
    if (a[0] === 'link' && a[1] === 'del') return links.delete(a[2]!) ? ok() : noDevice(a[2]!);
    const show = a.indexOf('show');
    if (show >= 0) {
      const dev = a[show + 2]!;
      const held = links.get(dev);
      if (!held) return noDevice(dev);
      if (a[0] === '-br')
        return ok(`${dev.padEnd(16)} UNKNOWN        ${[...held].map((x) => `${x}/32 `).join('')}\n`);
      return ok([...held].map((x) => `9: ${dev}    inet ${x}/32 scope global ${dev}\n`).join(''));
    }
    if (a[0] === 'addr' && (a[1] === 'add' || a[1] === 'del')) {
      const held = links.get(a[4]!);
      if (!held) return { code: 1, stdout: '', stderr: `Cannot find device "${a[4]}"\n` };
      const addr = a[2]!.replace('/32', '');
      if (a[1] === 'add') {
        if (held.has(addr)) return { code: 2, stdout: '', stderr: 'RTNETLINK answers: File exists\n' };
        held.add(addr);
      } else if (!held.delete(addr))
        return { code: 2, stdout: '', stderr: 'RTNETLINK answers: Cannot assign requested address\n' };
      return ok();
    }
    return { code: 1, stdout: '', stderr: `unexpected: ip ${a.join(' ')}` };
  };
  return { ip, links, calls };
}
