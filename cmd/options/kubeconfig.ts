/**
 * `k8ts kubeconfig`'s flags and their validation: print the admin kubeconfig of a data dir,
 * or make one for a user (with --user, and its --group's).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError, defaultDataDir } from './common.js';

/** The flags of `k8ts kubeconfig`. */
export const KUBECONFIG_FLAGS = {
  'data-dir': { type: 'string' },
  user: { type: 'string' },
  group: { type: 'string', multiple: true },
} as const satisfies ParseArgsConfig['options'];

/** What `k8ts kubeconfig` prints: the data dir's admin kubeconfig, or a user's. */
export interface KubeconfigOptions {
  /** --data-dir, or defaultDataDir(). */
  dataDir: string;
  /** The user's name (never empty nor system:...) and groups; absent: the admin kubeconfig. */
  user?: { name: string; groups: string[] };
}

/**
 * Parses and checks `k8ts kubeconfig`'s arguments (argv without `k8ts kubeconfig`).
 * @throws UsageError for a --user in system: (or empty) and for --group without --user;
 *   parseArgs' own ERR_PARSE_ARGS_* errors for unknown flags or missing values.
 */
export function parseKubeconfigOptions(argv: string[]): KubeconfigOptions {
  const { values } = parseArgs({ args: argv, strict: true, options: KUBECONFIG_FLAGS });
  const dataDir = values['data-dir'] ?? defaultDataDir();
  if (values.user !== undefined) {
    if (values.user === '' || values.user.startsWith('system:'))
      throw new UsageError(`--user must be a name outside system:, got ${JSON.stringify(values.user)}`);
    return { dataDir, user: { name: values.user, groups: values.group ?? [] } };
  }
  if (values.group !== undefined) throw new UsageError('--group needs --user');
  return { dataDir };
}
