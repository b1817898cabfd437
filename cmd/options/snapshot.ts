/**
 * `k8ts snapshot`'s subcommands, flags and their validation, in the manner of k3s's
 * `etcd-snapshot` (save, list/ls, delete, prune) plus restore: which snapshot, which data
 * dir, and for an etcd snapshot the new member's `etcdctl snapshot restore` flags.
 * control/snapshot/commands.ts runs what this returns.
 */
import { hostname } from 'node:os';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError, defaultDataDir } from './common.js';

/** The flags of `k8ts snapshot` (each subcommand refuses the ones it does not take). */
export const SNAPSHOT_FLAGS = {
  'data-dir': { type: 'string' },
  'snapshot-dir': { type: 'string' },
  name: { type: 'string' },
  datastore: { type: 'string', default: 'sqlite' },
  'etcd-endpoints': { type: 'string' },
  'node-name': { type: 'string' },
  retention: { type: 'string' },
  'snapshot-retention': { type: 'string' },
  'bump-revision': { type: 'string' },
  'etcd-data-dir': { type: 'string' },
  'etcd-name': { type: 'string' },
  'etcd-initial-cluster': { type: 'string' },
  'etcd-initial-cluster-token': { type: 'string' },
  'etcd-initial-advertise-peer-urls': { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

type Flag = keyof typeof SNAPSHOT_FLAGS;

/** Where a subcommand finds snapshots: the data dir, and the snapshot dir (default `<data dir>/snapshots`). */
interface Dirs {
  dataDir: string;
  snapshotDir?: string;
}

/** One `k8ts snapshot` subcommand with its checked arguments. */
export type SnapshotOptions =
  | (Dirs & {
      command: 'save';
      /** The base name (default on-demand). */
      name?: string;
      /** Used when no server answers on the data dir's socket. */
      datastore: 'sqlite' | 'etcd';
      etcdEndpoints: string[];
      /** The node in the snapshot's name when this command takes it itself (default: the hostname). */
      nodeName: string;
    })
  | (Dirs & { command: 'list' })
  | (Dirs & { command: 'delete'; names: string[] })
  | (Dirs & { command: 'prune'; name: string; retention: number })
  | (Dirs & {
      command: 'restore';
      snapshot: string;
      bumpRevision?: number;
      etcd?: {
        dataDir: string;
        name?: string;
        initialCluster?: string;
        initialClusterToken?: string;
        initialAdvertisePeerUrls?: string;
      };
    });

const USAGE =
  'usage: k8ts snapshot save [--name N] | list | delete NAME... | prune [--name N] [--retention 5] | restore NAME|PATH [--data-dir DIR]';

/** Which flags each subcommand takes, besides --data-dir and --snapshot-dir. */
const TAKES: Record<SnapshotOptions['command'], readonly Flag[]> = {
  save: ['name', 'datastore', 'etcd-endpoints', 'node-name'],
  list: [],
  delete: [],
  prune: ['name', 'retention', 'snapshot-retention'],
  restore: [
    'bump-revision',
    'etcd-data-dir',
    'etcd-name',
    'etcd-initial-cluster',
    'etcd-initial-cluster-token',
    'etcd-initial-advertise-peer-urls',
  ],
};

/**
 * Parses and checks `k8ts snapshot`'s arguments (argv without `k8ts snapshot`).
 * @throws UsageError for a missing or unknown subcommand, a flag the subcommand does not
 *   take, a wrong number of arguments, or a malformed value; parseArgs' own
 *   ERR_PARSE_ARGS_* errors for unknown flags or missing values.
 */
export function parseSnapshotOptions(argv: string[]): SnapshotOptions {
  const { values, positionals, tokens } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    tokens: true,
    options: SNAPSHOT_FLAGS,
  });
  const [given, ...rest] = positionals;
  const sub = given === 'ls' ? 'list' : given;
  if (sub !== 'save' && sub !== 'list' && sub !== 'delete' && sub !== 'prune' && sub !== 'restore')
    throw new UsageError(USAGE);
  for (const t of tokens)
    if (
      t.kind === 'option' &&
      t.name !== 'data-dir' &&
      t.name !== 'snapshot-dir' &&
      !TAKES[sub].includes(t.name as Flag)
    )
      throw new UsageError(`snapshot ${sub} does not take --${t.name}`);
  const dirs: Dirs = {
    dataDir: values['data-dir'] ?? defaultDataDir(),
    ...(values['snapshot-dir'] !== undefined ? { snapshotDir: values['snapshot-dir'] } : {}),
  };
  const noArgs = () => {
    if (rest.length > 0) throw new UsageError(`snapshot ${sub} takes no arguments, got ${rest.join(' ')}`);
  };
  switch (sub) {
    case 'save': {
      noArgs();
      const datastore = values.datastore;
      if (datastore !== 'sqlite' && datastore !== 'etcd')
        throw new UsageError(`--datastore must be sqlite or etcd, got ${datastore}`);
      const etcdEndpoints = (values['etcd-endpoints'] ?? '').split(',').filter((e) => e !== '');
      if (datastore === 'etcd' && etcdEndpoints.length === 0)
        throw new UsageError('--datastore etcd needs --etcd-endpoints URL[,URL...]');
      return {
        command: 'save',
        ...dirs,
        ...(values.name !== undefined ? { name: values.name } : {}),
        datastore,
        etcdEndpoints,
        nodeName: values['node-name'] ?? hostname().toLowerCase(),
      };
    }
    case 'list':
      noArgs();
      return { command: 'list', ...dirs };
    case 'delete':
      if (rest.length === 0)
        throw new UsageError('snapshot delete takes one or more snapshot names (see k8ts snapshot list)');
      return { command: 'delete', ...dirs, names: rest };
    case 'prune': {
      noArgs();
      const text = values.retention ?? values['snapshot-retention'] ?? '5';
      if (!/^[1-9]\d*$/.test(text))
        throw new UsageError(`--retention must be a whole number >= 1, got ${text}`);
      return { command: 'prune', ...dirs, name: values.name ?? 'on-demand', retention: Number(text) };
    }
    case 'restore': {
      if (rest.length !== 1)
        throw new UsageError(
          'snapshot restore takes one snapshot (a name from k8ts snapshot list, or a path)',
        );
      const bump = values['bump-revision'];
      if (bump !== undefined && !/^\d+$/.test(bump))
        throw new UsageError(
          `--bump-revision must be a whole number (0: keep the snapshot's revision), got ${bump}`,
        );
      const etcdDataDir = values['etcd-data-dir'];
      const etcdFlags = TAKES.restore.filter((f) => f.startsWith('etcd-') && f !== 'etcd-data-dir');
      if (etcdDataDir === undefined) {
        const stray = etcdFlags.find((f) => values[f] !== undefined);
        if (stray)
          throw new UsageError(`--${stray} is for an etcd snapshot's new member: give --etcd-data-dir too`);
      }
      const optional = (flag: Flag, key: string) =>
        values[flag] !== undefined ? { [key]: values[flag] as string } : {};
      return {
        command: 'restore',
        ...dirs,
        snapshot: rest[0]!,
        ...(bump !== undefined ? { bumpRevision: Number(bump) } : {}),
        ...(etcdDataDir !== undefined
          ? {
              etcd: {
                dataDir: etcdDataDir,
                ...optional('etcd-name', 'name'),
                ...optional('etcd-initial-cluster', 'initialCluster'),
                ...optional('etcd-initial-cluster-token', 'initialClusterToken'),
                ...optional('etcd-initial-advertise-peer-urls', 'initialAdvertisePeerUrls'),
              },
            }
          : {}),
      };
    }
  }
}
