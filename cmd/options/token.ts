/**
 * `k8ts token`'s subcommands, flags and their validation: create (with --ttl and
 * --description), list and delete ID, each on a data dir's bootstrap tokens.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError, defaultDataDir, parseDuration } from './common.js';

/** The flags of `k8ts token` (every subcommand accepts them all). */
export const TOKEN_FLAGS = {
  'data-dir': { type: 'string' },
  ttl: { type: 'string' },
  description: { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

/** One `k8ts token` subcommand with its checked arguments; dataDir is --data-dir or defaultDataDir(). */
export type TokenOptions =
  | {
      command: 'create';
      dataDir: string;
      /** Seconds until it expires; 0 never (`--ttl 0`); absent: createToken's default (24 h, as kubeadm). */
      ttlSeconds?: number;
      description?: string;
    }
  | { command: 'list'; dataDir: string }
  | { command: 'delete'; dataDir: string; /** The token id, or a whole token. */ id: string };

/**
 * Parses and checks `k8ts token`'s arguments (argv without `k8ts token`).
 * @throws UsageError for a missing or unknown subcommand, arguments create does not take,
 *   delete without exactly one id, and a malformed --ttl; parseArgs' own ERR_PARSE_ARGS_*
 *   errors for unknown flags or missing values.
 */
export function parseTokenOptions(argv: string[]): TokenOptions {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: TOKEN_FLAGS,
  });
  const dataDir = values['data-dir'] ?? defaultDataDir();
  const [sub, ...rest] = positionals;
  switch (sub) {
    case 'create': {
      if (rest.length > 0) throw new UsageError(`token create takes no arguments, got ${rest.join(' ')}`);
      const ttl = values.ttl;
      const ttlSeconds =
        ttl === undefined ? undefined : /^0(ms|s|m|h)?$/.test(ttl) ? 0 : parseDuration(ttl, '--ttl');
      return {
        command: 'create',
        dataDir,
        ...(ttlSeconds !== undefined ? { ttlSeconds } : {}),
        ...(values.description !== undefined ? { description: values.description } : {}),
      };
    }
    case 'list':
      return { command: 'list', dataDir };
    case 'delete':
      if (rest.length !== 1) throw new UsageError('token delete takes one token id (or token)');
      return { command: 'delete', dataDir, id: rest[0]! };
    default:
      throw new UsageError('usage: k8ts token create [--ttl 24h] [--description TEXT] | list | delete ID');
  }
}
