/**
 * Port-forward (placeholder until the SPDY session is written).
 */
import type { Socket } from 'node:net';
import type winston from 'winston';
import type { WebSocket } from 'ws';

/** kubectl 1.31+'s websocket subprotocol: SPDY/3.1 frames inside binary messages (KEP-4006). */
export const PORT_FORWARD_TUNNEL_PROTOCOL = 'SPDY/3.1+portforward.k8s.io';

export function selectPortForwardProtocol(offered: Iterable<string>): string | undefined {
  return [...offered].includes(PORT_FORWARD_TUNNEL_PROTOCOL) ? PORT_FORWARD_TUNNEL_PROTOCOL : undefined;
}

export type PortForwardTransport = { kind: 'websocket'; ws: WebSocket };

export function servePortForward(
  t: PortForwardTransport,
  _dial: (port: number) => Promise<Socket>,
  _logger: winston.Logger,
): void {
  t.ws.close(1011, 'port-forward is not built yet');
}
