/**
 * EndpointSlices: NAME ADDRESSTYPE PORTS ENDPOINTS AGE (printEndpointSlice). PORTS and
 * ENDPOINTS show the first three (a port without number shows its name, or `*`), then
 * `+ N more...`; `<unset>` when there are none. ENDPOINTS lists every address, ready or not.
 */
import type { KubeObject } from '../../../api/object.js';
import { listWithMore, since } from './format.js';
import { AGE_COLUMN, NAME_COLUMN, column, nameOf, type PrintedRow, type TablePrinter } from './printer.js';

interface EndpointSliceWire extends KubeObject {
  addressType?: string;
  ports?: { port?: number | null; name?: string | null }[] | null;
  endpoints?: { addresses?: string[] }[] | null;
}

function printEndpointSlice(obj: KubeObject, now: Date): PrintedRow {
  const es = obj as EndpointSliceWire;
  const ports = (es.ports ?? []).map((p) =>
    p.port !== undefined && p.port !== null ? String(p.port) : (p.name ?? '*'),
  );
  const addresses = (es.endpoints ?? []).flatMap((e) => e.addresses ?? []);
  return {
    cells: [
      nameOf(es),
      es.addressType ?? '',
      listWithMore(ports, 3, '<unset>'),
      listWithMore(addresses, 3, '<unset>'),
      since(es.metadata?.creationTimestamp, now),
    ],
  };
}

export const endpointSlicePrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('AddressType', 'string', 'IPv4, IPv6 or FQDN.'),
    column('Ports', 'string', 'The ports of the slice.'),
    column('Endpoints', 'string', 'The addresses of the endpoints in the slice.'),
    AGE_COLUMN,
  ],
  row: printEndpointSlice,
};
