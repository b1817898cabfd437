/**
 * The agent tunnel's wire contract, shared by the API server (control/apiserver/tunnel.ts)
 * and the agent (agent/kubelet/tunnel.ts). The API server reaches each node's kubelet API
 * (logs, exec, attach, port-forward, stats) through it, so no inbound port is needed on
 * the agent's host — the role konnectivity's agent plays for kube-apiserver.
 *
 * 1. The agent keeps one control websocket open: `GET TUNNEL_PATH?node=<name>`, with
 *    `Authorization: Bearer <token>`. Over it the server sends text messages (JSON
 *    TunnelMessage); the server pings it to notice dead peers.
 * 2. For each connection the API server wants to the kubelet, it sends
 *    `{"type":"dial","id":<random>}`; the agent answers by opening a new HTTP connection,
 *    `GET TUNNEL_CONNECT_PATH?node=<name>&id=<id>` with `Upgrade: STREAM_UPGRADE` and the
 *    same credentials. The server answers 101 and from then on that TCP connection is the
 *    stream: the API server writes an ordinary HTTP/1.1 request into it and the agent
 *    feeds it, as a connection, to its kubelet HTTP server (which listens on no port).
 *
 * One TCP connection per stream instead of frames multiplexed over the websocket: each
 * stream then has TCP's own flow control and back-pressure (a chatty `kubectl logs -f`
 * to a slow client stalls its one connection, never a shared buffer or other streams),
 * the agent still only dials out, and no framing code is needed. The cost is a round trip
 * per stream, which logs/exec/port-forward can afford.
 */

/** The control websocket's path. */
export const TUNNEL_PATH = '/k8ts/v1/tunnel';
/** Where the agent dials back for one stream. */
export const TUNNEL_CONNECT_PATH = '/k8ts/v1/tunnel/connect';
/** The `Upgrade` token of a stream connection. */
export const STREAM_UPGRADE = 'k8ts-tunnel-stream';

/** What the server sends over the control websocket. */
export type TunnelMessage = { type: 'dial'; id: string };

/** Parses a control message; undefined for anything that is not a well-formed TunnelMessage. */
export function parseTunnelMessage(data: string): TunnelMessage | undefined {
  try {
    const m = JSON.parse(data) as Partial<TunnelMessage>;
    if (m.type === 'dial' && typeof m.id === 'string' && /^[0-9a-f]{16,64}$/.test(m.id))
      return { type: 'dial', id: m.id };
  } catch {
    // not JSON
  }
  return undefined;
}
