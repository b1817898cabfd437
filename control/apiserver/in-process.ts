/**
 * Connections to the API server from inside its own process, without TLS: the controller
 * manager, the scheduler, their leader elections and `k8ts server`'s own agent are API
 * clients like any other (hub and spoke), but each of their ~50 connections over TLS held
 * about 130 KB of TLS buffers and OpenSSL state in the idle control process, for bytes that
 * never leave it.
 *
 *   client (RestClient / configuredFetch, `connect`)           server (this file)
 *   http.Agent.createConnection ── connect() ──▶ a socket pair ──▶ http.Server 'connection'
 *        InProcessSocket ◀══════ bytes of HTTP/1.1 ══════▶ InProcessSocket
 *                                                       │ certificate user bound to it
 *                                                       ▼
 *                             the same handler as the TLS listener: authenticate → authorize → ...
 *
 * The HTTP is real on both sides (Node's client and server parsers), so requests, chunked
 * watches, keep-alive, aborts and upgrades behave as over TCP; only the bytes travel
 * through memory. Nothing listens: a connection exists only when code holding the
 * ApiServer asks for one, so no path is reachable from outside the process.
 *
 * Who a connection is: the client certificate it was opened with, checked as the TLS
 * handshake checks a client's (node:tls with the cluster CA as the client CA): the key
 * must match the certificate; a certificate the CA did not sign, without clientAuth
 * usage, or outside its validity when the connection is made gives the connection no
 * certificate user, as a handshake's `authorized: false` does. The server side of the
 * connection then carries the certificate's user (CN the name, O the groups, its notAfter)
 * where the x509 authenticator (auth/authn.ts) reads a TLS socket's, and every request is
 * authenticated (an expired certificate refused per request), impersonated, authorized
 * (RBAC, the Node authorizer) and admitted exactly as over TLS. A bearer token in the
 * Authorization header is read as over TLS too.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Duplex } from 'node:stream';
import { allowsClientAuth, certificateSubject, isSignedBy } from '../../api/tls/certs.js';
import { bindCertificateUser, certificateUser, type CertificateUser } from './auth/authn.js';

/** A component's client credential, PEM: a certificate of the cluster CA and its key. */
export interface InProcessCredential {
  cert: string;
  key: string;
}

/**
 * One end of an in-memory connection (InProcessSocket.pair): what one end writes, the other reads,
 * in order, with backpressure (a write completes once the peer's buffer has room). Ending
 * one end's writable ends the peer's readable (TCP's FIN); destroying one end destroys the
 * peer (a reset: an exchange in flight on it fails with ECONNRESET in Node's HTTP client).
 * It has the net.Socket methods Node's HTTP agent and server call: setTimeout (an
 * inactivity timer emitting 'timeout', reset by every read and write), setKeepAlive,
 * setNoDelay, ref and unref (no-ops: nothing of the operating system is held).
 */
export class InProcessSocket extends Duplex {
  /** The inactivity timeout set by setTimeout, ms (0: none); Node's agent reads it. */
  timeout = 0;
  private peer: InProcessSocket | undefined;
  /** The callback of the peer's write that waits for this end to read. */
  private pendingWrite: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor() {
    // allowHalfOpen false, as a net.Socket's: the end of the peer's writes ends this one's.
    super({ allowHalfOpen: false });
  }

  /** Connects two fresh ends (InProcessSocket.pair). */
  static pair(): [InProcessSocket, InProcessSocket] {
    const a = new InProcessSocket();
    const b = new InProcessSocket();
    a.peer = b;
    b.peer = a;
    return [a, b];
  }

  override _read(): void {
    const pending = this.pendingWrite;
    this.pendingWrite = undefined;
    pending?.();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (err?: Error | null) => void): void {
    const peer = this.peer;
    if (!peer || peer.destroyed) {
      callback(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      return;
    }
    this.touch();
    peer.touch();
    if (peer.push(chunk)) callback();
    else peer.pendingWrite = () => callback();
  }

  override _final(callback: (err?: Error | null) => void): void {
    this.peer?.push(null);
    callback();
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    clearTimeout(this.timer);
    const peer = this.peer;
    this.peer = undefined;
    const pending = this.pendingWrite;
    this.pendingWrite = undefined;
    pending?.();
    if (peer && !peer.destroyed) peer.destroy();
    callback(err);
  }

  /** As net.Socket's: 'timeout' after `ms` without a read or write (0 turns it off). */
  setTimeout(ms: number, onTimeout?: () => void): this {
    this.timeout = ms;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (onTimeout) {
      if (ms === 0) this.removeListener('timeout', onTimeout);
      else this.once('timeout', onTimeout);
    }
    if (ms > 0 && !this.destroyed) {
      this.timer = setTimeout(() => this.emit('timeout'), ms);
      this.timer.unref();
    }
    return this;
  }

  setKeepAlive(): this {
    return this;
  }

  setNoDelay(): this {
    return this;
  }

  ref(): this {
    return this;
  }

  unref(): this {
    return this;
  }

  private touch(): void {
    this.timer?.refresh();
  }
}

/** What InProcessListener serves with: the TLS listener's handlers. */
export interface InProcessListenerConfig {
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  onUpgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  onClientError: (err: Error, socket: Duplex) => void;
  maxHeaderSize: number;
  /** ms, as the TLS listener's (its server.keepAliveTimeout). */
  keepAliveTimeoutMs: number;
}

/**
 * The server side of in-process connections: a plain http.Server that never listens, with
 * the TLS listener's request and upgrade handlers, handed each connection's server end.
 * close() ends every connection (as the TLS listener's closeAllConnections) and refuses
 * later ones.
 */
export class InProcessListener {
  private readonly server: Server;
  private readonly open = new Set<Duplex>();
  private closed = false;

  constructor(cfg: InProcessListenerConfig) {
    this.server = createServer({ maxHeaderSize: cfg.maxHeaderSize }, cfg.handler);
    this.server.on('upgrade', cfg.onUpgrade);
    this.server.on('clientError', cfg.onClientError);
    this.server.keepAliveTimeout = cfg.keepAliveTimeoutMs;
  }

  /**
   * A new connection whose server end carries `user` (undefined: none, as a TLS connection
   * without a verified certificate). After close(): a connection that fails with
   * ECONNREFUSED, as a stopped server's port.
   */
  connect(user: CertificateUser | undefined): Duplex {
    if (this.closed) return refusedConnection();
    const [client, server] = InProcessSocket.pair();
    if (user) bindCertificateUser(server, user);
    this.open.add(server);
    server.once('close', () => this.open.delete(server));
    this.server.emit('connection', server);
    return client;
  }

  /** Ends every open connection (watches included); later connect()s are refused. */
  close(): void {
    this.closed = true;
    for (const s of this.open) s.destroy();
    this.open.clear();
  }
}

/**
 * A connection that fails with ECONNREFUSED, as a closed port's: its 'error' comes after
 * the current I/O phase (setImmediate), once its user (Node's HTTP client) listens.
 */
export function refusedConnection(): Duplex {
  const [client] = InProcessSocket.pair();
  setImmediate(() =>
    client.destroy(Object.assign(new Error('connect ECONNREFUSED (in-process)'), { code: 'ECONNREFUSED' })),
  );
  return client;
}

/**
 * What a connection opened with `credential` is authenticated as, checked as a TLS
 * handshake against the client CA `caPem` checks a client certificate (see the file
 * comment): the certificate's user and validity, or undefined when the CA did not sign it
 * or it does not allow client authentication (a connection without a certificate user).
 * @throws TypeError when the key is not the certificate's (a TLS client could not even be
 *   configured with it: createSecureContext's "key values mismatch").
 */
export async function credentialIdentity(
  credential: InProcessCredential,
  caPem: string,
): Promise<{ user: CertificateUser; notBeforeMs: number } | undefined> {
  const cert = new X509Certificate(credential.cert);
  let matches: boolean;
  try {
    matches = cert.checkPrivateKey(createPrivateKey(credential.key));
  } catch {
    matches = false;
  }
  if (!matches) throw new TypeError("in-process connection: the key is not the certificate's");
  if (!(await isSignedBy(credential.cert, caPem)) || !allowsClientAuth(credential.cert)) return undefined;
  const subject = certificateSubject(credential.cert);
  if (subject.commonName === '') return undefined;
  return {
    user: certificateUser(subject.commonName, subject.organizations, Date.parse(cert.validTo)),
    notBeforeMs: Date.parse(cert.validFrom),
  };
}
