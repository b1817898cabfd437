/**
 * The pod subresources the kubelet serves — `log`, `exec`, `attach`, `portforward` — proxied
 * to the pod's node through its agent tunnel (tunnel.ts), as kube-apiserver's pod REST
 * storage builds a kubelet URL (`/containerLogs/...`, `/exec/...`, `/attach/...`,
 * `/portForward/...`) and proxies to it with its upgrade-aware proxy: plain streaming for
 * logs, the upgraded connection's bytes both ways for websocket (and SPDY) upgrades.
 *
 * Validation happens here, before any connection is made (PodLogOptions, the container
 * name and its defaulting, the pod's node); the kubelet answers what only it can know
 * (no such container yet, not running).
 */
import { request, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { KubeObject } from '../../api/object.js';
import type { Pod } from '../../api/types.js';
import type { Registry } from './registry.js';
import { ApiError, badRequest } from './status.js';
import type { TunnelServer } from './tunnel.js';

/** What the proxy needs: the pods registry and the tunnels. */
export interface NodeProxyDeps {
  pods: Registry;
  tunnels: TunnelServer;
}

/** The kubelet-served pod subresources. */
export const KUBELET_SUBRESOURCES = ['log', 'exec', 'attach', 'portforward'] as const;
export type KubeletSubresource = (typeof KUBELET_SUBRESOURCES)[number];

/** The PodLogOptions query parameters the kubelet reads, with their checks. */
const LOG_INT_PARAMS = { tailLines: 0, limitBytes: 1, sinceSeconds: 1 } as const;

/**
 * The kubelet path (with query) for a pod subresource request, after kube-apiserver's
 * checks: the pod exists and is bound, the container (defaulted when the pod has exactly
 * one) is one of the pod's, PodLogOptions are well-formed.
 * @throws ApiError 404 (no pod), 400 (not bound, no or unknown container, bad options).
 */
export async function kubeletLocation(
  deps: NodeProxyDeps,
  namespace: string,
  name: string,
  sub: KubeletSubresource,
  q: URLSearchParams,
): Promise<{ node: string; path: string }> {
  const pod = (await deps.pods.get(namespace, name)) as KubeObject as Pod;
  const node = pod.spec?.nodeName;
  if (!node) throw badRequest(`pod ${name} does not have a host assigned`);
  const out = new URLSearchParams();
  out.set('podUID', pod.metadata?.uid ?? '');
  const ns = encodeURIComponent(namespace);
  const pn = encodeURIComponent(name);
  if (sub === 'portforward') {
    for (const p of q.getAll('ports')) {
      if (!/^\d+$/.test(p) || Number(p) < 1 || Number(p) > 65535)
        throw badRequest(`ports: Invalid value: "${p}": must be a port number`);
    }
    return { node, path: `/portForward/${ns}/${pn}?${out.toString()}` };
  }
  const container = containerName(pod, q.get('container'));
  const cn = encodeURIComponent(container);
  if (sub === 'log') {
    for (const [param, min] of Object.entries(LOG_INT_PARAMS)) {
      const v = q.get(param);
      if (v === null) continue;
      if (!/^-?\d+$/.test(v) || Number(v) < min)
        throw badRequest(
          `${param}: Invalid value: ${v}: must be ${min === 0 ? 'non-negative' : 'greater than 0'}`,
        );
      out.set(param, v);
    }
    if (q.get('sinceSeconds') !== null && q.get('sinceTime') !== null)
      throw badRequest('at most one of `sinceTime` or `sinceSeconds` may be specified');
    const sinceTime = q.get('sinceTime');
    if (sinceTime !== null) {
      if (Number.isNaN(Date.parse(sinceTime)))
        throw badRequest(`sinceTime: Invalid value: "${sinceTime}": must be an RFC 3339 time`);
      out.set('sinceTime', sinceTime);
    }
    for (const f of ['follow', 'previous', 'timestamps']) if (boolParam(q, f)) out.set(f, 'true');
    return { node, path: `/containerLogs/${ns}/${pn}/${cn}?${out.toString()}` };
  }
  for (const f of ['stdin', 'stdout', 'stderr', 'tty']) if (boolParam(q, f)) out.set(f, 'true');
  if (sub === 'exec') {
    const command = q.getAll('command');
    if (command.length === 0) throw badRequest('you must specify at least one command for the container');
    for (const c of command) out.append('command', c);
  }
  if (!out.has('stdin') && !out.has('stdout') && !out.has('stderr'))
    throw badRequest('you must specify at least 1 of stdin, stdout, stderr');
  return { node, path: `/${sub}/${ns}/${pn}/${cn}?${out.toString()}` };
}

/** `container`, or the pod's only container; as kube-apiserver's pod REST does. */
function containerName(pod: Pod, asked: string | null): string {
  const names = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].map((c) => c.name);
  const name = pod.metadata?.name ?? '';
  if (asked) {
    if (!names.includes(asked)) throw badRequest(`container ${asked} is not valid for pod ${name}`);
    return asked;
  }
  const main = (pod.spec?.containers ?? []).map((c) => c.name);
  if (main.length === 1) return main[0]!;
  throw badRequest(`a container name must be specified for pod ${name}, choose one of: [${main.join(' ')}]`);
}

function boolParam(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  return v === 'true' || v === '1';
}

/** A request on a tunnel stream to the node's kubelet (the stream is the request's only connection). */
async function kubeletRequest(
  deps: NodeProxyDeps,
  node: string,
  method: string,
  path: string,
  headers: Record<string, string | string[] | undefined>,
): Promise<ReturnType<typeof request>> {
  const stream = await deps.tunnels.dial(node);
  return request({
    method,
    path,
    headers: { ...headers, host: `kubelet.${node}` },
    createConnection: () => stream as Socket,
  });
}

/**
 * `GET pods/<name>/log`: streams the kubelet's answer to the client until either side
 * ends; the client going away closes the tunnel stream (and so the kubelet's log reader).
 * Back-pressure is TCP's end to end (pipe()).
 */
export async function proxyPodLog(
  deps: NodeProxyDeps,
  namespace: string,
  name: string,
  q: URLSearchParams,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { node, path } = await kubeletLocation(deps, namespace, name, 'log', q);
  const upstream = await kubeletRequest(deps, node, 'GET', path, { connection: 'close' });
  await new Promise<void>((resolve, reject) => {
    upstream.on('response', (kres: IncomingMessage) => {
      res.writeHead(kres.statusCode ?? 502, {
        'Content-Type': kres.headers['content-type'] ?? 'text/plain',
        ...(kres.statusCode === 200 ? {} : { 'Cache-Control': 'no-cache, private' }),
      });
      res.flushHeaders();
      kres.pipe(res);
      kres.on('error', () => res.destroy());
      res.on('close', () => {
        upstream.destroy();
        resolve();
      });
    });
    upstream.on('error', (err) => {
      if (res.headersSent) {
        res.destroy();
        resolve();
      } else
        reject(
          new ApiError(502, 'InternalError', `error talking to the kubelet of node ${node}: ${err.message}`),
        );
    });
    req.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    upstream.end();
  });
}

/**
 * An upgrade request (`exec`, `attach`, `portforward`): forwarded to the kubelet with the
 * client's upgrade headers; once the kubelet answers 101 the client gets that answer and
 * the two connections are spliced. Any other answer is relayed and both are closed.
 */
export async function proxyPodUpgrade(
  deps: NodeProxyDeps,
  namespace: string,
  name: string,
  sub: KubeletSubresource,
  q: URLSearchParams,
  req: IncomingMessage,
  client: Duplex,
  head: Buffer,
): Promise<void> {
  const { node, path } = await kubeletLocation(deps, namespace, name, sub, q);
  const headers: Record<string, string | string[] | undefined> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (k === 'authorization' || k === 'host' || k === 'content-length') continue;
    headers[k] = v;
  }
  const upstream = await kubeletRequest(deps, node, req.method ?? 'GET', path, headers);
  await new Promise<void>((resolve) => {
    upstream.on('upgrade', (kres: IncomingMessage, kubelet: Socket, khead: Buffer) => {
      client.write(`HTTP/1.1 101 Switching Protocols\r\n${rawHeaders(kres)}\r\n`);
      if (khead.length > 0) client.write(khead);
      if (head.length > 0) kubelet.write(head);
      kubelet.pipe(client);
      client.pipe(kubelet);
      const close = () => {
        kubelet.destroy();
        client.destroy();
        resolve();
      };
      kubelet.on('error', close).on('close', close);
      client.on('error', close).on('close', close);
    });
    upstream.on('response', (kres: IncomingMessage) => {
      client.write(
        `HTTP/1.1 ${kres.statusCode ?? 502} ${kres.statusMessage ?? ''}\r\n${rawHeaders(kres)}\r\n`,
      );
      kres.pipe(client);
      kres.on('end', () => {
        client.end();
        resolve();
      });
      kres.on('error', () => {
        client.destroy();
        resolve();
      });
    });
    upstream.on('error', (err) => {
      writeRawStatus(
        client,
        new ApiError(502, 'InternalError', `error talking to the kubelet of node ${node}: ${err.message}`),
      );
      resolve();
    });
    upstream.end();
  });
}

function rawHeaders(res: IncomingMessage): string {
  let out = '';
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
    out += `${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}\r\n`;
  return out;
}

/** Answers an upgrade request that cannot be served with its metav1.Status, on the raw socket. */
export function writeRawStatus(socket: Duplex, err: ApiError): void {
  const body = JSON.stringify(err.toStatus());
  const reason = STATUS_CODES[err.code] ?? err.reason.replace(/([a-z])([A-Z])/g, '$1 $2');
  socket.end(
    `HTTP/1.1 ${err.code} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
