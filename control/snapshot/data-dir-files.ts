/**
 * The server's files a snapshot carries besides the store: the cluster PKI in
 * `DATA_DIR/tls/` (the CA that agents pin and that signed their node certificates, the
 * serving and admin certificates, the service account key) and `DATA_DIR/node-token`. The
 * store alone would come back as a new cluster to every agent (a new CA: no agent could
 * verify the server, nor the server their certificates); k3s keeps the same files as
 * "bootstrap data" in its datastore for the same reason. They sit in the sidecar at the
 * trust of the store itself, which holds every Secret (both files are 0600).
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

/** One file: its mode bits and content (base64). */
export interface DataDirFile {
  mode: number;
  data: string;
}

/** The DATA_DIR-relative names a snapshot may carry: `tls/<file>` and `node-token`. */
const CARRIED = /^(tls\/[A-Za-z0-9._-]+|node-token)$/;

/** DATA_DIR/tls/* (regular files) and DATA_DIR/node-token, as the sidecar keeps them. */
export function collectDataDirFiles(dataDir: string): Record<string, DataDirFile> {
  const out: Record<string, DataDirFile> = {};
  const add = (rel: string) => {
    const path = join(dataDir, rel);
    const stat = statSync(path);
    if (!stat.isFile()) return;
    out[rel] = { mode: stat.mode & 0o777, data: readFileSync(path).toString('base64') };
  };
  const tls = join(dataDir, 'tls');
  if (existsSync(tls)) for (const name of readdirSync(tls).sort()) add(`tls/${name}`);
  if (existsSync(join(dataDir, 'node-token'))) add('node-token');
  return out;
}

/**
 * Writes the carried files into `dataDir` (DATA_DIR/tls 0700, each file 0600 at most).
 * A file already there with other content is moved under `asideDir` first (same
 * relative path); one with the same content is left alone.
 * @returns the relative names written.
 * @throws Error naming a file outside `tls/` and `node-token` (a sidecar that was tampered with).
 */
export function restoreDataDirFiles(
  dataDir: string,
  files: Record<string, DataDirFile>,
  asideDir: string,
): string[] {
  const written: string[] = [];
  for (const [rel, file] of Object.entries(files)) {
    if (!CARRIED.test(rel))
      throw new Error(
        `snapshot metadata names ${JSON.stringify(rel)}, which is not a data dir file k8ts keeps`,
      );
    const path = join(dataDir, rel);
    const content = Buffer.from(file.data, 'base64');
    if (existsSync(path)) {
      if (readFileSync(path).equals(content)) continue;
      const aside = join(asideDir, rel);
      mkdirSync(dirname(aside), { recursive: true, mode: 0o700 });
      renameSync(path, aside);
    }
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    if (rel.startsWith('tls/')) chmodSync(dirname(path), 0o700);
    const mode = file.mode & 0o600;
    writeFileSync(path, content, { mode });
    chmodSync(path, mode);
    written.push(rel);
  }
  return written;
}
