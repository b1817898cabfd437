/**
 * A loopback TCP proxy whose connections a test can cut: the way to give a client a real
 * network failure (a dropped gRPC stream, a refused reconnect) while the server it talks
 * to stays up.
 */
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export interface TcpProxy {
  /** `http://127.0.0.1:<port>`: use it where the target's URL would go. */
  url: string;
  /** Connections accepted so far (a client that reconnected shows more than one). */
  readonly accepted: number;
  /** Destroys every open connection; new ones are still accepted. */
  sever(): void;
  /** Severs, and refuses (resets) new connections until resume(). */
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

/** Listens on a free 127.0.0.1 port and forwards each connection to `targetUrl`'s host:port. */
export async function startTcpProxy(targetUrl: string): Promise<TcpProxy> {
  const target = new URL(targetUrl);
  const open = new Set<Socket>();
  let paused = false;
  let accepted = 0;
  const server = createServer((client) => {
    if (paused) {
      client.resetAndDestroy();
      return;
    }
    accepted++;
    const upstream = connect(Number(target.port), target.hostname);
    open.add(client);
    open.add(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const sever = (): void => {
    for (const s of open) s.destroy();
    open.clear();
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get accepted() {
      return accepted;
    },
    sever,
    pause: () => {
      paused = true;
      sever();
    },
    resume: () => {
      paused = false;
    },
    close: async () => {
      sever();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
