#!/usr/bin/env node
/**
 * The `k8ts` command (the CLI contract of DESIGN.md). Arguments are parsed with Node's
 * own `util.parseArgs`. Commands that are not built yet say so and exit 2 instead of
 * pretending to work.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const HELP = `k8ts — a small, real Kubernetes

Usage:
  k8ts server      [--data-dir DIR] [--bind-address ADDR] [--port N] [--datastore sqlite|etcd|memory]
                   [--etcd-endpoints URL,...] [--disable-agent] [--node-name NAME] [--node-ip IP]
                   [--log-level LEVEL]
  k8ts agent       --server URL (--token T | --token-file F) [--node-name NAME] [--node-ip IP]
                   [--data-dir DIR] [--runtime docker|containerd] [--log-level LEVEL]
  k8ts kubeconfig  [--data-dir DIR]
  k8ts version
  k8ts help

Status: the revisioned store (control/storage) is built; server, agent and kubeconfig
are not implemented yet.
`;

/** The package version, read from package.json next to dist/ (or the source tree). */
function version(): string {
  for (const rel of ['../package.json', './package.json']) {
    try {
      return (JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { version: string }).version;
    } catch {
      // try the next location
    }
  }
  return 'unknown';
}

/** Runs the CLI with `argv` (without node and script); returns the process exit code. */
export function main(argv: string[]): number {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: false,
    options: { help: { type: 'boolean', short: 'h' }, version: { type: 'boolean' } },
  });
  const command = positionals[0] ?? (values.version ? 'version' : 'help');
  switch (command) {
    case 'help':
      process.stdout.write(HELP);
      return 0;
    case 'version':
      process.stdout.write(`k8ts v${version()}\n`);
      return 0;
    case 'server':
    case 'agent':
    case 'kubeconfig':
      if (values.help) {
        process.stdout.write(HELP);
        return 0;
      }
      process.stderr.write(`k8ts ${command}: not implemented yet in this version (see 'k8ts help')\n`);
      return 2;
    default:
      process.stderr.write(
        `k8ts: unknown command ${JSON.stringify(command)}; run 'k8ts help' for the commands\n`,
      );
      return 2;
  }
}

process.exitCode = main(process.argv.slice(2));
