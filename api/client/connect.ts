/**
 * Clients whose connections are not TCP: RestClientConfig.connect and configuredFetch's
 * `connect` open each connection with a function instead of dialing the server's host and
 * port, and speak plain HTTP/1.1 over it. The control process gives its own components
 * the in-process connections of its API server that way (control/apiserver/in-process.ts:
 * no TLS, each connection already the component's certificate user), as client-go's
 * rest.Config takes a Dial function.
 */
import * as http from 'node:http';
import type { Duplex } from 'node:stream';

/** Opens one connection to the API server: a Duplex carrying HTTP/1.1 (its errors as a socket's). */
export type Connect = () => Duplex;

/** An http.Agent (keep-alive, pooling, idle timeouts as configured) whose connections `connect` opens. */
export class ConnectingAgent extends http.Agent {
  constructor(
    options: http.AgentOptions,
    private readonly connect: Connect,
  ) {
    super(options);
  }

  override createConnection(): Duplex {
    return this.connect();
  }
}
