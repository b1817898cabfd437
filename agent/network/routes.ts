/**
 * The routes to other nodes' pod CIDRs, which both backends keep in the main table and
 * tag with their own routing protocol number (`proto 107`, unused by anything else), so
 * that this module finds exactly its own routes among the host's and removes the ones no
 * longer wanted — a deleted node's, or the other backend's after a switch — without
 * touching any route it did not make. Changes go through one `ip -batch` call.
 */
import { mustRun, parseJSONList, type HostCommand } from './host-command.js';

/** The `proto` of every route this module makes. */
export const ROUTE_PROTOCOL = '107';

/** One route to a pod CIDR. */
export interface PodRoute {
  /** e.g. `10.42.2.0/24`. */
  dst: string;
  gateway: string;
  /** The device: the VXLAN device for vxlan; unset for host-gw (the kernel picks it). */
  dev?: string;
  /** Gateway reachable without a route of its own (vxlan's remote network address). */
  onlink?: boolean;
}

interface IpRoute {
  dst: string;
  gateway?: string;
  dev?: string;
  flags?: string[];
}

/** The routes tagged with ROUTE_PROTOCOL now. */
export async function listPodRoutes(host: HostCommand): Promise<PodRoute[]> {
  const out = await mustRun(host, 'list pod routes', 'ip', [
    '-j',
    '-4',
    'route',
    'show',
    'proto',
    ROUTE_PROTOCOL,
  ]);
  return parseJSONList<IpRoute>(out).map((r) => ({
    dst: r.dst,
    gateway: r.gateway ?? '',
    ...(r.dev ? { dev: r.dev } : {}),
    onlink: (r.flags ?? []).includes('onlink'),
  }));
}

/**
 * The `ip -batch` lines that turn `current` into `desired`: `route replace` for each
 * missing or different route, `route del` for each route no longer desired. An empty list
 * when they agree.
 */
export function routeChanges(current: readonly PodRoute[], desired: readonly PodRoute[]): string[] {
  const have = new Map(current.map((r) => [r.dst, r]));
  const want = new Map(desired.map((r) => [r.dst, r]));
  const lines: string[] = [];
  for (const r of desired) {
    const h = have.get(r.dst);
    const same = h && h.gateway === r.gateway && (!r.dev || h.dev === r.dev) && !!h.onlink === !!r.onlink;
    if (same) continue;
    lines.push(
      [
        'route replace',
        r.dst,
        'via',
        r.gateway,
        ...(r.dev ? ['dev', r.dev] : []),
        ...(r.onlink ? ['onlink'] : []),
        'proto',
        ROUTE_PROTOCOL,
      ].join(' '),
    );
  }
  for (const r of current) {
    if (!want.has(r.dst)) lines.push(`route del ${r.dst} proto ${ROUTE_PROTOCOL}`);
  }
  return lines;
}

/**
 * Applies `lines` with one `ip -force -batch -` (every line is tried; the first failure is
 * reported).
 * @throws Error with ip's message when a line failed.
 */
export async function applyIpBatch(host: HostCommand, what: string, lines: readonly string[]): Promise<void> {
  if (lines.length === 0) return;
  await mustRun(host, what, 'ip', ['-force', '-batch', '-'], lines.join('\n') + '\n');
}
