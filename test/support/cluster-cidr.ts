/**
 * A `--cluster-cidr` for one end-to-end test's cluster that overlaps nothing on this host.
 *
 * Each agent asks Docker for a bridge network with its node's pod CIDR, and Docker refuses
 * a subnet that overlaps another network ("Pool overlaps with other one on this address
 * space"); the node then stays NotReady. So a test cluster must not take the default
 * 10.42.0.0/16 (a real k8ts, or the networks of an earlier test run that was killed before
 * it could clean up, may hold it), nor a range another test on the host holds.
 */
import { randomInt } from 'node:crypto';
import { run } from './k8ts-server.js';

/** The IPv4 subnets (`a.b.c.d/n`) of every Docker network and every route on this host. */
async function subnetsInUse(): Promise<string[]> {
  const subnets: string[] = [];
  const ids = (await run('docker', ['network', 'ls', '-q'])).stdout.split('\n').filter(Boolean);
  if (ids.length > 0) {
    const r = await run('docker', [
      'network',
      'inspect',
      '--format',
      '{{range .IPAM.Config}}{{.Subnet}} {{end}}',
      ...ids,
    ]);
    subnets.push(...r.stdout.split(/\s+/));
  }
  const routes = await run('ip', ['-4', 'route', 'show']);
  subnets.push(...routes.stdout.split('\n').map((l) => l.split(' ')[0] ?? ''));
  return subnets.filter((s) => /^\d+\.\d+\.\d+\.\d+\/\d+$/.test(s));
}

/** The address as a 32-bit unsigned number. */
const toNumber = (ip: string): number => ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);

/** Whether the CIDRs `a.b.c.d/n` `x` and `y` share an address. */
function overlaps(x: string, y: string): boolean {
  const [xa, xb] = x.split('/') as [string, string];
  const [ya, yb] = y.split('/') as [string, string];
  const bits = Math.min(Number(xb), Number(yb));
  const block = 2 ** (32 - bits);
  return Math.floor(toNumber(xa) / block) === Math.floor(toNumber(ya) / block);
}

/**
 * Resolves with `10.<b>.0.0/16`, a random `b` in 100..249 whose /16 no Docker network and
 * no route of this host overlaps. Docker must be running.
 * Rejects when every candidate is taken (150 /16s: only a host with leaked networks).
 */
export async function freeClusterCIDR(): Promise<string> {
  const used = await subnetsInUse();
  const free: string[] = [];
  for (let b = 100; b < 250; b++) {
    const candidate = `10.${b}.0.0/16`;
    if (!used.some((s) => overlaps(s, candidate))) free.push(candidate);
  }
  if (free.length === 0)
    throw new Error('no free 10.x.0.0/16 for a test cluster: remove leaked Docker networks');
  return free[randomInt(free.length)]!;
}
