/**
 * HTTP upgrades: an agent's tunnel, and `pods/exec`, `pods/attach`, `pods/portforward`
 * proxied to the pod's kubelet through it (kube-apiserver's upgrade-aware proxy of the pod
 * REST storage's connect subresources).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { logsAt, type Logger } from '../../../api/log.js';
import {
  KUBELET_SUBRESOURCES,
  proxyPodUpgrade,
  writeRawStatus,
  type KubeletSubresource,
} from '../node-proxy.js';
import type { Registry } from '../registry.js';
import { requestURL, resolveResource } from '../request.js';
import { badRequest, toApiError } from '../status.js';
import { TunnelServer } from '../tunnel.js';
import { authenticateRequest, authorizeRequest, type FilterConfig } from './filters.js';

/** What an upgrade uses of the API server. */
export interface UpgradeDeps {
  filters: FilterConfig;
  tunnels: TunnelServer;
  /** The pods' registry: the pod whose kubelet the stream goes to. */
  pods: Registry;
  logger: Logger;
}

/**
 * HTTP upgrades: an agent's tunnel (tunnel.ts), or `pods/exec`, `pods/attach`,
 * `pods/portforward` (websocket or SPDY), proxied to the pod's kubelet (node-proxy.ts).
 * Refusals are written on the socket as metav1.Status answers.
 */
export async function handleUpgrade(
  deps: UpgradeDeps,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): Promise<void> {
  socket.on('error', () => socket.destroy());
  let url: URL;
  try {
    url = requestURL(req);
  } catch (err) {
    writeRawStatus(socket, toApiError(err));
    return;
  }
  if (TunnelServer.handles(url.pathname)) {
    await deps.tunnels.handleUpgrade(req, socket, head, url);
    return;
  }
  const started = process.hrtime.bigint();
  let code = 101;
  try {
    const rr = resolveResource(req.method ?? 'GET', url.pathname, url.searchParams);
    const sub = rr?.subresource;
    if (
      !rr ||
      rr.resource.group !== '' ||
      rr.resource.resource !== 'pods' ||
      !sub ||
      sub === 'log' ||
      !(KUBELET_SUBRESOURCES as readonly string[]).includes(sub)
    )
      throw badRequest(`${url.pathname} cannot be upgraded`);
    // Who asks, and whether they may: `create` on pods/exec, attach or portforward, even
    // for the websocket's GET (kube-apiserver's AuthorizePodWebsocketUpgradeCreatePermission).
    const user = await authenticateRequest(deps.filters, req, url);
    await authorizeRequest(deps.filters, req, url, { ...rr, verb: 'create' }, user);
    await proxyPodUpgrade(
      { pods: deps.pods, tunnels: deps.tunnels },
      rr.namespace!,
      rr.name!,
      sub as KubeletSubresource,
      url.searchParams,
      req,
      socket,
      head,
    );
  } catch (err) {
    const apiErr = toApiError(err);
    code = apiErr.code;
    if (code >= 500) deps.logger.error('upgrade failed', { path: url.pathname, error: String(err) });
    writeRawStatus(socket, apiErr);
  } finally {
    const logger = deps.logger;
    if (logsAt(logger, 'info'))
      logger.info('request', {
        verb: 'upgrade',
        path: url.pathname,
        code,
        latencyMs: Math.round(Number(process.hrtime.bigint() - started) / 1e3) / 1e3,
      });
  }
}
