/**
 * Running one probe once: the kubelet's probers (pkg/probe/http, tcp, exec) behind
 * prober.runProbe. Each resolves with a verdict and the output that goes into the
 * `Unhealthy` event; none throws for a failing target.
 *
 * - httpGet: GET `scheme://host:port/path` (host defaults to the pod IP, port may name a
 *   container port) with the probe's headers plus `User-Agent: kube-probe/1.32` and
 *   `Accept: *\/*`; a status from 200 to 299 is Success, 300 to 399 is Warning
 *   "Probe terminated redirects, Response body: …" (pkg/probe/http DoHTTPProbe, where the
 *   kubelet stops at a redirect to another host; it follows one to the same host, which
 *   k8ts does not); a Warning counts as a Success, anything else "HTTP probe failed with statuscode: N"; HTTPS certificates
 *   are not verified, as the kubelet does not.
 * - tcpSocket: a TCP connection opens within the timeout.
 * - exec: the command exits 0 in the container (runtime ExecSync), else its output.
 * A probe that cannot run at all is `Unknown` with the error as its output: a port name
 * no container port has (`strconv.Atoi: parsing "web": invalid syntax`, as
 * probe.ResolveContainerPort), no handler, an error of the runtime itself (not of the
 * probed program). The prober discards its verdict and records "… probe errored: …"
 * (pkg/kubelet/prober/prober.go). The HTTP and TCP timeouts are real time (they bound network I/O); the
 * probe periods are on the prober's injected clock.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import type { ExecSyncResponse } from '../../../cri/index.js';
import { isCriError } from '../../../cri/index.js';
import type { IntOrString, KubeletContainer, ProbeHandler } from '../pods/types.js';
import { errorMessage } from '../../../api/errors.js';

/** The kubelet's results.Result: what a probe publishes. */
export type ProbeVerdict = 'Success' | 'Failure' | 'Unknown';

/**
 * What one probe run found (pkg/probe's Result): `output` is the failure's words (or the
 * command's output); for Unknown, the error that kept the probe from running. Warning is
 * a Success the kubelet records an event for (ProbeWarning).
 */
export interface ProbeOutcome {
  result: ProbeVerdict | 'Warning';
  output: string;
}

/** Where a probe goes. */
export interface ProbeTarget {
  podIP: string;
  containerId: string;
  container: KubeletContainer;
}

/** Runs a command in a container (the runtime's ExecSync). */
export type ExecFn = (
  containerId: string,
  cmd: string[],
  timeoutSeconds: number,
) => Promise<ExecSyncResponse>;

/** The User-Agent of the kubelet's HTTP probes. */
export const PROBE_USER_AGENT = 'kube-probe/1.32';
/** The kubelet reads at most this much of a probe's response body (10 KiB). */
const MAX_BODY = 10 * 1024;

/**
 * The port number `port` names (probe.ResolveContainerPort): a number as is, a name looked
 * up in the container's ports, else a decimal string. Returns the error's words, in Go's,
 * when there is none: `strconv.Atoi: parsing "web": invalid syntax`, `invalid port number: 0`.
 */
export function resolvePort(port: IntOrString, container: KubeletContainer): number | { error: string } {
  let n: number;
  if (typeof port === 'number') n = port;
  else {
    const named = container.ports?.find((p) => p.name === port)?.containerPort;
    if (named !== undefined) n = named;
    else if (/^[+-]?\d+$/.test(port)) n = Number(port);
    else return { error: `strconv.Atoi: parsing ${JSON.stringify(port)}: invalid syntax` };
  }
  return n > 0 && n < 65536 ? n : { error: `invalid port number: ${n}` };
}

function describeNetError(err: unknown, hostPort: string, timedOut: boolean): string {
  if (timedOut) return `dial tcp ${hostPort}: i/o timeout`;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ECONNREFUSED') return `dial tcp ${hostPort}: connect: connection refused`;
  if (code === 'EHOSTUNREACH') return `dial tcp ${hostPort}: connect: no route to host`;
  if (code === 'ECONNRESET') return `read tcp ${hostPort}: read: connection reset by peer`;
  return `dial tcp ${hostPort}: ${errorMessage(err)}`;
}

const hostPortOf = (host: string, port: number) =>
  host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;

/** An HTTP GET probe (pkg/probe/http). */
export function probeHttp(
  action: NonNullable<ProbeHandler['httpGet']>,
  target: ProbeTarget,
  timeoutSeconds: number,
): Promise<ProbeOutcome> {
  const port = resolvePort(action.port, target.container);
  if (typeof port !== 'number') return Promise.resolve({ result: 'Unknown', output: port.error });
  const host = action.host || target.podIP;
  const scheme = (action.scheme ?? 'HTTP').toLowerCase();
  let path = action.path ?? '/';
  if (!path.startsWith('/')) path = `/${path}`;
  const hp = hostPortOf(host, port);
  const url = `${scheme}://${hp}${path}`;
  const headers: Record<string, string> = { 'User-Agent': PROBE_USER_AGENT, Accept: '*/*' };
  for (const h of action.httpHeaders ?? []) headers[h.name] = h.value;
  return new Promise((resolve) => {
    let done = false;
    const finish = (o: ProbeOutcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      resolve(o);
    };
    const make = scheme === 'https' ? httpsRequest : httpRequest;
    const req = make(url, { method: 'GET', headers, rejectUnauthorized: false, agent: false }, (res) => {
      const code = res.statusCode ?? 0;
      let body = '';
      res.on('data', (chunk: Buffer) => {
        if (body.length < MAX_BODY) body += chunk.toString('utf8').slice(0, MAX_BODY - body.length);
      });
      res.on('end', () =>
        finish(
          code >= 200 && code < 300
            ? { result: 'Success', output: body }
            : code >= 300 && code < 400
              ? { result: 'Warning', output: `Probe terminated redirects, Response body: ${body}` }
              : { result: 'Failure', output: `HTTP probe failed with statuscode: ${code}` },
        ),
      );
      res.on('error', (err) =>
        finish({ result: 'Failure', output: `Get "${url}": ${describeNetError(err, hp, false)}` }),
      );
    });
    const timer = setTimeout(
      () =>
        finish({
          result: 'Failure',
          output: `Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
        }),
      Math.max(1, timeoutSeconds) * 1000,
    );
    req.on('error', (err) =>
      finish({ result: 'Failure', output: `Get "${url}": ${describeNetError(err, hp, false)}` }),
    );
    req.end();
  });
}

/** A TCP probe (pkg/probe/tcp). */
export function probeTcp(
  action: NonNullable<ProbeHandler['tcpSocket']>,
  target: ProbeTarget,
  timeoutSeconds: number,
): Promise<ProbeOutcome> {
  const port = resolvePort(action.port, target.container);
  if (typeof port !== 'number') return Promise.resolve({ result: 'Unknown', output: port.error });
  const host = action.host || target.podIP;
  const hp = hostPortOf(host, port);
  return new Promise((resolve) => {
    const sock = connect({ host, port });
    const timer = setTimeout(
      () => finish({ result: 'Failure', output: describeNetError(undefined, hp, true) }),
      Math.max(1, timeoutSeconds) * 1000,
    );
    let done = false;
    function finish(o: ProbeOutcome) {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(o);
    }
    sock.once('connect', () => finish({ result: 'Success', output: '' }));
    sock.once('error', (err) => finish({ result: 'Failure', output: describeNetError(err, hp, false) }));
  });
}

/** An exec probe (pkg/probe/exec) through the runtime. */
export async function probeExec(
  action: NonNullable<ProbeHandler['exec']>,
  target: ProbeTarget,
  timeoutSeconds: number,
  exec: ExecFn,
): Promise<ProbeOutcome> {
  const cmd = action.command ?? [];
  try {
    const r = await exec(target.containerId, cmd, timeoutSeconds);
    const output = Buffer.concat([r.stdout, r.stderr]).toString('utf8').slice(0, MAX_BODY);
    return r.exitCode === 0
      ? { result: 'Success', output }
      : {
          result: 'Failure',
          output: output || `command ${JSON.stringify(cmd.join(' '))} exited with ${r.exitCode}`,
        };
  } catch (err) {
    if (isCriError(err, 'DeadlineExceeded')) {
      return { result: 'Failure', output: `command ${JSON.stringify(cmd.join(' '))} timed out` };
    }
    return { result: 'Unknown', output: errorMessage(err) };
  }
}

/** Runs whichever handler `probe` has (exec, httpGet, tcpSocket); Unknown when it has none. */
export function runProbe(
  probe: ProbeHandler & { timeoutSeconds?: number },
  target: ProbeTarget,
  exec: ExecFn,
): Promise<ProbeOutcome> {
  const timeout = probe.timeoutSeconds || 1;
  if (probe.exec) return probeExec(probe.exec, target, timeout, exec);
  if (probe.httpGet) return probeHttp(probe.httpGet, target, timeout);
  if (probe.tcpSocket) return probeTcp(probe.tcpSocket, target, timeout);
  return Promise.resolve({ result: 'Unknown', output: 'missing probe handler' });
}
