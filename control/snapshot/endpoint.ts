/**
 * How `k8ts snapshot save` reaches a running server: HTTP on the unix socket
 * `DATA_DIR/snapshot.sock` (0600 in the 0700 data dir, so only the data dir's owner can
 * ask), as k3s's `etcd-snapshot save` asks its server over the supervisor port. The sqlite
 * store is the server's alone (an exclusive lock), so an online snapshot must be taken by
 * the process that has it open; etcd could be asked directly, but going through the server
 * gives both datastores one path.
 *
 *   POST /v1/snapshots  {"name": "on-demand"}  → 201 SnapshotSummary | 4xx/5xx {"message"}
 *   GET  /healthz                              → 200 ok  (is a server running on this dir?)
 */
import { existsSync, rmSync, chmodSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { join } from 'node:path';
import type { Logger } from '../../api/log.js';
import { SnapshotError, isSnapshotError, type SnapshotErrorCode } from './errors.js';
import type { SnapshotMetadata } from './metadata.js';
import type { Snapshotter } from './snapshotter.js';

/** The metadata of a saved snapshot without the carried files (what the socket answers). */
export type SnapshotSummary = Omit<SnapshotMetadata, 'files'> & { path: string };

/** The socket of a data dir. */
export function snapshotSocketPath(dataDir: string): string {
  return join(dataDir, 'snapshot.sock');
}

/** Longest unix socket path Linux takes (sun_path is 108 bytes with its NUL). */
const MAX_SOCKET_PATH = 107;

/**
 * Serves the snapshot endpoint on `socketPath` until close(). A stale socket file (nothing
 * answers on it) is replaced; one a live server answers on is left to it.
 * @returns undefined (after logging why) when it cannot listen: a path over 107 bytes,
 *   or another live server on the same data dir.
 */
export async function serveSnapshots(cfg: {
  socketPath: string;
  snapshotter: Snapshotter;
  logger: Logger;
}): Promise<{ close(): Promise<void> } | undefined> {
  const { socketPath, snapshotter, logger } = cfg;
  if (socketPath.length > MAX_SOCKET_PATH) {
    logger.warn(
      'snapshot socket not served: its path is longer than 107 bytes; use a shorter --data-dir for online k8ts snapshot save',
      { socketPath },
    );
    return undefined;
  }
  if (existsSync(socketPath)) {
    if (await serverAnswers(socketPath)) {
      logger.warn('snapshot socket not served: another k8ts server answers on it', { socketPath });
      return undefined;
    }
    rmSync(socketPath, { force: true });
  }
  const server: Server = createServer((req, res) => {
    const reply = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(`${JSON.stringify(body)}\n`);
    };
    if (req.method === 'GET' && req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      return;
    }
    if (req.method !== 'POST' || req.url !== '/v1/snapshots') {
      reply(404, { message: `no ${req.method ?? ''} ${req.url ?? ''} here` });
      return;
    }
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => {
      body += d;
      if (body.length > 4096) req.destroy();
    });
    req.on('end', () => {
      let name: string | undefined;
      try {
        name = (JSON.parse(body || '{}') as { name?: string }).name;
      } catch {
        reply(400, { message: 'the request body must be JSON' });
        return;
      }
      snapshotter.save(name).then(
        (m) => {
          logger.info('snapshot saved', { name: m.name, revision: m.revision, size: m.size });
          const { files: _files, ...summary } = m;
          reply(201, { ...summary, path: join(snapshotter.snapshotDir, m.name) });
        },
        (err: unknown) => {
          logger.warn('snapshot failed', { error: (err as Error).message });
          reply(isSnapshotError(err) && (err.code === 'Invalid' || err.code === 'Exists') ? 400 : 500, {
            code: isSnapshotError(err) ? err.code : 'Failed',
            message: (err as Error).message,
          });
        },
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  chmodSync(socketPath, 0o600);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Whether a k8ts server answers on `socketPath` (GET /healthz within `timeoutMs`). */
export function serverAnswers(socketPath: string, timeoutMs = 2000): Promise<boolean> {
  if (!existsSync(socketPath)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/healthz', method: 'GET', timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

/**
 * Asks the server on `socketPath` for a snapshot named `<name>-<node>-<unix seconds>`.
 * @returns the saved snapshot's summary.
 * @throws SnapshotError with the server's code and message when it refuses or fails;
 *   Failed when the socket does not answer.
 */
export function requestSnapshot(socketPath: string, name?: string): Promise<SnapshotSummary> {
  return new Promise((resolve, reject) => {
    const req = request(
      { socketPath, path: '/v1/snapshots', method: 'POST', headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          let body: { code?: SnapshotErrorCode; message?: string } & Partial<SnapshotSummary>;
          try {
            body = JSON.parse(text) as typeof body;
          } catch {
            reject(
              new SnapshotError(
                'Failed',
                `the server answered ${res.statusCode ?? '?'} without JSON: ${text}`,
              ),
            );
            return;
          }
          if (res.statusCode === 201) resolve(body as SnapshotSummary);
          else
            reject(
              new SnapshotError(
                body.code ?? 'Failed',
                body.message ?? `the server answered ${res.statusCode ?? '?'}`,
              ),
            );
        });
      },
    );
    req.on('error', (err) =>
      reject(new SnapshotError('Failed', `cannot reach the server on ${socketPath}: ${err.message}`)),
    );
    req.end(JSON.stringify(name === undefined ? {} : { name }));
  });
}
