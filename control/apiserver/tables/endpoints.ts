/**
 * Endpoints: NAME ENDPOINTS AGE (printEndpoints). ENDPOINTS lists the ready addresses
 * as `ip:port` for every port of every subset (bare IPs for a subset without ports),
 * the first three then `+ N more...`; `<none>` for an object without subsets.
 */
import type { KubeObject } from '../../../api/object.js';
import { joinHostPort, listWithMore, since } from './format.js';
import { AGE_COLUMN, NAME_COLUMN, column, nameOf, type PrintedRow, type TablePrinter } from './printer.js';

interface EndpointsWire extends KubeObject {
  subsets?: { addresses?: { ip: string }[]; ports?: { port: number }[] }[];
}

/** The ENDPOINTS cell of an Endpoints object. */
export function formatEndpoints(subsets: EndpointsWire['subsets']): string {
  if (!subsets || subsets.length === 0) return '<none>';
  const items: string[] = [];
  for (const ss of subsets) {
    const addresses = ss.addresses ?? [];
    const ports = ss.ports ?? [];
    if (ports.length === 0) {
      // A headless service may have no ports.
      for (const a of addresses) items.push(a.ip);
      continue;
    }
    for (const p of ports) for (const a of addresses) items.push(joinHostPort(a.ip, p.port));
  }
  return listWithMore(items, 3, '');
}

function printEndpoints(obj: KubeObject, now: Date): PrintedRow {
  const ep = obj as EndpointsWire;
  return { cells: [nameOf(ep), formatEndpoints(ep.subsets), since(ep.metadata?.creationTimestamp, now)] };
}

export const endpointsPrinter: TablePrinter = {
  columns: [NAME_COLUMN, column('Endpoints', 'string', 'The ready addresses and ports.'), AGE_COLUMN],
  row: printEndpoints,
};
